package provider

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"

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

// DetectWire tells the wire format from the first bytes of a response body
// as OpenClaw's replay tool does: among the first 40 event and data fields
// (sseFields), an event name that starts with "response." (Responses) or
// "message_" or "content_block_", or is "ping" (Anthropic), or data that
// parses as a JSON object whose object is "chat.completion.chunk" or whose
// choices is an array (Chat Completions), or whose type starts with
// "response." or "message_" or "content_block_". ok is false when head
// shows none of them; the replay tool then takes Chat Completions.
func DetectWire(head []byte) (w Wire, ok bool) {
	sseFields(head, 40, func(event bool, v []byte) bool {
		if event {
			w, ok = wireOfType(v)
			return ok
		}
		j, isObj := sniffObject(v)
		if !isObj {
			return false
		}
		if s, _ := j["object"].(string); s == "chat.completion.chunk" {
			w, ok = WireOpenAIChat, true
		} else if _, arr := j["choices"].([]any); arr {
			w, ok = WireOpenAIChat, true
		} else if t, isStr := j["type"].(string); isStr && (strings.HasPrefix(t, "response.") || strings.HasPrefix(t, "message_") || strings.HasPrefix(t, "content_block_")) {
			w, ok = wireOfType([]byte(t))
		}
		return ok
	})
	return w, ok
}

// DetectModel returns the model a response body names as OpenClaw's replay
// tool finds it: among the first 200 event and data fields, the first data
// that parses as JSON with a non-empty string model, message.model or
// response.model (in that order); "" when head names none. fields is the
// number of fields head was searched in: a longer head can still name a
// model when it is under 200 (and head is not the whole body).
func DetectModel(head []byte) (model string, fields int) {
	fields = sseFields(head, 200, func(event bool, v []byte) bool {
		if event {
			return false
		}
		j, isObj := sniffObject(v)
		if !isObj {
			return false
		}
		for _, m := range []any{j["model"], member(j["message"], "model"), member(j["response"], "model")} {
			if s, isStr := m.(string); isStr && s != "" {
				model = s
				return true
			}
		}
		return false
	})
	return model, fields
}

func member(v any, key string) any {
	if o, ok := v.(map[string]any); ok {
		return o[key]
	}
	return nil
}

// sniffObject parses v as one JSON value (numbers kept as text, so that
// none is out of range); isObj is false when it is not JSON or not an
// object.
func sniffObject(v []byte) (j map[string]any, isObj bool) {
	if !json.Valid(v) {
		return nil, false
	}
	d := json.NewDecoder(bytes.NewReader(v))
	d.UseNumber()
	var x any
	if d.Decode(&x) != nil {
		return nil, false
	}
	j, isObj = x.(map[string]any)
	return j, isObj
}

// sseFields calls f with the value of each of the first limit "event:" and
// "data:" lines of head, lines ending at "\r\n", "\r" or "\n", the value
// without one leading whitespace character (a JavaScript \s), until f
// returns true; it returns the number of fields f was called with. A line
// cut off by the end of head counts as it is.
func sseFields(head []byte, limit int, f func(event bool, value []byte) bool) int {
	n := 0
	for len(head) > 0 && n < limit {
		i := bytes.IndexAny(head, "\r\n")
		var line []byte
		if i < 0 {
			line, head = head, nil
		} else {
			line = head[:i]
			if head[i] == '\r' && i+1 < len(head) && head[i+1] == '\n' {
				i++
			}
			head = head[i+1:]
		}
		var event bool
		switch {
		case bytes.HasPrefix(line, []byte("event:")):
			event, line = true, line[len("event:"):]
		case bytes.HasPrefix(line, []byte("data:")):
			line = line[len("data:"):]
		default:
			continue
		}
		if r, size := utf8.DecodeRune(line); r == '\uFEFF' || r != 0x85 && unicode.IsSpace(r) {
			line = line[size:]
		}
		n++
		if f(event, line) {
			break
		}
	}
	return n
}

func wireOfType(t []byte) (Wire, bool) {
	switch {
	case bytes.HasPrefix(t, []byte("response.")):
		return WireOpenAIResponses, true
	case bytes.HasPrefix(t, []byte("message_")), bytes.HasPrefix(t, []byte("content_block_")), string(t) == "ping":
		return WireAnthropic, true
	}
	return 0, false
}
