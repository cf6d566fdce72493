package streamwrap

import "github.com/ocbench/ocbench/llm"

// step methods of the decorators off the hot path: each is the type's own
// Next, Event and Message, called statically, so that the layer above pays
// one dynamic call per event (base.advance) instead of three. They must
// stay per type: see stepper. The decorators of Chain's every-call path
// (diagnostics, idle timeout, stop reason, entities, repair, trim,
// promotion, argument stage) have their Next body in step itself, saving
// a call per layer.

func (s *transformStream) step() (*llm.Event, *llm.Message, bool) {
	ok := s.Next()
	var ev *llm.Event
	if ok {
		ev = s.Event()
	}
	return ev, s.Message(), ok
}

func (s *dropStream) step() (*llm.Event, *llm.Message, bool) {
	ok := s.Next()
	var ev *llm.Event
	if ok {
		ev = s.Event()
	}
	return ev, s.Message(), ok
}

var (
	_ stepper = (*diagStream)(nil)
	_ stepper = (*stopStream)(nil)
	_ stepper = (*idleStream)(nil)
	_ stepper = (*transformStream)(nil)
	_ stepper = (*entityStream)(nil)
	_ stepper = (*repairStream)(nil)
	_ stepper = (*trimStream)(nil)
	_ stepper = (*promoteStream)(nil)
	_ stepper = (*stageStream)(nil)
	_ stepper = (*dropStream)(nil)
)
