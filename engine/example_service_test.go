package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/ocbench/ocbench/engine"
	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider/scripted"
)

// weatherIn is the typed input of the example's tool: the model sees its
// JSON schema, and arguments are validated and decoded into it.
type weatherIn struct {
	City string `json:"city" jsonschema:"minLength=1,description=City name"`
}

type weatherOut struct {
	City  string `json:"city"`
	TempC int    `json:"tempC"`
}

// weather is a tool shared by every request: a Tool is immutable.
var weather = engine.MustNewTool("weather", "Current weather for a city.",
	func(ctx context.Context, in weatherIn) (weatherOut, error) {
		if in.City == "Atlantis" {
			return weatherOut{}, errors.New("unknown city: Atlantis")
		}
		return weatherOut{City: in.City, TempC: 21}, nil
	})

// A service handler that runs one session per request, with a typed tool
// and a plain system prompt (no OpenClaw persona, no built-in tools: both
// are only ever chosen). Here the model is the scripted provider, in
// process; point Params.Model.BaseURL at a real endpoint and drop
// StreamFunc to use package provider's HTTP transport.
func Example_serviceHandler() {
	model := scripted.MustNew(scripted.Options{Script: &scripted.Script{Turns: []scripted.Turn{
		{Steps: []scripted.Step{scripted.ToolCall("", "weather", `{"city":"Lisbon"}`)}},
		{Steps: []scripted.Step{scripted.Text("It is 21°C in Lisbon.")}},
	}}})
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		question, _ := io.ReadAll(io.LimitReader(r.Body, 1<<16))
		res, err := engine.Run(r.Context(), engine.Params{
			Prompt:       string(question),
			Model:        llm.Model{ID: "scripted-1", API: llm.APIOpenAICompletions, Provider: "scripted"},
			StreamFunc:   model.StreamFunc(),
			SystemPrompt: "You answer weather questions. Use the weather tool.",
			Tools:        []*engine.Tool{weather},
		})
		if err != nil {
			http.Error(w, "the run failed", http.StatusBadGateway)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"answer": res.FinalText(), "toolCalls": len(res.ToolCalls)})
	})
	srv := httptest.NewServer(handler)
	defer srv.Close()

	resp, err := http.Post(srv.URL, "text/plain", strings.NewReader("How warm is it in Lisbon?"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Print(resp.Status, " ", string(body))
	// Output:
	// 200 OK {"answer":"It is 21°C in Lisbon.","toolCalls":1}
}

// A conversation kept in memory across requests: each run gets the
// conversation so far as Params.History and returns it, with its new
// messages, in Result.Conversation (compacted when the run compacted it).
// A service keeps one per conversation id; no session file is written.
func Example_inMemoryConversation() {
	var mu sync.Mutex
	var seen []int // how many messages the model received per call
	model := scripted.MustNew(scripted.Options{Pick: scripted.ByLastUser([]scripted.Rule{
		{Contains: "name is", Script: &scripted.Script{Turns: []scripted.Turn{{Steps: []scripted.Step{scripted.Text("Nice to meet you, Ada.")}}}}},
		{Contains: "my name?", Script: &scripted.Script{Turns: []scripted.Turn{{Steps: []scripted.Step{scripted.Text("Your name is Ada.")}}}}},
		{Script: &scripted.Script{Turns: []scripted.Turn{{Steps: []scripted.Step{scripted.Text("Goodbye.")}}}}},
	}, nil)})
	stream := func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		mu.Lock()
		seen = append(seen, len(req.Messages))
		mu.Unlock()
		return model.Stream(ctx, req)
	}
	conversations := map[string][]llm.Message{} // by conversation id
	ask := func(id, text string) string {
		res, err := engine.Run(context.Background(), engine.Params{
			Prompt:     text,
			Model:      llm.Model{ID: "scripted-1", API: llm.APIAnthropicMessages, Provider: "scripted"},
			StreamFunc: stream,
			History:    conversations[id],
		})
		if err != nil {
			return "error: " + err.Error()
		}
		conversations[id] = res.Conversation
		return res.FinalText()
	}
	fmt.Println(ask("c1", "Hello, my name is Ada."))
	fmt.Println(ask("c1", "What is my name?"))
	fmt.Println(ask("c1", "Bye!"))
	fmt.Println("messages sent per call:", seen)
	fmt.Println("kept:", len(conversations["c1"]))
	// Output:
	// Nice to meet you, Ada.
	// Your name is Ada.
	// Goodbye.
	// messages sent per call: [1 3 5]
	// kept: 6
}
