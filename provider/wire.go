package provider

import (
	"bytes"

	"github.com/ocbench/ocbench/llm"
)

// Wire is one of the streaming wire formats a Decoder understands.
type Wire uint8

const (
	// WireOpenAIChat is OpenAI Chat Completions (and compatible servers).
	WireOpenAIChat Wire = iota
	// WireOpenAIResponses is the OpenAI Responses API.
	WireOpenAIResponses
	// WireAnthropic is the Anthropic Messages API.
	WireAnthropic
	numWires
)

var wireNames = [numWires]string{"openai-chat", "openai-responses", "anthropic"}
var wireAPIs = [numWires]llm.API{llm.APIOpenAICompletions, llm.APIOpenAIResponses, llm.APIAnthropicMessages}
var wirePaths = [numWires]string{"/v1/chat/completions", "/v1/responses", "/v1/messages"}

// Wires lists every wire, in order.
var Wires = [numWires]Wire{WireOpenAIChat, WireOpenAIResponses, WireAnthropic}

// String returns the wire's short name: "openai-chat", "openai-responses"
// or "anthropic".
func (w Wire) String() string {
	if w < numWires {
		return wireNames[w]
	}
	return "unknown"
}

// API returns pi-ai's api id of the wire: "openai-completions",
// "openai-responses" or "anthropic-messages".
func (w Wire) API() llm.API {
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

// ParseWire accepts a wire name (as String returns it) or a pi-ai api id
// (as API returns it).
func ParseWire(s string) (Wire, bool) {
	for i := Wire(0); i < numWires; i++ {
		if s == wireNames[i] || s == string(wireAPIs[i]) {
			return i, true
		}
	}
	switch s {
	case "openai", "chat", "openai-completions-compatible":
		return WireOpenAIChat, true
	case "responses":
		return WireOpenAIResponses, true
	case "anthropic-messages-compatible", "messages", "claude":
		return WireAnthropic, true
	}
	return 0, false
}

// WireOf returns the wire of a pi-ai api id: the one mapping from the
// llm.API a request names to the decoder and encoder that serve it.
func WireOf(api llm.API) (Wire, bool) {
	for i := Wire(0); i < numWires; i++ {
		if api == wireAPIs[i] {
			return i, true
		}
	}
	return 0, false
}

// DetectWire guesses the wire format from the first bytes of a response
// body (one or a few events are enough). ok is false when head shows no
// sign of any of the three formats.
func DetectWire(head []byte) (Wire, bool) {
	for len(head) > 0 {
		var line []byte
		if i := bytes.IndexByte(head, '\n'); i >= 0 {
			line, head = head[:i], head[i+1:]
		} else {
			line, head = head, nil
		}
		line = bytes.TrimRight(line, "\r")
		var val []byte
		switch {
		case bytes.HasPrefix(line, []byte("event:")):
			val = bytes.TrimSpace(line[len("event:"):])
			if w, ok := wireOfType(val); ok {
				return w, true
			}
			continue
		case bytes.HasPrefix(line, []byte("data:")):
			val = bytes.TrimSpace(line[len("data:"):])
		default:
			continue
		}
		if bytes.Contains(val, []byte(`"chat.completion.chunk"`)) || bytes.Contains(val, []byte(`"choices"`)) {
			return WireOpenAIChat, true
		}
		if i := bytes.Index(val, []byte(`"type"`)); i >= 0 {
			rest := bytes.TrimLeft(val[i+len(`"type"`):], " \t")
			if len(rest) > 0 && rest[0] == ':' {
				rest = bytes.TrimLeft(rest[1:], " \t")
				if len(rest) > 1 && rest[0] == '"' {
					if j := bytes.IndexByte(rest[1:], '"'); j >= 0 {
						if w, ok := wireOfType(rest[1 : 1+j]); ok {
							return w, true
						}
					}
				}
			}
		}
	}
	return 0, false
}

func wireOfType(t []byte) (Wire, bool) {
	if bytes.HasPrefix(t, []byte("response.")) {
		return WireOpenAIResponses, true
	}
	switch string(t) {
	case "message_start", "content_block_start", "content_block_delta", "content_block_stop",
		"message_delta", "message_stop", "ping":
		return WireAnthropic, true
	}
	return 0, false
}
