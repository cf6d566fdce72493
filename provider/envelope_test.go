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

// The chat fast path descends into tool_calls by hand; values nested
// under it must hit the depth limit exactly where skipValue of the whole
// array does.
func TestChatToolCallsDepth(t *testing.T) {
	nest := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	shapes := []func(string) string{
		func(v string) string {
			return `[{"index":0,"id":"a","function":{"name":"f","arguments":"","x":` + v + `}}]`
		},
		func(v string) string { return `[{"index":0,"id":"a","x":` + v + `,"function":{"name":"f"}}]` },
		func(v string) string { return `[{"index":0,"id":"a","function":{"name":"f"}},` + v + `]` },
		func(v string) string { return `[{"index":0,"id":"a","function":` + v + `}]` },
	}
	for si, shape := range shapes {
		for n := maxJSONDepth - 5; n <= maxJSONDepth+1; n++ {
			tools := shape(nest(n))
			want := skipValue([]byte(tools), 0) == len(tools)
			body := sse(chunk(`{"tool_calls":`+tools+`}`, "tool_calls"))
			r := decodeBytes(WireOpenAIChat, body, Options{})
			if got := !errors.Is(r.err, ErrBadJSON); got != want {
				t.Fatalf("shape %d depth %d: accepted %v, skipValue accepts %v (err %v)", si, n, got, want, r.err)
			}
		}
	}
}

// tool_calls arrays collected inline (up to four elements) and longer ones
// (walked again after validation) decode as the reference does.
func TestChatToolCallsInlineAndLong(t *testing.T) {
	for n := 0; n <= 6; n++ {
		var b strings.Builder
		b.WriteByte('[')
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			switch i % 3 {
			case 0:
				b.WriteString(`{"index":` + string(rune('0'+i)) + `,"id":"c` + string(rune('0'+i)) + `","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}`)
			case 1:
				b.WriteString(`{"id":"x\u0031","function":{"arguments":"{}","name":"g","name":"h"},"function":{"name":"z"}}`)
			default:
				b.WriteString(`null`)
			}
		}
		b.WriteByte(']')
		body := sse(chunk(`{"content":"hi","tool_calls":`+b.String()+`,"tool_calls":[{"index":9}]}`, ""), chunk(`{}`, "tool_calls"))
		fuzzDecode(t, WireOpenAIChat, body)
		r := decodeBytes(WireOpenAIChat, body, Options{})
		if r.err != nil || len(calls(r.msg)) == 0 && n > 0 {
			t.Fatalf("%d elements: err %v, calls %v", n, r.err, calls(r.msg))
		}
	}
}
