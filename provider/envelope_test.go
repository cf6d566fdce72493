package provider

import (
	"errors"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/llm"
)

// The chat fast path skips a chunk's leading envelope members when they
// repeat the previous chunk's byte for byte. These streams vary what comes
// right after a remembered envelope, and the envelope itself, and must
// decode as the reference does (or fail as bad JSON where it is bad).
func TestChatEnvelopeReuse(t *testing.T) {
	const env = `{"id":"c1","object":"chat.completion.chunk","created":17,"model":"m",`
	text := func(s string) string {
		return env + `"choices":[{"index":0,"delta":{"content":"` + s + `"},"finish_reason":null}]}`
	}
	done := env + `"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`
	cases := []struct {
		name   string
		chunks []string
		bad    bool
		text   string
	}{
		{"repeated", []string{text("a"), text("b"), text("c"), done}, false, "abc"},
		{"number grows", []string{text("a"), `{"id":"c1","object":"chat.completion.chunk","created":170,"model":"m","choices":[{"index":0,"delta":{"content":"b"}}]}`, done}, false, "ab"},
		{"number cut", []string{text("a"), `{"id":"c1","object":"chat.completion.chunk","created":17x,"model":"m","choices":[]}`, done}, true, ""},
		{"trailing comma", []string{text("a"), env + `}`, done}, true, ""},
		{"double comma", []string{text("a"), env + `,"choices":[]}`, done}, true, ""},
		{"envelope only", []string{text("a"), env + `"x":1}`, text("b"), done}, false, "ab"},
		{"other model later", []string{text("a"), `{"id":"c2","model":"n","choices":[{"index":0,"delta":{"content":"b"}}]}`, text("c"), done}, false, "abc"},
		{"usage first", []string{text("a"), `{"usage":{"prompt_tokens":5,"completion_tokens":2},` + env[1:] + `"choices":[]}`, text("b"), done}, false, "ab"},
		{"escaped key", []string{text("a"), `{"id":"c1","object":"chat.completion.chunk","created":17,"model":"m","\u0063hoices":[{"index":0,"delta":{"content":"b"}}]}`, text("c"), done}, false, "abc"},
		{"error after envelope", []string{text("a"), env + `"error":{"message":"boom"}}`}, false, "a"},
		{"whitespace", []string{text("a"), strings.Replace(text("b"), `"model":"m",`, `"model":"m" ,`, 1), text("c"), done}, false, "abc"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := sse(c.chunks...)
			fuzzDecode(t, WireOpenAIChat, body)
			r := decodeBytes(WireOpenAIChat, body, Options{})
			if c.bad {
				if !errors.Is(r.err, ErrBadJSON) {
					t.Fatalf("err %v, want bad JSON", r.err)
				}
				return
			}
			ref := NewDecoder(WireOpenAIChat, strings.NewReader(string(body)), Options{})
			ref.ref = true
			rr := drain(ref)
			if (r.err == nil) != (rr.err == nil) {
				t.Fatalf("err %v, reference %v", r.err, rr.err)
			}
			if c.name == "repeated" && string(r.d.env) != env {
				t.Fatalf("remembered envelope %q", r.d.env)
			}
			if got := r.msg.TextContent(); got != c.text {
				t.Fatalf("text %q, want %q", got, c.text)
			}
			if r.err == nil && r.msg.StopReason != llm.StopStop {
				t.Fatalf("stop %v", r.msg.StopReason)
			}
		})
	}
}
