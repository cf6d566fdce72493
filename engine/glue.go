package engine

import (
	"fmt"

	"github.com/ocbench/ocbench/llm"
)

// StreamOptions configure the decorator chain the run wraps the provider in.
type StreamOptions struct {
	// UnknownToolThreshold is the unknown-tool loop guard's threshold
	// (default 10; negative turns the guard off).
	UnknownToolThreshold int
}

// PromptOptions are the prompt inputs a run does not derive itself.
type PromptOptions struct{}

// resolveProvider returns the HTTP transport for p.Model.
func resolveProvider(p *Params) (llm.StreamFunc, error) {
	return nil, fmt.Errorf("%w: no StreamFunc and no transport for api %q", ErrNoProvider, p.Model.API)
}

// buildSystemPrompt returns the system prompt and its cache boundary.
func buildSystemPrompt(p *Params, ws *Workspace, tools []string) (string, int, error) {
	return p.SystemPrompt, p.CacheBoundary, nil
}

// wrapStream wraps fn in the decorator chain.
func wrapStream(fn llm.StreamFunc, p *Params, tools []string) llm.StreamFunc { return fn }

// prepareHistory runs history preparation on the session context.
func prepareHistory(p *Params, msgs []llm.Message) []llm.Message {
	return append([]llm.Message(nil), msgs...)
}

// liveToolResultMaxChars is OpenClaw's live cap on one tool result.
func liveToolResultMaxChars(ctxTokens, configured int) int {
	if configured <= 0 {
		configured = DefaultToolResultMaxChars
	}
	return min(ctxTokens*3/10*4, configured)
}

// toolResultReducibleChars is what truncating the tool results of msgs to
// maxChars would remove.
func toolResultReducibleChars(msgs []llm.Message, maxChars int) int { return 0 }

// truncateToolResults truncates oversized tool results in the history.
func (r *runner) truncateToolResults(maxChars int) int { return 0 }
