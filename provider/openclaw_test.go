package provider

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/llm"
)

// The rules of @openclaw/ai 2026.9.6's transports (Options.OpenClaw, spec
// streamwrap.md §1.5), one test per rule and wire. The same rules are
// checked end to end against OpenClaw itself by the replay golden files
// (cmd/ocbench/testdata/replay/openclaw) and by `ocbench fuzz --against`.

var commentaryRE = regexp.MustCompile(`((?:commentary|final-answer)-[0-9]+)-[0-9a-f]{24}`)
var timestampRE = regexp.MustCompile(`,"timestamp":[0-9]+`)

// ocDecode decodes body in OpenClaw mode with both JSON paths, requires
// the same message from both, and returns the fast path's result.
func ocDecode(t *testing.T, w Wire, body []byte, o Options) result {
	t.Helper()
	o.OpenClaw = true
	r := decodeBytes(w, body, o)
	d := NewDecoder(w, bytes.NewReader(body), o)
	d.ref = true
	ref := drain(d)
	norm := func(m *llm.Message) string {
		b := m.AppendJSON(nil)
		return string(timestampRE.ReplaceAll(commentaryRE.ReplaceAll(b, []byte("${1}-x")), nil))
	}
	if a, b := norm(r.msg), norm(ref.msg); a != b {
		t.Fatalf("fast and reference paths differ:\n%s\n%s", a, b)
	}
	return r
}

func chatCall(index, id, name, args string) string {
	var b strings.Builder
	b.WriteString(`{"tool_calls":[{`)
	sep := ""
	if index != "" {
		b.WriteString(`"index":` + index)
		sep = ","
	}
	if id != "" {
		b.WriteString(sep + `"id":"` + id + `","type":"function"`)
		sep = ","
	}
	b.WriteString(sep + `"function":{`)
	fs := ""
	if name != "" {
		b.WriteString(`"name":"` + name + `"`)
		fs = ","
	}
	if args != "" {
		b.WriteString(fs + `"arguments":` + jsonStr(args))
	}
	b.WriteString(`}}]}`)
	return b.String()
}

func jsonStr(s string) string { return string(llm.AppendJSONString(nil, []byte(s))) }

func wantStop(t *testing.T, r result, stop llm.StopReason, msg string, ncalls int) {
	t.Helper()
	if r.msg.StopReason != stop || r.msg.ErrorMessage != msg || len(calls(r.msg)) != ncalls {
		t.Fatalf("stop %v msg %q calls %d, want %v %q %d: %s", r.msg.StopReason, r.msg.ErrorMessage, len(calls(r.msg)), stop, msg, ncalls, r.msg.AppendJSON(nil))
	}
}

func TestOpenClawChatFragmentsNeverSplit(t *testing.T) {
	// A reused index with a new id: the id is replaced, the text appended,
	// and the turn refused ({..}{..} is no object).
	r := ocDecode(t, WireOpenAIChat, sse(chunk(chatCall("0", "call_a", "read", `{"path":"a"}`), ""),
		chunk(chatCall("0", "call_b", "write", `{"path":"b"}`), ""), chunk(`{}`, "tool_calls"), "[DONE]"), Options{})
	wantStop(t, r, llm.StopError, MsgChatMalformedToolCall, 0)
	// The same body as one block before the check (the plain decoder
	// splits it in two).
	body := sse(chunk(chatCall("0", "call_a", "read", `{"pa`), ""), chunk(chatCall("0", "call_b", "", `th":"a"}`), ""), chunk(`{}`, "tool_calls"), "[DONE]")
	r = ocDecode(t, WireOpenAIChat, body, Options{})
	if c := calls(r.msg); len(c) != 1 || c[0].id != "call_b" || c[0].raw != `{"path":"a"}` || c[0].name != "read" {
		t.Fatalf("calls %q", c)
	}
	// No index: by id; neither index nor id: a new block each time.
	r = ocDecode(t, WireOpenAIChat, sse(chunk(chatCall("", "call_a", "read", `{"path":`), ""), chunk(chatCall("", "call_a", "", `"a"}`), ""),
		chunk(chatCall("", "", "write", `{"path":"b"}`), ""), chunk(`{}`, "tool_calls"), "[DONE]"), Options{})
	if c := calls(r.msg); len(c) != 2 || c[0].raw != `{"path":"a"}` || c[1].id != "" || c[1].name != "write" {
		t.Fatalf("calls %q", c)
	}
}

