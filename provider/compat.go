package provider

import (
	"strings"
	"sync"

	"github.com/ocbench/ocbench/llm"
)

// Compat is an endpoint's compatibility profile (llm.Compat): which
// optional request fields it accepts, where its API key is read, and
// whether tool-call arguments are repaired, as pi-ai's per-model "compat"
// settings do for real compatible servers, which reject or ignore some of
// what OpenAI's own API takes.
type Compat = llm.Compat

// The two profiles detection chooses from.
var (
	// CompatOpenAI is OpenAI's own API (api.openai.com, Azure OpenAI):
	// max_completion_tokens, stream_options and prompt_cache_key.
	CompatOpenAI = Compat{MaxTokensField: llm.MaxCompletionTokens, StreamOptions: true, PromptCacheKey: true}
	// CompatGeneric is any other OpenAI-compatible server: max_tokens, no
	// prompt_cache_key, and stream_options for usage (pi-ai sends it to
	// every compatible server; SetCompat or Model.Compat turns it off for
	// one that refuses it).
	CompatGeneric = Compat{MaxTokensField: llm.MaxTokensName, StreamOptions: true}
)

var compatOverrides sync.Map // normalised base URL -> Compat

// SetCompat overrides detection for one endpoint (its base URL, as in
// llm.Model.BaseURL), process-wide; the flags of `ocbench run --base-url`
// and `ocbench serve --upstream` call it. A model's own Model.Compat wins
// over it. A zero MaxTokensField keeps the detected one. The repair
// override is a model's, not an endpoint's (the decorator chain reads
// Model.Compat): RepairToolCallArgs is ignored here.
func SetCompat(baseURL string, c Compat) {
	if c.MaxTokensField == "" {
		c.MaxTokensField = DetectCompat(baseURL, "").MaxTokensField
	}
	c.RepairToolCallArgs = llm.RepairAsOpenClaw
	compatOverrides.Store(compatKey(baseURL), c)
}

func compatKey(baseURL string) string {
	return strings.TrimRight(strings.ToLower(baseURL), "/")
}

// CompatFor returns the profile of model m's endpoint: m.Compat when set
// (an empty MaxTokensField there keeps the detected one), else an
// override set with SetCompat, else DetectCompat.
func CompatFor(m *llm.Model) Compat {
	if m.Compat != nil {
		c := *m.Compat
		if c.MaxTokensField == "" {
			c.MaxTokensField = DetectCompat(m.BaseURL, m.Provider).MaxTokensField
		}
		return c
	}
	if v, ok := compatOverrides.Load(compatKey(m.BaseURL)); ok {
		return v.(Compat)
	}
	return DetectCompat(m.BaseURL, m.Provider)
}

// keyHosts are the API hosts whose key variable detection knows, for a
// model that names no provider: a key meant for one service is never sent
// to another because of a shared fallback variable.
var keyHosts = map[string]string{
	"api.openai.com":    "OPENAI_API_KEY",
	"api.anthropic.com": "ANTHROPIC_API_KEY",
	"openrouter.ai":     "OPENROUTER_API_KEY",
	"api.x.ai":          "XAI_API_KEY",
	"api.deepseek.com":  "DEEPSEEK_API_KEY",
	"api.groq.com":      "GROQ_API_KEY",
	"api.mistral.ai":    "MISTRAL_API_KEY",
}

// DetectCompat tells OpenAI's own API from everything else: provider
// "openai" (declared by the user, whatever the base URL: a proxy in front
// of OpenAI), an empty base URL with no provider (OpenAI's default
// endpoint), and the hosts api.openai.com and *.openai.azure.com are
// OpenAI; any other endpoint is a generic compatible server. For a model
// with no provider on a known API host (api.openai.com, api.anthropic.com,
// openrouter.ai, api.x.ai, api.deepseek.com, api.groq.com, api.mistral.ai)
// KeyEnv is that service's variable (OPENROUTER_API_KEY, ...). The repair
// gate is always OpenClaw's (RepairAsOpenClaw).
func DetectCompat(baseURL string, provider llm.Provider) Compat {
	if provider == llm.ProviderOpenAI || baseURL == "" && provider == "" {
		return CompatOpenAI
	}
	if baseURL == "" {
		return CompatGeneric
	}
	host := strings.ToLower(hostOf(baseURL))
	c := CompatGeneric
	if host == "api.openai.com" || strings.HasSuffix(host, ".openai.azure.com") {
		c = CompatOpenAI
	}
	if provider == "" {
		c.KeyEnv = keyHosts[host]
	}
	return c
}

