package provider

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/llm"
)

func chunk(delta string, finish string) string {
	if finish == "" {
		finish = "null"
	} else {
		finish = `"` + finish + `"`
	}
	return `{"id":"c1","model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + finish + `}]}`
}

func mustDecode(t *testing.T, w Wire, body []byte, o Options) result {
	t.Helper()
	r := decodeBytes(w, body, o)
	if err := checkInvariants(r, r.d.ArgMismatches()); err != nil {
		t.Fatalf("invariants: %v\nbody:\n%s", err, body)
	}
	return r
}

type callView struct{ id, name, raw, args string }

func calls(m *llm.Message) []callView {
	var out []callView
	for i := range m.Content {
		if b := &m.Content[i]; b.Type == llm.BlockToolCall {
			out = append(out, callView{string(b.ID), string(b.Name), string(b.RawArgs), string(b.Arguments)})
		}
	}
	return out
}

func TestChatParallelInterleaved(t *testing.T) {
	body := sse(
		chunk(`{"role":"assistant","content":"On it."}`, ""),
		chunk(`{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"read","arguments":""}}]}`, ""),
		chunk(`{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"exec","arguments":"{\"cmd\""}}]}`, ""),
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":"}}]}`, ""),
		chunk(`{"tool_calls":[{"index":1,"function":{"arguments":":\"ls\"}"}},{"index":0,"function":{"arguments":"\"a\"}"}}]}`, ""),
		chunk(`{}`, "tool_calls"),
		"[DONE]",
	)
	r := mustDecode(t, WireOpenAIChat, body, Options{})
	got := calls(r.msg)
	want := []callView{{"call_a", "read", `{"path":"a"}`, `{"path":"a"}`}, {"call_b", "exec", `{"cmd":"ls"}`, `{"cmd":"ls"}`}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("calls %q", got)
	}
	if r.msg.StopReason != llm.StopToolUse || r.msg.TextContent() != "On it." {
		t.Fatalf("stop %v text %q", r.msg.StopReason, r.msg.TextContent())
	}
}

// A reused index with a new id starts a new call (proxies that number
// every call 0, Qwen, DeepSeek).
func TestChatReusedIndexNewID(t *testing.T) {
	body := sse(
		chunk(`{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"get","arguments":"{\"city\":\"北京\"}"}}]}`, ""),
		chunk(`{"tool_calls":[{"index":0,"id":"call_2","function":{"name":"get","arguments":"{\"city\":"}}]}`, ""),
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\"上海\"}"}}]}`, ""),
		chunk(`{}`, "tool_calls"),
	)
	r := mustDecode(t, WireOpenAIChat, body, Options{})
	got := calls(r.msg)
	if len(got) != 2 || got[0].args != `{"city":"北京"}` || got[1].args != `{"city":"上海"}` || got[1].id != "call_2" {
		t.Fatalf("calls %q", got)
	}
}

// Without index (Gemini's compatible endpoint): key by id, else position.
func TestChatMissingIndex(t *testing.T) {
	body := sse(
		chunk(`{"tool_calls":[{"id":"g1","function":{"name":"a","arguments":"{\"x\":"}},{"id":"g2","function":{"name":"b","arguments":"{}"}}]}`, ""),
		chunk(`{"tool_calls":[{"id":"g1","function":{"arguments":"1}"}}]}`, ""),
		chunk(`{"tool_calls":[{"function":{"arguments":""}}]}`, ""),
		chunk(`{}`, "tool_calls"),
	)
	r := mustDecode(t, WireOpenAIChat, body, Options{})
	got := calls(r.msg)
	if len(got) != 2 || got[0].args != `{"x":1}` || got[1].args != `{}` || got[1].name != "b" {
		t.Fatalf("calls %q", got)
	}
}

func TestChatReasoningAndRefusal(t *testing.T) {
	body := sse(
		chunk(`{"role":"assistant","content":null,"reasoning_content":"Let me think"}`, ""),
		chunk(`{"reasoning_content":" more."}`, ""),
		chunk(`{"content":"Answer"}`, ""),
		chunk(`{"refusal":" but no."}`, ""),
		chunk(`{}`, "stop"),
		`{"id":"c1","choices":[],"usage":{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120,"prompt_tokens_details":{"cached_tokens":64},"completion_tokens_details":{"reasoning_tokens":12}}}`,
		"[DONE]",
	)
	r := mustDecode(t, WireOpenAIChat, body, Options{Reasoning: true})
	m := r.msg
	if len(m.Content) != 2 || m.Content[0].Type != llm.BlockThinking || string(m.Content[0].Text) != "Let me think more." ||
		string(m.Content[0].Signature) != "reasoning_content" || string(m.Content[1].Text) != "Answer but no." {
		t.Fatalf("content %s", m.AppendJSON(nil))
	}
	u := m.Usage
	if u.Input != 36 || u.CacheRead != 64 || u.Output != 20 || u.Reasoning != 12 || u.TotalTokens != 120 {
		t.Fatalf("usage %+v", u)
	}
	// Not a reasoning model (the default): the reasoning deltas are
	// dropped, as @openclaw/ai does; refusal text is still text.
	r = mustDecode(t, WireOpenAIChat, body, Options{})
	if m := r.msg; len(m.Content) != 1 || string(m.Content[0].Text) != "Answer but no." {
		t.Fatalf("without reasoning: %s", m.AppendJSON(nil))
	}
}

// Moonshot reports usage inside choices[0] when the chunk has none at
// top level; both JSON paths read it.
func TestChatChoiceUsage(t *testing.T) {
	body := sse(chunk(`{"content":"hi"}`, ""),
		`{"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"stop","usage":{"prompt_tokens":10,"completion_tokens":3,"total_tokens":13}}]}`,
		"[DONE]")
	for _, ref := range []bool{false, true} {
		d := NewDecoder(WireOpenAIChat, bytes.NewReader(body), Options{})
		d.ref = ref
		m, err := llm.Drain(d)
		if err != nil || m.Usage.Input != 10 || m.Usage.Output != 3 || m.Usage.TotalTokens != 13 {
			t.Fatalf("ref=%v: %v usage %+v", ref, err, m.Usage)
		}
	}
}

