package scripted

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ocbench/ocbench/llm"
)

// Script is a list of turns. Latency applies to every turn that sets none;
// Chunk is the default delta size in bytes of every step that sets none
// (0: each text, thinking or argument text in one delta).
type Script struct {
	Turns   []Turn
	Latency Latency
	Chunk   int
}

// Latency is scripted timing: FirstEvent is the wait before the first
// event (time to first token), Gap the wait before each later event.
type Latency struct {
	FirstEvent time.Duration
	Gap        time.Duration
}

// Turn is one scripted answer: its steps in order, then the end of the
// stream.
//
// Stop is the stop reason of the done event; StopNone means toolUse when
// the turn has tool calls and stop otherwise. RawStop, when not empty, is
// sent as the wire's stop reason verbatim ("refusal", "content_filter",
// "pause_turn", ...; see wireenc.Encoder.AppendDoneRaw), and ErrorMessage
// travels with an Anthropic refusal. Usage is reported as the wire reports
// it; when it is zero, Input is estimated from the request (bytes/4) and
// Output from the scripted content. Latency overrides the Script's when not
// zero. HTTPError, when set, refuses the request before any streaming.
// CutAt, when positive, ends the body after that many bytes: the stream is
// truncated at a byte offset, wherever that falls.
type Turn struct {
	Steps        []Step
	Stop         llm.StopReason
	RawStop      string
	ErrorMessage string
	Usage        llm.Usage
	Latency      Latency
	HTTPError    *HTTPError
	CutAt        int
}

// HTTPError is a refusal before streaming: Status (e.g. 429, 529), a
// Retry-After to send, and the body. Type and Message make a body in the
// wire's error shape when Body is empty.
type HTTPError struct {
	Status     int
	RetryAfter time.Duration
	Type       string
	Message    string
	Body       string
}

// StepKind is what a Step does.
type StepKind uint8

const (
	StepText     StepKind = iota + 1 // a text block
	StepThinking                     // a thinking block, with Signature (or Redacted)
	StepTools                        // one tool call, or several sent as parallel calls
	StepStall                        // send nothing for Duration; forever (until the context ends) when Duration <= 0
	StepError                        // the wire's in-band error event (ErrType, Message); the stream ends there
	StepRaw                          // one raw SSE event: Event name and Data, verbatim
	StepEOF                          // end the body here, without a terminal event
	StepComment                      // an SSE comment line (": Text"), a keep-alive that carries no event
	numStepKinds
)

var stepNames = [numStepKinds]string{"", "text", "thinking", "tools", "stall", "error", "raw", "eof", "comment"}

func (k StepKind) String() string {
	if k < numStepKinds && k > 0 {
		return stepNames[k]
	}
	return "unknown"
}

// Step is one thing a turn does. Kind says which fields are used:
//
//   - StepText: Text, Chunk
//   - StepThinking: Text, Signature, Redacted, Chunk
//   - StepTools: Calls, Interleave, Chunk
//   - StepStall: Duration
//   - StepError: ErrType, Message
//   - StepRaw: Event, Data
//   - StepEOF: nothing
//   - StepComment: Text
//
// Chunk is the delta size in bytes (cut on UTF-8 boundaries); 0 uses the
// Script's. Interleave sends the deltas of parallel calls round-robin, as
// OpenAI does, instead of one call after the other.
type Step struct {
	Kind       StepKind
	Text       string
	Signature  string
	Redacted   bool
	Calls      []Call
	Interleave bool
	Chunk      int
	Duration   time.Duration
	ErrType    string
	Message    string
	Event      string
	Data       string
}

// Call is one scripted tool call. Args is the argument text exactly as it
// is sent (valid JSON or not). An empty ID is generated. ReuseIndex sends
// the call under the wire index of the previous call (a proxy numbering
// every call 0); NoIndex sends it with no index at all (Gemini's
// compatible endpoint). Cut, when positive, ends the body after that many
// bytes of Args: the call is truncated mid-arguments and never closed.
type Call struct {
	ID         string
	Name       string
	Args       string
	ReuseIndex bool
	NoIndex    bool
	Cut        int
}

// Text returns a text step.
func Text(s string) Step { return Step{Kind: StepText, Text: s} }

// Thinking returns a thinking step with its signature.
func Thinking(text, signature string) Step {
	return Step{Kind: StepThinking, Text: text, Signature: signature}
}

// ToolCall returns a step with one tool call.
func ToolCall(id, name, args string) Step {
	return Step{Kind: StepTools, Calls: []Call{{ID: id, Name: name, Args: args}}}
}

// Parallel returns a step with parallel tool calls, interleaved.
func Parallel(calls ...Call) Step {
	return Step{Kind: StepTools, Calls: calls, Interleave: true}
}