func TestOpenClawChatFinalisation(t *testing.T) {
	call := chunk(chatCall("0", "call_a", "read", `{"path":"a"}`), "")
	text := chunk(`{"content":"Reading."}`, "")
	for _, tc := range []struct {
		name   string
		body   []byte
		stop   llm.StopReason
		msg    string
		ncalls int
	}{
		{"toolUse without calls becomes stop", sse(text, chunk(`{}`, "tool_calls"), "[DONE]"), llm.StopStop, "", 0},
		{"stop with calls and no text is promoted", sse(call, chunk(`{}`, "stop"), "[DONE]"), llm.StopToolUse, "", 1},
		{"blank text does not stop the promotion", sse(chunk(`{"content":" \n"}`, ""), call, chunk(`{}`, "stop"), "[DONE]"), llm.StopToolUse, "", 1},
		{"stop with text: calls removed silently", sse(text, call, chunk(`{}`, "stop"), "[DONE]"), llm.StopStop, "", 0},
		{"length: calls removed silently", sse(call, chunk(`{}`, "length"), "[DONE]"), llm.StopLength, "", 0},
		{"[DONE] without finish_reason, native call: promoted", sse(call, "[DONE]"), llm.StopToolUse, "", 1},
		{"[DONE] without finish_reason, text", sse(text, "[DONE]"), llm.StopStop, "", 0},
		{"no finish_reason, no [DONE]", sse(text, call), llm.StopError, MsgChatNoFinishReason, 0},
		{"an unterminated last event is not dispatched", append(sse(text, call), `data: {"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`...), llm.StopError, MsgChatNoFinishReason, 0},
		{"blank name after a JS trim", sse(chunk(chatCall("0", "call_a", "\u00a0\u2003", `{"path":"a"}`), ""), chunk(`{}`, "tool_calls"), "[DONE]"), llm.StopError, MsgChatMalformedToolCall, 0},
		{"blank arguments", sse(chunk(chatCall("0", "call_a", "read", ` `), ""), chunk(`{}`, "tool_calls"), "[DONE]"), llm.StopError, MsgChatMalformedToolCall, 0},
		{"array arguments", sse(chunk(chatCall("0", "call_a", "read", `["a"]`), ""), chunk(`{}`, "tool_calls"), "[DONE]"), llm.StopError, MsgChatMalformedToolCall, 0},
		{"no repair at the provider", sse(chunk(chatCall("0", "call_a", "read", `functions.read:0 {"path":"a"}`), ""), chunk(`{}`, "tool_calls"), "[DONE]"), llm.StopError, MsgChatMalformedToolCall, 0},
		{"finish end", sse(text, chunk(`{}`, "end"), "[DONE]"), llm.StopStop, "", 0},
		{"finish tool_call", sse(call, chunk(`{}`, "tool_call"), "[DONE]"), llm.StopToolUse, "", 1},
		{"finish network_error: text kept, calls removed", sse(text, call, chunk(`{}`, "network_error"), "[DONE]"), llm.StopError, "Provider finish_reason: network_error", 0},
		{"finish content_filter", sse(text, chunk(`{}`, "content_filter"), "[DONE]"), llm.StopError, "Provider finish_reason: content_filter", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ocDecode(t, WireOpenAIChat, tc.body, Options{})
			wantStop(t, r, tc.stop, tc.msg, tc.ncalls)
			if tc.stop == llm.StopError && r.msg.TextContent() != "" && r.msg.TextContent() != "Reading." {
				t.Errorf("text %q", r.msg.TextContent())
			}
		})
	}
}

