package llm

import (
	"errors"
	"testing"
)

// countStream has n events; it counts its Next and Step calls.
type countStream struct {
	n, next, step int
	msg           Message
	ev            Event
}

func (s *countStream) Next() bool {
	s.next++
	return s.advance()
}

func (s *countStream) advance() bool {
	if s.n == 0 {
		s.msg.StopReason = StopError
		return false
	}
	s.n--
	s.msg.Content = append(s.msg.Content, Block{Type: BlockText})
	return true
}

func (s *countStream) Event() *Event     { return &s.ev }
func (s *countStream) Message() *Message { return &s.msg }
func (s *countStream) Err() error        { return errDrain }
func (s *countStream) Close() error      { return nil }

var errDrain = errors.New("drained")

type stepStream struct{ countStream }

func (s *stepStream) Step() (*Event, *Message, bool) {
	s.step++
	ok := s.advance()
	if !ok {
		return nil, &s.msg, false
	}
	return &s.ev, &s.msg, true
}

// Drain steps a Stepper to its end (not Next), a plain stream by Next,
// and returns the final message and error either way.
func TestDrain(t *testing.T) {
	plain, stepper := &countStream{n: 3}, &stepStream{countStream{n: 3}}
	for _, c := range []struct {
		s          Stream
		cs         *countStream
		next, step int
	}{{plain, plain, 4, 0}, {stepper, &stepper.countStream, 0, 4}} {
		m, err := Drain(c.s)
		if m != &c.cs.msg || len(m.Content) != 3 || m.StopReason != StopError || err != errDrain {
			t.Fatalf("message %+v, error %v", m, err)
		}
		if c.cs.next != c.next || c.cs.step != c.step {
			t.Errorf("%d Next and %d Step calls, want %d and %d", c.cs.next, c.cs.step, c.next, c.step)
		}
	}
}

// Stepping gives a Stepper itself, and a plain stream a StreamStepper
// whose steps are Next, Event and Message: the event only while Next
// reports true, the message at every step.
func TestStepping(t *testing.T) {
	stepper := &stepStream{countStream{n: 1}}
	if Stepping(stepper) != Stepper(stepper) {
		t.Fatal("a Stepper was wrapped")
	}
	plain := &countStream{n: 2}
	st := Stepping(plain)
	for i := 0; i < 2; i++ {
		ev, m, ok := st.Step()
		if !ok || ev != &plain.ev || m != &plain.msg || len(m.Content) != i+1 {
			t.Fatalf("step %d: %v %v %v", i, ev, m, ok)
		}
	}
	ev, m, ok := st.Step()
	if ok || ev != nil || m != &plain.msg || m.StopReason != StopError {
		t.Fatalf("last step: %v %v %v", ev, m, ok)
	}
	if plain.next != 3 || plain.step != 0 {
		t.Errorf("%d Next and %d Step calls, want 3 and 0", plain.next, plain.step)
	}
}
