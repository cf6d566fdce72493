package wireenc

import (
	"bytes"
	"strconv"

	"github.com/ocbench/ocbench/llm"
)

// appendItemID appends the JSON string id of the output item at wire index
// idx: "<kind>_<base>_<idx>" ("<kind>_<base>_<stream>_<idx>" with a
// Meta.Stream), or for a tool call whose ID is pi-ai's
// "call_id|item_id" pair, its item id.
func (e *Encoder) appendItemID(dst []byte, idx int, b *llm.Block) []byte {
	if b != nil && b.Type == llm.BlockToolCall {
		if i := bytes.IndexByte(b.ID, '|'); i >= 0 {
			return llm.AppendJSONString(dst, b.ID[i+1:])
		}
	}
	kind := "msg_"
	if b != nil {
		switch b.Type {
		case llm.BlockThinking:
			kind = "rs_"
		case llm.BlockToolCall:
			kind = "fc_"
		}
	}
	// Fast path: the deltas of one item ask for the same id in a row.
	if e.idValid && e.idIdx == idx && e.idKind == kind {
		return append(dst, e.idJSON...)
	}
	s := append(e.scratch[:0], kind...)
	s = append(s, e.base...)
	s = append(s, '_')
	if e.meta.Stream != 0 {
		s = strconv.AppendUint(s, e.meta.Stream, 10)
		s = append(s, '_')
	}
	s = strconv.AppendInt(s, int64(idx), 10)
	e.scratch = s
	e.idJSON = llm.AppendJSONString(e.idJSON[:0], s)
	e.idValid, e.idIdx, e.idKind = true, idx, kind
	return append(dst, e.idJSON...)
}

// callID returns the call_id of a tool call: its ID, or the part before '|'.
func callID(b *llm.Block) []byte {
	if i := bytes.IndexByte(b.ID, '|'); i >= 0 {
		return b.ID[:i]
	}
	return b.ID
}

func (e *Encoder) appendEventHead(dst []byte, name string) []byte {
	dst = append(dst, "event: "...)
	dst = append(dst, name...)
	dst = append(dst, "\ndata: {\"type\":\""...)
	dst = append(dst, name...)
	return append(dst, '"')
}

func (e *Encoder) appendResponseHead(dst []byte, status string) []byte {
	dst = append(dst, `{"id":`...)
	dst = llm.AppendJSONString(dst, e.meta.ID)
	dst = append(dst, `,"object":"response","created_at":`...)
	dst = strconv.AppendInt(dst, e.meta.Created, 10)
	dst = append(dst, `,"status":"`...)
	dst = append(dst, status...)
	dst = append(dst, `","model":`...)
	return llm.AppendJSONString(dst, e.meta.Model)
}

func (e *Encoder) appendResponsesStart(dst []byte) []byte {
	for _, name := range [...]string{"response.created", "response.in_progress"} {
		dst = e.appendEventHead(dst, name)
		dst = append(dst, `,"response":`...)
		dst = e.appendResponseHead(dst, "in_progress")
		dst = append(dst, `,"error":null,"incomplete_details":null,"output":[],"usage":null}`...)
		dst = e.appendSeqEnd(dst)
	}
	return dst
}

func (e *Encoder) appendItemHead(dst []byte, name string, idx int) []byte {
	dst = e.appendEventHead(dst, name)
	return appendIndexField(dst, "output_index", idx)
}

func (e *Encoder) appendResponsesBlockStart(dst []byte, idx int, b *llm.Block) []byte {
	dst = e.appendItemHead(dst, "response.output_item.added", idx)
	dst = append(dst, `,"item":`...)
	dst = e.appendItem(dst, idx, b, false)
	dst = e.appendSeqEnd(dst)
	switch b.Type {
	case llm.BlockText:
		dst = e.appendItemHead(dst, "response.content_part.added", idx)
		dst = append(dst, `,"item_id":`...)
		dst = e.appendItemID(dst, idx, b)
		dst = append(dst, `,"content_index":0,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":""}`...)
		dst = e.appendSeqEnd(dst)
	case llm.BlockThinking:
		dst = e.appendItemHead(dst, "response.reasoning_summary_part.added", idx)
		dst = append(dst, `,"item_id":`...)
		dst = e.appendItemID(dst, idx, b)
		dst = append(dst, `,"summary_index":0,"part":{"type":"summary_text","text":""}`...)
		dst = e.appendSeqEnd(dst)
	}
	return dst
}

