package provider

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"unicode/utf8"

	"github.com/ocbench/ocbench/llm"
)

// FuzzExtraBody merges arbitrary ExtraBody bytes into each wire's body and
// checks the merge against encoding/json: the merge is accepted exactly
// when ExtraBody is one JSON object in valid UTF-8 whose member names are
// distinct and none the encoder wrote; then the body is valid JSON with
// distinct member names, the encoder's members first and unchanged, and
// ExtraBody's members after them, in order, with the same values. A
// refusal is an *OptionError wrapping ErrInvalidOption and leaves dst as
// it was.
func FuzzExtraBody(f *testing.F) {
	for _, s := range []string{
		`{"seed":7}`, `{}`, ` { "a" : [1, {"b": null}] , "c":"\u00e9" } `, `{"model":"x"}`,
		`{"a":1,"a":2}`, `{"\u0061":1,"a":2}`, `[1]`, `{"a":`, `{"a":1}x`, "{\"a\":\"\xff\"}",
		`{"a":1e999}`, `{"a":-0.0E+1}`, `{"a":01}`, `{"a":"\ud800"}`, `{"stream_options":{}}`, `{"tools":[]}`,
	} {
		for w := range Wires {
			f.Add([]byte(s), uint8(w))
		}
	}
	f.Fuzz(func(t *testing.T, extra []byte, wi uint8) {
		w := Wires[int(wi)%len(Wires)]
		req := optionsRequest(llm.RequestOptions{})
		req.Tools = req.Tools[:1]
		base := mustEncode(t, w, req)
		baseKeys, _, err := members([]byte(base))
		if err != nil {
			t.Fatalf("base body: %v", err)
		}
		req.Options.ExtraBody = extra
		got, err := AppendRequestJSON([]byte("x"), w, req)
		if len(extra) == 0 {
			if err != nil || string(got) != "x"+base {
				t.Fatalf("empty ExtraBody changed the body: %v %s", err, got)
			}
			return
		}
		want, deep := extraAccepted(extra, baseKeys)
		if err != nil {
			if !errors.Is(err, ErrInvalidOption) || string(got) != "x" {
				t.Fatalf("refusal %v, dst %q", err, got)
			}
			if want && !deep {
				t.Fatalf("refused an acceptable ExtraBody %q: %v", extra, err)
			}
			return
		}
		if !want {
			t.Fatalf("accepted %q: %s", extra, got)
		}
		got = got[1:]
		if !utf8.Valid(got) || !json.Valid(got) {
			t.Fatalf("merged body is not valid JSON: %s", got)
		}
		keys, vals, err := members(got)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, k := range keys {
			if seen[k] {
				t.Fatalf("member %q twice in %s", k, got)
			}
			seen[k] = true
		}
		if !bytes.HasPrefix(got, []byte(base[:len(base)-1])) {
			t.Fatalf("encoder's members changed:\n%s\n%s", base, got)
		}
		ek, ev, _ := members(extra)
		if len(keys) != len(baseKeys)+len(ek) {
			t.Fatalf("%d members, want %d + %d", len(keys), len(baseKeys), len(ek))
		}
		for i := range ek {
			j := len(baseKeys) + i
			if keys[j] != ek[i] || !bytes.Equal(compact(vals[j]), compact(ev[i])) {
				t.Fatalf("member %d: %q=%s, want %q=%s", j, keys[j], vals[j], ek[i], ev[i])
			}
		}
	})
}

// extraAccepted is the merge's rule, decided with encoding/json. deep
// reports nesting beyond the scanner's depth limit, where a refusal is
// also right.
func extraAccepted(extra []byte, baseKeys []string) (ok, deep bool) {
	if !utf8.Valid(extra) || !json.Valid(extra) {
		return false, false
	}
	if bytes.TrimSpace(extra)[0] != '{' {
		return false, false
	}
	depth, maxDepth := 0, 0
	dec := json.NewDecoder(bytes.NewReader(extra))
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
			maxDepth = max(maxDepth, depth)
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
	keys, _, err := members(extra)
	if err != nil {
		return false, false
	}
	seen := map[string]bool{}
	for _, k := range baseKeys {
		seen[k] = true
	}
	for _, k := range keys {
		if seen[k] {
			return false, false
		}
		seen[k] = true
	}
	return true, maxDepth >= maxJSONDepth
}

// members returns the top-level member names (unescaped) and raw values of
// the JSON object b, in order, duplicates kept.
func members(b []byte) ([]string, []json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, errors.New("not an object")
	}
	var keys []string
	var vals []json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		keys, vals = append(keys, tok.(string)), append(vals, v)
	}
	if _, err := dec.Token(); err != nil && err != io.EOF {
		return nil, nil, err
	}
	return keys, vals, nil
}

func compact(b []byte) []byte {
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return b
	}
	return out.Bytes()
}
