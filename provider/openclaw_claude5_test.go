package provider

import "testing"

// TestClaude5Refusals: the model ids whose failed turns OpenClaw 2026.9.6
// empties (each checked against it on a refused stream).
func TestClaude5Refusals(t *testing.T) {
	for model, want := range map[string]bool{
		"claude-sonnet-5":                   true,
		"us.anthropic.claude-opus-5-5-v1:0": true,
		"opus":                              true,
		"opus-5":                            true,
		"anthropic/claude-mythos-5":         true,
		"claude-sonnet-5-20260101":          true,
		"Claude Fable 5":                    true,
		"claude-fable-5":                    true,
		"claude-opus-4-8":                   false,
		"claude-fable-5x":                   false,
		"bedrock/claude-fable-5/x":          false,
		"claude-mythos-preview":             false,
		"x":                                 false,
		"":                                  false,
	} {
		if got := claude5Refusals(model); got != want {
			t.Errorf("%q: %v, want %v", model, got, want)
		}
	}
}
