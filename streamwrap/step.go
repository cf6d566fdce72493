package streamwrap

import "github.com/ocbench/ocbench/llm"

// Step methods of the decorators off the hot path: each is the type's own
// Next, Event and Message, called statically, so that the layer above pays
// one dynamic call per event (base.advance) instead of three. They must
// stay per type: see base.next. The decorators of Chain's every-call path
// (diagnostics, idle timeout, stop reason, entities, repair, trim,
// promotion, argument stage) have their Next body in Step itself, saving
// a call per layer.

func (s *transformStream) Step() (*llm.Event, *llm.Message, bool) {
	ok := s.Next()
	var ev *llm.Event
	if ok {
		ev = s.Event()
	}
	return ev, s.Message(), ok
}

func (s *dropStream) Step() (*llm.Event, *llm.Message, bool) {
	ok := s.Next()
	var ev *llm.Event
	if ok {
		ev = s.Event()
	}
	return ev, s.Message(), ok
}

var (
	_ llm.Stepper = (*diagStream)(nil)
	_ llm.Stepper = (*stopStream)(nil)
	_ llm.Stepper = (*idleStream)(nil)
	_ llm.Stepper = (*transformStream)(nil)
	_ llm.Stepper = (*entityStream)(nil)
	_ llm.Stepper = (*repairStream)(nil)
	_ llm.Stepper = (*trimStream)(nil)
	_ llm.Stepper = (*promoteStream)(nil)
	_ llm.Stepper = (*stageStream)(nil)
	_ llm.Stepper = (*dropStream)(nil)
)
