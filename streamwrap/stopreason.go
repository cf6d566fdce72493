package streamwrap

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/ocbench/ocbench/llm"
)

// MsgTurnFailedBeforeContent is the text of the one block of the synthetic
// error message built when a call fails with an unhandled stop reason.
const MsgTurnFailedBeforeContent = "[assistant turn failed before producing content]"

const unhandledMarker = "unhandled stop reason:"

// NormalizeUnhandledStopReasonMessage is OpenClaw's
// normalizeUnhandledStopReasonMessage: when msg, trimmed, matches
// ^Unhandled stop reason:\s*(.+)$ (case-insensitive, one line), it returns
// "The model stopped because the provider returned an unhandled stop
// reason: <reason>. Please rephrase and try again." and true.
func NormalizeUnhandledStopReasonMessage(msg string) (string, bool) {
	reason, ok := unhandledStopReason(msg)
	if !ok {
		return "", false
	}
	return "The model stopped because the provider returned an unhandled stop reason: " + reason + ". Please rephrase and try again.", true
}

func unhandledStopReason(msg string) (string, bool) {
	t := trimSpace(msg)
	if len(t) < len(unhandledMarker) || !strings.EqualFold(t[:len(unhandledMarker)], unhandledMarker) {
		return "", false
	}
	r := t[len(unhandledMarker):]
	// \s* then (.+)$: JavaScript's . stops at line terminators.
	r = strings.TrimLeft(r, " \t\n\v\f\r\u00a0\ufeff")
	if r == "" || strings.ContainsAny(r, "\n\r\u2028\u2029") {
		return "", false
	}
	return r, true
}

// knownRawStopReasons are the wire stop and finish reasons pi-ai maps; any
// other raw reason is "unhandled" (pi-ai throws "Unhandled stop reason: X").
var knownRawStopReasons = [...]string{
	// OpenAI chat completions
	"stop", "length", "tool_calls", "function_call", "content_filter",
	// Anthropic messages
	"end_turn", "stop_sequence", "pause_turn", "max_tokens", "model_context_window_exceeded", "tool_use", "refusal",
	"compaction", "sensitive", // @openclaw/ai maps them (stop, error)
	// OpenAI responses
	"completed", "incomplete", "failed", "cancelled", "in_progress", "queued", "max_output_tokens",
	// common extras of compatible servers
	"eos", "error", "network_error", "sensitive_words_detected",
}

func knownRawStopReason(r []byte) bool {
	for _, k := range knownRawStopReasons {
		if string(r) == k {
			return true
		}
	}
	return false
}

// HandleSensitiveStopReason is OpenClaw's wrapStreamFnHandleSensitiveStopReason
// (streamwrap.md §4.7). A call failure carrying the marker "Unhandled stop
// reason: X" becomes a stream of one error event whose message has stop
// reason error, the rewritten text, one text block
// MsgTurnFailedBeforeContent, zero usage and the model's api, provider and
// id. An error message carrying the marker is rewritten in place, and so is
// a stream that ends without a terminal event with the marker in Err.
//
// Go decoders map stop reasons themselves; when the inner stream exposes
// the wire's raw stop reason (RawStopReasoner) and it is one pi-ai does not
// know (for example "sensitive"), the turn is handled as pi-ai's
// "Unhandled stop reason: <raw>" failure, except on api openai-completions,
// whose @openclaw/ai transport maps every finish reason itself
// ("Provider finish_reason: <raw>").
func HandleSensitiveStopReason(next llm.StreamFunc) llm.StreamFunc {
	return handleSensitiveStopReason(next, false)
}

// handleSensitiveStopReason is HandleSensitiveStopReason; with drop it also
// does DropUnrepairedToolCalls' work at the done event, first (Chain's
// extended profile).
func handleSensitiveStopReason(next llm.StreamFunc, drop bool) llm.StreamFunc {
	return func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		inner, err := next(ctx, req)
		s := stopPool.Get().(*stopStream)
		if err != nil {
			text, ok := NormalizeUnhandledStopReasonMessage(err.Error())
			if !ok {
				stopPool.Put(s)
				return nil, err
			}
			s.synth = true
			s.err = err
			s.buildSynthetic(&req.Model, text)
			return s, nil
		}
		s.init(inner)
		s.model = req.Model
		s.drop = drop
		return s, nil
	}
}

var stopPool = sync.Pool{New: func() any { return new(stopStream) }}

type stopStream struct {
	base
	model    llm.Model
	synth    bool // Message is own, inner may be nil
	pending  bool // the synthetic error event is still to be yielded
	yielded  bool
	own      llm.Message
	ev       llm.Event
	useEv    bool
	err      error
	terminal bool
	finished bool
	drop     bool // apply the extended profile's per-call drop at done
	dropper  dropper
	pt       passThrough
}