// Stall returns a step that sends nothing for d, or until the context is
// cancelled when d <= 0.
func Stall(d time.Duration) Step { return Step{Kind: StepStall, Duration: d} }

// InBandError returns a step that sends the wire's in-band error event.
func InBandError(typ, message string) Step {
	return Step{Kind: StepError, ErrType: typ, Message: message}
}

// Raw returns a step that sends one SSE event verbatim.
func Raw(event, data string) Step { return Step{Kind: StepRaw, Event: event, Data: data} }

// Comment returns a step that sends an SSE comment line, as proxies do to
// keep a connection alive (": OPENROUTER PROCESSING").
func Comment(text string) Step { return Step{Kind: StepComment, Text: text} }

// EOF returns a step that ends the body without a terminal event.
func EOF() Step { return Step{Kind: StepEOF} }

// Chunked returns s with its delta size set to n bytes.
func (s Step) Chunked(n int) Step { s.Chunk = n; return s }

// ErrBadScript is wrapped by every *ScriptError. Typically it means a
// script file written by hand with a typo in a field or a value.
var ErrBadScript = errors.New("scripted: bad script")

// ScriptError locates a problem in a script: turn and step indexes (-1
// when not applicable) and what is wrong.
type ScriptError struct {
	Turn, Step int
	Msg        string
}

func (e *ScriptError) Error() string {
	var b strings.Builder
	b.WriteString("scripted: bad script")
	if e.Turn >= 0 {
		fmt.Fprintf(&b, ": turn %d", e.Turn)
	}
	if e.Step >= 0 {
		fmt.Fprintf(&b, ", step %d", e.Step)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

func (e *ScriptError) Unwrap() error { return ErrBadScript }

// Limits of a script, checked by Validate.
const (
	MaxTurns        = 1 << 16
	MaxStepsPerTurn = 1 << 16
)

// Validate checks that s can be played: at least one turn, known step
// kinds, tool calls with names, sane stop reasons and HTTP statuses.
func (s *Script) Validate() error {
	if s == nil || len(s.Turns) == 0 {
		return &ScriptError{Turn: -1, Step: -1, Msg: "no turns"}
	}
	if len(s.Turns) > MaxTurns {
		return &ScriptError{Turn: -1, Step: -1, Msg: fmt.Sprintf("%d turns, more than %d", len(s.Turns), MaxTurns)}
	}
	if s.Chunk < 0 {
		return &ScriptError{Turn: -1, Step: -1, Msg: "negative chunk"}
	}
	for ti := range s.Turns {
		t := &s.Turns[ti]
		if len(t.Steps) > MaxStepsPerTurn {
			return &ScriptError{Turn: ti, Step: -1, Msg: "too many steps"}
		}
		if t.Stop > llm.StopToolUse {
			// Failures are scripted as steps (InBandError, EOF, a cut) or
			// an HTTPError, so that they travel the way real ones do.
			return &ScriptError{Turn: ti, Step: -1, Msg: "stop reason " + t.Stop.String() + " is not stop, length or toolUse; script failures as an error step, a cut or an HTTP error"}
		}
		if t.HTTPError != nil && (t.HTTPError.Status < 400 || t.HTTPError.Status > 599) {
			return &ScriptError{Turn: ti, Step: -1, Msg: fmt.Sprintf("HTTP error status %d is not 4xx or 5xx", t.HTTPError.Status)}
		}
		if t.CutAt < 0 || t.Latency.FirstEvent < 0 || t.Latency.Gap < 0 {
			return &ScriptError{Turn: ti, Step: -1, Msg: "negative cut or latency"}
		}
		for si := range t.Steps {
			st := &t.Steps[si]
			if st.Kind == 0 || st.Kind >= numStepKinds {
				return &ScriptError{Turn: ti, Step: si, Msg: "unknown step kind"}
			}
			if st.Chunk < 0 {
				return &ScriptError{Turn: ti, Step: si, Msg: "negative chunk"}
			}
			if st.Kind == StepTools {
				if len(st.Calls) == 0 {
					return &ScriptError{Turn: ti, Step: si, Msg: "tool step without calls"}
				}
				for ci := range st.Calls {
					if st.Calls[ci].Cut < 0 || st.Calls[ci].Cut > len(st.Calls[ci].Args) {
						return &ScriptError{Turn: ti, Step: si, Msg: "call cut outside its arguments"}
					}
				}
			}
		}
	}
	return nil
}

// hasToolCalls reports whether t sends a tool call.
func (t *Turn) hasToolCalls() bool {
	for i := range t.Steps {
		if t.Steps[i].Kind == StepTools {
			return true
		}
	}
	return false
}
