package repair

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// checkExtended asserts the invariants of one Extended call: on success the
// output is a valid JSON object whose keys and string/number leaves occur
// in the input (no invented content), and a valid object input comes back
// byte for byte; on failure dst is unchanged and the error is ErrTruncated
// or an *Error.
func checkExtended(t testing.TB, in, tool []byte) ([]byte, Result, error) {
	t.Helper()
	prefix := []byte("PFX")
	out, res, err := Extended(prefix, in, tool)
	if !bytes.HasPrefix(out, prefix) {
		t.Fatalf("Extended(%q) clobbered dst: %q", in, out)
	}
	got := out[len(prefix):]
	if err != nil {
		if len(got) != 0 {
			t.Fatalf("Extended(%q) failed (%v) but appended %q", in, err, got)
		}
		var e *Error
		if !errors.Is(err, ErrTruncated) && !errors.As(err, &e) {
			t.Fatalf("Extended(%q) error %T %v", in, err, err)
		}
		return nil, res, err
	}
	if !validObject(got) {
		t.Fatalf("Extended(%q) = %q: not a JSON object", in, got)
	}
	if validObject(in) != (json.Valid(in) && bytes.HasPrefix(bytes.TrimLeft(in, " \t\r\n"), []byte("{"))) {
		t.Fatalf("validObject(%q) disagrees with encoding/json", in)
	}
	if validObject(in) {
		if !bytes.Equal(got, bytes.TrimSpace(in)) || res != (Result{}) {
			t.Fatalf("Extended(valid %q) = %q %+v, want identity", in, got, res)
		}
	}
	checkNoInvention(t, in, got)
	checkKeyOrder(t, in, got)
	return got, res, nil
}

// checkKeyOrder: the top-level keys of out appear in in in the same order.
func checkKeyOrder(t testing.TB, in, out []byte) {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(out))
	inSk := skeleton(in)
	pos := 0
	depth := 0
	expectKey := false
	for {
		tok, err := d.Token()
		if err != nil {
			return
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				depth++
				expectKey = v == '{' && depth == 1
			case '}', ']':
				depth--
				expectKey = depth == 1 // a nested value ended
			}
			continue
		case string:
			if depth == 1 && expectKey {
				sk := skeleton([]byte(v))
				k := strings.Index(inSk[pos:], sk)
				if k < 0 {
					t.Fatalf("Extended(%q) = %q: key %q out of order", in, out, v)
				}
				pos += k + len(sk)
				expectKey = false
				continue
			}
		}
		if depth == 1 {
			expectKey = true
		}
	}
}

// skeleton reduces a text to what survives any escape normalisation:
// \uXXXX decoded, other backslashes, quotes and whitespace dropped.
func skeleton(b []byte) string {
	var sb strings.Builder
	for i := 0; i < len(b); {
		c := b[i]
		if c == '\\' && i+1 < len(b) {
			switch b[i+1] {
			case 'n', 'r', 't', 'b', 'f':
				i += 2
				continue
			case 'u':
				if i+5 < len(b) && isHex(b[i+2]) && isHex(b[i+3]) && isHex(b[i+4]) && isHex(b[i+5]) {
					v, _ := strconv.ParseUint(string(b[i+2:i+6]), 16, 32)
					if v < 0xd800 || v >= 0xe000 { // surrogates: see below
						sb.WriteRune(rune(v))
					}
					i += 6
					continue
				}
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		i += n
		switch r {
		case '"', '\'', '\\', ' ', '\t', '\n', '\r', '\f', '\b', utf8.RuneError:
			continue
		}
		if r >= 0x10000 { // may come from a surrogate-pair escape
			continue
		}
		sb.WriteRune(r)
	}
	return sb.String()
}

// checkNoInvention: every key and string/number leaf of out occurs in in.
func checkNoInvention(t testing.TB, in, out []byte) {
	t.Helper()
	var v any
	d := json.NewDecoder(bytes.NewReader(out))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatalf("output %q does not decode: %v", out, err)
	}
	inSk := skeleton(in)
	var walk func(any)
	leaf := func(s string) {
		sk := skeleton([]byte(s))
		if !strings.Contains(inSk, sk) {
			t.Fatalf("Extended(%q) = %q invents %q", in, out, s)
		}
	}
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				leaf(k)
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case string:
			leaf(x)
		case json.Number:
			leaf(string(x))
		}
	}
	walk(v)
}

