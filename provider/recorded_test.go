package provider

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/llm"
)

type wantCall struct{ id, name, args string }

type recordedCase struct {
	file     string
	wire     Wire
	text     string // concatenated text blocks
	thinking string
	calls    []wantCall
	usage    llm.Usage
	stop     llm.StopReason
	raw      string
	model    string
	errIs    error  // for error streams
	errMsg   string // substring of ErrorMessage
}

var recordedCases = []recordedCase{
	{file: "openai-chat-toolcall-gpt4turbo.sse", wire: WireOpenAIChat,
		calls: []wantCall{{"call_9ctHOJqO3bYrpm2A6S7nHd5k", "get_current_weather", `{"location":"Boston, MA"}`}},
		usage: llm.Usage{Input: 83, Output: 17, TotalTokens: 100}, stop: llm.StopToolUse, raw: "tool_calls", model: "gpt-4-turbo-2024-04-09"},
	{file: "openai-chat-text-usage-gpt41nano.sse", wire: WireOpenAIChat, text: "**Holiday.",
		usage: llm.Usage{Input: 16, Output: 300, TotalTokens: 316}, stop: llm.StopStop, raw: "stop", model: "gpt-4.1-nano-2025-04-14"},
	{file: "openai-compat-text-then-toolcall-deepseek.sse", wire: WireOpenAIChat, text: "。",
		calls: []wantCall{{"call_a6dea19b4490485bbdad7047", "market-get-weather", `{"city": "Tokyo", "latitude": 35.6762, "longitude": 139.6503}`}},
		usage: llm.Usage{Input: 395, Output: 55, TotalTokens: 450}, stop: llm.StopToolUse, raw: "tool_calls", model: "DeepSeek-V3.2-Exp"},
	{file: "openai-chat-text-toolcall-cached-constructed.sse", wire: WireOpenAIChat, text: "Let me check the weather.",
		calls: []wantCall{{"call_EXAMPLE1", "get_weather", `{"city":"Paris"}`}},
		usage: llm.Usage{Input: 86, Output: 31, CacheRead: 1920, TotalTokens: 2037}, stop: llm.StopToolUse, raw: "tool_calls", model: "gpt-4.1-nano-2025-04-14"},
	{file: "anthropic-text-then-tooluse-ping.sse", wire: WireAnthropic, text: "I'll invoke the JSON response tool.",
		calls: []wantCall{{"toolu_01KFbKqPYSuAKujiL6mTfzYA", "json", `{"elements": [{"location": "San Francisco", "temperature": 58, "condition": "sunny"}]}`}},
		usage: llm.Usage{Input: 849, Output: 47, TotalTokens: 896}, stop: llm.StopToolUse, raw: "tool_use", model: "claude-haiku-4-5-20251001"},
	{file: "anthropic-tooluse-escaped-quotes.sse", wire: WireAnthropic,
		calls: []wantCall{{"toolu_01Cr31vcGoeeRgi3Eo5Ds8qN", "website_update", `{"website_path": "/home/user/pace-landing", "tasks": [{"description": "Today you post every run to Strava, but Strava does not answer the question: \"What should I do next after this run?\". It is a great log, but it is not adaptive.", "type": "feature", "passes": false}]}`}},
		usage: llm.Usage{Input: 912, Output: 118, TotalTokens: 1030}, stop: llm.StopToolUse, raw: "tool_use", model: "claude-sonnet-4-5-20250929"},
	{file: "anthropic-thinking.sse", wire: WireAnthropic, text: "925 ÷ 5 = 185",
		thinking: "The previous result was 925. Now I need to divide that by 5.\n\n925 ÷ 5 = 185",
		usage:    llm.Usage{Input: 69, Output: 53, TotalTokens: 122}, stop: llm.StopStop, raw: "end_turn", model: "claude-sonnet-4-5-20250929"},
	{file: "anthropic-refusal.sse", wire: WireAnthropic,
		usage: llm.Usage{Input: 18, Output: 5, TotalTokens: 23}, stop: llm.StopError, raw: "refusal", model: "claude-fable-5",
		errMsg: "This request triggered restrictions on violative cyber content"},
	{file: "openai-responses-function-call.sse", wire: WireOpenAIResponses,
		calls: []wantCall{{"call_2FQdm3Br7Qb35YUBSkDR7kue|fc_0775572d10a16b66006a8d8528e8a887d2a32ef76463d40c98", "get_weather", `{"city":"Beijing"}`}},
		usage: llm.Usage{Input: 45, Output: 25, TotalTokens: 70}, stop: llm.StopToolUse, raw: "completed", model: "gpt-5.1-2025-11-13"},
	// Ex. J has its response.completed omitted: the text survives, the
	// stream is reported truncated.
	{file: "openai-responses-text.sse", wire: WireOpenAIResponses, text: "OK",
		stop: llm.StopError, errIs: ErrTruncated, errMsg: "ended before"},
}

