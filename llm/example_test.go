package llm_test

import (
	"fmt"

	"github.com/ocbench/ocbench/llm"
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
