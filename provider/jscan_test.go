package provider

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ocbench/ocbench/llm"

	"github.com/valyala/fastjson"
)

var microChunk = []byte(`{"id":"chatcmpl-SYNTH0000000000000000000000","object":"chat.completion.chunk","created":1770933892,"model":"gpt-4.1-2025-04-14","system_fingerprint":"fp_de604bd877","choices":[{"index":0,"delta":{"content":" the"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"abcdefgh"}`)

func BenchmarkMicroFastjson(b *testing.B) {
	var p fastjson.Parser
	for b.Loop() {
		v, _ := p.ParseBytes(microChunk)
		_ = v.GetStringBytes("choices", "0", "delta", "content")
	}
}

func BenchmarkMicroSkipValue(b *testing.B) {
	for b.Loop() {
		if skipValue(microChunk, 0) < 0 {
			b.Fatal()
		}
	}
}

func BenchmarkMicroTopIter(b *testing.B) {
	for b.Loop() {
		it, _ := topIter(microChunk)
		for {
			_, _, ok := it.next()
			if !ok {
				break
			}
		}
	}
}

func BenchmarkMicroScanString(b *testing.B) {
	for b.Loop() {
		skipString(microChunk, 6)
	}
}

// The scanner agrees with encoding/json on what is valid JSON (it also
// tolerates raw control characters inside strings, as fastjson does).
func FuzzJSONScanner(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":[1,2,{"b":null}],"c":"x\"y\\"}`, `01`, `{"a":1,}`, `[1 2]`, `"\ud83d\ude00"`, `-0.5e+3`, `{"a":tru}`, `"a\qb"`, `"\u12"`, microString} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		e := skipValue(b, 0)
		ours := e >= 0 && skipWS(b, e) == len(b)
		theirs := json.Valid(b)
		if ours != theirs && !hasControl(b) && !tooDeep(b) {
			t.Fatalf("skipValue says %v, encoding/json %v for %q", ours, theirs, b)
		}
		if !ours {
			return
		}
		// A valid string unescapes as encoding/json decodes it.
		// (Raw invalid UTF-8 is kept by unescapeTo, rejected later by the
		// decoder; encoding/json replaces it, so such inputs are skipped.)
		if b[skipWS(b, 0)] == '"' && !hasControl(b) && utf8.Valid(b) {
			s := bytes.TrimSpace(b)
			got, ok := unescapeTo(nil, s[1:len(s)-1])
			var want string
			if err := json.Unmarshal(s, &want); err != nil || !ok {
				t.Fatalf("unescape of %q: ok %v, json err %v", s, ok, err)
			}
			if string(got) != want {
				t.Fatalf("unescape of %q = %q, want %q", s, got, want)
			}
		}
		// skipKnown finds the same end on validated input.
		if k := skipKnown(b, skipWS(b, 0)); k != e {
			t.Fatalf("skipKnown %d, skipValue %d for %q", k, e, b)
		}
	})
}

var microString = string(microChunk)

func hasControl(b []byte) bool {
	for _, c := range b {
		if c < 0x20 && c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return true
		}
	}
	// Whitespace characters inside strings are control characters too.
	inStr := false
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '\\' && inStr:
			i++
		case b[i] == '"':
			inStr = !inStr
		case inStr && (b[i] == '\t' || b[i] == '\n' || b[i] == '\r'):
			return true
		}
	}
	return false
}

func tooDeep(b []byte) bool {
	depth, max := 0, 0
	for _, c := range b {
		switch c {
		case '{', '[':
			depth++
			if depth > max {
				max = depth
			}
		case '}', ']':
			depth--
		}
	}
	return max >= maxJSONDepth
}

func TestScannerBasics(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{`{"a":"b\\"}`, true}, {`{"a":"b\\\"}`, false}, {`{"a" : [ 1 , 2 ] }`, true}, {`{"a":1}x`, false},
		{`[-]`, false}, {`[1.]`, false}, {`[1e]`, false}, {`[0.1e-2]`, true}, {`{"a":nul}`, false}, {`[true,false,null]`, true},
		{`"0123456789abcdef\"0123456789"`, true}, {`"` + strings.Repeat("x", 100) + `\\` + `"`, true},
	} {
		e := skipValue([]byte(tc.in), 0)
		if got := e == len(tc.in); got != tc.ok {
			t.Errorf("skipValue(%s) = %d", tc.in, e)
		}
	}
	if intOf([]byte("9223372036854775807"), span{0, 19}) != 1<<63-1 || intOf([]byte("9223372036854775808"), span{0, 19}) != 0 ||
		intOf([]byte("-12"), span{0, 3}) != -12 || intOf([]byte("1.5"), span{0, 3}) != 0 {
		t.Error("intOf")
	}
	got, ok := unescapeTo(nil, []byte(`a\n\u00e9\ud83d\ude00\ud800x`))
	if !ok || string(got) != "a\né😀\uFFFDx" {
		t.Errorf("unescape %q", got)
	}
	if _, ok := unescapeTo(nil, []byte(`\x`)); ok {
		t.Error("bad escape accepted")
	}
}

// Escaped member names match as fastjson matches them.
func TestEscapedKeys(t *testing.T) {
	body := sse(`{"ch\u006fices":[{"index":0,"d\u0065lta":{"con\u0074ent":"hi"},"finish_reason":"stop"}]}`)
	for _, ref := range []bool{false, true} {
		d := NewDecoder(WireOpenAIChat, bytes.NewReader(body), Options{})
		d.ref = ref
		r := drain(d)
		if r.err != nil || r.msg.TextContent() != "hi" || r.msg.StopReason != llm.StopStop {
			t.Fatalf("ref=%v: %v %q", ref, r.err, r.msg.TextContent())
		}
	}
}

