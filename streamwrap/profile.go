package streamwrap

import (
	"context"
	"errors"
	"strconv"
	"sync"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/streamwrap/repair"
)

// MsgMalformedToolCall is the error message of @openclaw/ai 2026.9.6's
// openai-completions provider when it drops a turn's tool calls
// (finalizeOpenAICompletionsToolCalls).
const MsgMalformedToolCall = "Provider returned an incomplete or malformed tool call"

// ArgumentStage decides the tool-call arguments a decoder left undecided
// (empty Arguments: the text was not valid JSON), by profile. It sits
// right above the provider (Chain's step 0), where pi-ai's own parse runs
// in OpenClaw, so OpenClaw's repair decorator still overrides it.
//
//   - repair.ProfileOpenClaw: pi-ai's parse (repair.PiParse) at
//     toolcall_end, and, for api openai-completions, the 2026.9.6
//     provider's finalisation: when a tool call has an empty name, no
//     argument text, or argument text that is not a JSON object, all tool
//     calls are dropped and the turn ends as an error with
//     MsgMalformedToolCall.
//   - repair.ProfileExtended: arguments that are a JSON object are kept;
//     anything else goes through repair.Extended. Arguments cut short (the
//     stream ended without done, or stopped for length) are refused: the
//     turn ends with stop reason length (or error) and an error message
//     naming the cut tool call, so it is never executed. Unrepairable
//     arguments end the turn as an error naming the tool call.
//   - repair.ProfileOff: arguments that are not a JSON object end the turn
//     as an error naming the tool call.
//
// A turn turned into an error has its done event replaced by an error event
// of reason error.
func ArgumentStage(next llm.StreamFunc, profile repair.Profile) llm.StreamFunc {
	return func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		inner, err := next(ctx, req)
		if err != nil {
			return nil, err
		}
		s := stagePool.Get().(*stageStream)
		s.init(inner)
		s.profile = profile
		s.api = req.Model.API
		return s, nil
	}
}

var stagePool = sync.Pool{New: func() any { return new(stageStream) }}

// Per-block outcome of the stage.
const (
	argOpen      uint8 = iota // not decided yet
	argDecided                // arguments set
	argCut                    // truncated: refused
	argMalformed              // unrepairable, or repair is off
)

type stageStream struct {
	base
	profile  repair.Profile
	api      string
	ev       llm.Event
	own      bool // Event returns &ev
	outcome  []uint8
	errKind  []string // stable token of a malformed block's problem
	scratch  []byte
	msgBuf   []byte
	finished bool
}

func (s *stageStream) Event() *llm.Event {
	if s.own {
		return &s.ev
	}
	return s.curEvent()
}

func (s *stageStream) set(i int, o uint8, kind string) {
	for len(s.outcome) <= i {
		s.outcome = append(s.outcome, argOpen)
		s.errKind = append(s.errKind, "")
	}
	s.outcome[i] = o
	s.errKind[i] = kind
}

func (s *stageStream) get(i int) uint8 {
	if i < len(s.outcome) {
		return s.outcome[i]
	}
	return argOpen
}

func (s *stageStream) Next() bool {
	s.own = false
	if !s.advance() {
		s.finish(nil)
		return false
	}
	e := s.curEvent()
	switch e.Type {
	case llm.EventToolCallEnd:
		if b := toolBlock(s.curMessage(), e.ContentIndex); b != nil {
			s.decide(e.ContentIndex, b)
		}
	case llm.EventDone, llm.EventError:
		s.finish(e)
	}
	return true
}

// isObject reports whether js (trimmed) is a JSON object; js is assumed to
// be valid JSON.
func isObject(js []byte) bool {
	t := trimSpace(js)
	return len(t) > 0 && t[0] == '{'
}

// validObject reports whether text is a valid JSON object.
func validObject(text []byte) bool {
	return isObject(text) && repair.Valid(trimSpace(text))
}

// decide settles block i's arguments by profile.
func (s *stageStream) decide(i int, b *llm.Block) {
	if s.get(i) != argOpen {
		return
	}
	switch s.profile {
	case repair.ProfileOpenClaw:
		if len(b.Arguments) == 0 {
			out, _ := repair.PiParse(s.scratch[:0], b.RawArgs)
			s.scratch = out
			b.Arguments = setBytes(b.Arguments, out)
		}
		s.set(i, argDecided, "")
	case repair.ProfileOff:
		if len(b.Arguments) == 0 || !isObject(b.Arguments) {
			b.Arguments = b.Arguments[:0]
			s.set(i, argMalformed, "off")
			return
		}
		s.set(i, argDecided, "")
	default:
		if len(b.Arguments) > 0 && isObject(b.Arguments) {
			s.set(i, argDecided, "")
			return
		}
		src := b.RawArgs
		if len(trimSpace(src)) == 0 {
			src = b.Arguments
		}
		out, _, err := repair.Extended(s.scratch[:0], src, trimSpace(b.Name))
		if err != nil {
			b.Arguments = b.Arguments[:0]
			if errors.Is(err, repair.ErrTruncated) {
				s.set(i, argCut, "truncated")
				return
			}
			kind := "syntax"
			var re *repair.Error
			if errors.As(err, &re) {
				kind = re.Kind
			}
			s.set(i, argMalformed, kind)
			return
		}
		s.scratch = out
		b.Arguments = setBytes(b.Arguments, out)
		s.set(i, argDecided, "")
	}
}

