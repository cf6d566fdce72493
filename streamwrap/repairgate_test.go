package streamwrap

import (
	"testing"

	"github.com/ocbench/ocbench/llm"
)

// Without a Compat override the chain's gate is OpenClaw's, for every
// provider id and api; the override switches it either way.
func TestRepairsToolCallArgs(t *testing.T) {
	for _, p := range []string{"", "openai", "anthropic", "kimi", " Kimi ", "kimi-coding", "openai-compatible", "xai"} {
		for _, api := range []llm.API{llm.APIOpenAICompletions, llm.APIOpenAIResponses, llm.APIAnthropicMessages, "azure-openai-responses", "openai-chatgpt-responses", "google-gemini"} {
			m := llm.Model{Provider: p, API: api}
			if got, want := RepairsToolCallArgs(&m), ShouldRepairMalformedToolCallArguments(p, api); got != want {
				t.Errorf("%q %q: %v, OpenClaw %v", p, api, got, want)
			}
			m.Compat = &llm.Compat{}
			if got, want := RepairsToolCallArgs(&m), ShouldRepairMalformedToolCallArguments(p, api); got != want {
				t.Errorf("%q %q with zero Compat: %v, OpenClaw %v", p, api, got, want)
			}
			m.Compat.RepairToolCallArgs = llm.RepairAlways
			if !RepairsToolCallArgs(&m) {
				t.Errorf("%q %q: always did not repair", p, api)
			}
			m.Compat.RepairToolCallArgs = llm.RepairNever
			if RepairsToolCallArgs(&m) {
				t.Errorf("%q %q: never repaired", p, api)
			}
		}
	}
}