func TestChatContentFilterAndUnknownFinish(t *testing.T) {
	r := mustDecode(t, WireOpenAIChat, sse(chunk(`{"content":"Partial"}`, ""), chunk(`{}`, "content_filter"), "[DONE]"), Options{})
	var sre *StopReasonError
	if r.msg.StopReason != llm.StopError || !errors.As(r.err, &sre) || sre.Raw != "content_filter" ||
		r.msg.ErrorMessage != "Provider finish_reason: content_filter" || r.raw != "content_filter" || r.msg.TextContent() != "Partial" {
		t.Fatalf("stop %v err %v msg %q raw %q", r.msg.StopReason, r.err, r.msg.ErrorMessage, r.raw)
	}
	// mapOpenAIStopReason: every other value is an error that names it.
	for _, fr := range []string{"sensitive", "network_error", "weird"} {
		r = mustDecode(t, WireOpenAIChat, sse(chunk(`{"content":"x"}`, fr), "[DONE]"), Options{})
		if r.msg.StopReason != llm.StopError || r.msg.ErrorMessage != "Provider finish_reason: "+fr || r.raw != fr || r.msg.TextContent() != "x" {
			t.Fatalf("%s: stop %v msg %q", fr, r.msg.StopReason, r.msg.ErrorMessage)
		}
	}
	r = mustDecode(t, WireOpenAIChat, sse(chunk(`{"content":"x"}`, "end"), "[DONE]"), Options{})
	if r.msg.StopReason != llm.StopStop || r.err != nil {
		t.Fatalf("end: %v %v", r.msg.StopReason, r.err)
	}
	r = mustDecode(t, WireOpenAIChat, sse(chunk(`{"tool_calls":[{"index":0,"id":"c","function":{"name":"read","arguments":"{}"}}]}`, "tool_call"), "[DONE]"), Options{})
	if r.msg.StopReason != llm.StopToolUse || r.err != nil {
		t.Fatalf("tool_call: %v %v", r.msg.StopReason, r.err)
	}
	r = mustDecode(t, WireOpenAIChat, sse(chunk(`{"content":"x"}`, "length")), Options{})
	if r.msg.StopReason != llm.StopLength || r.err != nil {
		t.Fatalf("length: %v %v", r.msg.StopReason, r.err)
	}
}

func TestInBandErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		w        Wire
		body     []byte
		typ, msg string
		keepText string
	}{
		{"chat", WireOpenAIChat, sse(chunk(`{"content":"Hi"}`, ""), `{"error":{"message":"upstream died","type":"server_error","code":502}}`), "server_error", "upstream died", "Hi"},
		{"chat-string", WireOpenAIChat, sse(`{"error":"quota"}`), "", "quota", ""},
		{"anthropic", WireAnthropic, named(
			"message_start", `{"type":"message_start","message":{"id":"m","model":"c","usage":{"input_tokens":5,"output_tokens":1}}}`,
			"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}`,
			"error", `{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}`), "overloaded_error", "Overloaded", "Hel"},
		{"responses-error", WireOpenAIResponses, named("error", `{"type":"error","code":"server_error","message":"The server had an error","param":null,"sequence_number":3}`), "server_error", "The server had an error", ""},
		{"responses-failed", WireOpenAIResponses, named(
			"response.output_text.delta", `{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"Par"}`,
			"response.failed", `{"type":"response.failed","response":{"id":"r","status":"failed","error":{"code":"rate_limit_exceeded","message":"Too many"},"usage":null}}`), "rate_limit_exceeded", "Too many", "Par"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mustDecode(t, tc.w, tc.body, Options{})
			var pe *ProviderError
			if !errors.As(r.err, &pe) || pe.Type != tc.typ || pe.Message != tc.msg {
				t.Fatalf("err %#v", r.err)
			}
			if r.msg.StopReason != llm.StopError || r.msg.ErrorMessage != tc.msg || r.msg.TextContent() != tc.keepText {
				t.Fatalf("msg %s", r.msg.AppendJSON(nil))
			}
		})
	}
}

func TestLimits(t *testing.T) {
	giant := chunk(`{"content":"`+strings.Repeat("x", 200<<10)+`"}`, "")
	// A line longer than the read buffer but under the limit decodes.
	r := mustDecode(t, WireOpenAIChat, sse(giant, chunk(`{}`, "stop")), Options{})
	if r.err != nil || len(r.msg.TextContent()) != 200<<10 {
		t.Fatalf("long line: %v", r.err)
	}
	// Over the limit: a typed error, not a panic, and earlier text kept.
	r = mustDecode(t, WireOpenAIChat, sse(chunk(`{"content":"kept"}`, ""), giant), Options{MaxEventBytes: 100 << 10})
	var le *LimitError
	if !errors.As(r.err, &le) || le.Limit != 100<<10 || r.msg.TextContent() != "kept" {
		t.Fatalf("err %v text %q", r.err, r.msg.TextContent())
	}
	// An event made of many data lines is bounded too.
	var many []byte
	for i := 0; i < 100; i++ {
		many = append(many, "data: 0123456789\n"...)
	}
	many = append(many, '\n')
	r = mustDecode(t, WireOpenAIChat, many, Options{MaxEventBytes: 500})
	if !errors.As(r.err, &le) || le.What != "SSE event" {
		t.Fatalf("multi-line: %v", r.err)
	}
	// Arguments over MaxArgBytes: the call keeps what it had, undecided.
	body := sse(
		chunk(`{"tool_calls":[{"index":0,"id":"c","function":{"name":"w","arguments":"{\"a\":\""}}]}`, ""),
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"`+strings.Repeat("y", 64)+`"}}]}`, ""),
		chunk(`{}`, "tool_calls"))
	r = mustDecode(t, WireOpenAIChat, body, Options{MaxArgBytes: 32})
	if !errors.As(r.err, &le) || le.What != "tool-call arguments" {
		t.Fatalf("args: %v", r.err)
	}
	if c := calls(r.msg); len(c) != 1 || c[0].raw != `{"a":"` || c[0].args != "" {
		t.Fatalf("calls %q", c)
	}
	if !strings.Contains(le.Error(), "32 bytes") {
		t.Fatalf("message %q", le.Error())
	}
}

func TestInvalidUTF8AndJSON(t *testing.T) {
	r := mustDecode(t, WireOpenAIChat, sse(chunk(`{"content":"ok"}`, ""), chunk("{\"content\":\"bad \xff\xfe\"}", "")), Options{})
	var se *SyntaxError
	if !errors.Is(r.err, ErrInvalidUTF8) || !errors.As(r.err, &se) || r.msg.TextContent() != "ok" {
		t.Fatalf("utf8: %v", r.err)
	}
	r = mustDecode(t, WireAnthropic, named("message_start", `{"type":"message_start","message":{}}`, "content_block_start", `{"type":"content_block_start","index":0,"content_block":`), Options{})
	if !errors.Is(r.err, ErrBadJSON) || !errors.As(r.err, &se) || se.Offset == 0 || se.Excerpt == "" {
		t.Fatalf("json: %#v", r.err)
	}
	long := `{"choices":[` + strings.Repeat(`{"a":1},`, 1000)
	r = mustDecode(t, WireOpenAIChat, sse(long), Options{})
	if !errors.As(r.err, &se) || len(se.Excerpt) > 100 {
		t.Fatalf("excerpt not bounded: %v", r.err)
	}
}

