package streamwrap

import (
	"bytes"
	"context"
	"encoding/hex"
	"sync"

	"github.com/cespare/xxhash/v2"
	"github.com/ocbench/ocbench/llm"
)

// PromoteStandaloneTextToolCalls is OpenClaw's
// wrapStreamFnPromoteStandaloneTextToolCalls (streamwrap.md §4.3), as the
// 2026.9.6 build behaves. It does nothing without an allowlist.
//
// A text block that consists only of serialized tool calls,
// "[tool:NAME]" or "<function=NAME>" each followed by
// "<parameter=KEY>VALUE</parameter>" blocks and "</function>", whose names
// resolve against the allowlist (requireAllowed), is turned into toolCall
// blocks when the turn stops with stop or toolUse: arguments are the
// parameters as strings, RawArgs their JSON, ids call_ + 24 hex stable per
// source span, and the stop reason becomes toolUse.
//
// While streaming, the events of a text block whose text could still be
// such a call (a case-insensitive prefix of a marker, or a text starting
// with one) are held back. At the end they are replaced, when promoted, by
// a start event (when the stream had none), then toolcall_start,
// toolcall_delta (the arguments' JSON) and toolcall_end per call, then the
// terminal event with reason toolUse; when not promoted, the held events
// are released unchanged before the terminal event.
func PromoteStandaloneTextToolCalls(next llm.StreamFunc, allowed *Allowlist) llm.StreamFunc {
	if allowed.Len() == 0 {
		return next
	}
	return func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		inner, err := next(ctx, req)
		if err != nil {
			return nil, err
		}
		s := promotePool.Get().(*promoteStream)
		s.init(inner)
		s.allowed = allowed
		return s, nil
	}
}

var promotePool = sync.Pool{New: func() any { return new(promoteStream) }}

// heldEvent is an event kept back; its delta lives in promoteStream.arena.
type heldEvent struct {
	ev       llm.Event
	off, end int
}

type promoteStream struct {
	base
	allowed   *Allowlist
	sawStart  bool
	holding   int // content index of the held text block, or -1 (+1 encoded: 0 = none)
	held      []heldEvent
	arena     []byte
	queue     []heldEvent // events to yield before reading on
	qi        int
	cur       llm.Event
	useCur    bool
	terminal  llm.Event
	finalized bool
	notCall   []bool // per content index: the text block cannot be a call
}

func (s *promoteStream) Event() *llm.Event {
	if s.useCur {
		return &s.cur
	}
	return s.curEvent()
}

func (s *promoteStream) pop() bool {
	if s.qi < len(s.queue) {
		h := &s.queue[s.qi]
		s.qi++
		s.cur = h.ev
		if h.end > h.off {
			s.cur.Delta = s.arena[h.off:h.end]
		} else {
			s.cur.Delta = nil
		}
		s.useCur = true
		return true
	}
	return false
}

func (s *promoteStream) Next() bool {
	_, _, ok := s.Step()
	return ok
}

// Step is Next, then Event and Message (llm.Stepper; see base.next).
func (s *promoteStream) Step() (*llm.Event, *llm.Message, bool) {
	s.useCur = false
	if s.pop() {
		return s.Event(), s.Message(), true
	}
	if s.finalized {
		return nil, s.Message(), false
	}
	for {
		e, msg, ok := s.src.Step() // (base.src)
		if !ok || s.pass&passBit(e) == 0 {
			e, msg, ok = s.up(e, msg, ok)
		}
		if !s.took(e, msg, ok) {
			s.release()
			s.finalized = true
			return s.popStep()
		}
		switch e.Type {
		case llm.EventStart:
			s.sawStart = true
		case llm.EventTextStart, llm.EventTextDelta, llm.EventTextEnd:
			if s.holding == 0 || s.holding-1 == e.ContentIndex {
				if !s.settledText(e.ContentIndex) && s.couldBeCall(e.ContentIndex) {
					s.holding = e.ContentIndex + 1
					s.hold(e)
					continue
				}
				if s.holding != 0 {
					s.hold(e)
					s.release()
					return s.popStep()
				}
			}
		case llm.EventDone, llm.EventError:
			if s.holding != 0 {
				s.terminal = *e
				s.finalize()
				s.finalized = true
				return s.popStep()
			}
		}
		return e, s.Message(), true // (not useCur: Event would return e)
	}
}