func checkRecorded(t *testing.T, c recordedCase, r result) {
	t.Helper()
	if err := checkInvariants(r, 0); err != nil {
		t.Fatalf("invariants: %v", err)
	}
	m := r.msg
	var text, thinking strings.Builder
	var calls []wantCall
	for i := range m.Content {
		b := &m.Content[i]
		switch b.Type {
		case llm.BlockText:
			text.Write(b.Text)
		case llm.BlockThinking:
			thinking.Write(b.Text)
		case llm.BlockToolCall:
			calls = append(calls, wantCall{string(b.ID), string(b.Name), string(b.Arguments)})
			if string(b.RawArgs) != string(b.Arguments) {
				t.Errorf("RawArgs %q, Arguments %q", b.RawArgs, b.Arguments)
			}
		}
	}
	if text.String() != c.text {
		t.Errorf("text %q, want %q", text.String(), c.text)
	}
	if thinking.String() != c.thinking {
		t.Errorf("thinking %q, want %q", thinking.String(), c.thinking)
	}
	if len(calls) != len(c.calls) {
		t.Fatalf("calls %q, want %q", calls, c.calls)
	}
	for i := range calls {
		if calls[i] != c.calls[i] {
			t.Errorf("call %d: %q, want %q", i, calls[i], c.calls[i])
		}
	}
	u := m.Usage
	u.Cost = llm.Cost{}
	if u != c.usage {
		t.Errorf("usage %+v, want %+v", u, c.usage)
	}
	if m.StopReason != c.stop {
		t.Errorf("stop %v, want %v", m.StopReason, c.stop)
	}
	if r.raw != c.raw {
		t.Errorf("raw stop %q, want %q", r.raw, c.raw)
	}
	if c.model != "" && m.Model != c.model {
		t.Errorf("model %q, want %q", m.Model, c.model)
	}
	if m.API != c.wire.API() {
		t.Errorf("api %q", m.API)
	}
	if c.stop == llm.StopError {
		if !strings.Contains(m.ErrorMessage, c.errMsg) {
			t.Errorf("ErrorMessage %q, want it to contain %q", m.ErrorMessage, c.errMsg)
		}
		if c.errIs != nil && !errors.Is(r.err, c.errIs) {
			t.Errorf("err %v, want %v", r.err, c.errIs)
		}
		if r.err == nil {
			t.Error("no error")
		}
	} else if r.err != nil {
		t.Errorf("err %v", r.err)
	}
}

func TestRecordedStreams(t *testing.T) {
	for _, c := range recordedCases {
		t.Run(c.file, func(t *testing.T) {
			body := readStream(t, c.file)
			if w, ok := DetectWire(body); !ok || w != c.wire {
				t.Errorf("DetectWire = %v %v", w, ok)
			}
			checkRecorded(t, c, decodeBytes(c.wire, body, Options{}))
		})
	}
}

func TestRecordedStreamsCRLF(t *testing.T) {
	for _, c := range recordedCases {
		t.Run(c.file, func(t *testing.T) {
			body := bytes.ReplaceAll(readStream(t, c.file), []byte("\n"), []byte("\r\n"))
			checkRecorded(t, c, decodeBytes(c.wire, body, Options{}))
		})
	}
}

// Comments, keep-alives, unknown events, id/retry fields and unknown
// Anthropic/Responses event types change nothing.
func TestRecordedStreamsWithNoise(t *testing.T) {
	for _, c := range recordedCases {
		t.Run(c.file, func(t *testing.T) {
			body := readStream(t, c.file)
			noise := ": keep-alive\n\nid: 7\nretry: 1000\n\nevent: mystery\ndata: {\"type\":\"mystery.event\",\"x\":[1,2]}\n\n"
			if c.wire == WireOpenAIChat {
				noise = ": OPENROUTER PROCESSING\n\nid: 7\n\n"
			}
			var out []byte
			for _, ev := range bytes.SplitAfter(body, []byte("\n\n")) {
				out = append(out, noise...)
				out = append(out, ev...)
			}
			checkRecorded(t, c, decodeBytes(c.wire, out, Options{}))
		})
	}
}

