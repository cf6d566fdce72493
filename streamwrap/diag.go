package streamwrap

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ocbench/ocbench/llm"
)

// ModelCallPhase is the kind of a diagnostic model-call event.
type ModelCallPhase uint8

const (
	// ModelCallStarted is emitted before the provider is called.
	ModelCallStarted ModelCallPhase = iota + 1
	// ModelCallCompleted ends a call whose final stop reason is stop,
	// length or toolUse.
	ModelCallCompleted
	// ModelCallError ends a call that failed: the call returned an error,
	// or the final stop reason is error or aborted, or the stream was closed
	// or ended before its terminal event.
	ModelCallError
)

var phaseNames = [...]string{"", "model.call.started", "model.call.completed", "model.call.error"}

// String returns OpenClaw's event name ("model.call.started", ...).
func (p ModelCallPhase) String() string {
	if int(p) < len(phaseNames) {
		return phaseNames[p]
	}
	return "unknown"
}

// Stable error-path tokens of ModelCallEvent.ErrorCategory (STYLE §1.5):
// metrics and alerts key on them, so they never change.
const (
	DiagRequestFailed = "model_call_request_failed" // the StreamFunc returned an error
	DiagStreamError   = "model_call_stream_error"   // final stop reason error
	DiagAborted       = "model_call_aborted"        // final stop reason aborted
	DiagIdleTimeout   = "model_call_idle_timeout"   // the idle timeout fired
	DiagNoTerminal    = "model_call_no_terminal"    // the stream ended without done or error
	DiagClosedEarly   = "model_call_closed_early"   // the consumer closed before the end
)

// PromptStats is OpenClaw's promptStats of model.call.started.
type PromptStats struct {
	InputMessagesCount   int
	InputMessagesChars   int
	SystemPromptChars    int
	ToolDefinitionsCount int
	ToolDefinitionsChars int
	TotalChars           int
}

// ModelCallEvent is one diagnostic model-call event. The sink gets a
// pointer that is valid only during the call; it copies what it keeps.
type ModelCallEvent struct {
	Phase    ModelCallPhase
	RunID    string
	CallSeq  uint64 // OpenClaw's callId is "<RunID>:model:<CallSeq>"
	Provider string
	Model    string
	API      llm.API
	Prompt   PromptStats // set when DiagnosticsConfig.PromptStats

	Start               time.Time
	Duration            time.Duration // completed and error only
	TimeToFirstByte     time.Duration // first event; 0 when none arrived
	ResponseStreamBytes int64         // delta bytes of text, thinking and tool-call deltas
	Events              int
	Usage               llm.Usage
	StopReason          llm.StopReason
	ErrorCategory       string // one of the Diag* tokens, error only
	ErrorMessage        string // error only
}

// DiagnosticSink receives model-call events. It is called on the
// consumer's goroutine and must not block for long.
type DiagnosticSink interface {
	ModelCall(e *ModelCallEvent)
}

// DiagnosticSinkFunc adapts a function to DiagnosticSink.
type DiagnosticSinkFunc func(e *ModelCallEvent)

// ModelCall calls f(e).
func (f DiagnosticSinkFunc) ModelCall(e *ModelCallEvent) { f(e) }

// DiagnosticsConfig configures DiagnosticModelCallEvents.
type DiagnosticsConfig struct {
	Sink        DiagnosticSink
	RunID       string
	PromptStats bool
}

// DiagnosticModelCallEvents is OpenClaw's
// wrapStreamFnWithDiagnosticModelCallEvents (streamwrap.md §4.9): it emits
// model.call.started before each call and exactly one of
// model.call.completed or model.call.error when the call ends, with
// timings, response bytes, usage and a stable error token. It never
// changes events or messages. A nil Sink makes it a pass-through.
func DiagnosticModelCallEvents(next llm.StreamFunc, cfg DiagnosticsConfig) llm.StreamFunc {
	if cfg.Sink == nil {
		return next
	}
	var seq atomic.Uint64
	return func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		s := diagPool.Get().(*diagStream)
		s.cfg = &cfg
		ev := &s.ev
		*ev = ModelCallEvent{
			Phase: ModelCallStarted, RunID: cfg.RunID, CallSeq: seq.Add(1),
			Provider: req.Model.Provider, Model: req.Model.ID, API: req.Model.API,
			Start: time.Now(),
		}
		if cfg.PromptStats {
			ev.Prompt = promptStats(req)
		}
		cfg.Sink.ModelCall(ev)
		inner, err := next(ctx, req)
		if err != nil {
			s.end(ModelCallError, DiagRequestFailed, err.Error(), nil)
			*s = diagStream{}
			diagPool.Put(s)
			return nil, err
		}
		s.init(inner)
		s.fuse()
		return s, nil
	}
}

