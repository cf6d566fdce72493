package provider

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/valyala/fastjson"

	"github.com/ocbench/ocbench/llm"
)

// TestWHATWGUTF8MatchesTextDecoder checks appendWHATWGUTF8 against what
// Node's TextDecoder made of 3,000 random byte strings
// (testdata/whatwgutf8/gen.mjs).
func TestWHATWGUTF8MatchesTextDecoder(t *testing.T) {
	f, err := os.Open("testdata/whatwgutf8/cases.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		var c struct{ In, Out string }
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		in, _ := hex.DecodeString(c.In)
		want, _ := hex.DecodeString(c.Out)
		if got := appendWHATWGUTF8(nil, in); !bytes.Equal(got, want) {
			t.Fatalf("%x: got %x, TextDecoder %x", in, got, want)
		}
		n++
	}
	if n != 3000 {
		t.Fatalf("%d cases, want 3000", n)
	}
}

func FuzzWHATWGUTF8(f *testing.F) {
	for _, s := range []string{"a\xe4\xb8b", "\xed\xa0\x80", "\xf0\x9f\x98", "\xf4\x90\x80\x80", "\xc0\xaf", "é😀"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := appendWHATWGUTF8(nil, b)
		if !utf8.Valid(got) {
			t.Fatalf("%x: output %x is not UTF-8", b, got)
		}
		if utf8.Valid(b) != bytes.Equal(got, b) {
			t.Fatalf("%x: valid input must come back unchanged, invalid changed: %x", b, got)
		}
		// Per-byte replacement never yields fewer U+FFFD than subparts do.
		if g, p := bytes.Count(got, []byte("\uFFFD")), bytes.Count(bytes.ToValidUTF8(b, []byte("\uFFFD")), []byte("\uFFFD")); g < p {
			t.Fatalf("%x: %d replacements, fewer than the %d runs of bad bytes", b, g, p)
		}
	})
}

// TestOCTextLoneSurrogates checks what a string decodes to under the
// OpenClaw rules against what JSON.parse made of 2,000 random string
// bodies (testdata/lonesurrogate/gen.mjs): lone surrogates kept, in their
// three-byte form, pairs joined, escaped backslashes left alone.
func TestOCTextLoneSurrogates(t *testing.T) {
	f, err := os.Open("testdata/lonesurrogate/cases.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	d := &Decoder{opts: Options{OpenClaw: true}}
	for sc.Scan() {
		var c struct{ Body, WTF8 string }
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		want, _ := hex.DecodeString(c.WTF8)
		data := d.ocText([]byte(`{"t":"` + c.Body + `"}`))
		body := data[len(`{"t":"`) : len(data)-len(`"}`)]
		got, ok := unescapeTo(nil, body)
		if !ok || !bytes.Equal(got, want) || !d.validText(got) {
			t.Fatalf("%s: got %x (%v), JSON.parse %x", c.Body, got, ok, want)
		}
		n++
	}
	if n != 2000 {
		t.Fatalf("%d cases, want 2000", n)
	}
	// Without the OpenClaw rules a lone surrogate is not kept.
	if (&Decoder{}).validText([]byte("\xed\xa0\x80")) {
		t.Fatal("validText accepted a surrogate without the OpenClaw rules")
	}
}

// TestOCEventBound: with the OpenClaw rules an event is bounded as
// OpenClaw's SSE sanitizer bounds it, at 16,777,216 UTF-16 units, with its
// message; a 9 MiB event passes (the plain decoder's bound is 4 MiB).
func TestOCEventBound(t *testing.T) {
	ev := func(n int) string {
		return "data: {\"id\":\"c\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + strings.Repeat("é", n) + "\"}}]}\n\n" +
			"data: {\"id\":\"c\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
	}
	d := NewDecoder(WireOpenAIChat, strings.NewReader(ev(9<<20/2)), Options{OpenClaw: true})
	for d.Next() {
	}
	if m := d.Message(); m.StopReason != llm.StopStop || len(m.Content) != 1 {
		t.Fatalf("9 MiB event: %s %q", m.StopReason, m.ErrorMessage)
	}
	// 16,777,300 units of two bytes each: past the bound in units.
	d = NewDecoder(WireOpenAIChat, strings.NewReader(ev(16777300)), Options{OpenClaw: true})
	for d.Next() {
	}
	if m := d.Message(); m.StopReason != llm.StopError || m.ErrorMessage != MsgSSEBufferExceeded {
		t.Fatalf("over the bound: %s %q", m.StopReason, m.ErrorMessage)
	}
}

// TestOCDuplicateNames: with the OpenClaw rules a repeated member name
// takes its last value, as JSON.parse does, at every depth; maybeDupKeys
// never misses one.
func TestOCDuplicateNames(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"a":1,"b":2,"a":3}`, `{"a":3,"b":2}`},
		{`{"x":{"c":"a","c":"b"},"y":[{"k":1,"k":[1,{"z":0,"z":1}]}]}`, `{"x":{"c":"b"},"y":[{"k":[1,{"z":1}]}]}`},
		{`{"\u0061":1,"a":2}`, `{"a":2}`},
	} {
		if !maybeDupKeys([]byte(c.in)) {
			t.Errorf("maybeDupKeys(%s) = false", c.in)
		}
		out, changed := dedupKeys(nil, fastjson.MustParse(c.in))
		if !changed || string(out) != c.want {
			t.Errorf("dedupKeys(%s) = %s %v, want %s", c.in, out, changed, c.want)
		}
	}
	for _, s := range []string{`{"a":1,"b":{"a":2}}`, `[{"a":1},{"a":2}]`, `"x"`, `{}`} {
		if maybeDupKeys([]byte(s)) {
			t.Errorf("maybeDupKeys(%s) = true", s)
		}
	}
}

func FuzzMaybeDupKeys(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `{"a":{"b":1,"b":2}}`, `[{"a":1},{"a":1}]`, `{"\u0061":1,"a":2}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := fastjson.Parse(s)
		if err != nil {
			return
		}
		if _, changed := dedupKeys(nil, v); changed && !maybeDupKeys([]byte(s)) {
			t.Fatalf("%s repeats a name that maybeDupKeys missed", s)
		}
	})
}