// hostOf returns the host name of an absolute URL (no port, no brackets
// around an IPv6 address), "" when there is none. It reads the text as
// net/url does for the URLs a base URL can be, without allocating: the
// chat encoder asks on every call.
func hostOf(rawURL string) string {
	i := strings.Index(rawURL, "://")
	if i <= 0 {
		return ""
	}
	rest := rawURL[i+3:]
	if j := strings.IndexAny(rest, "/?#"); j >= 0 {
		rest = rest[:j]
	}
	if j := strings.LastIndexByte(rest, '@'); j >= 0 {
		rest = rest[j+1:]
	}
	if strings.HasPrefix(rest, "[") {
		if j := strings.IndexByte(rest, ']'); j >= 0 {
			return rest[1:j]
		}
		return ""
	}
	if j := strings.IndexByte(rest, ':'); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// Profile is what the transport does for a model: the wire, the URL it
// posts to, the endpoint's compatibility profile and the environment
// variables it reads the API key from when the request carries none, in
// order (the first one set wins).
type Profile struct {
	Wire   Wire
	URL    string
	Compat Compat
	KeyEnv []string
}

// ProfileOf validates m (llm.Model.Validate; the API must be set here) and
// returns its Profile.
func ProfileOf(m *llm.Model) (Profile, error) {
	if _, err := llm.ParseAPI(string(m.API)); err != nil {
		return Profile{}, err
	}
	if err := m.Validate(); err != nil {
		return Profile{}, err
	}
	w, _ := WireOf(m.API)
	c := CompatFor(m)
	return Profile{Wire: w, URL: Endpoint(w, m), Compat: c, KeyEnv: keyEnvs(nil, w, m.Provider, c.KeyEnv)}, nil
}

// String writes the profile on one line, e.g. "openai-chat
// http://127.0.0.1:8000/v1/chat/completions: max_tokens, stream_options,
// no prompt_cache_key, repair openclaw, key $LOCAL_API_KEY or $OPENAI_API_KEY".
func (p Profile) String() string {
	var b strings.Builder
	b.WriteString(p.Wire.String() + " " + p.URL + ":")
	if p.Wire == WireOpenAIChat {
		b.WriteString(" " + p.Compat.MaxTokensField)
		if p.Compat.StreamOptions {
			b.WriteString(", stream_options")
		} else {
			b.WriteString(", no stream_options")
		}
		if p.Compat.PromptCacheKey {
			b.WriteString(", prompt_cache_key")
		} else {
			b.WriteString(", no prompt_cache_key")
		}
		b.WriteString(",")
	}
	b.WriteString(" repair " + p.Compat.RepairToolCallArgs.String() + ", key ")
	for i, k := range p.KeyEnv {
		if i > 0 {
			b.WriteString(" or ")
		}
		b.WriteString("$" + k)
	}
	return b.String()
}

// keyEnvs lists the variables the API key is read from: the profile's
// KeyEnv alone when set, else <PROVIDER>_API_KEY, then the wire's usual
// variable.
func keyEnvs(out []string, w Wire, p llm.Provider, keyEnv string) []string {
	if keyEnv != "" {
		return append(out, keyEnv)
	}
	if v := providerKeyEnv(p); v != "" {
		out = append(out, v)
	}
	def := "OPENAI_API_KEY"
	if w == WireAnthropic {
		def = "ANTHROPIC_API_KEY"
	}
	if len(out) == 0 || out[len(out)-1] != def {
		out = append(out, def)
	}
	return out
}

// providerKeyEnv is <PROVIDER>_API_KEY: the id upper-cased, every other
// character '_'.
func providerKeyEnv(p llm.Provider) string {
	if p == "" {
		return ""
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		}
		return '_'
	}, string(p)) + "_API_KEY"
}
