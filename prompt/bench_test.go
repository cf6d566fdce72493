package prompt

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/tokenize"
)

// benchParams builds a full-mode prompt input with 8 bootstrap files
// totalling 60,000 characters and 50 skills, plus typical dynamic inputs.
func benchParams(tb testing.TB) *Params {
	tb.Helper()
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
		p.ContextFiles = append(p.ContextFiles, ContextFile{Path: f.Path, Content: c, Hash: hashString(c), Clean: true})
	}
	if total != 60000 {
		tb.Fatalf("bootstrap total %d, want 60000", total)
	}
	var skills []Skill
	for i := 0; i < 50; i++ {
		skills = append(skills, Skill{Name: fmt.Sprintf("skill-%02d", i), Description: "Does one specific thing well; read the SKILL.md before use.",
			FilePath: fmt.Sprintf("/home/u/.openclaw/workspace/skills/skill-%02d/SKILL.md", i)})
	}
	sr := BuildSkillsPrompt(skills, SkillLimits{}, "/home/u", "")
	if sr.Included != 50 {
		tb.Fatalf("skills included %d", sr.Included)
	}
	p.SkillsPrompt, p.SkillsHash = sr.Prompt, hashString(sr.Prompt)
	p.ApprovalUI = ApprovalUIFor(p.Runtime.Channel, p.Runtime.Capabilities)
	return p
}

// BenchmarkAssembleCold renders everything on every call (no cache).
func BenchmarkAssembleCold(b *testing.B) {
	p := benchParams(b)
	var r Renderer
	dst, _, _ := r.AppendPrompt(nil, p)
	b.SetBytes(int64(len(dst)))
	b.ReportAllocs()
	cpuLoop(b, func() { dst, _, _ = r.AppendPrompt(dst[:0], p) })
}

// BenchmarkAssembleWarm copies the cached stable prefix and renders the
// dynamic part into a reused buffer.
func BenchmarkAssembleWarm(b *testing.B) {
	p := benchParams(b)
	r := NewCachedRenderer(64<<20, tokenize.MustGet(tokenize.O200kBase))
	dst, _, _ := r.AppendPrompt(nil, p)
	b.SetBytes(int64(len(dst)))
	b.ReportAllocs()
	cpuLoop(b, func() { dst, _, _ = r.AppendPrompt(dst[:0], p) })
}

// BenchmarkAssembleWarmSplit is the warm path without copying the stable
// prefix: only the dynamic part is rendered into dst.
func BenchmarkAssembleWarmSplit(b *testing.B) {
	p := benchParams(b)
	r := NewCachedRenderer(64<<20, nil)
	_, dst, _, _ := r.AppendSplit(nil, p)
	b.ReportAllocs()
	cpuLoop(b, func() { _, dst, _, _ = r.AppendSplit(dst[:0], p) })
}

// BenchmarkAssembleWarmParallel is the warm path from all CPUs.
func BenchmarkAssembleWarmParallel(b *testing.B) {
	p := benchParams(b)
	r := NewCachedRenderer(64<<20, nil)
	dst, _, _ := r.AppendPrompt(nil, p)
	b.SetBytes(int64(len(dst)))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		buf := make([]byte, 0, len(dst)+1024)
		for pb.Next() {
			buf, _, _ = r.AppendPrompt(buf[:0], p)
		}
	})
}

// BenchmarkStableKey is the hashing of the stable inputs alone.
func BenchmarkStableKey(b *testing.B) {
	p := benchParams(b)
	b.ReportAllocs()
	cpuLoop(b, func() { _ = StableKey(p) })
}

// BenchmarkColdWithTokenize is a cold call that also counts the stable
// prefix's tokens (what a warm call saves).
func BenchmarkColdWithTokenize(b *testing.B) {
	p := benchParams(b)
	r := &Renderer{Counter: tokenize.MustGet(tokenize.O200kBase)}
	dst, _, _ := r.AppendPrompt(nil, p)
	b.SetBytes(int64(len(dst)))
	b.ReportAllocs()
	cpuLoop(b, func() { dst, _, _ = r.AppendPrompt(dst[:0], p) })
}

func BenchmarkTrimContent(b *testing.B) {
	s := strings.Repeat("line 0000 abcdefghij\n", 10000)
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		TrimContent(s, "AGENTS.md", DefaultBootstrapMaxChars)
	}
}
