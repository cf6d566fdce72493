package bench

import (
	"context"
	"fmt"
	"strings"

	"github.com/ocbench/ocbench/engine"
	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/prompt"
	"github.com/ocbench/ocbench/provider/scripted"
)

// TurnModelCalls is the number of model calls in one turn of the turn
// scenarios: the built-in script (scripted.Default) reads AGENTS.md with
// the read tool, then answers.
const TurnModelCalls = 2

// turnScenarios run one whole user turn through engine.Run against the
// scripted provider, in the sample workspace, with an ephemeral session:
// the system prompt is resolved and assembled from the workspace, the
// model is called, the read tool runs, its result goes back to the model,
// which answers. "in-process" calls the provider's StreamFunc (SSE bytes
// encoded and decoded in memory, so only the engine and the decode path
// are measured); "loopback-http" goes through package provider's HTTP
// transport to the scripted server on 127.0.0.1. Events are model calls.
func turnScenarios() ([]Scenario, error) {
	var scs []Scenario
	for _, input := range []string{"in-process", "loopback-http"} {
		scs = append(scs, Scenario{
			Name: "turn/" + input, Stage: "turn", Input: input, Impl: Ours, Events: TurnModelCalls, Latency: true,
			Setup: func() (func() error, func(), error) {
				ws, removeWS, err := prompt.SampleDir()
				if err != nil {
					return nil, nil, err
				}
				prov, err := scripted.New(scripted.Options{})
				if err != nil {
					removeWS()
					return nil, nil, err
				}
				p := engine.Params{
					Prompt:    "Read the workspace instructions.",
					Model:     llm.Model{ID: "scripted-1", API: "openai-completions", Provider: "scripted"},
					Workspace: ws,
					// OpenClaw's agent: its prompt and tools.
					OpenClawPrompt: true, BuiltinTools: true,
				}
				teardown := removeWS
				if input == "in-process" {
					p.StreamFunc = prov.StreamFunc()
				} else {
					srv, err := prov.Start()
					if err != nil {
						removeWS()
						return nil, nil, err
					}
					p.Model.BaseURL, p.APIKey = srv.URL, "bench"
					teardown = func() { srv.Close(); removeWS() }
				}
				ctx := context.Background()
				first := true
				return func() error {
					res, err := engine.Run(ctx, p)
					if err != nil {
						return err
					}
					if first {
						first = false
						return checkTurn(&res)
					}
					return nil
				}, teardown, nil
			},
		})
	}
	return scs, nil
}

// checkTurn fails unless the run did what the built-in script asks: read
// AGENTS.md successfully, then answer, in TurnModelCalls model calls.
func checkTurn(res *engine.Result) error {
	if res.Turns != TurnModelCalls || res.StopReason != llm.StopStop {
		return fmt.Errorf("turn: %d model calls ending with %q, want %d ending with stop", res.Turns, res.StopReason, TurnModelCalls)
	}
	if len(res.ToolCalls) != 1 || res.ToolCalls[0].Name != "read" || res.ToolCalls[0].IsError {
		return fmt.Errorf("turn: tool calls %+v, want one successful read", res.ToolCalls)
	}
	if want := "I read " + scripted.DefaultReadPath; !strings.HasPrefix(res.FinalText(), want) {
		return fmt.Errorf("turn: final text %q, want it to start with %q", res.FinalText(), want)
	}
	return nil
}
