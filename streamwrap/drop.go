package streamwrap

import (
	"context"
	"sync"

	"github.com/ocbench/ocbench/llm"
)

// DropUnrepairedToolCalls applies the extended profile's per-call drop
// (see ArgumentStage) at the done event: a tool call whose arguments are
// still undecided (empty) is tried once more with repair.Extended and,
// when that fails, removed from the final message, with ErrorMessage
// naming it (tool name, id, the repair error kind). The other tool calls
// keep the turn's stop reason. Only turns that stopped for toolUse or stop
// are touched. When no tool call is left the turn ends as
// an error: the done event becomes an error event of reason error.
//
// Chain applies it above every decorator that keeps per-content-index
// state (inside its stop-reason stage, HandleSensitiveStopReason, so as to
// add no layer per event), so the content indices those decorators hold
// stay valid until the turn is over. A turn that did not end with done is passed
// through unchanged (ArgumentStage has refused it already).
func DropUnrepairedToolCalls(next llm.StreamFunc) llm.StreamFunc {
	return func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		inner, err := next(ctx, req)
		if err != nil {
			return nil, err
		}
		s := dropPool.Get().(*dropStream)
		s.init(inner)
		return s, nil
	}
}

var dropPool = sync.Pool{New: func() any { return new(dropStream) }}

type dropStream struct {
	base
	ev       llm.Event
	own      bool
	finished bool
	d        dropper
}

func (s *dropStream) Event() *llm.Event {
	if s.own {
		return &s.ev
	}
	return s.curEvent()
}

func (s *dropStream) Next() bool {
	s.own = false
	if !s.advance() {
		return false
	}
	if e := s.curEvent(); e.Type == llm.EventDone && !s.finished {
		s.finished = true
		if s.d.apply(&s.base, e) {
			s.ev = *e
			s.ev.Type = llm.EventError
			s.ev.Reason = llm.StopError
			s.own = true
		}
	}
	return true
}

func (s *dropStream) Close() error {
	err := s.closeInner()
	*s = dropStream{d: s.d.reset()}
	dropPool.Put(s)
	return err
}

// dropper holds the reusable buffers of the drop; Chain runs it inside the
// stop-reason stage (HandleSensitiveStopReason's stream) rather than as a
// decorator of its own, saving a layer per event.
type dropper struct {
	msgBuf  []byte
	scratch []byte
}

func (d dropper) reset() dropper { return dropper{msgBuf: d.msgBuf[:0], scratch: d.scratch[:0]} }

// apply drops the undecided tool calls of the final message(s) of the
// done event e of b; it reports whether the turn failed (no tool call
// left), so that the caller turns e into an error event.
func (d *dropper) apply(b *base, e *llm.Event) bool {
	live := b.curMessage()
	_, m := b.eventMessages(e)
	if m == nil {
		m = live
	}
	failed := d.dropFrom(m)
	if m != live {
		failed = d.dropFrom(live) || failed
	}
	return failed
}

// dropFrom drops m's undecided tool calls; it reports whether m had tool
// calls and none is left, in which case m fails with the drop message.
func (d *dropper) dropFrom(m *llm.Message) bool {
	// Only a turn that stopped for toolUse or stop: a length stop keeps
	// its refusal (its tool calls are cut, and never executed).
	if m.StopReason != llm.StopToolUse && m.StopReason != llm.StopStop || !hasUndecidedCall(m) {
		return false
	}
	prev := m.ErrorMessage
	d.msgBuf, d.scratch = dropUnrepaired(m, d.msgBuf[:0], d.scratch[:0], nil)
	if m.ErrorMessage == prev {
		return false // every undecided call was repaired
	}
	for i := range m.Content {
		if isToolCall(&m.Content[i]) {
			return false
		}
	}
	m.Fail(llm.StopError, m.ErrorMessage)
	return true
}

// hasUndecidedCall reports whether m has a tool call with empty arguments.
func hasUndecidedCall(m *llm.Message) bool {
	for i := range m.Content {
		if b := &m.Content[i]; isToolCall(b) && len(trimSpace(b.Arguments)) == 0 {
			return true
		}
	}
	return false
}