// quickString, when it decides, agrees with scanString and saw no escape
// nor control character.
func TestQuickString(t *testing.T) {
	alphabet := []byte{'a', '"', '\\', 0x80, 0}
	rng := uint64(1)
	buf := make([]byte, 40)
	for n := 0; n < 200000; n++ {
		buf[0] = '"'
		for i := 1; i < len(buf); i++ {
			rng = rng*6364136223846793005 + 1442695040888963407
			buf[i] = alphabet[(rng>>33)%uint64(len(alphabet))]
			if (rng>>40)%3 != 0 {
				buf[i] = 'a'
			}
		}
		for l := 1; l <= len(buf); l++ {
			b := buf[:l]
			q := quickString(b, 0)
			if q < 0 {
				continue
			}
			e, esc := scanString(b, 0)
			if q != e || esc {
				t.Fatalf("%q: quickString %d, scanString %d esc %v", b, q, e, esc)
			}
		}
	}
}

// FuzzCheckString: the one-pass checkString (and checkEscapes, as a
// shape's hole scan uses it) finds the end that the string scan finds and
// accepts what that scan and the escape check (and the line feed check)
// accept.
func FuzzCheckString(f *testing.F) {
	for _, s := range []string{`"a"`, `"a\"b"`, `"\\"`, `"\\\"x"`, `"\u00e9x"`, `"\u12"`, `"\q"`, `"abc\`, `"` + strings.Repeat(`x\"y\n`, 9) + `"`, `"\ud83d\ude00"`, "\"\x01\t\"", "\"a\nb\"", "\"12345678\n\"", `"12345678\"12345678"`, `"1234567\\"`, `" \"quoted\""`, `"\\n\\t\"x"`, "\"a\\n\x01b\"", `"` + strings.Repeat("x", 60) + `\n"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 || b[0] != '"' {
			b = append([]byte{'"'}, b...)
		}
		want, esc := scanString(b, 0)
		if want >= 0 && esc && !validEscapes(b[1:want-1]) {
			want = -1
		}
		if got := checkString(b, 0); got != want {
			t.Fatalf("checkString %d, scan and escape check %d for %q", got, want, b)
		}
		if want >= 0 && esc && bytes.IndexAny(b[1:want-1], "\n\r") >= 0 {
			want = -1
		}
		got, gotEsc := checkEscapes(b, 0, true)
		if got != want || want >= 0 && gotEsc != esc {
			t.Fatalf("checkEscapes %d %v, scan and checks %d %v for %q", got, gotEsc, want, esc, b)
		}
		// unescapeShort ends the string where checkEscapes does and gives
		// strAt's value, or leaves the string to them, with any room.
		for _, room := range []int{0, 3, 64} {
			dst := make([]byte, room)
			e, n := unescapeShort(dst, b, 0)
			if n < 0 {
				continue
			}
			if e != want {
				t.Fatalf("unescapeShort ends at %d (room %d), checkEscapes at %d, for %q", e, room, want, b)
			}
			if e < 0 {
				continue
			}
			raw := b[1 : e-1]
			if bytes.IndexByte(raw, '\\') < 0 {
				if n != 0 {
					t.Fatalf("unescapeShort unescaped %q without escapes", b)
				}
				continue
			}
			wantU, ok := unescapeTo(nil, raw)
			if !ok || n == 0 || string(dst[:n]) != string(wantU) {
				t.Fatalf("unescapeShort %q (n %d), unescapeTo %q %v, for %q", dst[:max(n, 0)], n, wantU, ok, b)
			}
		}
	})
}

// FuzzSkipNumber: skipNumber's word path ends every number where the byte
// by byte scan does, from any offset.
func FuzzSkipNumber(f *testing.F) {
	for _, s := range []string{"1234,\"x\"", "7}\n\nabcdefgh", "1234567,", "12345678,", "0123456789", "-12,345678", "12.5,xxxxx", "3e7,xxxxxx", "42E-1,xxxx", "9\xfa\xff\xff\xff\xff\xff", "5:::::::::", "1/2345678"} {
		f.Add([]byte(s), uint8(0))
	}
	f.Fuzz(func(t *testing.T, b []byte, at uint8) {
		i := int(at) % (len(b) + 1)
		if got, want := skipNumber(b, i), skipNumberSlow(b, i); got != want {
			t.Fatalf("skipNumber %d, byte by byte %d, for %q at %d", got, want, b, i)
		}
	})
}

// FuzzUnescape: unescapeTo's byte loop for short strings appends what the
// run-by-run unescape appends, and agrees on validity.
func FuzzUnescape(f *testing.F) {
	for _, s := range []string{`a`, `\"quoted\"`, `{\"pat`, `x\ny\tz\r\b\f\/\\`, `\u00e9x`, `\ud83d\ude00 \u12`, `\q`, `abc\`, `\`, `\ud83d`, strings.Repeat(`x\"`, 30)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		got, ok := unescapeTo([]byte("p"), s)
		want, wok := unescapeRuns([]byte("p"), s)
		if ok != wok || string(got) != string(want) {
			t.Fatalf("unescapeTo %q %v, unescapeRuns %q %v, for %q", got, ok, want, wok, s)
		}
	})
}