func TestOpenClawChatCommentaryPhase(t *testing.T) {
	// Text before the tool calls of a toolUse turn is commentary.
	r := ocDecode(t, WireOpenAIChat, sse(chunk(`{"content":"Checking."}`, ""), chunk(chatCall("0", "call_a", "read", `{"path":"a"}`), ""), chunk(`{}`, "tool_calls"), "[DONE]"), Options{})
	if sig := string(r.msg.Content[0].Signature); !regexp.MustCompile(`^\{"v":1,"id":"commentary-0-[0-9a-f]{24}","phase":"commentary"\}$`).MatchString(sig) {
		t.Fatalf("textSignature %q", sig)
	}
	// Not on a stop turn (the provisional tag is cleared)...
	r = ocDecode(t, WireOpenAIChat, sse(chunk(`{"content":"Checking."}`, ""), chunk(chatCall("0", "call_a", "read", `{"path":"a"}`), ""), chunk(`{}`, "stop"), "[DONE]"), Options{})
	if len(r.msg.Content[0].Signature) != 0 {
		t.Fatalf("stop turn tagged: %s", r.msg.AppendJSON(nil))
	}
	// ...but kept when the stream dies without a finish reason.
	r = ocDecode(t, WireOpenAIChat, sse(chunk(`{"content":"Checking."}`, ""), chunk(chatCall("0", "call_a", "read", `{"path":"a"}`), "")), Options{})
	if !bytes.Contains(r.msg.Content[0].Signature, []byte("commentary-0-")) {
		t.Fatalf("no tag after a dead stream: %s", r.msg.AppendJSON(nil))
	}
}

func TestOpenClawChatReasoningAndUsage(t *testing.T) {
	body := sse(chunk(`{"reasoning_content":"Think."}`, ""), chunk(`{"content":"Yes."}`, ""),
		`{"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"stop","usage":{"prompt_tokens":21,"completion_tokens":4,"total_tokens":25}}]}`, "[DONE]")
	r := ocDecode(t, WireOpenAIChat, body, Options{})
	if len(r.msg.Content) != 1 || r.msg.TextContent() != "Yes." || r.msg.Usage.Input != 21 || r.msg.Usage.Output != 4 {
		t.Fatalf("not a reasoning model: %s", r.msg.AppendJSON(nil))
	}
	r = ocDecode(t, WireOpenAIChat, body, Options{Reasoning: true})
	if len(r.msg.Content) != 2 || r.msg.Content[0].Type != llm.BlockThinking || string(r.msg.Content[0].Text) != "Think." {
		t.Fatalf("reasoning model: %s", r.msg.AppendJSON(nil))
	}
	r = ocDecode(t, WireOpenAIChat, sse(chunk(`{"refusal":"No."}`, "stop"), "[DONE]"), Options{})
	if r.msg.TextContent() != "No." || r.msg.StopReason != llm.StopStop {
		t.Fatalf("refusal: %s", r.msg.AppendJSON(nil))
	}
}

func anthropicTool(idx, id, name string, parts ...string) []string {
	out := []string{"content_block_start", `{"type":"content_block_start","index":` + idx + `,"content_block":{"type":"tool_use","id":"` + id + `","name":"` + name + `","input":{}}}`}
	for _, p := range parts {
		out = append(out, "content_block_delta", `{"type":"content_block_delta","index":`+idx+`,"delta":{"type":"input_json_delta","partial_json":`+jsonStr(p)+`}}`)
	}
	return append(out, "content_block_stop", `{"type":"content_block_stop","index":`+idx+`}`)
}

