package repair

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

// Seeds shared by the fuzzers: the quirk catalogue and spec cases. More
// seeds (and any crashers found) live in testdata/fuzz/<FuzzName>/.
var fuzzSeeds = []string{
	`{"path":"/tmp/report.txt"}`,
	`.functions.read:0 {"path":"/tmp/report.txt"}x`,
	`{“path”:“safe.txt”,“offset”:5,“limit”:20}`,
	`{“path”:“notes/报告.md”,“edits”:[{“oldText”:“a”,“newText”:“b”}]}`,
	"```json\n{\"city\":\"paris\"}\n```",
	`{"a":[1,2,],}`,
	`{'a': True, "b": None}`,
	`"{\"shop_name\": \"A店\"}"`,
	`{"a":1}{"a":1}`,
	`{{"city": "Orlando"}`,
	`{"command":"go test","env":{"GOFLAGS":"-count=1"`,
	"{\"a\":\"x\ny\"}",
	`{"a":"\d\u12"}`,
	`{"a":1 "b":2}`,
	`source .env &amp;&amp; psql &quot;$DB&quot; &#x27; &#9999999999; &NotEqualTilde;`,
}

func FuzzExtended(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), []byte("read"))
	}
	f.Fuzz(func(t *testing.T, in, tool []byte) {
		got, _, err := checkExtended(t, in, tool)
		// The superset rule: whatever OpenClaw's strategies return,
		// Extended returns too.
		if oc, _, _, _, ok := OpenClawExtract(nil, in, tool); ok {
			if err != nil || !sameJSON(t, got, oc) {
				t.Fatalf("Extended(%q) = %q, %v; OpenClawExtract = %q", in, got, err, oc)
			}
		}
		// Every strict prefix of a valid object is truncated.
		if err == nil && validObject(in) && len(bytes.TrimSpace(in)) > 1 {
			p := bytes.TrimSpace(in)
			p = p[:len(p)/2+1]
			if len(p) < len(bytes.TrimSpace(in)) {
				if _, _, e := Extended(nil, p, tool); !errors.Is(e, ErrTruncated) {
					t.Fatalf("Extended(prefix %q) = %v, want ErrTruncated", p, e)
				}
			}
		}
	})
}

func FuzzOpenClawExtract(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), []byte("read"))
	}
	f.Fuzz(func(t *testing.T, in, tool []byte) {
		dst := []byte("PFX")
		out, kind, lead, trail, ok := OpenClawExtract(dst, in, tool)
		if !bytes.HasPrefix(out, dst) {
			t.Fatal("dst clobbered")
		}
		got := out[len(dst):]
		if !ok {
			if len(got) != 0 || kind != KindNone {
				t.Fatalf("failure appended %q (%v)", got, kind)
			}
			return
		}
		if !validObject(got) || lead < 0 || trail < 0 || trail > 3 || lead > 96 {
			t.Fatalf("OpenClawExtract(%q) = %q %v %d %d", in, got, kind, lead, trail)
		}
		if (kind == KindPreserved) != validObject(in) {
			t.Fatalf("OpenClawExtract(%q): kind %v but validObject=%v", in, kind, validObject(in))
		}
		_ = OpenClawShouldTry(in, in, false)
	})
}

func FuzzPiParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, how := PiParse([]byte("PFX"), in)
		if !bytes.HasPrefix(out, []byte("PFX")) {
			t.Fatal("dst clobbered")
		}
		got := out[3:]
		if !Valid(got) {
			t.Fatalf("PiParse(%q) = %q (%v): invalid JSON", in, got, how)
		}
		if (how == PiValid) != (Valid(in) && len(bytes.TrimSpace(in)) > 0) {
			t.Fatalf("PiParse(%q): how %v, Valid %v", in, how, Valid(in))
		}
		// Numbers beyond float64 are kept as text (JavaScript would hold
		// Infinity); encoding/json cannot decode them, so skip those.
		if _, ok := jsonValue(t, in); how == PiValid && ok && !sameJSON(t, got, in) {
			t.Fatalf("PiParse(valid %q) = %q", in, got)
		}
	})
}

func FuzzDecodeHTMLEntities(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out := DecodeHTMLEntities(nil, in)
		if bytes.IndexByte(in, '&') < 0 && !bytes.Equal(out, in) {
			t.Fatalf("changed text without '&': %q -> %q", in, out)
		}
		// Only &nGt; and &nLt; (5 bytes, 6 decoded) grow, by one byte each.
		if len(out) > len(in)+len(in)/5 {
			t.Fatalf("decoding grew %q -> %q", in, out)
		}
		if Valid(in) {
			js := DecodeEntitiesInJSON(nil, in)
			if !Valid(js) {
				t.Fatalf("DecodeEntitiesInJSON(%q) = %q: invalid", in, js)
			}
		}
	})
}