func (s *stopStream) buildSynthetic(m *llm.Model, text string) {
	s.own.Reset()
	s.own.Role = llm.RoleAssistant
	_, b := s.own.AddBlock(llm.BlockText)
	b.Text = append(b.Text, MsgTurnFailedBeforeContent...)
	s.own.StopReason = llm.StopError
	s.own.ErrorMessage = text
	s.own.API, s.own.Provider, s.own.Model = m.API, m.Provider, m.ID
	s.own.Timestamp = time.Now().UnixMilli()
	s.pending = true
	s.ev = llm.Event{Type: llm.EventError, Reason: llm.StopError}
}

func (s *stopStream) Event() *llm.Event {
	if s.useEv {
		return &s.ev
	}
	return s.curEvent()
}

func (s *stopStream) Message() *llm.Message {
	if s.synth {
		return &s.own
	}
	return s.curMessage()
}

func (s *stopStream) Err() error {
	if s.synth {
		return s.err
	}
	return s.inner.Err()
}

func (s *stopStream) Next() bool {
	_, _, ok := s.Step()
	return ok
}

// Step is Next, then Event and Message (llm.Stepper; see base.next).
func (s *stopStream) Step() (*llm.Event, *llm.Message, bool) {
	if s.synth {
		if s.pending {
			s.pending = false
			s.useEv = true
			return s.Event(), s.Message(), true
		}
		return nil, s.Message(), false
	}
	ev, msg, ok := s.next.Step()
	return s.settle(ev, msg, ok)
}

// passThrough skips the stage on every event but the terminal ones
// (passer); a synthetic stream has no inner stream to skip to.
func (s *stopStream) passThrough() *passThrough {
	if s.synth {
		return nil
	}
	return s.pt.fuse(s.next, passMask(llm.EventDone, llm.EventError), s)
}

// settle is Step after the pull (passer).
func (s *stopStream) settle(ev *llm.Event, msg *llm.Message, ok bool) (*llm.Event, *llm.Message, bool) {
	s.useEv = false
	s.base.msg = msg
	if ok {
		s.base.ev = ev
	}
	if !ok {
		if !s.terminal {
			s.terminal = true
			if err := s.inner.Err(); err != nil {
				if text, ok := NormalizeUnhandledStopReasonMessage(err.Error()); ok {
					// The iterator "threw" the marker: yield one synthetic error.
					s.synth = true
					s.err = err
					s.buildSynthetic(&s.model, text)
					s.pending = false
					s.useEv = true
					return s.Event(), s.Message(), true
				}
			}
		}
		s.finish()
		return nil, s.Message(), false
	}
	e := s.curEvent()
	if e.Type.IsTerminal() {
		s.terminal = true
		if s.drop && e.Type == llm.EventDone && s.dropper.apply(&s.base, e) {
			s.ev = *e
			s.ev.Type = llm.EventError
			s.ev.Reason = llm.StopError
			s.useEv = true
			e = &s.ev
		}
		partial, message := s.eventMessages(e)
		s.patch(partial, e)
		s.patch(message, e)
		s.finish()
	}
	return s.Event(), s.Message(), true
}

// patch rewrites an error message that carries the marker, or a turn whose
// raw stop reason pi-ai would not know.
func (s *stopStream) patch(m *llm.Message, e *llm.Event) {
	if m == nil {
		return
	}
	if text, ok := NormalizeUnhandledStopReasonMessage(m.ErrorMessage); ok {
		m.StopReason = llm.StopError
		m.ErrorMessage = text
		if e != nil && e.Type == llm.EventError {
			e.Reason = llm.StopError
		}
		return
	}
	if s.model.API == "openai-completions" {
		// @openclaw/ai's completions transport maps every finish reason
		// itself (mapOpenAIStopReason): an unknown one is already the
		// error "Provider finish_reason: X", never the marker.
		return
	}
	raw := s.RawStopReason()
	if len(raw) == 0 || knownRawStopReason(raw) || e == nil {
		return
	}
	m.StopReason = llm.StopError
	m.ErrorMessage = "The model stopped because the provider returned an unhandled stop reason: " + string(raw) + ". Please rephrase and try again."
	if e.Type == llm.EventDone {
		s.ev = *e
		s.ev.Type = llm.EventError
		s.ev.Reason = llm.StopError
		s.useEv = true
	} else {
		e.Reason = llm.StopError
	}
}

func (s *stopStream) finish() {
	if s.finished || s.synth {
		return
	}
	s.finished = true
	m := s.curMessage()
	if text, ok := NormalizeUnhandledStopReasonMessage(m.ErrorMessage); ok {
		m.StopReason = llm.StopError
		m.ErrorMessage = text
	}
}

func (s *stopStream) Close() error {
	err := s.closeInner()
	own := s.own
	own.Reset()
	*s = stopStream{own: own, dropper: s.dropper.reset()}
	stopPool.Put(s)
	return err
}