// TestExtendedSuperset checks the replay contract's superset rule over the
// oracle corpus: wherever OpenClaw's repair strategies yield arguments, or
// the text is a valid JSON object (pi-ai's plain parse), Extended yields
// the same value.
func TestExtendedSuperset(t *testing.T) {
	rows := loadOracle(t)
	checked := 0
	for _, r := range rows {
		in := []byte(r.In)
		got, _, err := checkExtended(t, in, []byte(r.Tool))
		switch {
		case r.OC != nil:
			checked++
			if err != nil || !sameJSON(t, got, r.OC.Args) {
				t.Errorf("Extended(%q) = %s, %v; OpenClaw repaired to %s", r.In, got, err, r.OC.Args)
			}
		case (r.PiHow == "valid" || r.PiHow == "escapes") && strings.HasPrefix(r.Pi, "{"):
			// pi-ai's plain parse, and its escape repair (raw control
			// characters, invalid escapes), which Extended does the same way.
			checked++
			if err != nil || !sameJSON(t, got, []byte(r.Pi)) {
				t.Errorf("Extended(%q) = %s, %v; pi-ai (%s) %s", r.In, got, err, r.PiHow, r.Pi)
			}
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d superset rows", checked)
	}
}

// genValue writes a random valid JSON value (objects, arrays, strings with
// escapes and non-ASCII, numbers, literals).
func genValue(rng *rand.Rand, b *bytes.Buffer, depth int) {
	k := rng.IntN(8)
	if depth > 3 {
		k = 2 + rng.IntN(6)
	}
	switch k {
	case 0, 1:
		genObject(rng, b, depth+1)
	case 2:
		b.WriteByte('[')
		for i, n := 0, rng.IntN(4); i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			genValue(rng, b, depth+1)
		}
		b.WriteByte(']')
	case 3, 4:
		genString(rng, b)
	case 5:
		b.WriteString([]string{"0", "-1", "12.5", "1e3", "-0.25E-2", "123456789"}[rng.IntN(6)])
	default:
		b.WriteString([]string{"true", "false", "null"}[rng.IntN(3)])
	}
}

func genString(rng *rand.Rand, b *bytes.Buffer) {
	parts := []string{"a", "path", " ", `\"`, `\\`, `\n`, `\u00e9`, "日本", "{", "}", "[", "]", ":", ",", "“x”", `\/`, "'", "True", "&amp;", "😀", `\ud83d\ude00`}
	b.WriteByte('"')
	for i, n := 0, rng.IntN(6); i < n; i++ {
		b.WriteString(parts[rng.IntN(len(parts))])
	}
	b.WriteByte('"')
}

func genObject(rng *rand.Rand, b *bytes.Buffer, depth int) {
	b.WriteByte('{')
	for i, n := 0, rng.IntN(4); i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
			if rng.IntN(3) == 0 {
				b.WriteByte(' ')
			}
		}
		genString(rng, b)
		b.WriteByte(':')
		genValue(rng, b, depth)
	}
	b.WriteByte('}')
}

func TestExtendedIdentityAndTruncation(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var b bytes.Buffer
	for n := 0; n < 400; n++ {
		b.Reset()
		genObject(rng, &b, 0)
		obj := append([]byte(nil), b.Bytes()...)
		if !json.Valid(obj) {
			t.Fatalf("generator made invalid %q", obj)
		}
		if n%2 == 1 { // pretty-printed: prefixes end in indentation too
			var ib bytes.Buffer
			if err := json.Indent(&ib, obj, "", "\t"); err != nil {
				t.Fatal(err)
			}
			obj = ib.Bytes()
		}
		got, res, err := checkExtended(t, obj, nil)
		if err != nil || !bytes.Equal(got, obj) || res != (Result{}) {
			t.Fatalf("Extended(%q) = %q %+v %v", obj, got, res, err)
		}
		// Every strict prefix is truncated for Extended, closed by pi-ai.
		for i := 1; i < len(obj); i++ {
			p := obj[:i]
			if _, _, err := checkExtended(t, p, nil); !errors.Is(err, ErrTruncated) {
				t.Fatalf("Extended(prefix %q of %q) err = %v, want ErrTruncated", p, obj, err)
			}
			out, how := PiParse(nil, p)
			if !Valid(out) || how == PiValid {
				t.Fatalf("PiParse(%q) = %q %v", p, out, how)
			}
		}
	}
}

