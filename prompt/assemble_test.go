package prompt

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/ocbench/ocbench/tokenize"
)

func hashString(s string) uint64 { return xxhash.Sum64String(s) }

// TestWarmPathAllocatesNothing: with the stable prefix cached and a reused
// dst, a prompt costs no allocation.
func TestWarmPathAllocatesNothing(t *testing.T) {
	p := benchParams(t)
	r := NewCachedRenderer(64<<20, nil)
	dst, _, err := r.AppendPrompt(nil, p)
	if err != nil {
		t.Fatal(err)
	}
	dst = append(make([]byte, 0, 2*len(dst)), dst...)
	allocs := testing.AllocsPerRun(200, func() {
		dst, _, _ = r.AppendPrompt(dst[:0], p)
	})
	if allocs != 0 {
		t.Fatalf("warm AppendPrompt: %v allocs, want 0", allocs)
	}
	var dyn []byte
	stable, dyn, _, _ := r.AppendSplit(make([]byte, 0, 64<<10), p)
	if got := string(stable) + "\n" + CacheBoundary + "\n" + string(dyn); got != string(dst) {
		t.Fatalf("AppendSplit parts differ from AppendPrompt: %s", firstDiff(got, string(dst)))
	}
	if a := testing.AllocsPerRun(200, func() { _, dyn, _, _ = r.AppendSplit(dyn[:0], p) }); a != 0 {
		t.Fatalf("warm AppendSplit: %v allocs", a)
	}
	if a := testing.AllocsPerRun(100, func() { StableKey(p) }); a != 0 {
		t.Fatalf("StableKey: %v allocs", a)
	}
}

// TestWarmDoesNotRerenderOrRetokenize counts the expensive steps.
func TestWarmDoesNotRerenderOrRetokenize(t *testing.T) {
	p := benchParams(t)
	r := NewCachedRenderer(64<<20, tokenize.MustGet(tokenize.O200kBase))
	cold, lay1, _ := r.AppendPrompt(nil, p)
	if st := r.Stats(); st.StableRenders != 1 || st.Tokenizations != 1 {
		t.Fatalf("cold stats %+v", st)
	}
	for i := 0; i < 5; i++ {
		warm, lay, _ := r.AppendPrompt(nil, p)
		if !bytes.Equal(warm, cold) || !lay.Cached || lay.StableTokens != lay1.StableTokens || lay.PrefixHash != lay1.PrefixHash {
			t.Fatalf("warm output differs (cached=%v)", lay.Cached)
		}
	}
	if st := r.Stats(); st.StableRenders != 1 || st.Tokenizations != 1 {
		t.Fatalf("warm calls re-rendered or re-tokenized: %+v", st)
	}
	cs := r.Cache.Stats()
	if cs.Hits != 5 || cs.Misses != 1 {
		t.Fatalf("cache stats %+v", cs)
	}
	n, _ := tokenize.MustGet(tokenize.O200kBase).Count(string(cold[:lay1.StableLen]))
	if lay1.StableTokens != n {
		t.Fatalf("stable tokens %d, want %d", lay1.StableTokens, n)
	}
	// A dynamic change still hits; a stable change misses.
	p2 := *p
	p2.Runtime.Host = "otherhost"
	r.AppendPrompt(nil, &p2)
	if st := r.Stats(); st.StableRenders != 1 {
		t.Fatalf("dynamic change re-rendered the stable part")
	}
	p2.UserTimezone = "UTC"
	r.AppendPrompt(nil, &p2)
	if st := r.Stats(); st.StableRenders != 2 || st.Tokenizations != 2 {
		t.Fatalf("stable change did not re-render: %+v", st)
	}
}