// settledText reports whether the text block at i is known not to be a
// serialized tool call (couldBeCall said so before); inlined, it saves the
// call on most text events.
func (s *promoteStream) settledText(i int) bool {
	return i >= 0 && i < len(s.notCall) && s.notCall[i]
}

// couldBeCall reports whether the text block at i could still become a
// serialized tool call. A "no" is final (text only grows at its end), so it
// is remembered per content index.
func (s *promoteStream) couldBeCall(i int) bool {
	if s.settledText(i) {
		return false
	}
	b := s.curMessage().Block(i)
	if b == nil {
		return true // not visible yet: keep holding until the text shows
	}
	if b.Type != llm.BlockText {
		return false
	}
	t := b.Text
	for len(t) > 0 && (t[0] == ' ' || t[0] == '\t' || t[0] == '\r' || t[0] == '\n') {
		t = t[1:]
	}
	if len(t) == 0 {
		return true
	}
	for _, mk := range [...]string{"[tool:", "<function="} {
		n := min(len(t), len(mk))
		if bytes.EqualFold(t[:n], []byte(mk[:n])) {
			return true
		}
	}
	for len(s.notCall) <= i {
		s.notCall = append(s.notCall, false)
	}
	s.notCall[i] = true
	return false
}

func (s *promoteStream) hold(e *llm.Event) {
	off := len(s.arena)
	s.arena = append(s.arena, e.Delta...)
	s.held = append(s.held, heldEvent{ev: *e, off: off, end: len(s.arena)})
}

// release queues the held events unchanged.
func (s *promoteStream) release() {
	s.queue = append(s.queue, s.held...)
	s.held = s.held[:0]
	s.holding = 0
}

// finalize decides the held block at the terminal event.
func (s *promoteStream) finalize() {
	m := s.curMessage()
	if _, message := s.eventMessages(&s.terminal); message != nil {
		m = message
	}
	i := s.holding - 1
	b := m.Block(i)
	var calls []promotedCall
	ok := false
	if b != nil && b.Type == llm.BlockText && (m.StopReason == llm.StopStop || m.StopReason == llm.StopToolUse || s.terminal.Type == llm.EventDone && (s.terminal.Reason == llm.StopStop || s.terminal.Reason == llm.StopToolUse)) {
		calls, ok = parseSerializedToolCalls(b.Text, s.allowed)
	}
	if !ok {
		s.release()
		s.queueTerminal()
		return
	}
	s.held = s.held[:0]
	s.holding = 0
	content := make([]llm.Block, 0, len(m.Content)+len(calls))
	content = append(content, m.Content[:i]...)
	for _, c := range calls {
		content = append(content, llm.Block{Type: llm.BlockToolCall, ID: c.id, Name: []byte(c.name), RawArgs: c.args, Arguments: append([]byte(nil), c.args...)})
	}
	content = append(content, m.Content[i+1:]...)
	m.Content = content
	m.StopReason = llm.StopToolUse
	if !s.sawStart {
		s.queue = append(s.queue, heldEvent{ev: llm.Event{Type: llm.EventStart}})
	}
	for k, c := range calls {
		ci := i + k
		s.queue = append(s.queue, heldEvent{ev: llm.Event{Type: llm.EventToolCallStart, ContentIndex: ci}})
		off := len(s.arena)
		s.arena = append(s.arena, c.args...)
		s.queue = append(s.queue, heldEvent{ev: llm.Event{Type: llm.EventToolCallDelta, ContentIndex: ci}, off: off, end: len(s.arena)})
		s.queue = append(s.queue, heldEvent{ev: llm.Event{Type: llm.EventToolCallEnd, ContentIndex: ci}})
	}
	if s.terminal.Type == llm.EventDone {
		s.terminal.Reason = llm.StopToolUse
	}
	s.queueTerminal()
}

