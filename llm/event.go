package llm

import "context"

// EventType names an assistant-message event, as pi-ai names them.
type EventType uint8

const (
	EventNone EventType = iota
	EventStart
	EventTextStart
	EventTextDelta
	EventTextEnd
	EventThinkingStart
	EventThinkingDelta
	EventThinkingEnd
	EventToolCallStart
	EventToolCallDelta
	EventToolCallEnd
	EventDone
	EventError
	numEventTypes
)

var eventTypeNames = [numEventTypes]string{
	EventNone:          "none",
	EventStart:         "start",
	EventTextStart:     "text_start",
	EventTextDelta:     "text_delta",
	EventTextEnd:       "text_end",
	EventThinkingStart: "thinking_start",
	EventThinkingDelta: "thinking_delta",
	EventThinkingEnd:   "thinking_end",
	EventToolCallStart: "toolcall_start",
	EventToolCallDelta: "toolcall_delta",
	EventToolCallEnd:   "toolcall_end",
	EventDone:          "done",
	EventError:         "error",
}

// String returns the wire name of t ("text_delta", "done", ...).
func (t EventType) String() string {
	if t < numEventTypes {
		return eventTypeNames[t]
	}
	return "unknown"
}

// ParseEventType is the inverse of EventType.String; ok is false for unknown names.
func ParseEventType(s string) (t EventType, ok bool) {
	for i, n := range eventTypeNames {
		if n == s && i != int(EventNone) {
			return EventType(i), true
		}
	}
	return EventNone, false
}

// IsTerminal reports whether t ends a stream (done or error).
func (t EventType) IsTerminal() bool { return t == EventDone || t == EventError }

// Event is one assistant-message event.
//
// ContentIndex indexes Message.Content of the stream that produced it. Delta
// is the text, thinking or raw argument-JSON fragment of a *_delta event; it
// is borrowed and valid only until the next call to Stream.Next. The
// content of *_end events and the tool call of toolcall_end are the block at
// ContentIndex in the stream's Message. Reason is set on done and error.
//
// ArgsOnly is a hint, never part of what the event means (false is always
// right): set on a toolcall_delta whose making appended Delta to the raw
// arguments of the call at ContentIndex and changed nothing else of the
// message (no name, id, arguments decision, other block). Decorators that
// look only at names and ids, or only at decided arguments, pass such an
// event without looking at the message. A decorator that re-emits an event
// after changing more of the message than that must clear it.
type Event struct {
	Type         EventType
	ArgsOnly     bool
	ContentIndex int
	Delta        []byte
	Reason       StopReason
}

// Reset clears e for reuse.
func (e *Event) Reset() { *e = Event{} }

// Stream is a pulled sequence of events that builds one assistant message.
//
// Next advances and reports whether an event is available; after a terminal
// event (done or error) it returns false. Event returns the current event
// (valid until the next Next). Message returns the partial message, which is
// the final one once the stream has ended; it is never nil. Err returns the
// first failure that ended the stream (nil after a clean done); it is
// sticky. A stream that fails still ends with an error event and a message
// whose StopReason is StopError or StopAborted and whose ErrorMessage says
// why, so nothing already decoded is lost.
//
// Close releases the stream's resources (the HTTP body, a pooled decoder);
// it is safe to call more than once. A Stream is not safe for concurrent use.
type Stream interface {
	Next() bool
	Event() *Event
	Message() *Message
	Err() error
	Close() error
}

// Stepper is implemented by streams that can advance and return what the
// consumer reads next in one call: Step is Next followed by Event (nil
// when Next reported false) and Message. Decorators that find it on the
// stream they wrap pay one dynamic call per event instead of three. It is
// optional: every Stream works without it.
type Stepper interface {
	Step() (ev *Event, msg *Message, ok bool)
}

// StreamStepper is a Stepper over a stream that does not step itself:
// Next, then Event (nil once Next reports false) and Message. Embedded in
// the value that holds it, it adapts without allocating.
type StreamStepper struct{ S Stream }

func (a *StreamStepper) Step() (ev *Event, msg *Message, ok bool) {
	if ok = a.S.Next(); ok {
		ev = a.S.Event()
	}
	return ev, a.S.Message(), ok
}

// Stepping returns s as a Stepper: s itself when it steps, else a
// StreamStepper over it (allocated).
func Stepping(s Stream) Stepper {
	if st, ok := s.(Stepper); ok {
		return st
	}
	return &StreamStepper{S: s}
}

// StreamFunc sends a request and returns the stream of its answer. A
// returned error means no stream was started (the request could not be sent
// or was refused before streaming); failures after that are in-stream.
// Decorators wrap a StreamFunc and return another.
type StreamFunc func(ctx context.Context, req *Request) (Stream, error)

// Drain reads s to its end and returns its final message and error. It does
// not close s. A Stepper is stepped (its Next would call Step).
func Drain(s Stream) (*Message, error) {
	if st, ok := s.(Stepper); ok {
		for {
			if _, _, ok := st.Step(); !ok {
				break
			}
		}
	} else {
		for s.Next() {
		}
	}
	return s.Message(), s.Err()
}