// finish decides open blocks and applies the profile's verdict on the
// final message. e is the terminal event, or nil when the inner stream
// ended without one.
func (s *stageStream) finish(e *llm.Event) {
	if s.finished {
		return
	}
	s.finished = true
	m := s.curMessage()
	normalEnd := e != nil && e.Type == llm.EventDone
	for i := range m.Content {
		b := &m.Content[i]
		if !isToolCall(b) || s.get(i) != argOpen {
			continue
		}
		if s.profile == repair.ProfileOpenClaw || len(b.Arguments) > 0 || normalEnd {
			s.decide(i, b)
			continue
		}
		// A tool call still open when the stream failed was cut.
		if s.profile == repair.ProfileOff {
			s.set(i, argMalformed, "truncated")
		} else {
			s.set(i, argCut, "truncated")
		}
	}
	switch s.profile {
	case repair.ProfileOpenClaw:
		if normalEnd && s.api == "openai-completions" && openAICompletionsRejects(m) {
			dropToolCalls(m)
			m.Fail(llm.StopError, MsgMalformedToolCall)
			s.toError(e)
		}
	default:
		s.refuse(m, e)
	}
}

// openAICompletionsRejects is finalizeOpenAICompletionsToolCalls' test: a
// tool call with an empty name, no argument text, or argument text that is
// not a JSON object.
func openAICompletionsRejects(m *llm.Message) bool {
	for i := range m.Content {
		b := &m.Content[i]
		if !isToolCall(b) {
			continue
		}
		if len(b.Name) == 0 || len(trimSpace(b.RawArgs)) == 0 || !validObject(b.RawArgs) {
			return true
		}
	}
	return false
}

// dropToolCalls removes m's tool-call blocks, keeping the others in order.
func dropToolCalls(m *llm.Message) {
	out := m.Content[:0:0]
	for i := range m.Content {
		if !isToolCall(&m.Content[i]) {
			out = append(out, m.Content[i])
		}
	}
	m.Content = out
}

// refuse ends a turn whose tool calls were cut or malformed (extended and
// off profiles).
func (s *stageStream) refuse(m *llm.Message, e *llm.Event) {
	first, n, cut := -1, 0, false
	for i := range m.Content {
		o := s.get(i)
		if !isToolCall(&m.Content[i]) || o != argCut && o != argMalformed {
			continue
		}
		if first < 0 {
			first = i
			cut = o == argCut
		}
		n++
	}
	if first < 0 {
		return
	}
	b := &m.Content[first]
	msg := s.msgBuf[:0]
	msg = append(msg, "tool call "...)
	msg = llm.AppendJSONString(msg, trimSpace(b.Name))
	if id := trimSpace(b.ID); len(id) > 0 {
		msg = append(msg, " ("...)
		msg = append(msg, id...)
		msg = append(msg, ')')
	}
	if cut {
		msg = append(msg, " was cut off before its arguments were complete"...)
	} else if s.profile == repair.ProfileOff {
		msg = append(msg, " has malformed arguments (repair is off)"...)
	} else {
		msg = append(msg, " has malformed arguments that could not be repaired ("...)
		msg = append(msg, s.errKind[first]...)
		msg = append(msg, ')')
	}
	if n > 1 {
		msg = append(msg, " (and "...)
		msg = strconv.AppendInt(msg, int64(n-1), 10)
		msg = append(msg, " more)"...)
	}
	s.msgBuf = msg
	switch {
	case cut && m.StopReason == llm.StopLength:
		msg = append(msg, "; the model stopped at its output limit"...)
		m.ErrorMessage = string(msg)
	case m.StopReason == llm.StopError || m.StopReason == llm.StopAborted:
		if m.ErrorMessage != "" {
			msg = append(msg, ": "...)
			msg = append(msg, m.ErrorMessage...)
		}
		m.ErrorMessage = string(msg)
	default:
		m.Fail(llm.StopError, string(msg))
		s.toError(e)
	}
}

// toError replaces the terminal event e by an error event of reason error.
func (s *stageStream) toError(e *llm.Event) {
	if e == nil {
		return
	}
	s.ev = *e
	s.ev.Type = llm.EventError
	s.ev.Reason = llm.StopError
	s.own = true
}

func (s *stageStream) Close() error {
	err := s.closeInner()
	*s = stageStream{outcome: s.outcome[:0], errKind: s.errKind[:0], scratch: s.scratch[:0], msgBuf: s.msgBuf[:0]}
	stagePool.Put(s)
	return err
}