// Without the trailing blank line, or with the body cut right after the
// final event's data line, the result is the same.
func TestRecordedStreamsNoTrailingBlank(t *testing.T) {
	for _, c := range recordedCases {
		t.Run(c.file, func(t *testing.T) {
			body := bytes.TrimRight(readStream(t, c.file), "\n")
			checkRecorded(t, c, decodeBytes(c.wire, body, Options{}))
		})
	}
}

func TestMissingDone(t *testing.T) {
	for _, c := range recordedCases {
		if c.wire != WireOpenAIChat {
			continue
		}
		body := bytes.ReplaceAll(readStream(t, c.file), []byte("data: [DONE]\n\n"), nil)
		checkRecorded(t, c, decodeBytes(c.wire, body, Options{}))
	}
}

// Truncating a recorded stream at every byte offset never panics, always
// ends with one terminal event, and keeps everything decoded: each block is
// a prefix of the full decode's block.
func TestTruncatedEveryOffset(t *testing.T) {
	for _, c := range recordedCases {
		t.Run(c.file, func(t *testing.T) {
			body := readStream(t, c.file)
			full := decodeBytes(c.wire, body, Options{})
			d := NewDecoder(c.wire, nil, Options{})
			for i := 0; i < len(body); i++ {
				d.Reset(c.wire, bytes.NewReader(body[:i]), Options{})
				r := drain(d)
				if err := checkInvariants(r, 0); err != nil {
					t.Fatalf("cut at %d: %v", i, err)
				}
				if r.msg.StopReason == llm.StopError && !errors.Is(r.err, ErrTruncated) {
					if _, ok := r.err.(*StopReasonError); !ok {
						t.Fatalf("cut at %d: err %v", i, r.err)
					}
				}
				if len(r.msg.Content) > len(full.msg.Content) {
					t.Fatalf("cut at %d: %d blocks > %d", i, len(r.msg.Content), len(full.msg.Content))
				}
				for j := range r.msg.Content {
					got, want := &r.msg.Content[j], &full.msg.Content[j]
					if got.Type != want.Type || !bytes.HasPrefix(want.Text, got.Text) || !bytes.HasPrefix(want.RawArgs, got.RawArgs) {
						t.Fatalf("cut at %d: block %d %+v not a prefix of %+v", i, j, got, want)
					}
					if len(got.Arguments) > 0 && string(got.Arguments) != string(want.Arguments) {
						t.Fatalf("cut at %d: block %d arguments %q", i, j, got.Arguments)
					}
				}
			}
		})
	}
}

func TestDetectWire(t *testing.T) {
	for _, tc := range []struct {
		head string
		w    Wire
		ok   bool
	}{
		{"data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"choices\":[]}\n\n", WireOpenAIChat, true},
		{"event: message_start\ndata: {}\n\n", WireAnthropic, true},
		{"data: {\"type\": \"message_start\"}\n\n", WireAnthropic, true},
		{": hi\r\nevent: response.created\r\ndata: {}\r\n\r\n", WireOpenAIResponses, true},
		{"data: {\"type\":\"response.output_text.delta\"}", WireOpenAIResponses, true},
		{"hello", 0, false},
		{"", 0, false},
	} {
		w, ok := DetectWire([]byte(tc.head))
		if ok != tc.ok || (ok && w != tc.w) {
			t.Errorf("DetectWire(%q) = %v %v", tc.head, w, ok)
		}
	}
}

func TestWireNames(t *testing.T) {
	for w := Wire(0); w < numWires; w++ {
		if back, ok := ParseWire(w.String()); !ok || back != w {
			t.Errorf("ParseWire(%q)", w.String())
		}
		if back, ok := ParseWire(string(w.API())); !ok || back != w {
			t.Errorf("ParseWire(%q)", w.API())
		}
	}
	if _, ok := ParseWire("gemini"); ok {
		t.Error("unknown wire accepted")
	}
	if Wire(9).String() != "unknown" || Wire(9).API() != "" {
		t.Error("out of range wire")
	}
}