func TestMultiLineData(t *testing.T) {
	body := []byte("data: {\"choices\":[{\"index\":0,\n" +
		"data: \"delta\":{\"content\":\"a\\nb\"}}]}\n\n" +
		"data:{\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
	r := mustDecode(t, WireOpenAIChat, body, Options{})
	if r.err != nil || r.msg.TextContent() != "a\nb" {
		t.Fatalf("err %v text %q", r.err, r.msg.TextContent())
	}
}

func TestContextCanceledBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d := NewDecoder(WireAnthropic, strings.NewReader(string(readStream(t, "anthropic-thinking.sse"))), Options{})
	d.SetContext(ctx)
	r := drain(d)
	if err := checkInvariants(r, 0); err != nil {
		t.Fatal(err)
	}
	if r.msg.StopReason != llm.StopAborted || r.msg.ErrorMessage != "Request was aborted" || !errors.Is(r.err, context.Canceled) {
		t.Fatalf("%v %q %v", r.msg.StopReason, r.msg.ErrorMessage, r.err)
	}
}

// A non-empty input in content_block_start: used when no deltas follow,
// replaced by the deltas when they do.
func TestAnthropicStartInput(t *testing.T) {
	start := func(input string) []string {
		return []string{"message_start", `{"type":"message_start","message":{"id":"m","model":"c","usage":{"input_tokens":5,"output_tokens":1}}}`,
			"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"calc","input":` + input + `}}`}
	}
	end := []string{"content_block_stop", `{"type":"content_block_stop","index":0}`,
		"message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}`,
		"message_stop", `{"type":"message_stop"}`}
	r := mustDecode(t, WireAnthropic, named(append(start(`{"x":1}`), end...)...), Options{})
	if c := calls(r.msg); len(c) != 1 || c[0].args != `{"x":1}` {
		t.Fatalf("start only: %q", c)
	}
	with := append(start(`{"x":1}`),
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"x\":"}}`,
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"2}"}}`)
	r = mustDecode(t, WireAnthropic, named(append(with, end...)...), Options{})
	if c := calls(r.msg); len(c) != 1 || c[0].args != `{"x":2}` {
		t.Fatalf("start + deltas: %q", c)
	}
	// Only the empty delta (a tool without arguments): {}.
	empty := append(start(`{}`), "content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":""}}`)
	r = mustDecode(t, WireAnthropic, named(append(empty, end...)...), Options{})
	if c := calls(r.msg); len(c) != 1 || c[0].args != `{}` || r.msg.Usage.Output != 9 || r.msg.Usage.Input != 5 {
		t.Fatalf("no args: %q %+v", c, r.msg.Usage)
	}
}

func TestAnthropicRedactedAndUsage(t *testing.T) {
	body := named(
		"message_start", `{"type":"message_start","message":{"id":"m","model":"c","usage":{"input_tokens":43,"cache_creation_input_tokens":100,"cache_read_input_tokens":2000,"output_tokens":1}}}`,
		"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"ENCRYPTED"}}`,
		"content_block_stop", `{"type":"content_block_stop","index":0}`,
		"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"server_tool_use","id":"s","name":"web_search","input":{}}}`,
		"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{}"}}`,
		"content_block_stop", `{"type":"content_block_stop","index":1}`,
		"content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}`,
		"content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"citations_delta","citation":{}}}`,
		"content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"Done"}}`,
		"content_block_stop", `{"type":"content_block_stop","index":2}`,
		"message_delta", `{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"input_tokens":61,"output_tokens":30}}`,
		"message_stop", `{"type":"message_stop"}`)
	r := mustDecode(t, WireAnthropic, body, Options{})
	m := r.msg
	if len(m.Content) != 2 || !m.Content[0].Redacted || string(m.Content[0].Signature) != "ENCRYPTED" || string(m.Content[1].Text) != "Done" {
		t.Fatalf("content %s", m.AppendJSON(nil))
	}
	u := m.Usage
	if u.Input != 61 || u.CacheWrite != 100 || u.CacheRead != 2000 || u.Output != 30 || u.TotalTokens != 2191 || m.StopReason != llm.StopLength {
		t.Fatalf("usage %+v stop %v", u, m.StopReason)
	}
}

