package prompt

import (
	"strings"
	"testing"
)

func TestProviderContribution(t *testing.T) {
	p := &Params{
		WorkspaceDir: "/w",
		ToolNames:    []string{"read"},
		Provider: ProviderContribution{
			StablePrefix:     "<persona_latch>\r\nstay in character   \r\n</persona_latch>\n",
			DynamicSuffix:    "  turn-specific provider note  ",
			InteractionStyle: "## Interaction Style\nBe warm.",
			ToolCallStyle:    "## Tool Call Style\nCall tools silently.",
			ExecutionBias:    "## Execution Bias\n- Do it now.",
		},
		Reactions:       &ReactionGuidance{Level: "extensive", Channel: "telegram"},
		HeartbeatPrompt: DefaultHeartbeatPrompt,
	}
	out, lay, err := AppendPrompt(nil, p)
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	order := []string{
		"## Tooling", "## Interaction Style\nBe warm.", "## Tool Call Style\nCall tools silently.\n## Execution Bias\n- Do it now.",
		"<persona_latch>\nstay in character\n</persona_latch>\n## Safety", CacheBoundary,
		"Reactions are enabled for telegram in EXTENSIVE mode.\nFeel free to react liberally:",
		"Guideline: react whenever it feels natural.\nturn-specific provider note\n## Heartbeats", "## Runtime",
	}
	last := -1
	for _, o := range order {
		i := strings.Index(s, o)
		if i < 0 || i < last {
			t.Fatalf("%q missing or out of order in:\n%s", o, s)
		}
		last = i
	}
	if strings.Contains(s, "Narrate only when it helps") || strings.Contains(s, "Actionable request: act in this turn.") {
		t.Fatal("overridden default blocks still rendered")
	}
	if strings.Index(s, "turn-specific") < lay.Marker || strings.Index(s, "persona_latch") > lay.Marker {
		t.Fatal("provider parts on the wrong side of the boundary")
	}
	// In minimal mode the execution_bias override is still emitted, the
	// default block is not.
	p.Mode = ModeMinimal
	out, _, _ = AppendPrompt(nil, p)
	if !strings.Contains(string(out), "## Execution Bias\n- Do it now.") || strings.Contains(string(out), "## Heartbeats") {
		t.Fatal("minimal mode: execution_bias override missing or heartbeats present")
	}
	p.Provider.ExecutionBias = ""
	out, _, _ = AppendPrompt(nil, p)
	if strings.Contains(string(out), "## Execution Bias") {
		t.Fatal("minimal mode rendered the default Execution Bias")
	}
}

func TestSectionsByMode(t *testing.T) {
	p := &Params{
		WorkspaceDir: "/w", ToolNames: []string{"read", "gateway", "memory_search", "message"},
		MemoryEnabled: true, ModelAliasLines: []string{"- a: b/c"}, OwnerNumbers: []string{"+1"},
		TTSHint: "Voice on.", HeartbeatPrompt: "hb", UserTimezone: "UTC",
		Runtime: RuntimeInfo{Channel: "webchat"},
	}
	fullOnly := []string{"## Execution Bias", "## OpenClaw Self-Update", "## Model Aliases", "## Documentation",
		"## Authorized Senders", "## Assistant Output Directives", "## Silent Replies", "## Memory Recall",
		"## Control UI Embed", "## Messaging", "## Voice (TTS)", "## Heartbeats"}
	always := []string{"## Tooling", "## Tool Call Style", "## Safety", "## OpenClaw CLI Quick Reference", "## Workspace\n",
		"## Current Date & Time", "## Workspace Files (injected)", "## Runtime"}
	full, _, _ := AppendPrompt(nil, p)
	p.Mode = ModeMinimal
	minimal, _, _ := AppendPrompt(nil, p)
	for _, h := range fullOnly {
		if !strings.Contains(string(full), h) {
			t.Errorf("full lacks %q", h)
		}
		if strings.Contains(string(minimal), h) {
			t.Errorf("minimal has %q", h)
		}
	}
	for _, h := range always {
		if !strings.Contains(string(full), h) || !strings.Contains(string(minimal), h) {
			t.Errorf("%q not in both modes", h)
		}
	}
	p.SourceReplyDeliveryMode = "message_tool_only"
	p.Mode = ModeFull
	tool, _, _ := AppendPrompt(nil, p)
	if strings.Contains(string(tool), "## Silent Replies") || !strings.Contains(string(tool), controlUIEmbedMsgTool) {
		t.Error("message_tool_only: Silent Replies kept or embed variant wrong")
	}
}

