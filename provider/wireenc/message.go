package wireenc

import (
	"strconv"

	"github.com/ocbench/ocbench/llm"
	"github.com/valyala/fastjson"
)

// AppendMessage appends the non-streaming JSON answer that carries m on
// e's wire (with e's Meta): a chat.completion object, a Responses response
// object, or an Anthropic message object. The raw stop reason, when not
// empty, replaces the one mapped from m.StopReason, as in AppendDoneRaw.
// It does not change e's streaming state beyond its scratch buffers.
func (e *Encoder) AppendMessage(dst []byte, m *llm.Message, raw string) []byte {
	switch e.wire {
	case OpenAIChat:
		return e.appendChatMessage(dst, m, raw)
	case Anthropic:
		return e.appendAnthropicMessage(dst, m, raw)
	case OpenAIResponses:
		status, reason := responsesStatus(m.StopReason, raw)
		if m.StopReason == llm.StopError || m.StopReason == llm.StopAborted {
			status, reason = "failed", ""
		}
		return e.appendResponseBody(dst, m, status, reason)
	}
	return dst
}

var emptyObject = []byte("{}")

// AppendMessage is Encoder.AppendMessage with a fresh Encoder: handy, but
// it allocates; servers keep an Encoder.
func AppendMessage(dst []byte, w Wire, meta Meta, m *llm.Message) []byte {
	var e Encoder
	e.Reset(w, meta, Options{})
	return e.AppendMessage(dst, m, "")
}

func (e *Encoder) appendChatMessage(dst []byte, m *llm.Message, raw string) []byte {
	if raw == "" {
		raw = ChatFinishReason(m.StopReason)
	}
	dst = append(dst, `{"id":`...)
	dst = llm.AppendJSONString(dst, e.meta.ID)
	dst = append(dst, `,"object":"chat.completion","created":`...)
	dst = strconv.AppendInt(dst, e.meta.Created, 10)
	dst = append(dst, `,"model":`...)
	dst = llm.AppendJSONString(dst, e.meta.Model)
	dst = append(dst, `,"choices":[{"index":0,"message":{"role":"assistant","content":`...)
	text, reasoning, tools := 0, 0, 0
	for i := range m.Content {
		switch m.Content[i].Type {
		case llm.BlockText:
			text++
		case llm.BlockThinking:
			reasoning++
		case llm.BlockToolCall:
			tools++
		}
	}
	if text == 0 {
		dst = append(dst, "null"...)
	} else {
		dst = appendJoined(dst, m, llm.BlockText)
	}
	if reasoning > 0 {
		dst = append(dst, `,"reasoning_content":`...)
		dst = appendJoined(dst, m, llm.BlockThinking)
	}
	if tools > 0 {
		dst = append(dst, `,"tool_calls":[`...)
		n := 0
		for i := range m.Content {
			b := &m.Content[i]
			if b.Type != llm.BlockToolCall {
				continue
			}
			if n > 0 {
				dst = append(dst, ',')
			}
			n++
			dst = append(dst, `{"id":`...)
			dst = llm.AppendJSONString(dst, b.ID)
			dst = append(dst, `,"type":"function","function":{"name":`...)
			dst = llm.AppendJSONString(dst, b.Name)
			dst = append(dst, `,"arguments":`...)
			dst = llm.AppendJSONString(dst, FinalArgs(b))
			dst = append(dst, "}}"...)
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"refusal":null},"logprobs":null,"finish_reason":`...)
	dst = llm.AppendJSONString(dst, raw)
	dst = append(dst, `}],"usage":`...)
	dst = appendChatUsage(dst, &m.Usage)
	return append(dst, '}')
}

// appendJoined writes the concatenated text of m's blocks of type t as one
// JSON string, without building it first.
func appendJoined(dst []byte, m *llm.Message, t llm.BlockType) []byte {
	dst = append(dst, '"')
	for i := range m.Content {
		if m.Content[i].Type == t {
			s := len(dst)
			dst = llm.AppendJSONString(dst, m.Content[i].Text)
			// keep the escaped body, drop its quotes
			copy(dst[s:], dst[s+1:len(dst)-1])
			dst = dst[:len(dst)-2]
		}
	}
	return append(dst, '"')
}

func (e *Encoder) appendAnthropicMessage(dst []byte, m *llm.Message, raw string) []byte {
	if raw == "" {
		raw = AnthropicStopReason(m.StopReason)
	}
	dst = append(dst, `{"id":`...)
	dst = llm.AppendJSONString(dst, e.meta.ID)
	dst = append(dst, `,"type":"message","role":"assistant","model":`...)
	dst = llm.AppendJSONString(dst, e.meta.Model)
	dst = append(dst, `,"content":[`...)
	n := 0
	for i := range m.Content {
		b := &m.Content[i]
		if b.Type == llm.BlockImage {
			continue
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		switch b.Type {
		case llm.BlockText:
			dst = append(dst, `{"type":"text","text":`...)
			dst = llm.AppendJSONString(dst, b.Text)
		case llm.BlockThinking:
			if b.Redacted {
				dst = append(dst, `{"type":"redacted_thinking","data":`...)
				dst = llm.AppendJSONString(dst, b.Signature)
			} else {
				dst = append(dst, `{"type":"thinking","thinking":`...)
				dst = llm.AppendJSONString(dst, b.Text)
				dst = append(dst, `,"signature":`...)
				dst = llm.AppendJSONString(dst, b.Signature)
			}
		case llm.BlockToolCall:
			dst = append(dst, `{"type":"tool_use","id":`...)
			dst = llm.AppendJSONString(dst, b.ID)
			dst = append(dst, `,"name":`...)
			dst = llm.AppendJSONString(dst, b.Name)
			dst = append(dst, `,"input":`...)
			args := FinalArgs(b)
			if len(args) == 0 || fastjson.ValidateBytes(args) != nil {
				args = emptyObject
			}
			dst = append(dst, args...)
		}
		dst = append(dst, '}')
	}
	dst = append(dst, `],"stop_reason":`...)
	dst = llm.AppendJSONString(dst, raw)
	dst = append(dst, `,"stop_sequence":null,"usage":`...)
	dst = appendAnthropicUsage(dst, &m.Usage)
	return append(dst, '}')
}
