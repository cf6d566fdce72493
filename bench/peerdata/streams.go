package peerdata

import (
	"github.com/ocbench/ocbench/provider"
	"github.com/ocbench/ocbench/provider/synth"
)

// StreamEvents and StreamSeed fix the synthetic streams every decode and
// chain scenario reads, in bench and in the peers: 2,000 events, the
// length of a long agent reply (text deltas and two tool calls).
const (
	StreamEvents = 2000
	StreamSeed   = 1
)

// WireStream is one synthetic input: its wire and generated stream.
type WireStream struct {
	Name   string // scenario input name, e.g. "openai-chat"
	Wire   provider.Wire
	Stream *synth.Stream
}

// WireStreams returns the synthetic stream of each wire format.
func WireStreams() []WireStream {
	return []WireStream{
		{"openai-chat", provider.WireOpenAIChat, synth.OpenAIChat(StreamEvents, StreamSeed)},
		{"anthropic", provider.WireAnthropic, synth.Anthropic(StreamEvents, StreamSeed)},
		{"openai-responses", provider.WireOpenAIResponses, synth.Responses(StreamEvents, StreamSeed)},
	}
}