// appendItem writes an output item: in progress (empty) or done (with the
// block's whole content).
func (e *Encoder) appendItem(dst []byte, idx int, b *llm.Block, done bool) []byte {
	dst = append(dst, `{"id":`...)
	dst = e.appendItemID(dst, idx, b)
	switch b.Type {
	case llm.BlockThinking:
		dst = append(dst, `,"type":"reasoning","summary":[`...)
		if done {
			dst = append(dst, `{"type":"summary_text","text":`...)
			dst = llm.AppendJSONString(dst, b.Text)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
		if done && len(b.Signature) > 0 {
			dst = append(dst, `,"encrypted_content":`...)
			dst = llm.AppendJSONString(dst, b.Signature)
		}
	case llm.BlockToolCall:
		dst = append(dst, `,"type":"function_call","status":`...)
		if done {
			dst = append(dst, `"completed","arguments":`...)
			dst = llm.AppendJSONString(dst, FinalArgs(b))
		} else {
			dst = append(dst, `"in_progress","arguments":""`...)
		}
		dst = append(dst, `,"call_id":`...)
		dst = llm.AppendJSONString(dst, callID(b))
		dst = append(dst, `,"name":`...)
		dst = llm.AppendJSONString(dst, b.Name)
	default:
		dst = append(dst, `,"type":"message","status":`...)
		if done {
			dst = append(dst, `"completed","content":[`...)
			dst = appendOutputText(dst, b.Text)
			dst = append(dst, ']')
		} else {
			dst = append(dst, `"in_progress","content":[]`...)
		}
		dst = append(dst, `,"role":"assistant"`...)
	}
	return append(dst, '}')
}

func appendOutputText(dst, text []byte) []byte {
	dst = append(dst, `{"type":"output_text","annotations":[],"logprobs":[],"text":`...)
	dst = llm.AppendJSONString(dst, text)
	return append(dst, '}')
}

func (e *Encoder) appendResponsesDelta(dst []byte, idx int, t llm.EventType, delta []byte, b *llm.Block) []byte {
	switch t {
	case llm.EventTextDelta:
		dst = e.appendItemHead(dst, "response.output_text.delta", idx)
		dst = append(dst, `,"item_id":`...)
		dst = e.appendItemID(dst, idx, b)
		dst = append(dst, `,"content_index":0,"logprobs":[]`...)
	case llm.EventThinkingDelta:
		dst = e.appendItemHead(dst, "response.reasoning_summary_text.delta", idx)
		dst = append(dst, `,"item_id":`...)
		dst = e.appendItemID(dst, idx, b)
		dst = append(dst, `,"summary_index":0`...)
	case llm.EventToolCallDelta:
		dst = e.appendItemHead(dst, "response.function_call_arguments.delta", idx)
		dst = append(dst, `,"item_id":`...)
		dst = e.appendItemID(dst, idx, b)
	default:
		return dst
	}
	dst = append(dst, `,"delta":`...)
	dst = llm.AppendJSONString(dst, delta)
	return e.appendSeqEnd(dst)
}

func (e *Encoder) appendResponsesBlockEnd(dst []byte, idx int, b *llm.Block) []byte {
	switch b.Type {
	case llm.BlockText:
		dst = e.appendItemHead(dst, "response.output_text.done", idx)
		dst = append(dst, `,"item_id":`...)
		dst = e.appendItemID(dst, idx, b)
		dst = append(dst, `,"content_index":0,"logprobs":[],"text":`...)
		dst = llm.AppendJSONString(dst, b.Text)
		dst = e.appendSeqEnd(dst)
		dst = e.appendItemHead(dst, "response.content_part.done", idx)
		dst = append(dst, `,"item_id":`...)
		dst = e.appendItemID(dst, idx, b)
		dst = append(dst, `,"content_index":0,"part":`...)
		dst = appendOutputText(dst, b.Text)
		dst = e.appendSeqEnd(dst)
	case llm.BlockThinking:
		dst = e.appendItemHead(dst, "response.reasoning_summary_text.done", idx)
		dst = append(dst, `,"item_id":`...)
		dst = e.appendItemID(dst, idx, b)
		dst = append(dst, `,"summary_index":0,"text":`...)
		dst = llm.AppendJSONString(dst, b.Text)
		dst = e.appendSeqEnd(dst)
		dst = e.appendItemHead(dst, "response.reasoning_summary_part.done", idx)
		dst = append(dst, `,"item_id":`...)
		dst = e.appendItemID(dst, idx, b)
		dst = append(dst, `,"summary_index":0,"part":{"type":"summary_text","text":`...)
		dst = llm.AppendJSONString(dst, b.Text)
		dst = append(dst, '}')
		dst = e.appendSeqEnd(dst)
	case llm.BlockToolCall:
		dst = e.appendItemHead(dst, "response.function_call_arguments.done", idx)
		dst = append(dst, `,"item_id":`...)
		dst = e.appendItemID(dst, idx, b)
		dst = append(dst, `,"arguments":`...)
		dst = llm.AppendJSONString(dst, FinalArgs(b))
		dst = e.appendSeqEnd(dst)
	}
	dst = e.appendItemHead(dst, "response.output_item.done", idx)
	dst = append(dst, `,"item":`...)
	dst = e.appendItem(dst, idx, b, true)
	return e.appendSeqEnd(dst)
}

// appendOutput writes the output array of m's blocks, numbered as they
// were streamed (or in content order when they were not).
func (e *Encoder) appendOutput(dst []byte, m *llm.Message) []byte {
	dst = append(dst, '[')
	n := 0
	for i := range m.Content {
		b := &m.Content[i]
		if b.Type == llm.BlockImage {
			continue
		}
		idx := n
		if i < len(e.wix) && e.wix[i] >= 0 {
			idx = int(e.wix[i])
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		dst = e.appendItem(dst, idx, b, true)
		n++
	}
	return append(dst, ']')
}

func appendResponsesUsage(dst []byte, u *llm.Usage) []byte {
	in := u.Input + u.CacheRead + u.CacheWrite
	dst = append(dst, `{"input_tokens":`...)
	dst = strconv.AppendInt(dst, in, 10)
	dst = append(dst, `,"input_tokens_details":{"cache_write_tokens":`...)
	dst = strconv.AppendInt(dst, u.CacheWrite, 10)
	dst = append(dst, `,"cached_tokens":`...)
	dst = strconv.AppendInt(dst, u.CacheRead, 10)
	dst = append(dst, `},"output_tokens":`...)
	dst = strconv.AppendInt(dst, u.Output, 10)
	dst = append(dst, `,"output_tokens_details":{"reasoning_tokens":`...)
	dst = strconv.AppendInt(dst, u.Reasoning, 10)
	dst = append(dst, `},"total_tokens":`...)
	dst = strconv.AppendInt(dst, in+u.Output, 10)
	return append(dst, '}')
}

// responsesStatus returns the status and incomplete reason of a finished
// response.
func responsesStatus(r llm.StopReason, raw string) (status, reason string) {
	switch raw {
	case "":
		if r == llm.StopLength {
			return "incomplete", "max_output_tokens"
		}
		return "completed", ""
	case "completed", "failed":
		return raw, ""
	}
	return "incomplete", raw
}

func (e *Encoder) appendResponsesDone(dst []byte, m *llm.Message, raw string) []byte {
	status, reason := responsesStatus(m.StopReason, raw)
	if status == "failed" {
		return e.appendResponsesFailed(dst, m)
	}
	dst = e.appendEventHead(dst, "response."+status)
	dst = append(dst, `,"response":`...)
	dst = e.appendResponseBody(dst, m, status, reason)
	return e.appendSeqEnd(dst)
}

func (e *Encoder) appendResponseBody(dst []byte, m *llm.Message, status, reason string) []byte {
	dst = e.appendResponseHead(dst, status)
	if status == "failed" {
		dst = append(dst, `,"error":{"code":"server_error","message":`...)
		dst = llm.AppendJSONString(dst, m.ErrorMessage)
		dst = append(dst, '}')
	} else {
		dst = append(dst, `,"error":null`...)
	}
	if reason != "" {
		dst = append(dst, `,"incomplete_details":{"reason":`...)
		dst = llm.AppendJSONString(dst, reason)
		dst = append(dst, '}')
	} else {
		dst = append(dst, `,"incomplete_details":null`...)
	}
	dst = append(dst, `,"output":`...)
	dst = e.appendOutput(dst, m)
	dst = append(dst, `,"usage":`...)
	dst = appendResponsesUsage(dst, &m.Usage)
	return append(dst, '}')
}

func (e *Encoder) appendResponsesFailed(dst []byte, m *llm.Message) []byte {
	dst = e.appendEventHead(dst, "response.failed")
	dst = append(dst, `,"response":`...)
	dst = e.appendResponseBody(dst, m, "failed", "")
	return e.appendSeqEnd(dst)
}
