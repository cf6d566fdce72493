package wireenc

import "github.com/ocbench/ocbench/provider"

// Wire is a provider wire format; it is package provider's, so that the
// decoder and the encoder of one wire are named by one value.
type Wire = provider.Wire

// The wires an Encoder writes.
const (
	// OpenAIChat is OpenAI Chat Completions (POST /v1/chat/completions).
	OpenAIChat = provider.WireOpenAIChat
	// OpenAIResponses is the OpenAI Responses API (POST /v1/responses).
	OpenAIResponses = provider.WireOpenAIResponses
	// Anthropic is the Anthropic Messages API (POST /v1/messages).
	Anthropic = provider.WireAnthropic
)

// Wires lists every wire, in order.
var Wires = provider.Wires

// ParseWire accepts a wire's short name, its pi-ai api id, or an alias
// ("openai", "chat", "responses", "messages", "claude").
func ParseWire(s string) (Wire, bool) { return provider.ParseWire(s) }

// Meta is the identity of one encoded answer: ID is the provider's response
// id ("chatcmpl-…", "resp_…", "msg_…"), Model the model name and Created
// the Unix time in seconds. Stream, when not zero, numbers the answer
// among those of one ID: the item ids the Encoder derives carry it
// ("fc_<base>_<stream>_<index>"), so that the items of two answers differ
// as a real provider's do, without a string made per answer.
type Meta struct {
	ID      string
	Model   string
	Created int64
	Stream  uint64
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
