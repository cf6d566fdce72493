package prompt

import (
	"fmt"
	"strings"

	"github.com/cespare/xxhash/v2"
)

// BenchmarkParams returns the full-mode prompt input the benchmarks of this
// package and of package bench assemble: 8 bootstrap files totalling
// 60,000 characters (after the default budgets) and 50 skills, with
// typical dynamic inputs (runtime line, time zone, channel, reactions).
// It is deterministic; each call returns a fresh Params.
func BenchmarkParams() (*Params, error) {
	names := []string{"AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md", "HEARTBEAT.md", "BOOTSTRAP.md", "MEMORY.md"}
	var files []BootstrapFile
	for i, n := range names {
		var b strings.Builder
		for j := 0; b.Len() < 7500; j++ {
			fmt.Fprintf(&b, "- rule %d.%d: keep the workspace tidy and explain what changed and why.\n", i, j)
		}
		c := strings.TrimRight(b.String()[:7500], " \n")
		c += strings.Repeat("x", 7500-len(c))
		files = append(files, BootstrapFile{Name: n, Path: "/home/u/.openclaw/workspace/" + n, Content: c})
	}
	injected, _ := BuildContextFiles(files, Budget{})
	total := 0
	p := &Params{
		WorkspaceDir:  "/home/u/.openclaw/workspace",
		ToolNames:     SampleTools,
		UserTimezone:  "Europe/Berlin",
		BootstrapMode: BootstrapFull,
		MemoryEnabled: true, MemoryCitations: true,
		OwnerNumbers: []string{"+15551234567"},
		Runtime: RuntimeInfo{AgentID: "main", Host: "myhost", OS: "Linux 6.8.0", Arch: "x64", Node: "v22.14.0",
			Model: "anthropic/claude-sonnet-4-5", Channel: "telegram", Capabilities: []string{"inlineButtons", "reactions"}},
		DefaultThinkLevel: "low",
		HeartbeatPrompt:   DefaultHeartbeatPrompt,
		ExtraSystemPrompt: "You are in the #general group. Keep replies short.",
		Reactions:         &ReactionGuidance{Level: "minimal", Channel: "telegram"},
	}
	for _, f := range injected {
		total += f.InjectedChars
		c := SanitizeContent(f.Content)
		p.ContextFiles = append(p.ContextFiles, ContextFile{Path: f.Path, Content: c, Hash: xxhash.Sum64String(c), Clean: true})
	}
	if total != 60000 {
		return nil, fmt.Errorf("prompt: benchmark bootstrap total %d characters, want 60000", total)
	}
	var skills []Skill
	for i := 0; i < 50; i++ {
		skills = append(skills, Skill{Name: fmt.Sprintf("skill-%02d", i), Description: "Does one specific thing well; read the SKILL.md before use.",
			FilePath: fmt.Sprintf("/home/u/.openclaw/workspace/skills/skill-%02d/SKILL.md", i)})
	}
	sr := BuildSkillsPrompt(skills, SkillLimits{}, "/home/u", "")
	if sr.Included != 50 {
		return nil, fmt.Errorf("prompt: benchmark skills included %d, want 50", sr.Included)
	}
	p.SkillsPrompt, p.SkillsHash = sr.Prompt, xxhash.Sum64String(sr.Prompt)
	p.ApprovalUI = ApprovalUIFor(p.Runtime.Channel, p.Runtime.Capabilities)
	return p, nil
}