var diagPool = sync.Pool{New: func() any { return new(diagStream) }}

type diagStream struct {
	base
	cfg   *DiagnosticsConfig
	ev    ModelCallEvent
	ended bool
	// idle is the idle decorator right below (Chain's order), fused: Step
	// pulls from idle's inner stream and hands idle only the events it does
	// something with (idleStream.passes).
	idle *idleStream
}

// fuse fuses the idle decorator below into this layer, when it is one.
func (s *diagStream) fuse() {
	if is, ok := s.inner.(*idleStream); ok && is.next != nil {
		s.idle = is
		s.setNext(is.next)
	}
}

func (s *diagStream) Next() bool {
	_, _, ok := s.Step()
	return ok
}

// Step is Next, then Event and Message (llm.Stepper; see base.next).
func (s *diagStream) Step() (*llm.Event, *llm.Message, bool) {
	if s.ended {
		return nil, s.Message(), false
	}
	e, msg, ok := s.src.Step() // (base.src)
	if !ok || s.pass&passBit(e) == 0 {
		e, msg, ok = s.up(e, msg, ok)
	}
	if s.idle != nil && (!ok || e.Type.IsTerminal() || !s.idle.passes()) {
		e, msg, ok = s.idle.settle(e, msg, ok)
	}
	s.base.msg = msg
	if !ok {
		s.finish(nil)
		return nil, s.Message(), false
	}
	s.base.ev = e
	if s.ev.Events == 0 {
		s.ev.TimeToFirstByte = time.Since(s.ev.Start)
	}
	s.ev.Events++
	switch e.Type {
	case llm.EventTextDelta, llm.EventThinkingDelta, llm.EventToolCallDelta:
		s.ev.ResponseStreamBytes += int64(len(e.Delta))
	case llm.EventDone, llm.EventError:
		s.finish(e)
	}
	return e, s.Message(), true
}

// finish emits the terminal diagnostic event for the final message.
func (s *diagStream) finish(e *llm.Event) {
	if s.ended {
		return
	}
	m := s.curMessage()
	switch {
	case e == nil && m.StopReason == llm.StopNone:
		msg := ""
		if err := s.inner.Err(); err != nil {
			msg = err.Error()
		}
		s.end(ModelCallError, DiagNoTerminal, msg, m)
	case m.StopReason == llm.StopError || m.StopReason == llm.StopAborted:
		cat := DiagStreamError
		if m.StopReason == llm.StopAborted {
			cat = DiagAborted
		}
		if err := s.inner.Err(); err != nil && isIdleTimeout(err) {
			cat = DiagIdleTimeout
		}
		s.end(ModelCallError, cat, m.ErrorMessage, m)
	default:
		s.end(ModelCallCompleted, "", "", m)
	}
}

func isIdleTimeout(err error) bool { return errors.Is(err, ErrIdleTimeout) }

func (s *diagStream) end(p ModelCallPhase, cat, msg string, m *llm.Message) {
	s.ended = true
	ev := &s.ev
	ev.Phase = p
	ev.Duration = time.Since(ev.Start)
	ev.ErrorCategory = cat
	ev.ErrorMessage = msg
	if m != nil {
		ev.Usage = m.Usage
		ev.StopReason = m.StopReason
	}
	s.cfg.Sink.ModelCall(ev)
}

func (s *diagStream) Close() error {
	if !s.ended && s.inner != nil {
		s.end(ModelCallError, DiagClosedEarly, "", s.curMessage())
	}
	err := s.closeInner()
	*s = diagStream{}
	diagPool.Put(s)
	return err
}

// promptStats counts characters (UTF-16 code units, as OpenClaw does) of
// the request.
func promptStats(req *llm.Request) PromptStats {
	var p PromptStats
	p.InputMessagesCount = len(req.Messages)
	for i := range req.Messages {
		m := &req.Messages[i]
		for j := range m.Content {
			b := &m.Content[j]
			p.InputMessagesChars += utf16Len(b.Text) + utf16Len(b.Arguments) + utf16Len(b.Name)
		}
	}
	p.SystemPromptChars = utf16Len(req.System)
	p.ToolDefinitionsCount = len(req.Tools)
	for i := range req.Tools {
		t := &req.Tools[i]
		p.ToolDefinitionsChars += utf16Len(t.Name) + utf16Len(t.Description) + utf16Len(t.Parameters)
	}
	p.TotalChars = p.InputMessagesChars + p.SystemPromptChars + p.ToolDefinitionsChars
	return p
}