func TestResponsesDoneArguments(t *testing.T) {
	added := []string{"response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":{"id":"fc_1","type":"function_call","call_id":"call_1","name":"f","arguments":""}}`}
	completed := []string{"response.completed", `{"type":"response.completed","response":{"id":"r","status":"completed","model":"g","usage":{"input_tokens":100,"input_tokens_details":{"cached_tokens":40,"cache_write_tokens":10},"output_tokens":7,"output_tokens_details":{"reasoning_tokens":3},"total_tokens":107}}}`}
	// .done extends the deltas: the rest arrives as a delta.
	b := append(append([]string{}, added...),
		"response.function_call_arguments.delta", `{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":0,"delta":"{\"a\""}`,
		"response.function_call_arguments.done", `{"type":"response.function_call_arguments.done","item_id":"fc_1","output_index":0,"arguments":"{\"a\":1}"}`)
	r := mustDecode(t, WireOpenAIResponses, named(append(b, completed...)...), Options{})
	if c := calls(r.msg); len(c) != 1 || c[0].args != `{"a":1}` || c[0].id != "call_1|fc_1" || r.d.ArgMismatches() != 0 {
		t.Fatalf("suffix: %q", c)
	}
	u := r.msg.Usage
	if u.Input != 50 || u.CacheRead != 40 || u.CacheWrite != 10 || u.Output != 7 || u.Reasoning != 3 || u.TotalTokens != 107 || r.msg.StopReason != llm.StopToolUse {
		t.Fatalf("usage %+v stop %v", u, r.msg.StopReason)
	}
	// .done differs: it wins and the mismatch is counted.
	b = append(append([]string{}, added...),
		"response.function_call_arguments.delta", `{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":0,"delta":"{\"b\":"}`,
		"response.function_call_arguments.done", `{"type":"response.function_call_arguments.done","item_id":"fc_1","output_index":0,"arguments":"{\"a\":2}"}`)
	r = mustDecode(t, WireOpenAIResponses, named(append(b, completed...)...), Options{})
	if c := calls(r.msg); len(c) != 1 || c[0].args != `{"a":2}` || r.d.ArgMismatches() != 1 {
		t.Fatalf("mismatch: %q", c)
	}
}

func TestResponsesIncompleteAndReasoning(t *testing.T) {
	body := named(
		"response.created", `{"type":"response.created","response":{"id":"resp_1","model":"o4","status":"in_progress"}}`,
		"response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}}`,
		"response.reasoning_summary_text.delta", `{"type":"response.reasoning_summary_text.delta","output_index":0,"summary_index":0,"delta":"Plan"}`,
		"response.reasoning_summary_part.added", `{"type":"response.reasoning_summary_part.added","output_index":0,"summary_index":1}`,
		"response.reasoning_summary_text.delta", `{"type":"response.reasoning_summary_text.delta","output_index":0,"summary_index":1,"delta":"Act"}`,
		"response.output_item.done", `{"type":"response.output_item.done","output_index":0,"item":{"id":"rs_1","type":"reasoning","encrypted_content":"ENC"}}`,
		"response.output_text.delta", `{"type":"response.output_text.delta","output_index":1,"content_index":0,"delta":"Hal"}`,
		"response.output_text.done", `{"type":"response.output_text.done","output_index":1,"content_index":0,"text":"Half"}`,
		"response.incomplete", `{"type":"response.incomplete","response":{"id":"resp_1","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":10,"output_tokens":5}}}`)
	r := mustDecode(t, WireOpenAIResponses, body, Options{})
	m := r.msg
	if m.StopReason != llm.StopLength || r.raw != "incomplete" || m.ResponseID != "resp_1" {
		t.Fatalf("stop %v raw %q", m.StopReason, r.raw)
	}
	if len(m.Content) != 2 || string(m.Content[0].Text) != "Plan\n\nAct" || !strings.Contains(string(m.Content[0].Signature), `"ENC"`) || string(m.Content[1].Text) != "Half" {
		t.Fatalf("content %s", m.AppendJSON(nil))
	}
}

func TestPoolReuse(t *testing.T) {
	body := readStream(t, "anthropic-thinking.sse")
	for i := 0; i < 3; i++ {
		d := GetDecoder(WireAnthropic, strings.NewReader(string(body)), Options{Provider: "anthropic"})
		r := drain(d)
		if r.err != nil || len(r.msg.Content) != 2 || r.msg.Provider != "anthropic" {
			t.Fatalf("round %d: %v", i, r.err)
		}
		PutDecoder(d)
		if d.r != nil || d.ctx != nil {
			t.Fatal("pooled decoder keeps references")
		}
	}
	PutDecoder(nil)
}

func TestCloseStopsStream(t *testing.T) {
	d := NewDecoder(WireAnthropic, strings.NewReader(string(readStream(t, "anthropic-thinking.sse"))), Options{})
	d.Next()
	d.Next()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if d.Next() {
		t.Fatal("Next after Close")
	}
	_ = d.Close()
}