func anthropicBody(stop string, blocks ...[]string) []byte {
	pairs := []string{"message_start", `{"type":"message_start","message":{"id":"msg_1","model":"claude","content":[],"usage":{"input_tokens":10,"output_tokens":1}}}`,
		"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Reading."}}`,
		"content_block_stop", `{"type":"content_block_stop","index":0}`}
	for _, b := range blocks {
		pairs = append(pairs, b...)
	}
	if stop != "" {
		pairs = append(pairs, "message_delta", `{"type":"message_delta","delta":{"stop_reason":"`+stop+`"},"usage":{"output_tokens":7}}`, "message_stop", `{"type":"message_stop"}`)
	}
	return named(pairs...)
}

func TestOpenClawAnthropicTerminalArguments(t *testing.T) {
	for _, tc := range []struct {
		name, args string
		stop       llm.StopReason
		msg, want  string
	}{
		{"valid", `{"path":"a"}`, llm.StopToolUse, "", `{"path":"a"}`},
		{"trailing comma", `{"path":"a",}`, llm.StopError, MsgAnthropicMalformedArgs, ""},
		{"code fence", "```json\n{\"path\":\"a\"}\n```", llm.StopError, MsgAnthropicMalformedArgs, ""},
		{"junk after the object", `{"path":"a"}x`, llm.StopError, MsgAnthropicMalformedArgs, ""},
		{"raw control characters: string-literal repair", "{\"c\":\"a\nb\tc\"}", llm.StopToolUse, "", `{"c":"a\nb\tc"}`},
		{"invalid escape: doubled", `{"p":"C:\temp\x"}`, llm.StopToolUse, "", `{"p":"C:\temp\\x"}`},
		{"repaired but not an object", "[\"a\nb\"]", llm.StopError, MsgAnthropicMalformedArgs, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ocDecode(t, WireAnthropic, anthropicBody("tool_use", anthropicTool("1", "toolu_1", "read", tc.args)), Options{})
			n := 0
			if tc.stop == llm.StopToolUse {
				n = 1
			}
			wantStop(t, r, tc.stop, tc.msg, n)
			if n == 1 && calls(r.msg)[0].args != tc.want {
				t.Errorf("arguments %s, want %s", calls(r.msg)[0].args, tc.want)
			}
			if r.msg.TextContent() != "Reading." {
				t.Errorf("text lost: %s", r.msg.AppendJSON(nil))
			}
		})
	}
	// One malformed call fails the turn: every call goes.
	r := ocDecode(t, WireAnthropic, anthropicBody("tool_use", anthropicTool("1", "t1", "read", `{"path":"a"}`), anthropicTool("2", "t2", "read", `{"path":"b"}}`)), Options{})
	wantStop(t, r, llm.StopError, MsgAnthropicMalformedArgs, 0)
	// Cut by max_tokens: no closing, no execution.
	r = ocDecode(t, WireAnthropic, anthropicBody("max_tokens", anthropicTool("1", "t1", "write", `{"path":"a","content":"hel`)), Options{})
	wantStop(t, r, llm.StopError, MsgAnthropicMalformedArgs, 0)
}

func TestOpenClawAnthropicFailuresRemoveToolCalls(t *testing.T) {
	tool := anthropicTool("1", "t1", "read", `{"path":"a"}`)
	unsealed := tool[:len(tool)-2]
	inBand := append(append([]string{}, tool...), "error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
	noTerminal := anthropicBody("", tool)
	for _, tc := range []struct {
		name string
		body []byte
		msg  string
	}{
		{"in-band error", anthropicBody("", inBand), "Overloaded"},
		{"no terminal event", noTerminal, MsgAnthropicNoTerminal},
		{"unsealed tool call", anthropicBody("tool_use", unsealed), MsgAnthropicIncompleteCall},
		{"cut inside an event", noTerminal[:len(noTerminal)-10], MsgAnthropicFragment},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ocDecode(t, WireAnthropic, tc.body, Options{})
			wantStop(t, r, llm.StopError, tc.msg, 0)
			if r.msg.TextContent() != "Reading." {
				t.Errorf("text lost: %s", r.msg.AppendJSON(nil))
			}
			if !bytes.Contains(r.msg.Content[0].Signature, []byte(`"phase":"commentary"`)) {
				t.Errorf("text before a tool_use is commentary: %s", r.msg.AppendJSON(nil))
			}
		})
	}
	// A stop reason without message_stop is a normal end.
	b := anthropicBody("tool_use", tool)
	b = b[:bytes.LastIndex(b, []byte("event: message_stop"))]
	wantStop(t, ocDecode(t, WireAnthropic, b, Options{}), llm.StopToolUse, "", 1)
}

