package llm

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
)

// Provider is the provider id of a model, in OpenClaw's vocabulary
// (its model catalogue's provider keys: "openai", "anthropic", "kimi",
// "openrouter", a name of the user's own...). It is an open set: any id
// of letters, digits, '.', '_' and '-' is accepted, and the constants
// below are the ids this module gives a meaning. What the id decides:
//
//   - Compatibility: ProviderOpenAI makes a Chat Completions endpoint
//     OpenAI's own whatever its base URL (a proxy in front of OpenAI):
//     max_completion_tokens and prompt_cache_key; any other id leaves it to
//     the base URL (provider.DetectCompat). Model.Compat overrides both.
//   - The API key: Request.APIKey, else the variable Compat.KeyEnv names,
//     else <ID>_API_KEY (upper case, other characters as '_': kimi-coding
//     reads KIMI_CODING_API_KEY), else the wire's usual variable
//     (OPENAI_API_KEY, ANTHROPIC_API_KEY).
//   - Argument repair: OpenClaw repairs malformed tool-call arguments for
//     every openai-completions model, for ProviderKimi on
//     anthropic-messages, and for no other anthropic-messages or
//     openai-responses model (streamwrap.ShouldRepairMalformedToolCallArguments,
//     OpenClaw's shouldRepairMalformedToolCallArguments);
//     Compat.RepairToolCallArgs overrides it.
//   - What is recorded: every assistant message (Message.Provider), and so
//     the session transcript, carries the id, and OpenClaw's prompt names
//     the model "<provider>/<id>".
//
// The zero value means "not given": the base URL decides compatibility and
// the wire's variable holds the key.
//
// Provider is an alias of string, not a defined type, because the id is
// recorded and compared as a plain string across the module (messages,
// transcripts, harness selection); ParseProvider and Model.Validate are
// where a typo is caught.
type Provider = string

const (
	// ProviderOpenAI is OpenAI's own API.
	ProviderOpenAI Provider = "openai"
	// ProviderAnthropic is Anthropic's own API.
	ProviderAnthropic Provider = "anthropic"
	// ProviderOpenAICompatible is any OpenAI-compatible server (vLLM,
	// llama.cpp, Ollama, LM Studio, a proxy): compatibility follows its
	// base URL.
	ProviderOpenAICompatible Provider = "openai-compatible"
	// ProviderKimi is Moonshot's Kimi, whose anthropic-messages endpoint
	// OpenClaw repairs tool-call arguments for.
	ProviderKimi Provider = "kimi"
	// ProviderScripted is package provider/scripted, the in-process
	// provider that replays scripted turns.
	ProviderScripted Provider = "scripted"
)

// Providers lists the provider ids this module gives a meaning.
var Providers = [...]Provider{ProviderOpenAI, ProviderAnthropic, ProviderOpenAICompatible, ProviderKimi, ProviderScripted}

// ErrUnknownAPI is wrapped by a *ModelError for an API that is none of
// this module's (APIs); provider.ErrUnknownAPI is the same error.
var ErrUnknownAPI = errors.New("unknown api")

// ErrInvalidModel is wrapped by a *ModelError for any other field of a
// Model that cannot be right.
var ErrInvalidModel = errors.New("invalid model")

// ModelError reports a Model that Validate refused: the field
// ("api", "provider", "baseUrl", "compat.maxTokensField", ...), the value
// as given, why, and the closest known value when the value looks like a
// typo of one. Err is ErrUnknownAPI or ErrInvalidModel.
type ModelError struct {
	Field   string
	Value   string
	Reason  string
	Suggest string
	Err     error
}

func (e *ModelError) Error() string {
	s := "llm: model " + e.Field + " " + strconv.Quote(e.Value) + ": " + e.Reason
	if e.Suggest != "" {
		s += " (did you mean " + strconv.Quote(e.Suggest) + "?)"
	}
	return s
}

func (e *ModelError) Unwrap() error { return e.Err }

// ParseAPI returns the API named s, or a *ModelError wrapping ErrUnknownAPI
// that suggests the closest API (wire names such as "openai-chat",
// "responses" or "anthropic" are pointed to their API).
func ParseAPI(s string) (API, error) {
	if a := API(s); a.Known() {
		return a, nil
	}
	e := &ModelError{Field: "api", Value: s, Reason: "is not one of openai-completions, openai-responses, anthropic-messages", Err: ErrUnknownAPI}
	if s == "" {
		e.Reason = "is not set"
		return "", e
	}
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "openai", "openai-chat", "chat", "completions", "chat-completions", "openai-completion":
		e.Suggest = string(APIOpenAICompletions)
	case "responses", "openai-response":
		e.Suggest = string(APIOpenAIResponses)
	case "anthropic", "messages", "claude", "anthropic-message":
		e.Suggest = string(APIAnthropicMessages)
	default:
		e.Suggest = closest(strings.ToLower(s), APIs[:], 4)
	}
	return "", e
}

// ParseProvider checks a provider id: letters, digits, '.', '_' and '-',
// at most 128 bytes, and not one edit or two away from an id this module
// knows (Providers) without being it ("opneai", "antropic", "OpenAI"). The
// empty id is valid ("not given").
func ParseProvider(s string) (Provider, error) {
	if s == "" {
		return "", nil
	}
	// A known id, the common case, is found before anything is made for
	// an error.
	for _, p := range Providers {
		if s == p {
			return p, nil
		}
	}
	e := &ModelError{Field: "provider", Value: s, Err: ErrInvalidModel}
	if len(s) > 128 {
		e.Reason = "is longer than 128 bytes"
		return "", e
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			e.Reason = "holds " + strconv.QuoteRune(rune(c)) + ": an id is letters, digits, '.', '_' and '-'"
			return "", e
		}
	}
	low := strings.ToLower(s)
	for _, p := range Providers {
		if low == p {
			// Ids are compared as written ("OpenAI" is not OpenAI's
			// compatibility), so a case variant is a typo too.
			e.Reason = "is not a provider id this module knows: ids are lower case"
			e.Suggest = p
			return "", e
		}
	}
	limit := 1
	if len(low) > 6 {
		limit = 2
	}
	if near := closest(low, Providers[:], limit); near != "" {
		e.Reason = "is not a provider id this module knows, but close to one"
		e.Suggest = near
		return "", e
	}
	return Provider(s), nil
}

