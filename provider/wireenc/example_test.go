package wireenc_test

import (
	"fmt"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider/wireenc"
)

// Re-encoding events one at a time into a reused buffer, as a gateway
// does while it streams an answer to its client.
func ExampleEncoder_AppendEvent() {
	var m llm.Message
	e := wireenc.NewEncoder(wireenc.Anthropic, wireenc.Meta{ID: "msg_1", Model: "claude-x"}, wireenc.Options{})
	var buf []byte
	buf = e.AppendEvent(buf[:0], &llm.Event{Type: llm.EventStart}, &m)
	ci, b := m.AddBlock(llm.BlockText)
	buf = e.AppendEvent(buf[:0], &llm.Event{Type: llm.EventTextStart, ContentIndex: ci}, &m)
	b.Text = append(b.Text, "Hi"...)
	buf = e.AppendEvent(buf[:0], &llm.Event{Type: llm.EventTextDelta, ContentIndex: ci, Delta: b.Text}, &m)
	fmt.Print(string(buf))
	buf = e.AppendEvent(buf[:0], &llm.Event{Type: llm.EventTextEnd, ContentIndex: ci}, &m)
	fmt.Print(string(buf))
	// Output:
	// event: content_block_delta
	// data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}
	//
	// event: content_block_stop
	// data: {"type":"content_block_stop","index":0}
}

// With BufferArgs a tool call goes out whole at toolcall_end, carrying the
// arguments a repair stage decided.
func ExampleOptions_bufferArgs() {
	var m llm.Message
	e := wireenc.NewEncoder(wireenc.OpenAIChat, wireenc.Meta{ID: "chatcmpl-1", Model: "gpt-x", Created: 1},
		wireenc.Options{ToolArgs: wireenc.BufferArgs})
	ci, b := m.AddBlock(llm.BlockToolCall)
	b.ID = append(b.ID, "call_1"...)
	b.Name = append(b.Name, "read"...)
	b.RawArgs = append(b.RawArgs, `{"path":"a.txt",}`...)
	b.Arguments = append(b.Arguments, `{"path":"a.txt"}`...) // repaired
	out := e.AppendEvent(nil, &llm.Event{Type: llm.EventToolCallEnd, ContentIndex: ci}, &m)
	fmt.Print(string(out))
	// Output:
	// data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-x","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read","arguments":""}}]},"logprobs":null,"finish_reason":null}]}
	//
	// data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-x","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":\"a.txt\"}"}}]},"logprobs":null,"finish_reason":null}]}
}

// A finished message as the non-streaming answer of each wire.
func ExampleAppendMessage() {
	m := llm.Message{Role: llm.RoleAssistant, StopReason: llm.StopStop, Usage: llm.Usage{Input: 3, Output: 2}}
	_, b := m.AddBlock(llm.BlockText)
	b.Text = append(b.Text, "OK"...)
	fmt.Println(string(wireenc.AppendMessage(nil, wireenc.Anthropic, wireenc.Meta{ID: "msg_1", Model: "c"}, &m)))
	// Output:
	// {"id":"msg_1","type":"message","role":"assistant","model":"c","content":[{"type":"text","text":"OK"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":3,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":2}}
}
