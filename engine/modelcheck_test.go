package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider/scripted"
)

// TestRunRefusesModelTypos: a misspelt api (for the engine's own
// transport) or provider fails the run at once with the model's typed
// error and a suggestion, before any session is opened or any model call
// made; not as ErrNoProvider at the first call. A StreamFunc of the
// caller's may speak any api.
func TestRunRefusesModelTypos(t *testing.T) {
	prov := scripted.MustNew(scripted.Options{})
	for _, tc := range []struct {
		name    string
		model   llm.Model
		suggest string
	}{
		{"api", llm.Model{ID: "m", API: "openai-completion", Provider: "openai"}, "openai-completions"},
		{"provider", llm.Model{ID: "m", API: llm.APIOpenAICompletions, Provider: "opneai"}, "openai"},
		{"provider case", llm.Model{ID: "m", API: llm.APIAnthropicMessages, Provider: "Anthropic"}, "anthropic"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			stream := prov.StreamFunc()
			p := Params{
				Prompt: "hi", Model: tc.model, SessionFile: t.TempDir() + "/s.jsonl",
				StreamFunc: func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
					calls++
					return stream(ctx, req)
				},
			}
			if tc.name == "api" {
				// The engine's own transport picks the wire by the api.
				p.StreamFunc = nil
			}
			_, err := Run(context.Background(), p)
			var me *llm.ModelError
			if !errors.Is(err, ErrParams) || !errors.As(err, &me) || me.Suggest != tc.suggest {
				t.Fatalf("err = %v (suggest %q), want ErrParams with an *llm.ModelError suggesting %q", err, suggestOf(me), tc.suggest)
			}
			if calls != 0 {
				t.Errorf("%d model calls made with an invalid model", calls)
			}
			if !strings.Contains(err.Error(), tc.suggest) {
				t.Errorf("the message does not name the suggestion: %v", err)
			}
		})
	}
}

func suggestOf(me *llm.ModelError) string {
	if me == nil {
		return ""
	}
	return me.Suggest
}

func TestRunAcceptsCallersOwnAPI(t *testing.T) {
	prov := scripted.MustNew(scripted.Options{})
	_, err := Run(context.Background(), Params{Prompt: "hi", Model: llm.Model{ID: "m", API: "google-generative-ai", Provider: "google"},
		SessionFile: t.TempDir() + "/s.jsonl", StreamFunc: prov.StreamFunc()})
	if errors.Is(err, ErrParams) {
		t.Fatalf("a caller's StreamFunc with its own api was refused: %v", err)
	}
}