// TestDynamicInputsKeepPrefix is the property: any change to a dynamic
// input leaves the bytes above the boundary unchanged (and the cache key);
// any change to a stable input changes the prefix hash.
func TestDynamicInputsKeepPrefix(t *testing.T) {
	base := benchParams(t)
	// Include a heartbeat file so that its change is covered.
	base.ContextFiles = append(base.ContextFiles[:len(base.ContextFiles):len(base.ContextFiles)], ContextFile{Path: "/x/HEARTBEAT.md", Content: "check inbox"})
	ref, refLay, _ := AppendPrompt(nil, base)
	refStable := string(ref[:refLay.Marker])

	dynamic := map[string]func(p *Params){
		"heartbeat prompt":    func(p *Params) { p.HeartbeatPrompt = "Current time: 2026-11-30 05:00 UTC. " + DefaultHeartbeatPrompt },
		"heartbeat off":       func(p *Params) { p.HeartbeatPrompt = "" },
		"heartbeat file":      func(p *Params) { p.ContextFiles[len(p.ContextFiles)-1].Content = "check inbox at 09:00" },
		"channel":             func(p *Params) { p.Runtime.Channel = "discord" },
		"no channel":          func(p *Params) { p.Runtime.Channel = "" },
		"capabilities":        func(p *Params) { p.Runtime.Capabilities = []string{"reactions"} },
		"host":                func(p *Params) { p.Runtime.Host = "other" },
		"model":               func(p *Params) { p.Runtime.Model = "openai/gpt-5.4" },
		"os":                  func(p *Params) { p.Runtime.OS = "Darwin 24.0.0"; p.Runtime.Arch = "arm64" },
		"thinking":            func(p *Params) { p.DefaultThinkLevel = "high" },
		"reasoning level":     func(p *Params) { p.ReasoningLevel = "stream" },
		"extra system prompt": func(p *Params) { p.ExtraSystemPrompt = "Different group." },
		"reactions":           func(p *Params) { p.Reactions = &ReactionGuidance{Level: "extensive", Channel: "telegram"} },
		"tts":                 func(p *Params) { p.TTSHint = "Voice replies are enabled." },
		"dynamic suffix":      func(p *Params) { p.Provider.DynamicSuffix = "suffix" },
		"channel options":     func(p *Params) { p.MessageChannelOptions = "telegram|slack" },
	}
	for name, mut := range dynamic {
		p := *base
		p.ContextFiles = append([]ContextFile(nil), base.ContextFiles...)
		mut(&p)
		out, lay, err := AppendPrompt(nil, &p)
		if err != nil {
			t.Fatal(err)
		}
		if string(out[:lay.Marker]) != refStable {
			t.Errorf("%s: stable bytes changed: %s", name, firstDiff(string(out[:lay.Marker]), refStable))
		}
		if lay.Key != refLay.Key || lay.PrefixHash != refLay.PrefixHash {
			t.Errorf("%s: stable key or prefix hash changed", name)
		}
		if bytes.Equal(out, ref) && name != "heartbeat prompt" {
			// every dynamic mutation above is visible somewhere below
			t.Errorf("%s: output unchanged (mutation not rendered)", name)
		}
	}

	stable := map[string]func(p *Params){
		"workspace":    func(p *Params) { p.WorkspaceDir = "/other" },
		"mode":         func(p *Params) { p.Mode = ModeMinimal },
		"tools":        func(p *Params) { p.ToolNames = []string{"read"} },
		"timezone":     func(p *Params) { p.UserTimezone = "UTC" },
		"file content": func(p *Params) { p.ContextFiles[0].Content += "!"; p.ContextFiles[0].Hash = 0 },
		"file path":    func(p *Params) { p.ContextFiles[1].Path = "/elsewhere/SOUL.md" },
		"skills": func(p *Params) {
			p.SkillsPrompt = strings.Replace(p.SkillsPrompt, "skill-00", "skill-0x", 2)
			p.SkillsHash = 0
		},
		"owner":           func(p *Params) { p.OwnerNumbers = []string{"+1"} },
		"notice":          func(p *Params) { p.BootstrapTruncationNotice = BootstrapTruncationNotice },
		"bootstrap mode":  func(p *Params) { p.BootstrapMode = BootstrapNone },
		"reasoning hint":  func(p *Params) { p.ReasoningTagHint = true },
		"approval":        func(p *Params) { p.ApprovalUI = ApprovalCommand },
		"provider prefix": func(p *Params) { p.Provider.StablePrefix = "<persona_latch/>" },
		"sandbox":         func(p *Params) { p.Sandbox.Enabled = true },
		"silent off":      func(p *Params) { p.SourceReplyDeliveryMode = "message_tool_only" },
		"aliases":         func(p *Params) { p.ModelAliasLines = []string{"- x: y/z"} },
		"notes": func(p *Params) {
			p.WorkspaceNotes = []string{"Reminder: commit your changes in this workspace after edits."}
		},
	}
	for name, mut := range stable {
		p := *base
		p.ContextFiles = append([]ContextFile(nil), base.ContextFiles...)
		mut(&p)
		_, lay, err := AppendPrompt(nil, &p)
		if err != nil {
			t.Fatal(err)
		}
		if lay.PrefixHash == refLay.PrefixHash {
			t.Errorf("%s: prefix hash unchanged", name)
		}
		if lay.Key == refLay.Key {
			t.Errorf("%s: stable key unchanged", name)
		}
	}
}

func TestModeNoneAndBadMode(t *testing.T) {
	out, lay, err := AppendPrompt(nil, &Params{Mode: ModeNone, ToolNames: []string{"read"}})
	if err != nil || string(out) != IdentityLine || lay.Marker != -1 {
		t.Fatalf("%q %+v %v", out, lay, err)
	}
	if _, _, err := AppendPrompt(nil, &Params{Mode: 7}); err != ErrMode {
		t.Fatalf("err = %v", err)
	}
	if _, err := ParseMode("maximal"); err == nil {
		t.Fatal("ParseMode accepted junk")
	}
}

