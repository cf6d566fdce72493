package llm

// API names a provider wire protocol by its pi-ai api id, the vocabulary
// OpenClaw's model catalogue uses. It is the one name for a wire: the
// provider package picks its decoder and request encoder by it, and the
// stream decorators read it from Request.Model to decide which rules apply
// (which transport rules run, whether tool-call arguments are repaired,
// how a transcript is prepared for replay).
//
// The zero value means "not set"; the three constants below are the wires
// this module speaks. Any other value is refused by provider.Client with
// provider.ErrUnknownAPI before anything is sent.
type API string

const (
	// APIOpenAICompletions is OpenAI Chat Completions (POST /v1/chat/completions)
	// and the many servers that copy it (vLLM, llama.cpp, Ollama, LM Studio...).
	APIOpenAICompletions API = "openai-completions"
	// APIOpenAIResponses is the OpenAI Responses API (POST /v1/responses).
	APIOpenAIResponses API = "openai-responses"
	// APIAnthropicMessages is the Anthropic Messages API (POST /v1/messages).
	APIAnthropicMessages API = "anthropic-messages"
)

// APIs lists every API this module speaks, in a fixed order.
var APIs = [...]API{APIOpenAICompletions, APIOpenAIResponses, APIAnthropicMessages}

// Known reports whether a is one of the APIs this module speaks.
func (a API) Known() bool {
	switch a {
	case APIOpenAICompletions, APIOpenAIResponses, APIAnthropicMessages:
		return true
	}
	return false
}

// String returns the pi-ai api id.
func (a API) String() string { return string(a) }
