package streamwrap_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider"
	"github.com/ocbench/ocbench/streamwrap"
)

// A recorded OpenAI chat stream whose tool call has a padded, namespaced
// name and arguments behind a metadata prefix, decoded and run through
// OpenClaw's chain with the default (extended) repair profile.
func ExampleChain() {
	body := `data: {"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":" functions.read ","arguments":""}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":".functions.read:0 {\"path\":\"README.md\"}"}}]}}]}

data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

data: [DONE]

`
	base := func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		d := provider.NewDecoder(provider.WireOpenAIChat, strings.NewReader(body), provider.Options{API: req.Model.API, Provider: req.Model.Provider})
		d.SetContext(ctx)
		return d, nil
	}
	chain := streamwrap.Chain(base, streamwrap.Options{
		LiveTools: streamwrap.NewAllowlist("read", "write", "exec"),
	})
	s, err := chain(context.Background(), &llm.Request{Model: llm.Model{API: "openai-completions", Provider: "openai-compatible"}})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	for s.Next() {
		fmt.Println(s.Event().Type)
	}
	m := s.Message()
	tc := m.Content[0]
	fmt.Printf("%s %s %s %s\n", m.StopReason, tc.Name, tc.ID, tc.Arguments)
	// Output:
	// start
	// toolcall_start
	// toolcall_delta
	// toolcall_end
	// done
	// toolUse read call_1 {"path":"README.md"}
}

// recorded is testdata/streams/anthropic-text-then-tooluse-ping.sse: a
// claude-haiku-4-5 answer recorded from Anthropic's API, with text, then
// a tool call whose arguments arrive in pieces, and pings in between.
const recorded = `event: message_start
data: {"type":"message_start","message":{"model":"claude-haiku-4-5-20251001","id":"msg_01K2JbSUMYhez5RHoK9ZCj9U","type":"message","role":"assistant","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":849,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0},"output_tokens":10,"service_tier":"standard"}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"I'll invoke"}}

event: ping
data: {"type":"ping"}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" the JSON response tool."}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01KFbKqPYSuAKujiL6mTfzYA","name":"json","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}

event: ping
data: {"type":"ping"}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"elements\": [{\"location\": \"San Francisco\", \"temperature\": 58, \"condition\": \"sunny\"}]"}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":1}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"input_tokens":849,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":47}}

event: message_stop
data: {"type":"message_stop"}

`

// Decoding a recorded stream through OpenClaw's chain takes five lines: a
// StreamFunc over the body, the chain around it, one request, one drain.
func Example_recordedStream() {
	body := func(context.Context, *llm.Request) (llm.Stream, error) {
		return provider.NewDecoder(provider.WireAnthropic, strings.NewReader(recorded), provider.Options{}), nil
	}
	chain := streamwrap.Chain(body, streamwrap.Options{LiveTools: streamwrap.NewAllowlist("json")})
	s, _ := chain(context.Background(), &llm.Request{Model: llm.Model{API: llm.APIAnthropicMessages, Provider: llm.ProviderAnthropic}})
	m, err := llm.Drain(s)

	call := m.Content[m.ToolCalls(nil)[0]]
	fmt.Println(m.TextContent())
	fmt.Println(string(call.Name), string(call.Arguments))
	fmt.Println(m.StopReason, m.Usage.Input, m.Usage.Output, err)
	s.Close()
	// Output:
	// I'll invoke the JSON response tool.
	// json {"elements": [{"location": "San Francisco", "temperature": 58, "condition": "sunny"}]}
	// toolUse 849 47 <nil>
}

// ResolveToolName maps what a model wrote to the allowlist's spelling.
func ExampleResolveToolName() {
	allowed := streamwrap.NewAllowlist("read", "exec", "graph.search")
	for _, n := range []string{" read ", "BASH", "functions.graph.search", "functionsread3", "browser"} {
		name, _ := streamwrap.ResolveToolName(n, "", allowed, false)
		fmt.Printf("%q -> %q\n", n, name)
	}
	_, ok := streamwrap.ResolveToolName("browser", "", allowed, true)
	fmt.Println(ok)
	// Output:
	// " read " -> "read"
	// "BASH" -> "exec"
	// "functions.graph.search" -> "graph.search"
	// "functionsread3" -> "read"
	// "browser" -> "browser"
	// false
}

// With the extended profile a tool call whose arguments cannot be repaired
// is dropped on its own: the other calls keep stop reason toolUse and the
// error message names the dropped one.
func ExampleDropUnrepairedToolCalls() {
	body := `data: {"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read","arguments":"{\"path\":\"a.txt\"}"}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_2","type":"function","function":{"name":"exec","arguments":"{\"a\":[1],,}"}}]}}]}

data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

data: [DONE]

`
	base := func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		return provider.NewDecoder(provider.WireOpenAIChat, strings.NewReader(body), provider.Options{API: req.Model.API}), nil
	}
	// Chain applies the drop itself; standing alone, ArgumentStage does too.
	s, err := streamwrap.Chain(base, streamwrap.Options{})(context.Background(), &llm.Request{Model: llm.Model{API: "openai-completions", Provider: "openai-compatible"}})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	for s.Next() {
	}
	m := s.Message()
	for _, i := range m.ToolCalls(nil) {
		fmt.Printf("%s %s\n", m.Content[i].Name, m.Content[i].Arguments)
	}
	fmt.Println(m.StopReason)
	fmt.Println(m.ErrorMessage)
	// Output:
	// read {"path":"a.txt"}
	// toolUse
	// tool call "exec" (call_2) dropped: malformed arguments that could not be repaired (syntax)
}