// TestSplitFullTypicalFromInputs rebuilds the cacheBoundary case's whole
// prompt from inputs: tool ordering with extras, model aliases, notes,
// owners, time zone, SOUL persona, MEMORY and extra files, heartbeat file
// below the boundary, messaging with sessions_spawn, voice, group chat,
// reactions, heartbeats and a full runtime line.
func TestSplitFullTypicalFromInputs(t *testing.T) {
	var in string
	for _, c := range loadCases(t, "cacheBoundary") {
		if c.Name == "split-full-typical" {
			decodeInto(t, c.Input, &in)
		}
	}
	ws := "/home/u/.openclaw/workspace"
	p := &Params{
		WorkspaceDir:    ws,
		ToolNames:       []string{"read", "write", "edit", "exec", "process", "subagents", "session_status", "Alpha_Tool", "sessions_spawn", "zeta_tool"},
		SkillsPrompt:    "The following skills provide specialized instructions for specific tasks.\n<available_skills>\n  <skill>\n    <name>github</name>\n    <description>GitHub CLI</description>\n    <location>~/skills/github/SKILL.md</location>\n  </skill>\n</available_skills>",
		ModelAliasLines: []string{"- sonnet: anthropic/claude-sonnet-4-5"},
		UserTimezone:    "Europe/Berlin",
		WorkspaceNotes:  []string{"Reminder: commit your changes in this workspace after edits."},
		OwnerNumbers:    []string{"+15551234567", "+15557654321"},
		ContextFiles: []ContextFile{
			{Path: ws + "/AGENTS.md", Content: "# AGENTS\nFollow rules."},
			{Path: ws + "/SOUL.md", Content: "Be kind.\n\n\n\nReally."},
			{Path: ws + "/TOOLS.md", Content: "[MISSING] Expected at: " + ws + "/TOOLS.md"},
			{Path: ws + "/HEARTBEAT.md", Content: "# Heartbeat\n- check inbox"},
			{Path: ws + "/EXTRA.md", Content: "extra file"},
			{Path: ws + "/MEMORY.md", Content: "# Memory\n- likes tea"},
		},
		TTSHint:           "Voice replies are enabled.",
		ExtraSystemPrompt: "You are in the #general group. Keep replies short.",
		Reactions:         &ReactionGuidance{Level: "minimal", Channel: "telegram"},
		HeartbeatPrompt:   DefaultHeartbeatPrompt,
		Runtime: RuntimeInfo{AgentID: "main", Host: "myhost", RepoRoot: "/home/u/repo", OS: "Linux 6.8.0", Arch: "x64", Node: "v22.14.0",
			Model: "anthropic/claude-sonnet-4-5", DefaultModel: "anthropic/claude-sonnet-4-5", Shell: "bash", Channel: "telegram",
			Capabilities: []string{"inlineButtons", "reactions"}},
		DefaultThinkLevel: "low",
	}
	p.ApprovalUI = ApprovalUIFor(p.Runtime.Channel, p.Runtime.Capabilities)
	out, _, err := AppendPrompt(nil, p)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != in {
		t.Fatal(firstDiff(string(out), in))
	}
	if !strings.Contains(in, "\n\n<!-- OPENCLAW_CACHE_BOUNDARY -->\n\n") {
		t.Fatal("case lost its marker")
	}
}

func TestRendererConcurrent(t *testing.T) {
	base := benchParams(t)
	r := NewCachedRenderer(1<<20, nil) // one shard of 1 MiB shared by four prefixes
	var want [4][]byte
	var ps [4]*Params
	for i := range ps {
		p := *base
		p.UserTimezone = []string{"UTC", "Europe/Berlin", "Asia/Tokyo", "America/New_York"}[i]
		ps[i] = &p
		want[i], _, _ = AppendPrompt(nil, &p)
	}
	done := make(chan error, 4)
	for g := 0; g < 4; g++ {
		go func(g int) {
			var buf []byte
			for i := 0; i < 50; i++ {
				k := (g + i) % 4
				buf, _, _ = r.AppendPrompt(buf[:0], ps[k])
				if !bytes.Equal(buf, want[k]) {
					done <- fmt.Errorf("goroutine %d iteration %d: output differs", g, i)
					return
				}
			}
			done <- nil
		}(g)
	}
	for i := 0; i < 4; i++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if st := r.Cache.Stats(); st.Hits == 0 || st.Bytes > st.MaxBytes {
		t.Fatalf("cache stats %+v", st)
	}
}

func TestNilParams(t *testing.T) {
	if _, _, err := AppendPrompt(nil, nil); err != ErrNilParams {
		t.Fatalf("err = %v", err)
	}
	var r Renderer
	if _, _, _, err := r.AppendSplit(nil, nil); err != ErrNilParams {
		t.Fatalf("split err = %v", err)
	}
}
