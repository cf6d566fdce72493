package repair

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"testing"
)

// sessionArguments collects the tool-call arguments recorded in the
// repository's session transcripts, re-encoded compactly by encoding/json.
func sessionArguments(t *testing.T) [][]byte {
	t.Helper()
	var out [][]byte
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			switch x["type"] {
			case "toolCall", "tool_use", "functionCall":
				a, ok := x["arguments"]
				if !ok {
					a = x["input"]
				}
				if m, ok := a.(map[string]any); ok {
					b, err := json.Marshal(m)
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, b)
				}
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	for _, name := range []string{
		"../../testdata/sessions/openclaw-v3-2026-03-qwen-1f979e30.jsonl",
		"../../testdata/sessions/pi-v1-anthropic-large-session.jsonl",
	} {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var v any
			if json.Unmarshal(sc.Bytes(), &v) == nil {
				walk(v)
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	if len(out) < 100 {
		t.Fatalf("only %d recorded tool calls", len(out))
	}
	return out
}

// TestRecordedArguments runs the real tool-call arguments of the session
// transcripts through every decision: valid objects pass unchanged under
// all profiles, and cutting them anywhere is refused by Extended but closed
// by pi-ai.
func TestRecordedArguments(t *testing.T) {
	dst := make([]byte, 0, 1<<16)
	for _, args := range sessionArguments(t) {
		var res Result
		var err error
		if dst, res, err = Extended(dst[:0], args, nil); err != nil || string(dst) != string(args) || res.Repaired() {
			t.Fatalf("Extended(%s) = %s %+v %v", args, dst, res, err)
		}
		if out, kind, _, _, ok := OpenClawExtract(dst[:0], args, nil); !ok || kind != KindPreserved || string(out) != string(args) {
			t.Fatalf("OpenClawExtract(%s) = %s %v", args, out, kind)
		}
		if out, how := PiParse(dst[:0], args); how != PiValid || string(out) != string(args) {
			t.Fatalf("PiParse(%s) = %s %v", args, out, how)
		}
		step := max(1, len(args)/16)
		for i := 1; i < len(args); i += step {
			if _, _, err := Extended(dst[:0], args[:i], nil); !errors.Is(err, ErrTruncated) {
				t.Fatalf("Extended(%q) = %v, want ErrTruncated", args[:i], err)
			}
			if out, how := PiParse(dst[:0], args[:i]); !Valid(out) || how == PiValid {
				t.Fatalf("PiParse(%q) = %s %v", args[:i], out, how)
			}
		}
	}
}