// TestExtendedQuirks pins the repair of each real-world quirk
// (wire-and-cache.md §1.5) and the refusals.
func TestExtendedQuirks(t *testing.T) {
	tests := []struct {
		in, want string
		fixes    Fix
		errKind  string // "" ok, "truncated", or an ErrKind token
	}{
		{`{"path":"a"}`, `{"path":"a"}`, 0, ""},
		{"  {\"path\":\"a\"}\n", `{"path":"a"}`, 0, ""},
		{``, `{}`, FixEmpty, ""},
		{" \n", `{}`, FixEmpty, ""},
		{`null`, `{}`, FixEmpty, ""},
		// Q4 double encoding.
		{`"{\"shop_name\": \"A店\", \"end_date\": \"2025-03-23\"}"`, `{"shop_name": "A店", "end_date": "2025-03-23"}`, FixDoubleEncoded, ""},
		{`"\"{ \\\"date\\\": \\\"2026\\\" }\""`, `{ "date": "2026" }`, FixDoubleEncoded, ""},
		{`"null"`, `{}`, FixEmpty | FixDoubleEncoded, ""},
		{`"hello"`, ``, 0, ErrKindNotObject},
		{`"{\"a\":1"`, ``, 0, ErrKindSyntax},
		// Q5 trailing commas, relaxed JSON.
		{`{"path":"internal/stream/decoder.go","line":42,"tags":["sse","json",],}`, `{"path":"internal/stream/decoder.go","line":42,"tags":["sse","json"]}`, FixTrailingComma, ""},
		{`{"a":[1,2,] , }`, `{"a":[1,2]  }`, FixTrailingComma, ""},
		{"{\"command\": \"view\", \"view_range\": \\n[2142, 2250]\\n\\n}", `{"command": "view", "view_range": [2142, 2250]}`, FixStrayEscape, ""},
		{`{tool:"X",n:1}`, `{"tool":"X","n":1}`, FixUnquotedKey, ""},
		{`{{"city": "Orlando", "state": "FL"}`, `{"city": "Orlando", "state": "FL"}`, FixRedundantBrace, ""},
		{`{{tool:"X"}}`, `{"tool":"X"}`, FixRedundantBrace | FixUnquotedKey, ""},
		{`{"table_name":"t","direction":both}`, ``, 0, ErrKindSyntax},
		{`{"s":"\u6수"}`, `{"s":"\\u6수"}`, FixEscapes, ""},
		{"{\"a\":\"line1\nline2\"}", `{"a":"line1\nline2"}`, FixEscapes, ""},
		// Q6 truncation is refused.
		{`{"command":"go test","env":{"GOFLAGS":"-count=1"`, ``, 0, "truncated"},
		{`{"path":"a.go","content":"package main\n\tprintln(\"hi`, ``, 0, "truncated"},
		{`{"items": [1, 2, 3`, ``, 0, "truncated"},
		{`{"a":"x\`, ``, 0, "truncated"},
		{`{"a":"\u00`, ``, 0, "truncated"},
		{`{"a":tr`, ``, 0, "truncated"},
		{`{'a': 'b`, ``, 0, "truncated"},
		{"```json\n{\"a\":1,", ``, 0, "truncated"},
		{`{"city": INVALID_VALUE}`, ``, 0, ErrKindSyntax},
		// Q7 concatenation.
		{`{"city": "Seattle", "unit": "c"}{"city": "Seattle", "unit": "c"}`, `{"city": "Seattle", "unit": "c"}`, FixConcatenated, ""},
		{"{\"a\":1} \n{\"a\": 1}", `{"a":1}`, FixConcatenated, ""},
		{`{"city":"北京"}{"city":"上海"}`, ``, 0, ErrKindAmbiguous},
		// Empty objects add nothing: the one object with members is the
		// arguments (replay.md's superset rule); two distinct ones are not.
		{`{"path":"a.txt"}{}`, `{"path":"a.txt"}`, FixConcatenated, ""},
		{`{"path":"a.txt"} {} {}`, `{"path":"a.txt"}`, FixConcatenated, ""},
		{`{}{"path":"a.txt"}`, `{"path":"a.txt"}`, FixConcatenated, ""},
		{`{}{}`, `{}`, FixConcatenated, ""},
		{`{"path":"a.txt"}{}{"path":"b.txt"}`, ``, 0, ErrKindAmbiguous},
		{`{"a":1}{"a":`, ``, 0, "truncated"},
		// Q8 fences.
		{"```json\n{\"city\":\"paris\"}\n```", `{"city":"paris"}`, FixCodeFence, ""},
		{"```\n{\"a\":\"x```y\",}\n```", `{"a":"x` + "```" + `y"}`, FixCodeFence | FixTrailingComma, ""},
		{"```json\n{'a': True}\n```", `{"a": true}`, FixCodeFence | FixSingleQuote | FixPythonLiteral, ""},
		{`{"path": "a.txt"} trailing text`, `{"path": "a.txt"}`, FixTrailingText, ""},
		{`{"path": "a.txt"} then {"b": 2}`, ``, 0, ErrKindProse},
		// Q9 Python literals and single quotes.
		{`{'filePath': '/src/search.constant.js'}`, `{"filePath": "/src/search.constant.js"}`, FixSingleQuote, ""},
		{`{"paths": ['app.py', "b.py"]}`, `{"paths": ["app.py", "b.py"]}`, FixSingleQuote, ""},
		{`{"a": True, "b": False, "c": None}`, `{"a": true, "b": false, "c": null}`, FixPythonLiteral, ""},
		{`{'b': 'it\'s "x"', "s": "True None"}`, `{"b": "it's \"x\"", "s": "True None"}`, FixSingleQuote, ""},
		{`{"a": Truely}`, ``, 0, ErrKindSyntax},
		// OpenClaw's own repairs, kept (superset rule).
		{`.functions.read:0 {"path":"/tmp/report.txt"}x`, `{"path":"/tmp/report.txt"}`, FixLeadingText | FixTrailingText, ""},
		{`{“path”:“safe.txt”,“command”:“ls -la”}`, `{"path":"safe.txt","command":"ls -la"}`, FixSmartQuote, ""},
		// Prose.
		{`please use {"path":"/tmp/report.txt"}`, `{"path":"/tmp/report.txt"}`, FixLeadingText, ""},
		{`use "this" {"path":"/tmp/report.txt"}`, ``, 0, ErrKindProse},
		// Not objects.
		{`[{"path":"/tmp/a"}]`, ``, 0, ErrKindNotObject},
		{`42`, ``, 0, ErrKindNotObject},
		{`[1,2`, ``, 0, "truncated"},
		{`{"a":1}}`, ``, 0, ErrKindProse},
	}
	for _, tt := range tests {
		got, res, err := checkExtended(t, []byte(tt.in), nil)
		switch {
		case tt.errKind == "truncated":
			if !errors.Is(err, ErrTruncated) {
				t.Errorf("Extended(%q) = %q, %v; want ErrTruncated", tt.in, got, err)
			}
		case tt.errKind != "":
			var e *Error
			if !errors.As(err, &e) || e.Kind != tt.errKind {
				t.Errorf("Extended(%q) = %q, %v; want *Error %s", tt.in, got, err, tt.errKind)
			}
		default:
			if err != nil || string(got) != tt.want || res.Fixes != tt.fixes {
				t.Errorf("Extended(%q) = %q %v %v; want %q %v", tt.in, got, res.Fixes, err, tt.want, tt.fixes)
			}
		}
	}
}

func TestSmartQuoteEscapedKeys(t *testing.T) {
	// An ASCII key spelled with escapes is the same key for the duplicate
	// rule and the successor tables.
	for _, c := range []struct {
		in   string
		want string // "" = no repair
	}{
		{`{“path”:“a”,"p\u0061th":“b”}`, ``},
		{`{"p\u0061th":“a.txt”, “limit”:5}`, `{"path":"a.txt","limit":5}`},
		{`{"c\u006fntent":“x”, “path”:“y”}`, `{"content":"x”, “path”:“y"}`},
	} {
		out, _, _, _, ok := OpenClawExtract(nil, []byte(c.in), []byte("read"))
		if ok != (c.want != "") || ok && !sameJSON(t, out, []byte(c.want)) {
			t.Errorf("OpenClawExtract(%q) = %s %v, want %s", c.in, out, ok, c.want)
		}
	}
}

// TestDecodeEntitiesInJSONMatchesLeafDecoding: DecodeEntitiesInJSON equals
// decoding every string value (not key) with DecodeHTMLEntities.
func TestDecodeEntitiesInJSONMatchesLeafDecoding(t *testing.T) {
	parts := []string{"a", "&amp;", "&amp;amp;", "&lt;", "&#x27;", "&#39;", "&#0;", "&#xD800;", "&quot;", "&notin;", "&AMP;", "&", ";", "#", "x", "日本", "\\u0026lt;", "\\u0026", "\\\"", "\\\\", "\\n", "\\ud83d\\ude00"}
	rng := rand.New(rand.NewPCG(11, 12))
	var decodeLeaves func(v any) any
	decodeLeaves = func(v any) any {
		switch x := v.(type) {
		case string:
			return string(DecodeHTMLEntities(nil, []byte(x)))
		case []any:
			for i := range x {
				x[i] = decodeLeaves(x[i])
			}
		case map[string]any:
			for k := range x {
				x[k] = decodeLeaves(x[k])
			}
		}
		return v
	}
	for n := 0; n < 2000; n++ {
		var b strings.Builder
		str := func() string {
			var s strings.Builder
			s.WriteByte('"')
			for i, m := 0, rng.IntN(6); i < m; i++ {
				s.WriteString(parts[rng.IntN(len(parts))])
			}
			s.WriteByte('"')
			return s.String()
		}
		b.WriteString(`{` + str() + `:` + str() + `,"n":[` + str() + `,1,{` + str() + `:` + str() + `}]}`)
		in := []byte(b.String())
		if !json.Valid(in) {
			continue
		}
		got := DecodeEntitiesInJSON(nil, in)
		want, _ := jsonValue(t, in)
		want = decodeLeaves(want)
		gotV, ok := jsonValue(t, got)
		if !ok || !reflect.DeepEqual(gotV, want) {
			t.Fatalf("DecodeEntitiesInJSON(%s) = %s, want %v", in, got, want)
		}
	}
}

func TestSmartQuoteProtoKey(t *testing.T) {
	// __proto__ assigned on a plain object is no member, and a second
	// __proto__ key is still a duplicate. Expectations recorded from
	// OpenClaw 2026.9.6.
	for _, c := range []struct{ in, want string }{
		{`{“__proto__”:“x”,“__proto__”:“y”}`, `{}`},
		{`{“__proto__”:“x”,“path”:“y”}`, `{"path":"y"}`},
		{`{“__proto__”:“x”,“path”:“y”,“__proto__”:“z”}`, `{"path":"y”,“__proto__”:“z"}`},
		{`{“__proto__”:“x”,“a”:1}`, ``},
		{`{"__proto__":"x","path":“z”}`, `{"path":"z"}`},
		{`{"__proto__":"x","__proto__":"y","path":“z”}`, ``},
	} {
		out, _, _, _, ok := OpenClawExtract(nil, []byte(c.in), nil)
		if ok != (c.want != "") || ok && string(out) != c.want {
			t.Errorf("OpenClawExtract(%q) = %s %v, want %q", c.in, out, ok, c.want)
		}
	}
}

func TestDecodeEntitiesDropsProto(t *testing.T) {
	// Recorded from OpenClaw 2026.9.6's decodeHtmlEntitiesInObject.
	for _, c := range []struct{ in, want string }{
		{`{"a":1,"__proto__":{"x":1},"b":"&amp;"}`, `{"a":1,"b":"&"}`},
		{`{"__proto__":"q"}`, `{}`},
		{`[{"__proto__":null,"c":[{"__proto__":1}]}]`, `[{"c":[{}]}]`},
		{`{"k":{"__proto__":1}}`, `{"k":{}}`},
		{`{ "__proto__" : [1,{"y":2}] , "z" : "&lt;" }`, `{  "z" : "<" }`},
		{`{"proto":"x","__proto":1}`, `{"proto":"x","__proto":1}`},
	} {
		got := DecodeEntitiesInJSON(nil, []byte(c.in))
		if string(got) != c.want {
			t.Errorf("DecodeEntitiesInJSON(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}
