package wireenc

import (
	"unicode/utf8"

	"github.com/ocbench/ocbench/llm"
)

// AppendStream appends a whole stream that carries the finished message m:
// start, each block's start, deltas and end, then done (or error when m
// failed). Text, thinking and argument text go out in deltas of at most
// chunk bytes, cut on UTF-8 boundaries (chunk <= 0: one delta per block).
// It is how a gateway streams an answer it received whole, and how tests
// produce wire bytes from a message.
func (e *Encoder) AppendStream(dst []byte, m *llm.Message, chunk int) []byte {
	ev := llm.Event{Type: llm.EventStart}
	dst = e.AppendEvent(dst, &ev, m)
	for i := range m.Content {
		b := &m.Content[i]
		var start, delta, end llm.EventType
		var body []byte
		switch b.Type {
		case llm.BlockText:
			start, delta, end, body = llm.EventTextStart, llm.EventTextDelta, llm.EventTextEnd, b.Text
		case llm.BlockThinking:
			start, delta, end, body = llm.EventThinkingStart, llm.EventThinkingDelta, llm.EventThinkingEnd, b.Text
		case llm.BlockToolCall:
			start, delta, end, body = llm.EventToolCallStart, llm.EventToolCallDelta, llm.EventToolCallEnd, b.RawArgs
			if len(body) == 0 {
				body = b.Arguments
			}
		default:
			continue
		}
		ev = llm.Event{Type: start, ContentIndex: i}
		dst = e.AppendEvent(dst, &ev, m)
		for rest := body; len(rest) > 0; {
			n := SplitPoint(rest, chunk)
			ev = llm.Event{Type: delta, ContentIndex: i, Delta: rest[:n]}
			dst = e.AppendEvent(dst, &ev, m)
			rest = rest[n:]
		}
		ev = llm.Event{Type: end, ContentIndex: i}
		dst = e.AppendEvent(dst, &ev, m)
	}
	ev = llm.Event{Type: llm.EventDone, Reason: m.StopReason}
	if m.StopReason == llm.StopError || m.StopReason == llm.StopAborted {
		ev.Type = llm.EventError
	}
	return e.AppendEvent(dst, &ev, m)
}

// SplitPoint returns the length of the first delta of s when deltas are at
// most chunk bytes: chunk moved back to a UTF-8 boundary (never below one
// whole rune), or len(s) when chunk <= 0 or s is shorter.
func SplitPoint(s []byte, chunk int) int {
	if chunk <= 0 || chunk >= len(s) {
		return len(s)
	}
	n := chunk
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	if n == 0 { // a rune longer than chunk: take it whole
		_, size := utf8.DecodeRune(s)
		n = size
	}
	return n
}
