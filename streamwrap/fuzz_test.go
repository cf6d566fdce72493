package streamwrap

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/streamwrap/repair"
)

// FuzzResolveToolName checks the invariants of name resolution on any
// input: it never panics; without requireAllowed it always answers, with a
// trimmed name or the raw blank one; with requireAllowed a success is an
// allowlist name; resolution is idempotent (the trim decorator's per-block
// cache relies on it); and the slow-path cache answers as a fresh
// resolution does.
func FuzzResolveToolName(f *testing.F) {
	for _, s := range [][2]string{
		{" read ", ""}, {"functionsread3", ""}, {"", "functions.read:0"}, {"", "Functions.Read_7"},
		{"functions.exec2", "functions.exec2"}, {" BASH ", ""}, {"read\" parameter=\"path\"", ""},
		{"qualified/write<parameter=path", ""}, {"functions.graph.search", ""}, {"someOtherTool", "functionswrite4"},
		{"   ", "call_1"}, {"tools-7", ""}, {"ReAd", ""}, {"\u00a0exec\u3000", ""}, {"apply-patch", ""},
	} {
		f.Add(s[0], s[1], true)
		f.Add(s[0], s[1], false)
	}
	allowed := NewAllowlist("read", "write", "exec", "exec2", "graph.search", "search", "qualified.write", "apply_patch", "Read2")
	fresh := func() *Allowlist { return NewAllowlist(allowed.Names()...) }
	f.Fuzz(func(t *testing.T, name, id string, require bool) {
		got, ok := ResolveToolName(name, id, allowed, require)
		if !require && !ok {
			t.Fatalf("ResolveToolName(%q, %q) failed without requireAllowed", name, id)
		}
		if require && ok && !allowed.Has(got) && trimSpace(name) != "" {
			t.Fatalf("requireAllowed gave %q, not in the allowlist", got)
		}
		if ok && !require && trimSpace(name) == "" && got != name && !allowed.Has(got) {
			t.Fatalf("blank %q became %q", name, got)
		}
		if ok && trimSpace(got) != "" && got != trimSpace(got) {
			t.Fatalf("result %q is not trimmed", got)
		}
		if utf8.ValidString(name) && ok {
			again, ok2 := ResolveToolName(got, id, allowed, require)
			if !ok2 || again != got {
				t.Fatalf("not idempotent: %q -> %q -> %q (%v)", name, got, again, ok2)
			}
		}
		g2, ok2 := ResolveToolName(name, id, fresh(), require)
		if g2 != got || ok2 != ok {
			t.Fatalf("cached %q,%v vs fresh %q,%v for %q", got, ok, g2, ok2, name)
		}
		if n := NormalizeToolPolicyName(name); strings.TrimSpace(n) != n && utf8.ValidString(n) && !strings.ContainsAny(n, "\u0085\u180e\u200b") {
			t.Fatalf("normalized %q is not trimmed: %q", name, n)
		}
	})
}

// FuzzRepairSkip is differential: whenever the repair decorator's
// incremental scan says no balanced span has closed and no smart quote was
// seen, repair.OpenClawExtract on the same buffer must fail, so skipping it
// changes nothing.
func FuzzRepairSkip(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `.functions.read:0 {"p":"}"}x`, `[{"a":"]"}]`, `{"a":"\"}"`, `x {"a":{"b":[1,2}]}}`, "{\u201cpath\u201d:\u201cx\u201d}", `"{" {"a":1}`} {
		f.Add(s, uint8(3))
	}
	f.Fuzz(func(t *testing.T, text string, step uint8) {
		var z spanScan
		var buf []byte
		n := int(step%7) + 1
		for i := 0; i < len(text); i += n {
			old := len(buf)
			buf = append(buf, text[i:min(len(text), i+n)]...)
			z.feed(buf, old)
			if z.closed || hasSmartQuote(buf) {
				continue
			}
			if _, _, _, _, ok := repair.OpenClawExtract(nil, buf, nil); ok {
				t.Fatalf("scan says no span but OpenClawExtract succeeds on %q", buf)
			}
		}
	})
}

// FuzzTrimSpace holds trimSpace, printable-ASCII shortcut included, to
// JavaScript's trim as llm.IsJSSpace defines its spaces, on strings and
// bytes alike.
func FuzzTrimSpace(f *testing.F) {
	for _, s := range []string{"", " a ", "call_1", "\u00a0x", "x\u2028", "\ufeff{}", "a\t", "\xff", " "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := strings.TrimFunc(s, llm.IsJSSpace)
		if got := trimSpace(s); got != want {
			t.Fatalf("trimSpace(%q) = %q, want %q", s, got, want)
		}
		if got := trimSpace([]byte(s)); string(got) != want {
			t.Fatalf("trimSpace([]byte(%q)) = %q, want %q", s, got, want)
		}
	})
}

// FuzzHasJSSpace holds hasJSSpace, which decodes only past printable
// ASCII, to strings.ContainsFunc(s, llm.IsJSSpace).
func FuzzHasJSSpace(f *testing.F) {
	for _, s := range []string{"", "read", "re ad", "read\u00a0", "\u3000exec", "a\xffb", "x\u2028", "tab\there"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := hasJSSpace(s), strings.ContainsFunc(s, llm.IsJSSpace); got != want {
			t.Fatalf("hasJSSpace(%q) = %v, want %v", s, got, want)
		}
	})
}

// FuzzArgStateAdd: whatever the deltas, argState.add leaves the UTF-16
// length, the closer and smart-quote flags and the span scan what they are
// for the joined buffer as a whole.
func FuzzArgStateAdd(f *testing.F) {
	for _, s := range []string{`{"a":1}`, "x {\u201cpath\u201d:\u201cx\u201d}", "ab\xe2\x80", "\x9c}", `{"p":"` + strings.Repeat("abcdefgh", 6) + `"}`, "😀]\xff"} {
		f.Add(s, uint8(3))
	}
	f.Fuzz(func(t *testing.T, text string, step uint8) {
		var a argState
		n := int(step%40) + 1
		for i := 0; i < len(text); i += n {
			a.add([]byte(text[i:min(len(text), i+n)]))
			var z spanScan
			z.feed(a.buf, 0)
			if a.units != utf16Len(a.buf) || a.closer != hasCloser(a.buf) || a.smart != hasSmartQuote(a.buf) ||
				a.span.closed != z.closed || a.span.overflow != z.overflow {
				t.Fatalf("after %q: units %d closer %v smart %v closed %v", a.buf, a.units, a.closer, a.smart, a.span.closed)
			}
		}
	})
}