func TestOpenClawAnthropicStopReasons(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		stop llm.StopReason
		msg  string
	}{
		{"end_turn", llm.StopStop, ""}, {"pause_turn", llm.StopStop, ""}, {"compaction", llm.StopStop, ""}, {"stop_sequence", llm.StopStop, ""},
		{"max_tokens", llm.StopLength, ""}, {"model_context_window_exceeded", llm.StopLength, ""},
		{"refusal", llm.StopError, "Anthropic refusal."}, {"sensitive", llm.StopError, "An unknown error occurred"},
		{"weird_reason", llm.StopError, "Unhandled stop reason: weird_reason"},
	} {
		r := ocDecode(t, WireAnthropic, anthropicBody(tc.raw), Options{})
		if r.msg.StopReason != tc.stop || r.msg.ErrorMessage != tc.msg {
			t.Errorf("%s: %v %q", tc.raw, r.msg.StopReason, r.msg.ErrorMessage)
		}
		if tc.raw == "weird_reason" && r.msg.Usage.Output != 1 {
			t.Errorf("the usage of the failing message_delta is not read: %+v", r.msg.Usage)
		}
	}
	body := anthropicBody("")
	body = append(body, named("message_delta", `{"type":"message_delta","delta":{"stop_reason":"refusal","stop_details":{"category":"cyber","explanation":" Not allowed. "}}}`)...)
	if r := ocDecode(t, WireAnthropic, body, Options{}); r.msg.ErrorMessage != "Anthropic refusal (category: cyber): Not allowed." {
		t.Errorf("refusal details: %q", r.msg.ErrorMessage)
	}
}

func responsesCall(oi, name, doneName, args string) []string {
	item := `{"id":"fc_` + oi + `","type":"function_call","status":"in_progress","arguments":"","call_id":"call_` + oi + `","name":` + jsonStr(name) + `}`
	done := `{"id":"fc_` + oi + `","type":"function_call","status":"completed","arguments":` + jsonStr(args) + `,"call_id":"call_` + oi + `","name":` + jsonStr(doneName) + `}`
	return []string{
		"response.output_item.added", `{"type":"response.output_item.added","output_index":` + oi + `,"item":` + item + `}`,
		"response.function_call_arguments.delta", `{"type":"response.function_call_arguments.delta","output_index":` + oi + `,"item_id":"fc_` + oi + `","delta":` + jsonStr(args) + `}`,
		"response.function_call_arguments.done", `{"type":"response.function_call_arguments.done","output_index":` + oi + `,"item_id":"fc_` + oi + `","arguments":` + jsonStr(args) + `}`,
		"response.output_item.done", `{"type":"response.output_item.done","output_index":` + oi + `,"item":` + done + `}`,
	}
}

func responsesBody(status string, parts ...[]string) []byte {
	pairs := []string{"response.created", `{"type":"response.created","response":{"id":"resp_1","status":"in_progress","model":"gpt","output":[]}}`}
	for _, p := range parts {
		pairs = append(pairs, p...)
	}
	if status != "" {
		pairs = append(pairs, "response."+status, `{"type":"response.`+status+`","response":{"id":"resp_1","status":"`+status+`","model":"gpt","output":[],"usage":{"input_tokens":30,"output_tokens":9}}}`)
	}
	return named(pairs...)
}

