package llm

// Model describes the model a request is for and its endpoint: the wire
// (API), who serves it (Provider, BaseURL), the endpoint's compatibility
// profile (Compat, detected when nil) and the few model facts the
// decorators need. Validate catches a typo before anything is sent.
type Model struct {
	ID       string   // e.g. "gpt-4.1", "claude-sonnet-4-5"
	API      API      // the wire: APIOpenAICompletions, APIOpenAIResponses or APIAnthropicMessages
	Provider Provider // OpenClaw's provider id; see Provider for what it decides
	BaseURL  string   // endpoint root; empty means the wire's default (OpenAI's or Anthropic's API)

	// Compat, when set, is the endpoint's compatibility profile and
	// replaces detection (provider.CompatFor); nil detects it from
	// Provider and BaseURL.
	Compat *Compat

	// HTMLEntityArgs marks models whose tool-call arguments arrive encoded as
	// HTML entities (OpenClaw's compat.toolCallArgumentsEncoding = "html-entities").
	HTMLEntityArgs bool
	// Reasoning marks a reasoning model (OpenClaw's model.reasoning). Off,
	// as OpenClaw has it for a model it has no catalogue entry for, the
	// OpenAI Chat Completions decoder drops reasoning deltas
	// (shouldEmitOpenAICompletionsReasoning).
	Reasoning bool
	// ContextWindow and MaxTokens are in tokens; zero means unknown.
	ContextWindow int
	MaxTokens     int
}

// Tool is a tool offered to the model: its name, description and JSON-schema
// parameters (raw JSON text).
type Tool struct {
	Name        string
	Description string
	Parameters  []byte
}

// Request is one model call: the system prompt, the conversation so far and
// the tools, plus sampling options. CacheBoundary, when positive, is the
// byte offset in System where the stable (cacheable) prefix ends.
type Request struct {
	Model         Model
	System        string
	CacheBoundary int
	Messages      []Message
	Tools         []Tool

	MaxTokens   int
	Temperature *float64
	// Reasoning is a provider-neutral effort hint ("", "low", "medium", "high").
	Reasoning string
	// SessionID lets providers that support it key their prompt cache.
	SessionID string
	// APIKey overrides the key the transport would otherwise read from the
	// environment.
	APIKey string
	// Options are the request options beyond the conversation (tool choice,
	// response format, stop sequences, headers...); the zero value sends none.
	Options RequestOptions
}
