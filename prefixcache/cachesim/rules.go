package cachesim

import (
	"strings"
	"time"
)

// Provider is the family of a prompt cache.
type Provider uint8

const (
	ProviderUnknown Provider = iota
	ProviderAnthropic
	ProviderOpenAI
	ProviderGemini
	ProviderDeepSeek
	numProviders
)

var providerNames = [numProviders]string{"unknown", "anthropic", "openai", "gemini", "deepseek"}

func (p Provider) String() string {
	if p < numProviders {
		return providerNames[p]
	}
	return "unknown"
}

// Mode is where a provider looks for and stores cached prefixes.
type Mode uint8

const (
	// ModeBreakpoints stores entries only at blocks marked Breakpoint and
	// looks for them at breakpoints and up to Rules.Lookback content blocks
	// before each (Anthropic).
	ModeBreakpoints Mode = iota
	// ModePrefix stores every prefix of every request and reads the longest
	// one that is still alive (OpenAI, Gemini implicit caching).
	ModePrefix
	// ModeRequestEnds stores the whole request (and explicit breakpoints)
	// as one unit and reads the longest live unit that is a prefix of the
	// new request (DeepSeek's persisted "cache prefix units").
	ModeRequestEnds
)

// Price is a list price in units of Currency per million tokens. A zero
// Input means the price is not known; ratios (Read/Input) still are.
type Price struct {
	Input        float64 // base (uncached) input
	CacheRead    float64 // input served from the cache
	CacheWrite   float64 // input written to the cache (5-minute or default TTL)
	CacheWrite1h float64 // written with the 1-hour TTL (Anthropic)
	Currency     string
}

// Known reports whether the base price is known.
func (p Price) Known() bool { return p.Input > 0 }

// Rules is the prompt-cache behaviour of one provider model.
type Rules struct {
	Provider Provider
	Model    string // the table entry that matched ("" for a provider default)
	Mode     Mode

	// MinTokens is the minimum cacheable prefix: a breakpoint (Anthropic)
	// or prompt (OpenAI, Gemini) shorter than this caches nothing.
	MinTokens int
	// Unit is the granularity of a read above MinTokens: OpenAI 128
	// (reads are 1024 + 128·k), DeepSeek 64; 0 or 1 means token-exact.
	Unit int
	// TTL is the idle lifetime of an entry; a hit refreshes it when
	// RefreshOnHit. LongTTL is the lifetime of 1-hour breakpoints.
	TTL, LongTTL time.Duration
	// MaxAge bounds an entry's life from its first write regardless of hits
	// (OpenAI in-memory retention: always within one hour); 0 means none.
	MaxAge       time.Duration
	RefreshOnHit bool
	// MaxBreakpoints is the most breakpoints a request may carry; the API
	// rejects a request with more (Anthropic: 4). 0 means no limit.
	MaxBreakpoints int
	// Lookback is how many content blocks before a breakpoint are checked
	// for an earlier entry (Anthropic: about 20). 0 means only the
	// breakpoint itself.
	Lookback int

	Price Price
}

// Source of the rules and prices below: the project's spec
// wire-and-cache.md §2 (Anthropic prompt-caching docs and pricing table;
// the minimum-length list quoted in anthropic-sdk-python#1194 and the later
// per-model pages it cites; OpenAI's prompt-caching guide and the per-model
// cached-input prices it quotes; Gemini's caching page; DeepSeek's
// kv_cache guide and launch note). Base input prices for Anthropic models
// that §2 does not list are Anthropic's published list prices; the cache
// multipliers (1.25× / 2× / 0.1×) are the documented ones. Prices are per
// million tokens.
var (
	anthropicTTL     = 5 * time.Minute
	anthropicLongTTL = time.Hour
)