func TestOpenClawResponsesItemChecks(t *testing.T) {
	for _, tc := range []struct {
		name, streamed, item, args string
		stop                       llm.StopReason
		msg                        string
	}{
		{"valid", "read", "read", `{"path":"a"}`, llm.StopToolUse, ""},
		{"padded names compare trimmed", " read ", "read", `{"path":"a"}`, llm.StopToolUse, ""},
		{"the item renames the call", "read", "write", `{"path":"a"}`, llm.StopError, "Responses stream changed tool-call function name from read to write"},
		{"invalid JSON, no repair", "read", "read", `{"path":"a",}`, llm.StopError, MsgResponsesInvalidArgs},
		{"fenced JSON", "read", "read", "```json\n{\"path\":\"a\"}\n```", llm.StopError, MsgResponsesInvalidArgs},
		{"blank name", "", "", `{"path":"a"}`, llm.StopError, MsgResponsesNoName},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ocDecode(t, WireOpenAIResponses, responsesBody("completed", responsesCall("0", tc.streamed, tc.item, tc.args)), Options{})
			// The content is kept on failure, the tool call included.
			wantStop(t, r, tc.stop, tc.msg, 1)
		})
	}
	// The live block renamed in place (as the trim decorator does) no
	// longer matches the item's raw name.
	body := responsesBody("completed", responsesCall("0", "functions.read", "functions.read", `{"path":"a"}`))
	d := NewDecoder(WireOpenAIResponses, bytes.NewReader(body), Options{OpenClaw: true})
	for d.Next() {
		if e := d.Event(); e.Type == llm.EventToolCallStart {
			d.Message().Content[e.ContentIndex].Name = append(d.Message().Content[e.ContentIndex].Name[:0], "read"...)
		}
	}
	if m := d.Message(); m.ErrorMessage != "Responses stream changed tool-call function name from read to functions.read" || len(calls(m)) != 1 {
		t.Fatalf("renamed live block: %s", m.AppendJSON(nil))
	}
	var te *TransportError
	if !errors.As(d.Err(), &te) || errors.Is(d.Err(), ErrTruncated) {
		t.Fatalf("err %v", d.Err())
	}
}

