package prompt

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzBootstrapTruncate checks trimBootstrapContent's invariants on any
// content and budget: never longer than the budget, untouched when it
// fits, head and tail are a prefix and a suffix of the trimmed content, and
// the marker tells the true original length.
func FuzzBootstrapTruncate(f *testing.F) {
	f.Add("line 0000 abcdefghij\n", 500)
	f.Add(strings.Repeat("x", 2000), 80)
	f.Add("😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀", 5)
	f.Add("a\xffb\xfe", 1)
	f.Add("  \n\n", 10)
	f.Fuzz(func(t *testing.T, content string, maxChars int) {
		if maxChars < 1 || maxChars > 1<<16 {
			maxChars = 1 + abs(maxChars)%4096
		}
		out, truncated := TrimContent(content, "AGENTS.md", maxChars)
		trimmed := trimEndJS(content)
		if !truncated {
			if out != trimmed {
				t.Fatalf("fit: changed content")
			}
			return
		}
		if n := len16(out); n > maxChars {
			t.Fatalf("output %d units > budget %d", n, maxChars)
		}
		if utf8.ValidString(trimmed) && !utf8.ValidString(out) {
			t.Fatalf("split a character: %q", out)
		}
		total := len16(trimmed)
		if !strings.Contains(out, "/"+itoa(total)+"]") && !strings.Contains(out, " chars of "+itoa(total)+")") {
			// the marker may itself have been cut by the final clamp only
			// when the budget is smaller than the marker
			if maxChars > 120 {
				t.Fatalf("marker lost the original length %d: %q", total, out)
			}
		}
	})
}

func abs(n int) int {
	if n < 0 {
		if n == -n { // minimum int
			return 0
		}
		return -n
	}
	return n
}

// FuzzBuildContextFiles checks the total budget and per-file limits over
// several files.
func FuzzBuildContextFiles(f *testing.F) {
	f.Add("hello", "   ", strings.Repeat("y", 3000), 500, 1200)
	f.Add("", "x", "z", 1, 1)
	f.Fuzz(func(t *testing.T, a, b, c string, maxChars, total int) {
		maxChars = 1 + abs(maxChars)%8192
		total = 1 + abs(total)%20000
		files := []BootstrapFile{
			{Name: "AGENTS.md", Path: "/w/AGENTS.md", Content: a},
			{Name: "SOUL.md", Path: "/w/SOUL.md", Content: b},
			{Name: "TOOLS.md", Path: "/w/TOOLS.md", Missing: true},
			{Name: "USER.md", Path: "/w/USER.md", Content: c},
		}
		out, _ := BuildContextFiles(files, Budget{MaxChars: maxChars, TotalMaxChars: total})
		sum := 0
		for _, f := range out {
			if f.Content == "" {
				t.Fatal("empty file injected")
			}
			if f.InjectedChars != len16(f.Content) {
				t.Fatal("length accounting")
			}
			if !f.Missing && f.InjectedChars > maxChars {
				t.Fatalf("%s: %d > per-file %d", f.Name, f.InjectedChars, maxChars)
			}
			sum += f.InjectedChars
		}
		if sum > total {
			t.Fatalf("total %d > %d", sum, total)
		}
	})
}

// FuzzRenderPrompt renders arbitrary inputs: never a panic, exactly one
// boundary marker at the reported offset (except mode none), the stable
// part independent of the dynamic inputs, and the cached path identical to
// the uncached one.
func FuzzRenderPrompt(f *testing.F) {
	f.Add("/w", "read,exec,message", "AGENTS.md", "# AGENTS\n\n\n\nrules", "HEARTBEAT.md", "ping", "telegram", "inlineButtons", "extra", "UTC", uint8(0))
	f.Add("", "", "", "", "", "", "", "", "", "", uint8(1))
	f.Add("/w\n", " READ ,read", "SOUL.md", "soul", "heartbeat.md", "", "WEBCHAT", "", "", "Europe/Berlin", uint8(2))
	r := NewCachedRenderer(1<<20, nil)
	f.Fuzz(func(t *testing.T, ws, tools, fileA, contentA, fileB, contentB, channel, caps, extra, tz string, mode uint8) {
		p := &Params{
			WorkspaceDir: ws, Mode: Mode(mode % 3), ToolNames: strings.Split(tools, ","), UserTimezone: tz,
			ContextFiles:      []ContextFile{{Path: "/w/" + fileA, Content: contentA}, {Path: "/w/" + fileB, Content: contentB}},
			Runtime:           RuntimeInfo{Channel: channel, Capabilities: strings.Split(caps, ",")},
			ExtraSystemPrompt: extra,
			SkillsPrompt:      contentA,
		}
		out, lay, err := AppendPrompt(nil, p)
		if err != nil {
			t.Fatal(err)
		}
		s := string(out)
		if p.Mode == ModeNone {
			if s != IdentityLine {
				t.Fatalf("mode none: %q", s)
			}
			return
		}
		if s[lay.Marker:lay.Marker+len(CacheBoundary)] != CacheBoundary {
			t.Fatal("marker not at the reported offset")
		}
		if !strings.HasPrefix(s, IdentityLine) || !strings.Contains(s[lay.DynamicStart:], "## Runtime\nRuntime: ") {
			t.Fatal("identity or runtime missing")
		}
		cached, _, _ := r.AppendPrompt(nil, p)
		if string(cached) != s {
			t.Fatal(firstDiff(string(cached), s))
		}
		// Dynamic inputs do not move the stable part.
		q := *p
		q.Runtime = RuntimeInfo{Channel: "other"}
		q.ExtraSystemPrompt = "different"
		out2, lay2, _ := AppendPrompt(nil, &q)
		if string(out2[:lay2.Marker]) != s[:lay.Marker] || lay2.Key != lay.Key {
			t.Fatal("dynamic input changed the stable part")
		}
	})
}

// FuzzParseSkill: any SKILL.md either parses or fails with
// ErrSkillFrontMatter; never a panic.
func FuzzParseSkill(f *testing.F) {
	f.Add([]byte("---\nname: github\ndescription: \"GitHub: gh CLI\"\n---\nbody"))
	f.Add([]byte("---\r\nname: [x\r\n---\r\n"))
	f.Add([]byte("\ufeff---\nname: a\ndisable-model-invocation: yes\n---"))
	f.Add([]byte("no front matter"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseSkill(b)
		if err != nil {
			if !errors.Is(err, ErrSkillFrontMatter) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if s.Name != strings.TrimSpace(s.Name) {
			t.Fatalf("untrimmed name %q", s.Name)
		}
	})
}
