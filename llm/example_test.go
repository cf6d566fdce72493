package llm_test

import (
	"encoding/json"
	"fmt"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider"
)

// A message is built block by block, as a decoder does, and written in
// pi-ai's JSON shape.
func ExampleMessage_AppendJSON() {
	var m llm.Message
	_, b := m.AddBlock(llm.BlockToolCall)
	b.ID = append(b.ID, "call_1"...)
	b.Name = append(b.Name, "read"...)
	b.Arguments = append(b.Arguments, `{"path":"README.md"}`...)
	m.StopReason = llm.StopToolUse
	fmt.Println(string(m.Content[0].AppendJSON(nil)))
	fmt.Println(m.StopReason)
	// Output:
	// {"type":"toolCall","id":"call_1","name":"read","arguments":{"path":"README.md"}}
	// toolUse
}

// The same request options go out under each wire's own names; what a
// wire has no equivalent for is refused, never dropped.
func ExampleRequestOptions() {
	parallel := false
	req := &llm.Request{
		Model:    llm.Model{ID: "m"},
		Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "Read a.txt")},
		Tools:    []llm.Tool{{Name: "read", Parameters: []byte(`{"type":"object"}`)}},
		Options: llm.RequestOptions{
			ToolChoice:        llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: "read"},
			ParallelToolCalls: &parallel,
			Stop:              []string{"END"},
		},
	}
	for _, w := range provider.Wires {
		body, err := provider.AppendRequestJSON(nil, w, req)
		if err != nil {
			fmt.Printf("%s: %v\n", w, err)
			continue
		}
		var members map[string]json.RawMessage
		_ = json.Unmarshal(body, &members)
		fmt.Printf("%s:", w)
		for _, k := range []string{"tool_choice", "parallel_tool_calls", "stop", "stop_sequences"} {
			if v, ok := members[k]; ok {
				fmt.Printf(" %s=%s", k, v)
			}
		}
		fmt.Println()
	}
	// Output:
	// openai-chat: tool_choice={"type":"function","function":{"name":"read"}} parallel_tool_calls=false stop=["END"]
	// openai-responses: provider: request option stop refused for openai-responses: the Responses API has no stop sequences
	// anthropic: tool_choice={"type":"tool","name":"read","disable_parallel_tool_use":true} stop_sequences=["END"]
}

// A model describes its endpoint; Validate catches a typo at once.
func ExampleModel_Validate() {
	m := llm.Model{ID: "claude-x", API: llm.APIAnthropicMessages, Provider: "antropic"}
	fmt.Println(m.Validate())
	m.Provider = llm.ProviderAnthropic
	fmt.Println(m.Validate())
	// Output:
	// llm: model provider "antropic": is not a provider id this module knows, but close to one (did you mean "anthropic"?)
	// <nil>
}
