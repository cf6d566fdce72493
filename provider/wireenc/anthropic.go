package wireenc

import (
	"strconv"

	"github.com/ocbench/ocbench/llm"
)

func (e *Encoder) appendAnthropicStart(dst []byte, m *llm.Message) []byte {
	dst = append(dst, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":"...)
	dst = llm.AppendJSONString(dst, e.meta.ID)
	dst = append(dst, `,"type":"message","role":"assistant","model":`...)
	dst = llm.AppendJSONString(dst, e.meta.Model)
	dst = append(dst, `,"content":[],"stop_reason":null,"stop_sequence":null,"usage":`...)
	dst = appendAnthropicUsage(dst, &m.Usage)
	dst = append(dst, "}}\n\n"...)
	if e.opts.Ping {
		dst = AppendPing(dst)
	}
	return dst
}

// AppendPing appends an Anthropic ping event.
func AppendPing(dst []byte) []byte {
	return append(dst, "event: ping\ndata: {\"type\":\"ping\"}\n\n"...)
}

func appendAnthropicUsage(dst []byte, u *llm.Usage) []byte {
	dst = append(dst, `{"input_tokens":`...)
	dst = strconv.AppendInt(dst, u.Input, 10)
	dst = append(dst, `,"cache_creation_input_tokens":`...)
	dst = strconv.AppendInt(dst, u.CacheWrite, 10)
	dst = append(dst, `,"cache_read_input_tokens":`...)
	dst = strconv.AppendInt(dst, u.CacheRead, 10)
	dst = append(dst, `,"output_tokens":`...)
	dst = strconv.AppendInt(dst, u.Output, 10)
	return append(dst, '}')
}

func (e *Encoder) appendAnthropicBlockStart(dst []byte, idx int, b *llm.Block) []byte {
	dst = append(dst, "event: content_block_start\ndata: {\"type\":\"content_block_start\""...)
	dst = appendIndexField(dst, "index", idx)
	dst = append(dst, `,"content_block":`...)
	switch b.Type {
	case llm.BlockThinking:
		if b.Redacted {
			dst = append(dst, `{"type":"redacted_thinking","data":`...)
			dst = llm.AppendJSONString(dst, b.Signature)
			dst = append(dst, '}')
		} else {
			dst = append(dst, `{"type":"thinking","thinking":"","signature":""}`...)
		}
	case llm.BlockToolCall:
		dst = append(dst, `{"type":"tool_use","id":`...)
		dst = llm.AppendJSONString(dst, b.ID)
		dst = append(dst, `,"name":`...)
		dst = llm.AppendJSONString(dst, b.Name)
		dst = append(dst, `,"input":{}}`...)
	default:
		dst = append(dst, `{"type":"text","text":""}`...)
	}
	return append(dst, "}\n\n"...)
}

func (e *Encoder) appendAnthropicDeltaHead(dst []byte, idx int) []byte {
	dst = append(dst, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\""...)
	dst = appendIndexField(dst, "index", idx)
	return append(dst, `,"delta":{"type":`...)
}

func (e *Encoder) appendAnthropicDelta(dst []byte, idx int, t llm.EventType, delta []byte, b *llm.Block) []byte {
	switch t {
	case llm.EventTextDelta:
		dst = e.appendAnthropicDeltaHead(dst, idx)
		dst = append(dst, `"text_delta","text":`...)
	case llm.EventThinkingDelta:
		if b != nil && b.Redacted {
			return dst
		}
		dst = e.appendAnthropicDeltaHead(dst, idx)
		dst = append(dst, `"thinking_delta","thinking":`...)
	case llm.EventToolCallDelta:
		dst = e.appendAnthropicDeltaHead(dst, idx)
		dst = append(dst, `"input_json_delta","partial_json":`...)
	default:
		return dst
	}
	dst = llm.AppendJSONString(dst, delta)
	return append(dst, "}}\n\n"...)
}

func (e *Encoder) appendAnthropicBlockEnd(dst []byte, idx int, b *llm.Block) []byte {
	if b.Type == llm.BlockThinking && !b.Redacted && len(b.Signature) > 0 {
		dst = e.appendAnthropicDeltaHead(dst, idx)
		dst = append(dst, `"signature_delta","signature":`...)
		dst = llm.AppendJSONString(dst, b.Signature)
		dst = append(dst, "}}\n\n"...)
	}
	dst = append(dst, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\""...)
	dst = appendIndexField(dst, "index", idx)
	return append(dst, "}\n\n"...)
}

// AnthropicStopReason returns Anthropic's stop_reason for r: end_turn,
// max_tokens or tool_use.
func AnthropicStopReason(r llm.StopReason) string {
	switch r {
	case llm.StopLength:
		return "max_tokens"
	case llm.StopToolUse:
		return "tool_use"
	}
	return "end_turn"
}

func (e *Encoder) appendAnthropicDone(dst []byte, m *llm.Message, raw string) []byte {
	if raw == "" {
		raw = AnthropicStopReason(m.StopReason)
	}
	dst = append(dst, "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":"...)
	dst = llm.AppendJSONString(dst, raw)
	dst = append(dst, `,"stop_sequence":null`...)
	if raw == "refusal" && m.ErrorMessage != "" {
		dst = append(dst, `,"stop_details":{"type":"refusal","explanation":`...)
		dst = llm.AppendJSONString(dst, m.ErrorMessage)
		dst = append(dst, '}')
	}
	dst = append(dst, `},"usage":`...)
	dst = appendAnthropicUsage(dst, &m.Usage)
	dst = append(dst, "}\n\n"...)
	return append(dst, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"...)
}