func anthropic(model string, min int, input float64) Rules {
	return Rules{
		Provider: ProviderAnthropic, Model: model, Mode: ModeBreakpoints,
		MinTokens: min, TTL: anthropicTTL, LongTTL: anthropicLongTTL, RefreshOnHit: true,
		MaxBreakpoints: 4, Lookback: 20,
		Price: Price{Input: input, CacheRead: input * 0.1, CacheWrite: input * 1.25, CacheWrite1h: input * 2, Currency: "USD"},
	}
}

// openai returns OpenAI rules; write is the cache-write price (equal to
// input before the GPT-5.6 family: no extra fee).
func openai(model string, input, read, write float64) Rules {
	return Rules{
		Provider: ProviderOpenAI, Model: model, Mode: ModePrefix,
		MinTokens: 1024, Unit: 128, TTL: 5 * time.Minute, MaxAge: time.Hour, RefreshOnHit: true,
		Price: Price{Input: input, CacheRead: read, CacheWrite: write, Currency: "USD"},
	}
}

func gemini(model string, min int) Rules {
	// Gemini's implicit cache keeps no documented lifetime; 5 minutes of
	// inactivity is assumed. Vertex AI bills implicit hits at a 90%
	// discount and creation at the normal input price; the base price is
	// not in the spec (zero: unknown, ratios only).
	return Rules{
		Provider: ProviderGemini, Model: model, Mode: ModePrefix,
		MinTokens: min, TTL: 5 * time.Minute, RefreshOnHit: true,
		Price: Price{Input: 1, CacheRead: 0.1, CacheWrite: 1, Currency: "ratio"},
	}
}

// modelTable maps model-id fragments to rules; the first fragment found in
// a (lower-cased) model id wins, so more specific fragments come first.
var modelTable = []struct {
	frag  string
	rules Rules
}{
	// Anthropic, minimum cacheable length per model.
	{"opus-5", anthropic("claude-opus-5", 512, 5)},
	{"fable-5", anthropic("claude-fable-5", 512, 5)},
	{"mythos-5", anthropic("claude-mythos-5", 512, 5)},
	{"sonnet-5", anthropic("claude-sonnet-5", 1024, 3)},
	{"opus-4-8", anthropic("claude-opus-4-8", 1024, 5)},
	{"opus-4-7", anthropic("claude-opus-4-7", 2048, 5)},
	{"opus-4-6", anthropic("claude-opus-4-6", 4096, 5)},
	{"opus-4-5", anthropic("claude-opus-4-5", 4096, 5)},
	{"haiku-4-5", anthropic("claude-haiku-4-5", 4096, 1)},
	{"sonnet-4-6", anthropic("claude-sonnet-4-6", 1024, 3)},
	{"sonnet-4-5", anthropic("claude-sonnet-4-5", 1024, 3)},
	{"opus-4-1", anthropic("claude-opus-4-1", 1024, 15)},
	{"opus-4", anthropic("claude-opus-4", 1024, 15)},
	{"sonnet-4", anthropic("claude-sonnet-4", 1024, 3)},
	{"3-7-sonnet", anthropic("claude-3-7-sonnet", 1024, 3)},
	{"sonnet-3-7", anthropic("claude-3-7-sonnet", 1024, 3)},
	{"3-5-haiku", anthropic("claude-3-5-haiku", 2048, 0.8)},
	{"haiku-3-5", anthropic("claude-3-5-haiku", 2048, 0.8)},
	{"3-haiku", anthropic("claude-3-haiku", 2048, 0.25)},

	// OpenAI: per-model cached-input prices (no write fee before GPT-5.6;
	// 1.25× writes from GPT-5.6 on, base price not in the spec).
	{"gpt-5.6", openai("gpt-5.6", 0, 0, 0)},
	{"gpt-5.4", openai("gpt-5.4", 2.50, 0.25, 2.50)},
	{"gpt-5.1", openai("gpt-5.1", 1.25, 0.125, 1.25)},
	{"gpt-4o", openai("gpt-4o", 2.50, 1.25, 2.50)},

	// Gemini: minimum prompt size, July-2026 page.
	{"gemini-3.5-flash", gemini("gemini-3.5-flash", 4096)},
	{"gemini-3.1-pro", gemini("gemini-3.1-pro", 4096)},
	{"gemini-3-pro", gemini("gemini-3-pro", 4096)},
	{"gemini-3-flash", gemini("gemini-3-flash", 1024)},
	{"gemini-2.5-pro", gemini("gemini-2.5-pro", 2048)},
	{"gemini-2.5-flash", gemini("gemini-2.5-flash", 2048)},
}

