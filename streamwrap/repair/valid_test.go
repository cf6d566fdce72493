package repair

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestValidMatchesEncodingJSON compares Valid with encoding/json.Valid on
// the oracle corpus, generated values and their byte mutations.
func TestValidMatchesEncodingJSON(t *testing.T) {
	var inputs [][]byte
	for _, r := range loadOracle(t) {
		inputs = append(inputs, []byte(r.In))
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var b bytes.Buffer
	for n := 0; n < 2000; n++ {
		b.Reset()
		genValue(rng, &b, 0)
		v := append([]byte(nil), b.Bytes()...)
		inputs = append(inputs, v)
		m := append([]byte(nil), v...)
		if len(m) > 0 {
			const alpha = "{}[]\",:\\ x0-.eE\x01\xff"
			m[rng.IntN(len(m))] = alpha[rng.IntN(len(alpha))]
		}
		inputs = append(inputs, m)
	}
	inputs = append(inputs,
		[]byte(strings.Repeat("[", MaxDepth)+strings.Repeat("]", MaxDepth)),
		[]byte(strings.Repeat("[", MaxDepth+1)+strings.Repeat("]", MaxDepth+1)),
		[]byte("\"\xff\""), []byte(`"\u00"`), []byte("1."), []byte("-"), []byte("01"), []byte("1e+"), []byte(" \t\r\n1 "),
	)
	for _, in := range inputs {
		if got, want := Valid(in), json.Valid(in); got != want {
			t.Errorf("Valid(%q) = %v, encoding/json says %v", in, got, want)
		}
	}
}

// TestPiParseValidMatchesEncodingJSON: on valid JSON pi-ai returns the
// value as JSON.parse gives it.
func TestPiParseValidMatchesEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var b bytes.Buffer
	for n := 0; n < 2000; n++ {
		b.Reset()
		if n%3 == 0 {
			b.WriteString(" \n")
		}
		genValue(rng, &b, 0)
		in := b.Bytes()
		out, how := PiParse(nil, in)
		if how != PiValid || !sameJSON(t, out, in) {
			t.Fatalf("PiParse(%q) = %q %v", in, out, how)
		}
	}
}

func TestProfileNames(t *testing.T) {
	for _, p := range []Profile{ProfileExtended, ProfileOpenClaw, ProfileOff} {
		q, ok := ParseProfile(p.String())
		if !ok || q != p {
			t.Errorf("ParseProfile(%q) = %v %v", p.String(), q, ok)
		}
	}
	if p, ok := ParseProfile(""); !ok || p != ProfileExtended {
		t.Errorf("default profile = %v %v", p, ok)
	}
	if _, ok := ParseProfile("strict"); ok {
		t.Error("ParseProfile accepted an unknown name")
	}
	if got := (FixTrailingComma | FixCodeFence).String(); got != "code-fence,trailing-comma" {
		t.Errorf("Fix.String = %q", got)
	}
	if got := Fix(0).String(); got != "" {
		t.Errorf("Fix(0).String = %q", got)
	}
	if got := (Profile(9)).String(); got != "Profile(9)" {
		t.Errorf("Profile(9).String = %q", got)
	}
}

func TestOpenClawShouldTry(t *testing.T) {
	tests := []struct {
		delta, buf string
		has        bool
		want       bool
	}{
		{`{"a":1}`, `{"a":1}`, false, true},
		{`]`, `[`, false, true},
		{`{"path":"/tmp`, `{"path":"/tmp`, false, false},
		{`x`, `{"a":1}x`, false, true},
		{` xx `, `{"a":1} xx `, false, true},
		{`oops`, `{"a":1}oops`, false, false},
		{`oops`, `{"a":1}oops`, true, true},
		{`   `, `{"a":1}   `, false, false},
		{`😀`, `{"a":1}😀`, false, true},    // 2 UTF-16 units
		{`😀😀`, `{"a":1}😀😀`, false, false}, // 4 units
		{"\u00a0x\u00a0", `{"a":1}` + "\u00a0x\u00a0", false, true},
		{"\ufeff\u2028\u3000", `{"a":1}` + "\ufeff\u2028\u3000", false, false},             // all JS whitespace
		{"\u200b\u200b\u200b\u200b", `{"a":1}` + "\u200b\u200b\u200b\u200b", false, false}, // U+200B is not: 4 units
		{"\u200bx", `{"a":1}` + "\u200bx", false, true},
	}
	for _, tt := range tests {
		if got := OpenClawShouldTry([]byte(tt.delta), []byte(tt.buf), tt.has); got != tt.want {
			t.Errorf("OpenClawShouldTry(%q, %q, %v) = %v", tt.delta, tt.buf, tt.has, got)
		}
	}
}

