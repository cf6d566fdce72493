package wireenc

// Wire is a provider wire format that an Encoder can write. Its values and
// names match package provider's Wire, so the two convert through
// provider.ParseWire(w.String()).
type Wire uint8

const (
	// OpenAIChat is OpenAI Chat Completions (POST /v1/chat/completions).
	OpenAIChat Wire = iota
	// OpenAIResponses is the OpenAI Responses API (POST /v1/responses).
	OpenAIResponses
	// Anthropic is the Anthropic Messages API (POST /v1/messages).
	Anthropic
	numWires
)

var (
	wireNames = [numWires]string{"openai-chat", "openai-responses", "anthropic"}
	wireAPIs  = [numWires]string{"openai-completions", "openai-responses", "anthropic-messages"}
	wirePaths = [numWires]string{"/v1/chat/completions", "/v1/responses", "/v1/messages"}
)

// Wires lists every wire, in order.
var Wires = [numWires]Wire{OpenAIChat, OpenAIResponses, Anthropic}

// String returns the wire's short name: "openai-chat", "openai-responses"
// or "anthropic".
func (w Wire) String() string {
	if w < numWires {
		return wireNames[w]
	}
	return "unknown"
}

// API returns pi-ai's api id of the wire ("openai-completions",
// "openai-responses", "anthropic-messages").
func (w Wire) API() string {
	if w < numWires {
		return wireAPIs[w]
	}
	return ""
}

// Path returns the HTTP path the wire is served on, e.g. "/v1/messages".
func (w Wire) Path() string {
	if w < numWires {
		return wirePaths[w]
	}
	return ""
}

// ParseWire accepts a wire's short name, its pi-ai api id, or one of the
// aliases "openai", "chat", "responses", "messages".
func ParseWire(s string) (Wire, bool) {
	for i := Wire(0); i < numWires; i++ {
		if s == wireNames[i] || s == wireAPIs[i] {
			return i, true
		}
	}
	switch s {
	case "openai", "chat":
		return OpenAIChat, true
	case "responses":
		return OpenAIResponses, true
	case "messages", "claude":
		return Anthropic, true
	}
	return 0, false
}

// Meta is the identity of one encoded answer: ID is the provider's response
// id ("chatcmpl-…", "resp_…", "msg_…"), Model the model name and Created
// the Unix time in seconds.
type Meta struct {
	ID      string
	Model   string
	Created int64
}

// ToolArgsMode says when an Encoder writes tool-call arguments.
type ToolArgsMode uint8

const (
	// StreamArgs forwards every toolcall_delta as a wire argument fragment.
	StreamArgs ToolArgsMode = iota
	// BufferArgs writes nothing for toolcall_start and toolcall_delta and
	// the whole call at toolcall_end, with the block's Arguments (or its
	// RawArgs when Arguments is empty): the mode for streaming repaired
	// tool calls.
	BufferArgs
)

// Options tune an Encoder. The zero value streams arguments, writes the
// chat usage chunk and [DONE], and sends no Anthropic ping.
type Options struct {
	ToolArgs ToolArgsMode
	// NoUsage omits the chat usage chunk, as OpenAI does when the request
	// did not set stream_options.include_usage.
	NoUsage bool
	// NoDoneSentinel omits the chat "data: [DONE]" line, as some servers do.
	NoDoneSentinel bool
	// Ping writes an Anthropic ping event after message_start, as the API
	// does.
	Ping bool
}