func TestOpenClawResponsesUnresolvedCalls(t *testing.T) {
	open := responsesCall("0", "read", "read", `{"path":"a"}`)[:4] // added and one delta
	r := ocDecode(t, WireOpenAIResponses, responsesBody("incomplete", open), Options{})
	wantStop(t, r, llm.StopError, MsgResponsesUnresolved, 1)
	if calls(r.msg)[0].args != `{}` {
		t.Errorf("an unfinished call's arguments are {} before arguments.done: %q", calls(r.msg)[0].args)
	}
	r = ocDecode(t, WireOpenAIResponses, responsesBody("", open), Options{})
	wantStop(t, r, llm.StopError, MsgResponsesEndedUnresolved, 1)
	if !errors.Is(r.err, ErrTruncated) {
		t.Errorf("err %v", r.err)
	}
	r = ocDecode(t, WireOpenAIResponses, responsesBody(""), Options{})
	wantStop(t, r, llm.StopError, MsgResponsesNoTerminal, 0)
	// A reused output index with another call id.
	r = ocDecode(t, WireOpenAIResponses, responsesBody("completed", responsesCall("0", "read", "read", `{"a":1}`),
		[]string{"response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":{"id":"fc_9","type":"function_call","arguments":"","call_id":"call_9","name":"write"}}`}), Options{})
	wantStop(t, r, llm.StopError, "Responses stream changed output item identity", 2)
	// response.failed names code and message.
	failed := named("response.created", `{"type":"response.created","response":{"id":"r","status":"in_progress","output":[]}}`,
		"response.failed", `{"type":"response.failed","response":{"id":"r","status":"failed","error":{"code":"server_error","message":""}}}`)
	if r = ocDecode(t, WireOpenAIResponses, failed, Options{}); r.msg.ErrorMessage != "server_error: no message" {
		t.Errorf("failed: %q", r.msg.ErrorMessage)
	}
}

func TestOpenClawResponsesTextSignature(t *testing.T) {
	msg := []string{
		"response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":{"id":"msg_7","type":"message","content":[]}}`,
		"response.output_text.delta", `{"type":"response.output_text.delta","output_index":0,"item_id":"msg_7","content_index":0,"delta":"Hi"}`,
		"response.output_text.done", `{"type":"response.output_text.done","output_index":0,"item_id":"msg_7","content_index":0,"text":"Hi"}`,
		"response.output_item.done", `{"type":"response.output_item.done","output_index":0,"item":{"id":"msg_7","type":"message","phase":"final_answer","content":[{"type":"output_text","text":"Hi"}]}}`,
	}
	r := ocDecode(t, WireOpenAIResponses, responsesBody("completed", msg), Options{})
	if got := string(r.msg.Content[0].Signature); got != `{"v":1,"id":"msg_7","phase":"final_answer"}` {
		t.Fatalf("textSignature %q", got)
	}
}

func TestRepairStringLiterals(t *testing.T) {
	for in, want := range map[string]string{
		"{\"a\":\"x\ny\"}":   `{"a":"x\ny"}`,
		`{"a":"\d"}`:         `{"a":"\\d"}`,
		`{"a":"\u12"}`:       `{"a":"\\u12"}`,
		`{"a":"ok\n\u00e9"}`: `{"a":"ok\n\u00e9"}`,
		"{\"a\":\"\x01\"}":   `{"a":"\u0001"}`,
		`{"a":"x\`:           `{"a":"x\\`,
	} {
		got, _ := repairStringLiterals(nil, []byte(in))
		if string(got) != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
	if _, changed := repairStringLiterals(nil, []byte(`{"a":"b"}`)); changed {
		t.Error("nothing to repair reports a change")
	}
}

// After a reasoning delta @openclaw/ai's reasoning-tag partitioner holds
// visible text until a flush, and text after a tool call waits for the
// end: a stream that dies without a finish reason loses both, and its text
// is commentary.
func TestOpenClawChatHeldText(t *testing.T) {
	r := ocDecode(t, WireOpenAIChat, sse(chunk(`{"content":"before "}`, ""), chunk(`{"reasoning_content":"think"}`, ""), chunk(`{"content":"after"}`, "")), Options{})
	if r.msg.TextContent() != "before " || !bytes.Contains(r.msg.Content[0].Signature, []byte("commentary-0-")) || r.msg.ErrorMessage != MsgChatNoFinishReason {
		t.Fatalf("reasoning: %s", r.msg.AppendJSON(nil))
	}
	r = ocDecode(t, WireOpenAIChat, sse(chunk(`{"content":"first"}`, ""), chunk(chatCall("0", "c1", "read", `{}`), ""), chunk(`{"content":"tail"}`, "")), Options{})
	if r.msg.TextContent() != "first" || len(r.msg.Content) != 1 {
		t.Fatalf("after a tool call: %s", r.msg.AppendJSON(nil))
	}
	// With a finish reason nothing is lost.
	r = ocDecode(t, WireOpenAIChat, sse(chunk(`{"reasoning_content":"think"}`, ""), chunk(`{"content":"after"}`, ""), chunk(`{}`, "stop")), Options{})
	if r.msg.TextContent() != "after" || r.msg.StopReason != llm.StopStop {
		t.Fatalf("normal end: %s", r.msg.AppendJSON(nil))
	}
}

// The OpenClaw rules keep the decoder free of allocations once warm, on
// every wire (synthetic streams with tool calls, a commentary-tagged text).
func TestOpenClawZeroAllocs(t *testing.T) {
	for _, s := range synthStreams {
		t.Run(s.name, func(t *testing.T) {
			st := s.gen(2000, 1)
			br := bytes.NewReader(st.Body)
			o := Options{OpenClaw: true, Reasoning: true}
			d := NewDecoder(s.wire, br, o)
			run := func() {
				br.Reset(st.Body)
				d.Reset(s.wire, br, o)
				decodeStream(d)
			}
			run()
			run()
			if allocs := testing.AllocsPerRun(20, run); allocs != 0 {
				t.Fatalf("%v allocations per stream, want 0", allocs)
			}
			if d.Err() != nil {
				t.Fatal(d.Err())
			}
		})
	}
}

// @openclaw/ai's Anthropic thinking always has a string signature, and its
// signature deltas apply at content_block_stop: a turn cut before that
// leaves "".
func TestOpenClawAnthropicThinkingSignature(t *testing.T) {
	pairs := []string{"message_start", `{"type":"message_start","message":{"id":"m","model":"c","content":[],"usage":{"input_tokens":1}}}`,
		"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Hmm"}}`,
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig-1"}}`}
	r := ocDecode(t, WireAnthropic, named(pairs...), Options{})
	if got := string(r.msg.AppendJSON(nil)); !strings.Contains(got, `"thinking":"Hmm","thinkingSignature":""`) || r.msg.ErrorMessage != MsgAnthropicNoTerminal {
		t.Fatalf("cut: %s", got)
	}
	pairs = append(pairs, "content_block_stop", `{"type":"content_block_stop","index":0}`,
		"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"}}`, "message_stop", `{"type":"message_stop"}`)
	r = ocDecode(t, WireAnthropic, named(pairs...), Options{})
	if got := string(r.msg.AppendJSON(nil)); !strings.Contains(got, `"thinkingSignature":"sig-1"`) {
		t.Fatalf("complete: %s", got)
	}
}

// TestOpenClawAnthropicTerminalOnlyOnceBegun: @openclaw/ai 2026.9.6 asks
// for a terminal event (message_stop or a stop reason) only of a stream
// that began, with a message_start or a content block. The cases and their
// outcomes are the oracle's (OpenClaw's own transport on the same bytes).
func TestOpenClawAnthropicTerminalOnlyOnceBegun(t *testing.T) {
	start := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-x\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n"
	block := "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n"
	ping := "event: ping\ndata: {\"type\":\"ping\"}\n\n"
	for _, tc := range []struct {
		name, body string
		stop       llm.StopReason
		msg        string
	}{
		{"empty body", "", llm.StopStop, ""},
		{"an empty data event", "data: \n\n", llm.StopStop, ""},
		{"pings only", ping + ping, llm.StopStop, ""},
		{"message_start only", start, llm.StopError, MsgAnthropicNoTerminal},
		{"a block without message_start", block, llm.StopError, MsgAnthropicNoTerminal},
		{"message_start and a block", start + block, llm.StopError, MsgAnthropicNoTerminal},
	} {
		r := ocDecode(t, WireAnthropic, []byte(tc.body), Options{})
		if r.msg.StopReason != tc.stop || r.msg.ErrorMessage != tc.msg {
			t.Errorf("%s: %v %q, want %v %q", tc.name, r.msg.StopReason, r.msg.ErrorMessage, tc.stop, tc.msg)
		}
	}
}

// @openclaw/ai's Responses reasoning (OpenClaw 2026.9.6's own events, from
// its replay on these bodies): a summary delta counts only once the item has
// a summary part, each part ends with a paragraph break as a delta of its
// own, and the item's done replaces the thinking with its summary texts
// joined (else its content texts, else what streamed).
func TestOpenClawResponsesReasoningParts(t *testing.T) {
	const (
		added   = `{"type":"response.output_item.added","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}}`
		part    = `{"type":"response.reasoning_summary_part.added","output_index":0,"summary_index":0,"part":{"type":"summary_text","text":""}}`
		delta   = `{"type":"response.reasoning_summary_text.delta","output_index":0,"summary_index":0,"delta":"Plan"}`
		partEnd = `{"type":"response.reasoning_summary_part.done","output_index":0,"summary_index":0,"part":{"type":"summary_text","text":"Plan"}}`
		done    = `{"type":"response.output_item.done","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"P"},{"type":"summary_text","text":"Q"}]}}`
	)
	body := func(data ...string) []byte {
		var b []byte
		for _, d := range data {
			b = fmt.Appendf(b, "data: %s\n\n", d)
		}
		return b
	}
	o := Options{OpenClaw: true, Reasoning: true}
	for _, c := range []struct {
		name   string
		body   []byte
		deltas []string
		text   string
	}{
		{"cut after a part", body(added, part, delta, partEnd), []string{"Plan", "\n\n"}, "Plan\n\n"},
		{"delta before any part", body(added, delta, partEnd), nil, ""},
		{"done joins the item's summary", body(added, part, delta, partEnd, done), []string{"Plan", "\n\n"}, "P\n\nQ"},
		{"no reasoning item", body(part, delta, partEnd), nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := decodeBytes(WireOpenAIResponses, c.body, o)
			var deltas []string
			for _, e := range r.events {
				if e.Type == llm.EventThinkingDelta {
					deltas = append(deltas, e.Delta)
				}
			}
			text := ""
			if len(r.msg.Content) > 0 {
				text = string(r.msg.Content[0].Text)
			}
			if fmt.Sprint(deltas) != fmt.Sprint(c.deltas) || text != c.text {
				t.Fatalf("deltas %q, thinking %q; want %q, %q", deltas, text, c.deltas, c.text)
			}
		})
	}
}