// validArgs2K is a valid ~2 KB edit-tool argument object.
var validArgs2K = func() []byte {
	var b bytes.Buffer
	b.WriteString(`{"path":"internal/stream/decoder.go","edits":[`)
	for i := 0; i < 12; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"oldText":"func (d *Decoder) Next() bool {\n\tif d.err != nil {\n\t\treturn false\n\t}","newText":"func (d *Decoder) Next() bool {\n\tif d.err != nil || d.done {\n\t\treturn false\n\t}\n\t// \"fast path\""}`)
	}
	b.WriteString(`],"dryRun":false,"timeoutMs":120000}`)
	return b.Bytes()
}()

// TestZeroAllocs: with a reused dst, the valid-input paths allocate nothing.
func TestZeroAllocs(t *testing.T) {
	dst := make([]byte, 0, 4096)
	repairBuf := []byte(`.functions.read:0 {"path":"/tmp/report.txt"}x`)
	smart := []byte(`{“path”:“safe.txt”,“offset”:5,“limit”:20}`)
	ent := []byte(`{"command":"a &amp;&amp; b &#x27;c&#x27; &lt;d&gt;"}`)
	checks := []struct {
		name string
		fn   func()
	}{
		{"Valid", func() { _ = Valid(validArgs2K) }},
		{"Extended/valid", func() { dst, _, _ = Extended(dst[:0], validArgs2K, nil) }},
		{"OpenClawExtract/valid", func() { dst, _, _, _, _ = OpenClawExtract(dst[:0], validArgs2K, []byte("edit")) }},
		{"OpenClawExtract/balanced", func() { dst, _, _, _, _ = OpenClawExtract(dst[:0], repairBuf, []byte("read")) }},
		{"OpenClawExtract/smart", func() { dst, _, _, _, _ = OpenClawExtract(dst[:0], smart, []byte("read")) }},
		{"OpenClawShouldTry", func() { _ = OpenClawShouldTry([]byte("}x"), repairBuf, false) }},
		{"PiParse/valid", func() { dst, _ = PiParse(dst[:0], validArgs2K) }},
		{"DecodeHTMLEntities", func() { dst = DecodeHTMLEntities(dst[:0], ent) }},
		{"DecodeEntitiesInJSON", func() { dst = DecodeEntitiesInJSON(dst[:0], ent) }},
		{"DecodeEntitiesInJSON/none", func() { dst = DecodeEntitiesInJSON(dst[:0], validArgs2K) }},
	}
	for _, c := range checks {
		if n := testing.AllocsPerRun(100, c.fn); n != 0 {
			t.Errorf("%s: %.1f allocs per run, want 0", c.name, n)
		}
	}
}

func TestOpenClawTrigger(t *testing.T) {
	calls := 0
	has := func(v bool) func() bool { return func() bool { calls++; return v } }
	if !OpenClawTrigger([]byte("}"), false, has(false)) || calls != 0 {
		t.Error("a closer in the delta must trigger without asking")
	}
	if OpenClawTrigger([]byte("oops"), false, has(true)) || calls != 0 {
		t.Error("a 4-character delta must not trigger nor ask")
	}
	if !OpenClawTrigger([]byte(" x "), false, has(true)) || calls != 1 {
		t.Error("a short delta after a closer must trigger")
	}
	if OpenClawTrigger([]byte("x"), false, has(false)) {
		t.Error("a short delta without a closer must not trigger")
	}
	if n := UTF16Len([]byte("a😀\xff")); n != 4 {
		t.Errorf("UTF16Len = %d, want 4", n)
	}
}

func TestEntityTableLookup(t *testing.T) {
	for i, e := range entityTable {
		if i > 0 && entityTable[i-1].name >= e.name {
			t.Fatalf("table not sorted at %q", e.name)
		}
		if v, ok := lookupEntity([]byte(e.name)); !ok || v != e.val {
			t.Fatalf("lookupEntity(%q) = %q %v, want %q", e.name, v, ok, e.val)
		}
		if got := DecodeHTMLEntities(nil, []byte("&"+e.name+";")); len(e.name) > 1 && string(got) != e.val {
			t.Fatalf("DecodeHTMLEntities(&%s;) = %q, want %q", e.name, got, e.val)
		}
	}
	for _, n := range []string{"", "zz", "AMPX", "\xff"} {
		if _, ok := lookupEntity([]byte(n)); ok {
			t.Errorf("lookupEntity(%q) found", n)
		}
	}
}

// FuzzTrigger holds jsTrim's printable-ASCII shortcut to the rune-by-rune
// trim, tooLongForJunk to the UTF-16 count it bounds, and OpenClawTrigger
// to its plain form.
func FuzzTrigger(f *testing.F) {
	for _, s := range []string{"", " a", "abc", "abcd", "a\u00a0", "😀😀", "ab\xff\xfe", "\u2028x}", "0123456789ab"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		i, j := jsTrim(s, 0, len(s))
		if li := jsTrimLeft(s, 0, len(s)); i != li || j != jsTrimRight(s, li, len(s)) {
			t.Fatalf("jsTrim(%q) = %d, %d", s, i, j)
		}
		if got, want := tooLongForJunk(s), utf16Len(s) > maxTrailingUnits; got != want {
			t.Fatalf("tooLongForJunk(%q) = %v, want %v", s, got, want)
		}
		// OpenClawTrigger against its plain form.
		for _, bufCloser := range []bool{false, true} {
			want := bytes.IndexAny(s, "}]") >= 0
			if !want {
				i, j := jsTrim(s, 0, len(s))
				want = i != j && utf16Len(s[i:j]) <= maxTrailingUnits && bufCloser
			}
			if got := OpenClawTrigger(s, false, func() bool { return bufCloser }); got != want {
				t.Fatalf("OpenClawTrigger(%q, buffer closer %v) = %v", s, bufCloser, got)
			}
		}
	})
}
