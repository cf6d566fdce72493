package llm

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/valyala/fastjson"
)

// touch reads every string and key of v, as decoders do before they
// serialize a value again: fastjson then holds them unescaped.
func touch(v *fastjson.Value) {
	switch v.Type() {
	case fastjson.TypeString:
		v.StringBytes()
	case fastjson.TypeObject:
		o, _ := v.Object()
		o.Visit(func(_ []byte, e *fastjson.Value) { touch(e) })
	case fastjson.TypeArray:
		a, _ := v.Array()
		for _, e := range a {
			touch(e)
		}
	}
}

// TestAppendJSONValueControlChars is the case fastjson's MarshalTo gets
// wrong: a string it has unescaped is written with Go's quoting (\x01,
// \x7f, \U000e0001), which is not JSON.
func TestAppendJSONValueControlChars(t *testing.T) {
	in := `{"k\u0001\"":["v\u007f \ud83d\ude00 \udb40\udc01 \b\f\u2028"],"n":-1.5e3,"t":true,"z":null,"o":{}}`
	var p fastjson.Parser
	v, err := p.Parse(in)
	if err != nil {
		t.Fatal(err)
	}
	touch(v)
	if bad := v.MarshalTo(nil); json.Valid(bad) {
		t.Logf("fastjson's MarshalTo now writes valid JSON here (%s): AppendJSONValue may be simpler than needed", bad)
	}
	out := AppendJSONValue(nil, v)
	var want, got any
	if err := json.Unmarshal([]byte(in), &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("AppendJSONValue wrote invalid JSON %s: %v", out, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("AppendJSONValue = %s, want the value of %s", out, in)
	}
	if !strings.HasSuffix(string(out), `,"n":-1.5e3,"t":true,"z":null,"o":{}}`) {
		t.Fatalf("numbers and literals must keep their text: %s", out)
	}
}

// held returns the value fastjson holds for v, in encoding/json's terms:
// strings as StringBytes gives them (a lone surrogate escape is read as its
// own six characters, the project-wide reading of fastjson), with each byte
// of invalid UTF-8 as U+FFFD but a surrogate's three-byte encoding read as
// AppendJSONString writes it.
func held(t *testing.T, v *fastjson.Value) any {
	switch v.Type() {
	case fastjson.TypeString:
		b, _ := v.StringBytes()
		var sb strings.Builder
		for len(b) > 0 {
			r, n := utf8.DecodeRune(b)
			if u, ok := wtf8Surrogate(b, 0); ok {
				// A lone surrogate is written as its escape, which
				// encoding/json reads as U+FFFD; two halves in a row
				// make their character.
				r, n = utf8.RuneError, 3
				if lo, ok := wtf8Surrogate(b, 3); ok && u < 0xDC00 && lo >= 0xDC00 {
					r, n = utf16.DecodeRune(u, lo), 6
				}
				sb.WriteRune(r)
			} else if r == utf8.RuneError && n == 1 {
				sb.WriteRune(utf8.RuneError)
			} else {
				sb.Write(b[:n])
			}
			b = b[n:]
		}
		return sb.String()
	case fastjson.TypeObject:
		m := map[string]any{}
		o, _ := v.Object()
		o.Visit(func(k []byte, e *fastjson.Value) {
			ks := held(t, fastjson.MustParse(string(AppendJSONString(nil, k))))
			if _, dup := m[ks.(string)]; !dup { // encoding/json keeps the last, fastjson's Get the first
				m[ks.(string)] = held(t, e)
			}
		})
		return m
	case fastjson.TypeArray:
		a, _ := v.Array()
		out := []any{}
		for _, e := range a {
			out = append(out, held(t, e))
		}
		return out
	}
	return decodeNumbers(t, v.MarshalTo(nil))
}

// decodeNumbers decodes JSON text with numbers kept as their text.
func decodeNumbers(t *testing.T, js []byte) any {
	d := json.NewDecoder(bytes.NewReader(js))
	d.UseNumber()
	var x any
	if err := d.Decode(&x); err != nil {
		t.Fatalf("invalid JSON %q: %v", js, err)
	}
	return x
}

// FuzzAppendJSONValue: for every JSON text fastjson parses, what
// AppendJSONValue writes is JSON with the value fastjson holds, whether or
// not its strings were read first.
func FuzzAppendJSONValue(f *testing.F) {
	for _, s := range []string{`"a\u0001"`, `{"\u007f":["\ud83d\ude00"]}`, `[1,2e5,true,null,{}]`, "\"\xe4\xe4\"", `"\udb40\udc01\u2029"`, `{"":["\ud800"]}`} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, in string, read bool) {
		if !json.Valid([]byte(in)) {
			return
		}
		var p fastjson.Parser
		v, err := p.Parse(in)
		if err != nil {
			return // deeper than fastjson's limit
		}
		if read {
			touch(v)
		}
		out := AppendJSONValue(nil, v)
		got := decodeNumbers(t, out)
		if want := held(t, v); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: wrote %q, not the value fastjson holds %#v", in, out, want)
		}
	})
}

// TestAppendJSONStringSurrogates: a surrogate held in its three-byte form
// is written as JSON.stringify writes a JavaScript string's lone
// surrogate, and a high half followed by a low half as their character,
// in strings and in tool-call arguments.
func TestAppendJSONStringSurrogates(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"a\xed\xa0\x80b", `"a\ud800b"`},
		{"\xed\xa0\xbd\xed\xb8\x80", `"😀"`},
		{"\xed\xb8\x80\xed\xa0\xbd", `"\ude00\ud83d"`},
		{"\xed\xa0\xbd\xed\xa0\xbd\xed\xb8\x80", `"\ud83d😀"`},
		{"\xed\xa0", "\"\uFFFD\uFFFD\""},
		{"\xed\x9f\xbf", "\"\uD7FF\""},
	} {
		if got := string(AppendJSONString(nil, c.in)); got != c.want {
			t.Errorf("AppendJSONString(%q) = %s, want %s", c.in, got, c.want)
		}
	}
	b := Block{Type: BlockToolCall, ID: []byte("c"), Name: []byte("n"), Arguments: []byte("{\"p\":\"\xed\xa0\xbd\xed\xb8\x80 \xed\xb0\x80\",\n\"q\":1}")}
	got := string(b.AppendJSON(nil))
	if !strings.Contains(got, `"arguments":{"p":"😀 \udc00","q":1}`) {
		t.Fatalf("tool call %s", got)
	}
}