func (s *promoteStream) queueTerminal() {
	s.queue = append(s.queue, heldEvent{ev: s.terminal})
}

func (s *promoteStream) Close() error {
	err := s.closeInner()
	clear(s.notCall)
	*s = promoteStream{held: s.held[:0], arena: s.arena[:0], queue: s.queue[:0], notCall: s.notCall[:0]}
	promotePool.Put(s)
	return err
}

type promotedCall struct {
	name string
	id   []byte
	args []byte
}

// parseSerializedToolCalls parses text made only of serialized tool calls.
func parseSerializedToolCalls(text []byte, allowed *Allowlist) ([]promotedCall, bool) {
	var calls []promotedCall
	p := 0
	skipWS := func() {
		for p < len(text) && (text[p] == ' ' || text[p] == '\t' || text[p] == '\n' || text[p] == '\r') {
			p++
		}
	}
	hasPrefixFold := func(s string) bool {
		return len(text)-p >= len(s) && bytes.EqualFold(text[p:p+len(s)], []byte(s))
	}
	for {
		skipWS()
		if p == len(text) {
			break
		}
		start := p
		var name []byte
		switch {
		case hasPrefixFold("[tool:"):
			p += len("[tool:")
			e := bytes.IndexByte(text[p:], ']')
			if e < 0 {
				return nil, false
			}
			name = text[p : p+e]
			p += e + 1
		case hasPrefixFold("<function="):
			p += len("<function=")
			e := bytes.IndexByte(text[p:], '>')
			if e < 0 {
				return nil, false
			}
			name = text[p : p+e]
			p += e + 1
		default:
			return nil, false
		}
		resolved, ok := ResolveToolName(string(name), "", allowed, true)
		if !ok {
			return nil, false
		}
		args := []byte{'{'}
		n := 0
		for {
			skipWS()
			if !hasPrefixFold("<parameter=") {
				break
			}
			p += len("<parameter=")
			e := bytes.IndexByte(text[p:], '>')
			if e < 0 {
				return nil, false
			}
			key := text[p : p+e]
			p += e + 1
			ve := bytes.Index(text[p:], []byte("</parameter>"))
			if ve < 0 {
				return nil, false
			}
			val := trimSpace(text[p : p+ve])
			p += ve + len("</parameter>")
			if n > 0 {
				args = append(args, ',')
			}
			n++
			args = llm.AppendJSONString(args, trimSpace(key))
			args = append(args, ':')
			args = llm.AppendJSONString(args, val)
		}
		args = append(args, '}')
		skipWS()
		if !hasPrefixFold("</function>") {
			return nil, false
		}
		p += len("</function>")
		span := text[start:p]
		var raw [12]byte
		h1, h2 := xxhash.Sum64(span), xxhash.Sum64(append([]byte(resolved), span...))
		for i := 0; i < 8; i++ {
			raw[i] = byte(h1 >> (8 * i))
		}
		for i := 0; i < 4; i++ {
			raw[8+i] = byte(h2 >> (8 * i))
		}
		id := hex.AppendEncode([]byte("call_"), raw[:])
		calls = append(calls, promotedCall{name: resolved, id: id, args: args})
	}
	return calls, len(calls) > 0
}

// popStep is pop for step: the queued event, or the end of the stream.
func (s *promoteStream) popStep() (*llm.Event, *llm.Message, bool) {
	if s.pop() {
		return s.Event(), s.Message(), true
	}
	return nil, s.Message(), false
}
