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
//   - repair.ProfileOpenClaw: the live best-effort parse (repair.PiParse,
//     kept only when it is an object, else {}, as @openclaw/ai's
//     parseStreamingJson) at toolcall_end. The end-of-stream checks of
//     @openclaw/ai 2026.9.6's transports on all three wires belong to the
//     decoder (provider.Options.OpenClaw, which the openclaw profile's
//     streams are decoded with); for api openai-completions this stage
//     still applies the chat check to a stream decoded without them: when
//     a tool call has an empty name, no argument text, or argument text
//     that is not a JSON object, all tool calls are dropped and the turn
//     ends as an error with MsgMalformedToolCall.
//   - repair.ProfileExtended: arguments that are a JSON object are kept;
//     anything else goes through repair.Extended. Arguments cut short (the
//     stream ended without done, or stopped for length) are refused: the
//     turn ends with stop reason length (or error) and an error message
//     naming the cut tool call, so it is never executed. A tool call whose
//     arguments are malformed and cannot be repaired (not cut) is dropped
//     on its own when the turn ended normally (done, stop reason toolUse
//     or stop) and at least one other tool call is fine: the dropped call
//     is removed from the final message, the others keep the stop reason
//     and are executed, and ErrorMessage names every dropped call, e.g.
//     `tool call "read" (call_3) dropped: malformed arguments that could
//     not be repaired (syntax)`. When no tool call is left (or the turn
//     has a cut call, or stopped for length, or failed), the turn ends as
//     an error naming the tool call, as before.
//
// How a drop shows to event consumers: the dropped call's toolcall_start,
// deltas and toolcall_end have already gone out (its toolcall_end carries
// the undecided, empty arguments); the drop happens at the done event,
// whose reason stays toolUse, and only the final message (Message() once
// done is out) lacks the call. The final message is what counts: the
// engine runs its tool calls, and ErrorMessage says what was dropped.
// Consumers that mirror blocks by content index must rebuild from the
// final message, as `ocbench replay --events` shows: its last line is the
// final message, without the dropped call.
//
// Standing alone, the stage drops at the done event it sees. Chain builds
// it with the drop deferred to DropUnrepairedToolCalls' logic, applied in
// its stop-reason stage above the decorators that keep per-content-index
// state (promotion, name trimming, OpenClaw's repair, entity decoding), so
// that none of them sees content indices shift under it; OpenClaw's repair
// may still fix such a call on the way up, and then it is kept.
//   - repair.ProfileOff: arguments that are not a JSON object end the turn
//     as an error naming the tool call.
//
// A turn turned into an error has its done event replaced by an error event
// of reason error.
func ArgumentStage(next llm.StreamFunc, profile repair.Profile) llm.StreamFunc {
	return argumentStage(next, profile, false)
}

// argumentStage is ArgumentStage; with deferDrop the extended profile's
// per-call drop is left to DropUnrepairedToolCalls further up the chain
// (the calls to drop keep empty Arguments).
func argumentStage(next llm.StreamFunc, profile repair.Profile, deferDrop bool) llm.StreamFunc {
	return func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		inner, err := next(ctx, req)
		if err != nil {
			return nil, err
		}
		s := stagePool.Get().(*stageStream)
		s.init(inner)
		s.profile = profile
		s.api = req.Model.API
		s.deferDrop = deferDrop
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
	profile   repair.Profile
	api       llm.API
	ev        llm.Event
	own       bool // Event returns &ev
	outcome   []uint8
	errKind   []string // stable token of a malformed block's problem
	scratch   []byte
	msgBuf    []byte
	finished  bool
	deferDrop bool
	pt        passThrough
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
	_, _, ok := s.Step()
	return ok
}

// Step is Next, then Event and Message (llm.Stepper; see base.next).
func (s *stageStream) Step() (*llm.Event, *llm.Message, bool) {
	ev, msg, ok := s.next.Step()
	return s.settle(ev, msg, ok)
}

// passThrough skips the stage on every event but toolcall_end and the
// terminal ones (passer).
func (s *stageStream) passThrough() *passThrough {
	return s.pt.fuse(s.next, passMask(llm.EventToolCallEnd, llm.EventDone, llm.EventError), s)
}