func TestSystemPromptOverride(t *testing.T) {
	p := &Params{
		WorkspaceDir: "/w", SystemPromptOverride: "  You are a terse bot.\n",
		BootstrapMode: BootstrapFull, BootstrapTruncationNotice: BootstrapTruncationNotice,
		ContextFiles: []ContextFile{{Path: "/w/AGENTS.md", Content: "agents"}, {Path: "/w/BOOTSTRAP.md", Content: "Hello, bootstrap me."}},
	}
	out, lay, err := AppendPrompt(nil, p)
	if err != nil {
		t.Fatal(err)
	}
	want := "You are a terse bot.\n\n" + bootstrapPendingFull + "\n## Bootstrap Context Notice\n" + BootstrapTruncationNotice +
		"\n" + projectContextHead + "\n## /w/BOOTSTRAP.md\nHello, bootstrap me."
	if string(out) != want {
		t.Fatal(firstDiff(string(out), want))
	}
	if lay.Marker != -1 || lay.Len != len(want) {
		t.Fatalf("layout %+v", lay)
	}
	p.BootstrapMode, p.BootstrapTruncationNotice = BootstrapNone, ""
	out, _, _ = AppendPrompt(nil, p)
	if string(out) != "You are a terse bot." {
		t.Fatalf("%q", out)
	}
}

func TestSkillsLimitsAndHome(t *testing.T) {
	var skills []Skill
	for _, n := range []string{"beta", "Alpha", "gamma", "delta"} {
		skills = append(skills, Skill{Name: n, Description: "d " + n, FilePath: "/home/u/.openclaw/skills/" + n + "/SKILL.md"})
	}
	skills = append(skills, Skill{Name: "hidden", FilePath: "/x", HideFromPrompt: true})
	res := BuildSkillsPrompt(skills, SkillLimits{MaxSkillsInPrompt: 3}, "/home/u/", "")
	if res.Eligible != 4 || res.Included != 3 || !res.Truncated || res.Compact {
		t.Fatalf("%+v", res)
	}
	want := "⚠️ Skills truncated: included 3 of 4. Run `openclaw skills check` to audit.\n"
	if !strings.HasPrefix(res.Prompt, want) {
		t.Fatalf("warning: %q", res.Prompt[:120])
	}
	// English collation: Alpha, beta, delta (gamma cut by the count limit).
	a, b, d := strings.Index(res.Prompt, "<name>Alpha<"), strings.Index(res.Prompt, "<name>beta<"), strings.Index(res.Prompt, "<name>delta<")
	if !(a >= 0 && a < b && b < d) || strings.Contains(res.Prompt, "gamma") || strings.Contains(res.Prompt, "hidden") {
		t.Fatalf("order or filtering wrong:\n%s", res.Prompt)
	}
	if !strings.Contains(res.Prompt, "<location>~/.openclaw/skills/beta/SKILL.md</location>") {
		t.Fatal("home path not shortened")
	}
	// Compact without truncation: the compact-only warning.
	long := []Skill{{Name: "a", Description: strings.Repeat("long ", 60), FilePath: "/a"}, {Name: "b", Description: strings.Repeat("long ", 60), FilePath: "/b"}}
	full, compact := len16(FormatSkills(long, false)), len16(FormatSkills(long, true))
	res = BuildSkillsPrompt(long, SkillLimits{MaxSkillsPromptChars: compact + 150}, "", "Remote note.")
	if full <= compact+150 {
		t.Fatalf("test setup: full %d compact %d", full, compact)
	}
	if !res.Compact || res.Truncated || !strings.HasPrefix(res.Prompt, "Remote note.\n⚠️ Skills catalog using compact format (descriptions omitted).") {
		t.Fatalf("%+v\n%s", res, res.Prompt)
	}
	if FormatSkills(nil, false) != "" {
		t.Fatal("empty list must format to empty string")
	}
}

func TestBoundaryHelpers(t *testing.T) {
	b := CacheBoundary
	cases := []struct{ prompt, add, want string }{
		{"Stable prefix" + b + "Dynamic suffix", "Per-turn lab context", "Stable prefix" + b + "Per-turn lab context\n\nDynamic suffix"},
		{"Stable prefix" + b + "Dynamic suffix  \r\n\r\nMore detail \t\r\n", "  Per-turn lab context \r\nSecond line\t\r\n",
			"Stable prefix" + b + "Per-turn lab context\nSecond line\n\nDynamic suffix\n\nMore detail"},
		{"Stable" + b, "add", "Stable" + b + "add"},
		{"No marker here", "add", "add\n\nNo marker here"},
		{"   ", "add", "add"},
		{"Stable" + b + "Dyn", "  \r\n ", "Stable" + b + "Dyn"},
		{"S" + b + "D", "x" + b + "y", "S" + b + "x\ny\n\nD"},
	}
	for i, c := range cases {
		if got := PrependAfterBoundary(c.prompt, c.add); got != c.want {
			t.Errorf("case %d: %s", i, firstDiff(got, c.want))
		}
	}
	if got := StripBoundary("Stable prefix" + b + "Dynamic suffix"); got != "Stable prefix\nDynamic suffix" {
		t.Errorf("strip: %q", got)
	}
	if st, dy, ok := SplitBoundary("A  \n" + b + "\n\n B"); !ok || st != "A" || dy != "B" {
		t.Errorf("split: %q %q %v", st, dy, ok)
	}
	if _, _, ok := SplitBoundary("none"); ok {
		t.Error("split without marker")
	}
}