// DefaultRules returns the rules of a provider when the model is not in
// the table: Anthropic with a 1,024-token minimum and unknown price, OpenAI's
// automatic caching, Gemini with a 2,048-token minimum, DeepSeek's 64-token
// units (hit price 0.1× the miss price, as at launch).
func DefaultRules(p Provider) Rules {
	switch p {
	case ProviderAnthropic:
		r := anthropic("", 1024, 0)
		r.Price = Price{Input: 0, CacheRead: 0, Currency: "USD"}
		return r
	case ProviderOpenAI:
		return openai("", 0, 0, 0)
	case ProviderGemini:
		return gemini("", 2048)
	case ProviderDeepSeek:
		// "64 tokens as a storage unit; content less than 64 tokens will
		// not be cached"; cleared "usually within a few hours to a few
		// days" of disuse: one hour is the conservative end.
		return Rules{
			Provider: ProviderDeepSeek, Mode: ModeRequestEnds,
			MinTokens: 64, Unit: 64, TTL: time.Hour, RefreshOnHit: true,
			Price: Price{Input: 1, CacheRead: 0.1, CacheWrite: 1, Currency: "CNY"},
		}
	}
	return Rules{Provider: ProviderUnknown, Mode: ModePrefix}
}

// ParseProvider maps a provider or API name as sessions record them
// ("anthropic", "openai-codex", "google-generative-ai", "deepseek", ...) to
// a Provider.
func ParseProvider(s string) Provider {
	s = strings.ToLower(s)
	switch {
	case strings.Contains(s, "anthropic"), strings.Contains(s, "claude"):
		return ProviderAnthropic
	case strings.Contains(s, "deepseek"):
		return ProviderDeepSeek
	case strings.Contains(s, "google"), strings.Contains(s, "gemini"), strings.Contains(s, "vertex"):
		return ProviderGemini
	case strings.Contains(s, "openai"), strings.Contains(s, "azure"), strings.Contains(s, "codex"), s == "xai":
		return ProviderOpenAI
	}
	return ProviderUnknown
}

// RulesFor returns the rules for a model of a provider: the table entry
// whose fragment occurs in the model id, else the provider's defaults. The
// provider is inferred from the model id when p is ProviderUnknown.
func RulesFor(p Provider, model string) Rules {
	m := strings.ToLower(model)
	m = strings.ReplaceAll(m, ".", "-")
	for i := range modelTable {
		frag := strings.ReplaceAll(modelTable[i].frag, ".", "-")
		if strings.Contains(m, frag) {
			r := modelTable[i].rules
			if p == ProviderUnknown || p == r.Provider {
				return r
			}
		}
	}
	if p == ProviderUnknown {
		p = ParseProvider(model)
	}
	return DefaultRules(p)
}

// WithRetention returns r with a provider retention setting applied:
// Anthropic "long" (1-hour breakpoints are set per block, so this sets TTL
// to 1 hour for every breakpoint) or "short"; OpenAI "24h" or "in_memory".
func (r Rules) WithRetention(retention string) Rules {
	switch retention {
	case "long", "1h":
		if r.Provider == ProviderAnthropic {
			r.TTL = r.LongTTL
		}
	case "24h":
		r.TTL, r.MaxAge = 24*time.Hour, 24*time.Hour
	case "in_memory":
		r.TTL, r.MaxAge = 5*time.Minute, time.Hour
	}
	return r
}