// settle is Step after the pull (passer).
func (s *stageStream) settle(ev *llm.Event, msg *llm.Message, ok bool) (*llm.Event, *llm.Message, bool) {
	s.own = false
	s.base.msg = msg
	if !ok {
		s.finish(nil)
		return nil, s.Message(), false
	}
	s.base.ev = ev
	e := s.curEvent()
	switch e.Type {
	case llm.EventToolCallEnd:
		if b := toolBlock(s.curMessage(), e.ContentIndex); b != nil {
			s.decide(e.ContentIndex, b)
		}
	case llm.EventDone, llm.EventError:
		s.finish(e)
	}
	return s.Event(), s.Message(), true
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
			if !isObject(out) {
				// @openclaw/ai's parseStreamingJson keeps objects only
				// (asNonArrayRecord): anything else is {}.
				out = append(out[:0], "{}"...)
			}
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
			s.set(i, argMalformed, repairErrKind(err))
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
		if s.profile != repair.ProfileOff && normalEnd && s.dropOnly(m) {
			if !s.deferDrop {
				s.msgBuf, s.scratch = dropUnrepaired(m, s.msgBuf[:0], s.scratch[:0], s.errKind)
			}
			return
		}
		s.refuse(m, e)
	}
}

// dropOnly reports whether the extended profile drops m's malformed tool
// calls one by one rather than refusing the turn: the turn stopped for
// toolUse or stop, no tool call was cut, at least one is malformed and at
// least one is not.
func (s *stageStream) dropOnly(m *llm.Message) bool {
	if m.StopReason != llm.StopToolUse && m.StopReason != llm.StopStop {
		return false
	}
	bad, good := 0, 0
	for i := range m.Content {
		if !isToolCall(&m.Content[i]) {
			continue
		}
		switch s.get(i) {
		case argCut:
			return false
		case argMalformed:
			bad++
		default:
			good++
		}
	}
	return bad > 0 && good > 0
}

// dropUnrepaired removes from m the tool calls whose arguments are still
// undecided (empty), appending to msg a clause per dropped call, and sets
// m.ErrorMessage to it (after any message already there). kinds gives the
// repair error kind by content index where known; a call without one is
// tried once more with repair.Extended (an upper decorator may have left
// it), and kept with the repaired arguments when that succeeds. Blocks are
// moved by swapping, so that every block's buffers stay referenced exactly
// once in m.Content's backing array (they are reused by pooled streams).
// It returns the grown msg and scratch buffers, and reports nothing when no
// call was dropped.
func dropUnrepaired(m *llm.Message, msg, scratch []byte, kinds []string) ([]byte, []byte) {
	k, dropped := 0, 0
	for i := range m.Content {
		b := &m.Content[i]
		if isToolCall(b) && len(trimSpace(b.Arguments)) == 0 {
			kind := ""
			if i < len(kinds) {
				kind = kinds[i]
			}
			if kind == "" {
				out, _, err := repair.Extended(scratch[:0], b.RawArgs, trimSpace(b.Name))
				if err == nil {
					scratch = out
					b.Arguments = setBytes(b.Arguments, out)
				} else {
					kind = repairErrKind(err)
				}
			}
			if kind != "" {
				if dropped > 0 {
					msg = append(msg, "; "...)
				}
				dropped++
				msg = appendDropped(msg, b, kind)
				continue
			}
		}
		if k != i {
			m.Content[k], m.Content[i] = m.Content[i], m.Content[k]
		}
		k++
	}
	if dropped == 0 {
		return msg, scratch
	}
	m.Content = m.Content[:k]
	if m.ErrorMessage != "" {
		m.ErrorMessage = m.ErrorMessage + "; " + string(msg)
	} else {
		m.ErrorMessage = string(msg)
	}
	return msg, scratch
}

// appendDropped appends `tool call "NAME" (ID) dropped: ... (KIND)`.
func appendDropped(msg []byte, b *llm.Block, kind string) []byte {
	msg = append(msg, "tool call "...)
	msg = llm.AppendJSONString(msg, trimSpace(b.Name))
	if id := trimSpace(b.ID); len(id) > 0 {
		msg = append(msg, " ("...)
		msg = append(msg, id...)
		msg = append(msg, ')')
	}
	msg = append(msg, " dropped: malformed arguments that could not be repaired ("...)
	msg = append(msg, kind...)
	return append(msg, ')')
}

// repairErrKind is the stable token of a repair.Extended error.
func repairErrKind(err error) string {
	if errors.Is(err, repair.ErrTruncated) {
		return "truncated"
	}
	var re *repair.Error
	if errors.As(err, &re) && re.Kind != "" {
		return re.Kind
	}
	return "syntax"
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
