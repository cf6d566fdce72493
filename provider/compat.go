package provider

import (
	"net/url"
	"strings"
	"sync"

	"github.com/ocbench/ocbench/llm"
)

// Compat says which optional request fields an OpenAI-compatible endpoint
// accepts, as pi-ai's per-model "compat" settings do: real compatible
// servers reject or ignore some of what OpenAI's own API takes.
type Compat struct {
	// MaxTokensField names the output limit: "max_completion_tokens"
	// (OpenAI's current name) or "max_tokens" (what most compatible
	// servers know).
	MaxTokensField string
	// StreamOptions: the endpoint accepts stream_options.include_usage
	// (usage in the last chunk of a stream).
	StreamOptions bool
	// PromptCacheKey: the endpoint accepts prompt_cache_key.
	PromptCacheKey bool
}

// The two settings detection chooses from.
var (
	// CompatOpenAI is OpenAI's own API (api.openai.com, Azure OpenAI).
	CompatOpenAI = Compat{MaxTokensField: "max_completion_tokens", StreamOptions: true, PromptCacheKey: true}
	// CompatGeneric is any other OpenAI-compatible server: max_tokens, no
	// prompt_cache_key, and stream_options for usage (pi-ai sends it to
	// every compatible server; SetCompat turns it off for one that
	// refuses it).
	CompatGeneric = Compat{MaxTokensField: "max_tokens", StreamOptions: true}
)

var compatOverrides sync.Map // normalised base URL -> Compat

// SetCompat overrides detection for one endpoint (its base URL, as in
// llm.Model.BaseURL); the flags of `ocbench run --base-url` and `ocbench
// serve --upstream` call it. A zero MaxTokensField keeps the detected one.
func SetCompat(baseURL string, c Compat) {
	if c.MaxTokensField == "" {
		c.MaxTokensField = DetectCompat(baseURL, "").MaxTokensField
	}
	compatOverrides.Store(compatKey(baseURL), c)
}

func compatKey(baseURL string) string {
	return strings.TrimRight(strings.ToLower(baseURL), "/")
}

// CompatFor returns the settings of model m's endpoint: an override set
// with SetCompat, else DetectCompat.
func CompatFor(m *llm.Model) Compat {
	if v, ok := compatOverrides.Load(compatKey(m.BaseURL)); ok {
		return v.(Compat)
	}
	return DetectCompat(m.BaseURL, m.Provider)
}

// DetectCompat tells OpenAI's own API from everything else: provider
// "openai" (declared by the user, whatever the base URL: a proxy in front
// of OpenAI), an empty base URL with no provider (OpenAI's default
// endpoint), and the hosts api.openai.com and *.openai.azure.com are
// OpenAI; any other endpoint is a generic compatible server.
func DetectCompat(baseURL, provider string) Compat {
	if provider == "openai" || baseURL == "" && provider == "" {
		return CompatOpenAI
	}
	if baseURL == "" {
		return CompatGeneric
	}
	u, err := url.Parse(baseURL)
	if err != nil {
		return CompatGeneric
	}
	host := strings.ToLower(u.Hostname())
	if host == "api.openai.com" || strings.HasSuffix(host, ".openai.azure.com") {
		return CompatOpenAI
	}
	return CompatGeneric
}
