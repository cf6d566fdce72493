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
