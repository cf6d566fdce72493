package wireenc

import (
	"strconv"

	"github.com/ocbench/ocbench/llm"
)

const chatChoiceTail = `},"logprobs":null,"finish_reason":null}]}` + "\n\n"

func (e *Encoder) appendChatStart(dst []byte) []byte {
	dst = append(dst, e.prefix...)
	dst = append(dst, `{"index":0,"delta":{"role":"assistant","content":""`...)
	return append(dst, chatChoiceTail...)
}

func (e *Encoder) appendChatToolHead(dst []byte, idx int) []byte {
	dst = append(dst, e.prefix...)
	dst = append(dst, `{"index":0,"delta":{"tool_calls":[{`...)
	if idx != NoIndex {
		dst = append(dst, `"index":`...)
		dst = strconv.AppendInt(dst, int64(idx), 10)
		dst = append(dst, ',')
	}
	return dst
}

func (e *Encoder) appendChatBlockStart(dst []byte, idx int, b *llm.Block) []byte {
	if b.Type != llm.BlockToolCall {
		return dst // text and reasoning have no start marker on this wire
	}
	dst = e.appendChatToolHead(dst, idx)
	dst = append(dst, `"id":`...)
	dst = llm.AppendJSONString(dst, b.ID)
	dst = append(dst, `,"type":"function","function":{"name":`...)
	dst = llm.AppendJSONString(dst, b.Name)
	dst = append(dst, `,"arguments":""}}]`...)
	return append(dst, chatChoiceTail...)
}

func (e *Encoder) appendChatDelta(dst []byte, idx int, t llm.EventType, delta []byte) []byte {
	switch t {
	case llm.EventTextDelta:
		dst = append(dst, e.prefix...)
		dst = append(dst, `{"index":0,"delta":{"content":`...)
		dst = llm.AppendJSONString(dst, delta)
	case llm.EventThinkingDelta:
		dst = append(dst, e.prefix...)
		dst = append(dst, `{"index":0,"delta":{"reasoning_content":`...)
		dst = llm.AppendJSONString(dst, delta)
	case llm.EventToolCallDelta:
		dst = e.appendChatToolHead(dst, idx)
		dst = append(dst, `"function":{"arguments":`...)
		dst = llm.AppendJSONString(dst, delta)
		dst = append(dst, "}}]"...)
	default:
		return dst
	}
	return append(dst, chatChoiceTail...)
}

// ChatFinishReason returns OpenAI's finish_reason for r: stop, length,
// tool_calls (and stop for the failure reasons, which have none).
func ChatFinishReason(r llm.StopReason) string {
	switch r {
	case llm.StopLength:
		return "length"
	case llm.StopToolUse:
		return "tool_calls"
	}
	return "stop"
}

func (e *Encoder) appendChatDone(dst []byte, m *llm.Message, raw string) []byte {
	if raw == "" {
		raw = ChatFinishReason(m.StopReason)
	}
	dst = append(dst, e.prefix...)
	dst = append(dst, `{"index":0,"delta":{},"logprobs":null,"finish_reason":`...)
	dst = llm.AppendJSONString(dst, raw)
	dst = append(dst, "}]}\n\n"...)
	if !e.opts.NoUsage {
		dst = append(dst, e.prefix...)
		dst = append(dst, `],"usage":`...)
		dst = appendChatUsage(dst, &m.Usage)
		dst = append(dst, "}\n\n"...)
	}
	if !e.opts.NoDoneSentinel {
		dst = append(dst, "data: [DONE]\n\n"...)
	}
	return dst
}

// appendChatUsage writes u as an OpenAI usage object: prompt_tokens counts
// cache reads and writes, cached_tokens is the read part of it.
func appendChatUsage(dst []byte, u *llm.Usage) []byte {
	prompt := u.Input + u.CacheRead + u.CacheWrite
	dst = append(dst, `{"prompt_tokens":`...)
	dst = strconv.AppendInt(dst, prompt, 10)
	dst = append(dst, `,"completion_tokens":`...)
	dst = strconv.AppendInt(dst, u.Output, 10)
	dst = append(dst, `,"total_tokens":`...)
	dst = strconv.AppendInt(dst, prompt+u.Output, 10)
	dst = append(dst, `,"prompt_tokens_details":{"cached_tokens":`...)
	dst = strconv.AppendInt(dst, u.CacheRead, 10)
	if u.CacheWrite != 0 {
		dst = append(dst, `,"cache_write_tokens":`...)
		dst = strconv.AppendInt(dst, u.CacheWrite, 10)
	}
	dst = append(dst, `},"completion_tokens_details":{"reasoning_tokens":`...)
	dst = strconv.AppendInt(dst, u.Reasoning, 10)
	return append(dst, "}}"...)
}