// closest returns the candidate within limit edits of s, or "".
func closest[T ~string](s string, candidates []T, limit int) string {
	best, bestD := "", limit+1
	for _, c := range candidates {
		if d := editDistance(s, string(c)); d < bestD {
			best, bestD = string(c), d
		}
	}
	return best
}

// editDistance is the edit distance of two short ASCII ids, counting an
// insertion, a deletion, a substitution or a swap of neighbours ("opneai")
// as one edit (optimal string alignment).
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		if a == b {
			return 0
		}
		return 64
	}
	var pp, prev, cur [65]int
	for j := 0; j <= len(b); j++ {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], pp[j-2]+1)
			}
		}
		pp, prev = prev, cur
	}
	return prev[len(b)]
}

// Compat is an endpoint's compatibility profile: which optional request
// fields it accepts and how the module treats it. Package provider
// detects it from Model.Provider and Model.BaseURL (provider.CompatFor,
// provider.DetectCompat: OpenAI's own API or a generic compatible
// server); Model.Compat, when set, replaces detection. The gateway's
// upstream settings are the same type (provider.Compat).
type Compat struct {
	// MaxTokensField names Chat Completions' output limit: MaxCompletionTokens
	// (OpenAI's current name) or MaxTokensName (what most compatible
	// servers know). Empty in Model.Compat keeps the detected one.
	MaxTokensField string
	// StreamOptions: the endpoint accepts stream_options.include_usage
	// (usage in the last chunk of a Chat Completions stream). Without it
	// a chat stream reports no usage.
	StreamOptions bool
	// PromptCacheKey: the Chat Completions endpoint accepts
	// prompt_cache_key (Request.SessionID keys the provider's cache).
	PromptCacheKey bool
	// RepairToolCallArgs overrides OpenClaw's gate for repairing
	// malformed tool-call arguments (see Provider); the zero value,
	// RepairAsOpenClaw, keeps the gate. The decorator chain reads it from
	// Model.Compat (streamwrap.RepairsToolCallArgs).
	RepairToolCallArgs RepairMode
	// KeyEnv names the environment variable holding the API key; empty
	// means <PROVIDER>_API_KEY, then the wire's usual variable.
	KeyEnv string
}

// The two names of Chat Completions' output limit (Compat.MaxTokensField).
const (
	MaxCompletionTokens = "max_completion_tokens"
	MaxTokensName       = "max_tokens"
)

// RepairMode is Compat.RepairToolCallArgs.
type RepairMode uint8

const (
	// RepairAsOpenClaw repairs exactly where OpenClaw does.
	RepairAsOpenClaw RepairMode = iota
	// RepairAlways repairs every model's tool-call arguments.
	RepairAlways
	// RepairNever repairs none.
	RepairNever
)

var repairNames = [...]string{"openclaw", "always", "never"}

// String returns "openclaw", "always" or "never".
func (m RepairMode) String() string {
	if int(m) < len(repairNames) {
		return repairNames[m]
	}
	return "RepairMode(" + strconv.Itoa(int(m)) + ")"
}

// Validate checks m before anything is sent, so that a typo fails at
// once with a *ModelError rather than as a refused request later: API
// (empty is allowed here: a caller's own StreamFunc may not need it; the
// HTTP transport refuses it), Provider (ParseProvider), BaseURL (an
// absolute http or https URL), the limits (not negative) and Compat
// (MaxTokensField, RepairToolCallArgs and KeyEnv).
func (m *Model) Validate() error {
	if m.API != "" {
		if _, err := ParseAPI(string(m.API)); err != nil {
			return err
		}
	}
	if _, err := ParseProvider(m.Provider); err != nil {
		return err
	}
	if m.BaseURL != "" {
		u, err := url.Parse(m.BaseURL)
		if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
			return &ModelError{Field: "baseUrl", Value: m.BaseURL, Reason: "is not an absolute http or https URL", Err: ErrInvalidModel}
		}
	}
	if m.ContextWindow < 0 || m.MaxTokens < 0 {
		return &ModelError{Field: "limits", Value: strconv.Itoa(min(m.ContextWindow, m.MaxTokens)), Reason: "ContextWindow and MaxTokens are tokens, zero for unknown", Err: ErrInvalidModel}
	}
	if c := m.Compat; c != nil {
		if f := c.MaxTokensField; f != "" && f != MaxCompletionTokens && f != MaxTokensName {
			return &ModelError{Field: "compat.maxTokensField", Value: f, Reason: "is neither max_completion_tokens nor max_tokens",
				Suggest: closest(f, []string{MaxCompletionTokens, MaxTokensName}, 4), Err: ErrInvalidModel}
		}
		if c.RepairToolCallArgs > RepairNever {
			return &ModelError{Field: "compat.repairToolCallArgs", Value: c.RepairToolCallArgs.String(), Reason: "is not a RepairMode", Err: ErrInvalidModel}
		}
		if !envName(c.KeyEnv) {
			return &ModelError{Field: "compat.keyEnv", Value: c.KeyEnv, Reason: "is not an environment variable name", Err: ErrInvalidModel}
		}
	}
	return nil
}

func envName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '_' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
