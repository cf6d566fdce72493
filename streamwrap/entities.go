package streamwrap

import (
	"context"
	"sync"

	"github.com/cespare/xxhash/v2"
	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/streamwrap/repair"
)

// DecodeHTMLEntityArguments is OpenClaw's wrapStreamFnDecodeXaiToolCallArguments
// (streamwrap.md §4.5): for every tool call whose arguments are a JSON
// object, every string value is decoded once with repair.DecodeHTMLEntities.
// It runs on every event's live message and on the final message; text
// blocks are left alone.
//
// OpenClaw never decodes the same arguments object twice (a WeakSet of the
// objects it produced). Here a block's arguments are "the same object"
// while their bytes are the ones this stream last produced for that
// content index (compared by length and xxhash), so decoded arguments are
// not decoded again (&amp;amp; becomes &amp; and stays), while arguments
// that another stage rewrote are decoded afresh.
//
// Chain applies it only when the request's model has HTMLEntityArgs set.
func DecodeHTMLEntityArguments(next llm.StreamFunc) llm.StreamFunc {
	return func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		inner, err := next(ctx, req)
		if err != nil {
			return nil, err
		}
		s := entityPool.Get().(*entityStream)
		s.init(inner)
		return s, nil
	}
}

var entityPool = sync.Pool{New: func() any { return new(entityStream) }}

// producedArgs identifies the arguments this stream produced for an index.
type producedArgs struct {
	n    int
	hash uint64
	ok   bool
}

type entityStream struct {
	base
	done     []producedArgs // per content index, for the live message
	scratch  []byte
	finished bool
	pt       passThrough
}

func (s *entityStream) Next() bool {
	_, _, ok := s.Step()
	return ok
}

// Step is Next, then Event and Message (llm.Stepper; see base.next).
func (s *entityStream) Step() (*llm.Event, *llm.Message, bool) {
	ev, msg, ok := s.next.Step()
	return s.settle(ev, msg, ok)
}

// passThrough skips the stage on the events it passes untouched: text,
// thinking and start events change no tool call, and the stages inside
// this one touch arguments only on tool-call events (of that block) and at
// the end (passer).
//
// An argument delta marked ArgsOnly changes no decided arguments: it is
// passed too when no stage below may decide arguments on a delta (the
// repair stage does), as the block it belongs to is then as the stage
// last saw it.
func (s *entityStream) passThrough() *passThrough {
	m := passMask(llm.EventToolCallStart, llm.EventToolCallDelta, llm.EventToolCallEnd, llm.EventDone, llm.EventError)
	if argsKeptOnDelta(s.inner) {
		m |= argsOnlyBit
	}
	return s.pt.fuse(s.next, m, s)
}

// argsKeptOnDelta reports whether the decorators from st down to the
// provider's stream are all ones that decide no tool call's arguments on
// an argument delta: the argument stage, promotion and trimming.
func argsKeptOnDelta(st llm.Stream) bool {
	for {
		switch x := st.(type) {
		case *stageStream:
			st = x.inner
		case *promoteStream:
			st = x.inner
		case *trimStream:
			st = x.inner
		case Unwrapper:
			return false // another decorator
		default:
			return true
		}
	}
}

// settle is Step after the pull (passer).
func (s *entityStream) settle(ev *llm.Event, msg *llm.Message, ok bool) (*llm.Event, *llm.Message, bool) {
	if !s.took(ev, msg, ok) {
		s.finish()
		return nil, s.Message(), false
	}
	e := s.curEvent()
	switch e.Type {
	case llm.EventToolCallDelta:
		// Fast path: the delta's block is the only one it can change
		// (see only), and it has no arguments to decode (isObject fails on
		// none) while they are undecided.
		if s.views == nil && e.ContentIndex >= 0 {
			if b := s.curMessage().Block(e.ContentIndex); b == nil || len(b.Arguments) == 0 {
				return s.Event(), s.Message(), true
			}
		}
	case llm.EventToolCallStart, llm.EventToolCallEnd, llm.EventDone, llm.EventError:
	default:
		return s.Event(), s.Message(), true
	}
	partial, message := s.eventMessages(e)
	only := e.ContentIndex // a tool-call event can change only its own block
	if e.Type.IsTerminal() || s.views != nil {
		only = -1
	}
	if partial != nil {
		s.decodeMessage(partial, true, only)
	}
	if message != nil && message != partial {
		s.decodeMessage(message, partial == nil, only)
	}
	if e.Type.IsTerminal() {
		s.finish()
	}
	return s.Event(), s.Message(), true
}

func (s *entityStream) finish() {
	if s.finished {
		return
	}
	s.finished = true
	s.decodeMessage(s.curMessage(), true, -1)
}

// decodeMessage decodes the arguments of m's tool calls. track says whether
// m is the message whose produced arguments s remembers by index (the live
// one); others are decoded unconditionally, once per event. only >= 0
// limits the work to that content index.
func (s *entityStream) decodeMessage(m *llm.Message, track bool, only int) {
	lo, hi := 0, len(m.Content)
	if only >= 0 {
		lo, hi = only, min(only+1, hi)
	}
	for i := lo; i < hi; i++ {
		b := &m.Content[i]
		if !isToolCall(b) || !isObject(b.Arguments) {
			continue
		}
		if track {
			for len(s.done) <= i {
				s.done = append(s.done, producedArgs{})
			}
			if p := s.done[i]; p.ok && p.n == len(b.Arguments) && p.hash == xxhash.Sum64(b.Arguments) {
				continue
			}
		}
		out := repair.DecodeEntitiesInJSON(s.scratch[:0], b.Arguments)
		s.scratch = out
		b.Arguments = setBytes(b.Arguments, out)
		if track {
			s.done[i] = producedArgs{n: len(b.Arguments), hash: xxhash.Sum64(b.Arguments), ok: true}
		}
	}
}

func (s *entityStream) Close() error {
	err := s.closeInner()
	*s = entityStream{done: s.done[:0], scratch: s.scratch[:0]}
	entityPool.Put(s)
	return err
}
