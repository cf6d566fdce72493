package scripted_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider/scripted"
	"github.com/ocbench/ocbench/provider/wireenc"
)

// The default script, in process: the first answer calls the read tool;
// the answer to its result ends the turn loop.
func Example() {
	p := scripted.MustNew(scripted.Options{Wire: wireenc.Anthropic})
	req := &llm.Request{Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "set up the workspace")}}
	for {
		s, err := p.Stream(context.Background(), req)
		if err != nil {
			panic(err)
		}
		m, err := llm.Drain(s)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%v: %.30s\n", m.StopReason, m.TextContent())
		if m.StopReason != llm.StopToolUse {
			s.Close()
			break
		}
		call := m.Content[m.ToolCalls(nil)[0]]
		req.Messages = append(req.Messages, *m.Clone(), llm.Message{Role: llm.RoleToolResult,
			ToolCallID: string(call.ID), ToolName: string(call.Name), Content: []llm.Block{{Type: llm.BlockText, Text: []byte("be careful")}}})
		s.Close()
	}
	// Output:
	// toolUse: I'll start by reading the work
	// stop: I read AGENTS.md. The workspac
}

// A script in its JSON form, with a malformed tool call: the arguments
// reach the caller exactly as scripted, undecided for the repair stage.
func ExampleParse() {
	s, err := scripted.Parse([]byte(`{"turns":[{"steps":[
		{"text":"Reading it."},
		{"tool":{"name":"read","args":{"path":"a.txt"},"quirks":["fence"]}}
	],"usage":{"input":10,"output":5,"cache_read":1024}}]}`))
	if err != nil {
		panic(err)
	}
	p := scripted.MustNew(scripted.Options{Script: s})
	st, err := p.Stream(context.Background(), &llm.Request{Model: llm.Model{API: "openai-completions"}})
	if err != nil {
		panic(err)
	}
	defer st.Close()
	m, err := llm.Drain(st)
	fmt.Println(m.StopReason, err)
	b := m.Content[1]
	fmt.Printf("%s %q decided=%v\n", b.Name, b.RawArgs, len(b.Arguments) > 0)
	fmt.Println(m.Usage.Input, m.Usage.CacheRead, m.Usage.Output)
	// Output:
	// toolUse <nil>
	// read "```json\n{\"path\":\"a.txt\"}\n```" decided=false
	// 10 1024 5
}

// Over loopback HTTP, any OpenAI- or Anthropic-compatible client can talk
// to the scripted provider; no key is checked.
func ExampleProvider_Start() {
	p := scripted.MustNew(scripted.Options{Script: &scripted.Script{Turns: []scripted.Turn{
		{Steps: []scripted.Step{scripted.Text("Hello from the script.")}},
	}}})
	srv, err := p.Start()
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"any","messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, strings.Contains(string(body), `"content":"Hello from the script."`))
	// Output:
	// 200 true
}

// The quirk catalogue applied to valid arguments and names.
func ExampleMalform() {
	args := `{"path":"a.txt","all":true}`
	fmt.Println(scripted.Malform(args, scripted.QuirkTrailingComma))
	fmt.Println(scripted.Malform(args, scripted.QuirkPython, scripted.QuirkSingleQuotes))
	fmt.Println(scripted.Malform(args, scripted.QuirkDoubleEncode))
	fmt.Printf("%q\n", scripted.MalformName("read", scripted.QuirkNamespace, scripted.QuirkPadName))
	// Output:
	// {"path":"a.txt","all":true,}
	// {'path':'a.txt','all':True}
	// "{\"path\":\"a.txt\",\"all\":true}"
	// " functions.read "
}
