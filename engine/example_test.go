package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ocbench/ocbench/engine"
	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/prompt"
	"github.com/ocbench/ocbench/provider/scripted"
)

// Embedding the engine: one run against the scripted provider (in
// process; point Model.BaseURL at a real endpoint and drop StreamFunc to
// use package provider's HTTP transport instead), in a workspace, with a
// session file and an event callback.
func Example() {
	ws, _ := os.MkdirTemp("", "ocbench-example-")
	defer os.RemoveAll(ws)
	prompt.MaterializeSample(ws) // AGENTS.md, SOUL.md, ...

	prov := scripted.MustNew(scripted.Options{}) // built-in script: read AGENTS.md, then answer
	res, err := engine.Run(context.Background(), engine.Params{
		Prompt:     "Read the workspace instructions.",
		Model:      llm.Model{ID: "scripted-1", API: "openai-completions", Provider: "scripted"},
		StreamFunc: prov.StreamFunc(),
		Workspace:  ws, OpenClawPrompt: true, BuiltinTools: true,
		SessionFile: filepath.Join(ws, ".sessions", "main.jsonl"),
		OnEvent: func(e *engine.Event) {
			switch e.Kind {
			case engine.EventToolStart:
				fmt.Printf("tool %s %s\n", e.ToolName, e.Args)
			case engine.EventToolEnd:
				fmt.Printf("tool result, error=%t\n", e.Result.IsError)
			}
		},
	})
	if err != nil {
		fmt.Println("run failed:", err)
		return
	}
	fmt.Println("turns:", res.Turns, "stop:", res.StopReason)
	fmt.Println(res.FinalText()[:18])
	// Output:
	// tool read {"path":"AGENTS.md"}
	// tool result, error=false
	// turns: 2 stop: stop
	// I read AGENTS.md.
}

// A tool with a hand-written JSON schema and a handler of raw arguments:
// its arguments are checked against the schema before the handler runs; a
// call that fails the schema, or an unknown tool, becomes an error result
// for the model, never a crash.
func ExampleNewSchemaTool() {
	weather := engine.MustNewSchemaTool("weather", "Current weather for a city.",
		[]byte(`{"type":"object","properties":{"city":{"type":"string","minLength":1}},"required":["city"],"additionalProperties":false}`),
		func(ctx context.Context, args []byte) (engine.ToolOutput, error) {
			return engine.ToolOutput{Text: "sunny, 21°C"}, nil
		})
	reg, _ := engine.NewRegistry(weather)
	ctx := context.Background()
	fmt.Println(reg.Call(ctx, "weather", []byte(`{"city":"Lisbon"}`)).Text)
	bad := reg.Call(ctx, "weather", []byte(`{"town":"Lisbon"}`))
	fmt.Println(bad.IsError)
	fmt.Println(reg.Call(ctx, "forecast", []byte(`{}`)).Text)
	// Output:
	// sunny, 21°C
	// true
	// Tool "forecast" not found. Available tools: weather.
}

// A typed tool: the parameters the model sees are the JSON schema of the
// input type, arguments are validated against it and decoded before the
// handler runs, and a struct result reaches the model as JSON text.
func ExampleNewTool() {
	type forecastIn struct {
		City string `json:"city" jsonschema:"minLength=1,description=City name"`
		Days int    `json:"days,omitempty" jsonschema:"minimum=1,maximum=7"`
	}
	type forecastOut struct {
		City    string `json:"city"`
		Summary string `json:"summary"`
	}
	forecast := engine.MustNewTool("forecast", "Weather forecast for a city.",
		func(ctx context.Context, in forecastIn) (forecastOut, error) {
			if in.City == "Atlantis" {
				return forecastOut{}, errors.New("unknown city: Atlantis")
			}
			return forecastOut{City: in.City, Summary: fmt.Sprintf("sunny for %d days", max(in.Days, 1))}, nil
		})
	fmt.Println(string(forecast.Definition().Parameters))
	reg, _ := engine.NewRegistry(forecast)
	ctx := context.Background()
	fmt.Println(reg.Call(ctx, "forecast", []byte(`{"city":"Lisbon","days":3}`)).Text)
	bad := reg.Call(ctx, "forecast", []byte(`{"city":"Lisbon","days":30}`))
	fmt.Println(bad.IsError, bad.Text)
	failed := reg.Call(ctx, "forecast", []byte(`{"city":"Atlantis"}`))
	fmt.Println(failed.IsError, failed.Text)
	// Output:
	// {"properties":{"city":{"type":"string","minLength":1,"description":"City name"},"days":{"type":"integer","maximum":7,"minimum":1}},"additionalProperties":false,"type":"object","required":["city"]}
	// {"city":"Lisbon","summary":"sunny for 3 days"}
	// true invalid arguments for tool "forecast": at /days: maximum: got 30, want 7
	// true unknown city: Atlantis
}

// Steering: messages queued while a run is active reach the model between
// turns; Interrupt also cancels the model call or tool in progress.
func ExampleQueue() {
	q := &engine.Queue{}
	q.Push(engine.Steer, "also check the tests")
	q.Push(engine.FollowUp, "then summarize")
	fmt.Println(q.Len())
	// Pass q as Params.Queue; the run delivers the steer message after the
	// current turn's tool calls, the follow-up when the model stops.
	// Output: 2
}