// TestLargeInputsLinear runs every entry point over adversarial inputs and
// fails when the time grows faster than linearly: one pass over a 128 KiB
// input must cost about what 16 passes over its 8 KiB version cost (the
// same bytes); quadratic code takes 16 times longer. Most pairs pass on the
// first measurement; a slow one is measured again (best of 7 short
// tries), so that a loaded machine's preemptions do not fail it.
func TestLargeInputsLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("large inputs")
	}
	gens := map[string]func(size int) []byte{}
	rep := func(pre, s, post string) func(int) []byte {
		return func(size int) []byte {
			b := append([]byte(pre), bytes.Repeat([]byte(s), size/len(s))...)
			return append(b, post...)
		}
	}
	gens["brackets"] = rep("", "{[", "")
	gens["closers"] = rep("", "}]", "")
	gens["quotes"] = rep("", `"`, "")
	gens["smart-open"] = rep(`{“content”:“`, `”,“path`, "")
	gens["smart-values"] = rep(`{“path”:“`, `”, "x`, "")
	gens["smart-keys"] = rep(`{`, `“a”:1,`, "")
	gens["smart-ws"] = rep(`{“a”:“x”,`, `“ `, "")
	gens["backslashes"] = rep(`{"a":"`, `\`, "")
	gens["entities"] = rep("", "&#x41;&amp;&notin&#", "")
	gens["entity-digits"] = rep("&#", "1", "")
	gens["commas"] = rep(`{"a":[`, `1,`, "")
	gens["concat"] = rep("", `{"a":1}`, "")
	gens["partial-objects"] = rep("", `{"a":`, "")
	gens["partial-keys"] = rep("", `{"a" `, "")
	gens["partial-e"] = rep("", `{"a":x`, "e")
	gens["bad-numbers"] = rep(`{"a":[`, `1x,`, "e")
	gens["prefix-text"] = rep("", "functions.read ", `{"a":1}x`)
	gens["valid-big"] = rep(`{"a":"`, "x", `"}`)
	gens["python"] = rep(`{'a':[`, `True,None,'x',`, "")
	fns := map[string]func(dst, in []byte){
		"Extended":             func(d, in []byte) { _, _, _ = Extended(d, in, []byte("read")) },
		"OpenClawExtract":      func(d, in []byte) { _, _, _, _, _ = OpenClawExtract(d, in, []byte("read")) },
		"PiParse":              func(d, in []byte) { _, _ = PiParse(d, in) },
		"DecodeHTMLEntities":   func(d, in []byte) { _ = DecodeHTMLEntities(d, in) },
		"DecodeEntitiesInJSON": func(d, in []byte) { _ = DecodeEntitiesInJSON(d, in) },
		"Valid":                func(_, in []byte) { _ = Valid(in) },
	}
	const small, large, ratio = 8 << 10, 128 << 10, 16
	now, release := threadClock()
	defer release()
	timeIt := func(f func(d, in []byte), in, dst []byte, times int) time.Duration {
		start := now()
		for k := 0; k < times; k++ {
			f(dst, in)
		}
		return now() - start
	}
	dstS, dstL := make([]byte, 0, 2*small+64), make([]byte, 0, 2*large+64)
	for name, gen := range gens {
		smallIn, largeIn := gen(small), gen(large)
		for fn, f := range fns {
			// Warm up: lazily built tables, and the pages of both inputs
			// and outputs (a first touch of fresh memory is a page fault,
			// not the function's cost).
			f(dstS, smallIn)
			f(dstL, largeIn)
			var ts, tl time.Duration
			for try := 0; try < 7; try++ {
				s, l := timeIt(f, smallIn, dstS, ratio), timeIt(f, largeIn, dstL, 1)
				if try == 0 || s < ts {
					ts = s
				}
				if try == 0 || l < tl {
					tl = l
				}
				// Linear: tl ≈ ts. The 4x margin absorbs cache effects and
				// noise; quadratic code shows 16x.
				if tl <= 4*ts || tl < time.Millisecond {
					break
				}
			}
			if tl > 4*ts && tl >= time.Millisecond {
				t.Errorf("%s on %s: 16 x 8 KiB in %v, 128 KiB in %v: not linear", fn, name, ts, tl)
			}
		}
	}
}

// FuzzSkipToRef holds skipToRef (8 bytes at a time) to the plain byte loop
// it replaces in the JSON-mode entity scan, from every start.
func FuzzSkipToRef(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"path":"a &amp; b","x":"\u0026lt;"}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		for i := 0; i <= len(raw); i++ {
			want := i
			for want < len(raw) && raw[want] != '&' && raw[want] != '\\' {
				want++
			}
			if got := skipToRef(raw, i); got != want {
				t.Fatalf("skipToRef(%q, %d) = %d, want %d", raw, i, got, want)
			}
		}
	})
}
