package scripted

import (
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider/wireenc"
)

// action is what the player asks its driver to do next.
type action uint8

const (
	actEvent action = iota // deliver the bytes appended to buf, after the delay
	actPause               // send nothing for the delay (forever when <= 0)
	actEOF                 // end the body
)

// Player states.
const (
	psStart uint8 = iota
	psSteps
	psDone
	psEnd
)

// How a played turn ended.
const (
	endNone  uint8 = iota
	endDone        // a terminal done event was sent
	endError       // an in-band error event was sent
	endEOF         // the body ended without a terminal event
)

// player turns one scripted Turn into wire bytes, one llm event at a
// time, keeping the message the events build as the encoder's context. It
// is reset and reused; playing a turn allocates nothing after a warm-up.
type player struct {
	enc  wireenc.Encoder
	msg  llm.Message
	buf  []byte
	turn *Turn
	wire wireenc.Wire

	chunk    int // script default delta size
	lat      Latency
	state    uint8
	end      uint8
	step     int
	sub      uint8 // phase within the current step
	pos      int   // bytes of the current prose step sent
	call     int   // current call of a tools step
	rr       int   // round-robin cursor of interleaved calls
	cpos     []int // bytes of each call's arguments sent
	cci      []int // content index of each call
	events   int   // non-empty events delivered so far
	nextTool int   // next wire index of a chat tool call
	lastTool int   // wire index of the previous tool call
	nextID   int   // ordinal of generated tool-call ids
	sentTool bool
	outBytes int   // content bytes sent, for estimated usage
	inTokens int64 // estimated prompt tokens, for estimated usage
}

// reset prepares p to play t of script s on wire w. inTokens is the
// estimated prompt size, used when the turn has no usage.
func (p *player) reset(w wireenc.Wire, meta wireenc.Meta, opts wireenc.Options, s *Script, t *Turn, inTokens int64) {
	p.enc.Reset(w, meta, opts)
	p.msg.Reset()
	p.msg.Role = llm.RoleAssistant
	p.buf = p.buf[:0]
	p.turn, p.wire = t, w
	p.chunk = 0
	if s != nil {
		p.chunk = s.Chunk
	}
	p.lat = latencyOf(s, t)
	p.state, p.end = psStart, endNone
	p.step, p.sub, p.pos, p.call, p.rr = 0, 0, 0, 0, 0
	p.events, p.nextTool, p.lastTool, p.nextID = 0, 0, 0, 0
	p.sentTool = false
	p.outBytes = 0
	p.inTokens = inTokens
}

// release drops references to caller data before pooling.
func (p *player) release() {
	p.turn = nil
	p.enc.Reset(p.wire, wireenc.Meta{}, wireenc.Options{})
}

// next appends the bytes of the next non-empty event to p.buf and says
// what to do with them: deliver after a delay, pause, or end.
func (p *player) next() (action, time.Duration) {
	for {
		mark := len(p.buf)
		act, d := p.advance()
		if act != actEvent {
			return act, d
		}
		if len(p.buf) == mark {
			continue // an event the wire does not show (a chat text_start)
		}
		if p.events == 0 {
			d = p.lat.FirstEvent
		} else {
			d = p.lat.Gap
		}
		p.events++
		return actEvent, d
	}
}

func (p *player) emit(t llm.EventType, ci int, delta []byte) {
	ev := llm.Event{Type: t, ContentIndex: ci, Delta: delta}
	p.buf = p.enc.AppendEvent(p.buf, &ev, &p.msg)
}

// advance performs one step of the turn; actEvent may have appended
// nothing.
func (p *player) advance() (action, time.Duration) {
	t := p.turn
	switch p.state {
	case psStart:
		p.state = psSteps
		p.msg.Usage = p.usage()
		p.msg.Usage.Output = 0
		p.msg.Usage.TotalTokens = 0
		p.emit(llm.EventStart, 0, nil)
		return actEvent, 0
	case psSteps:
		if p.step >= len(t.Steps) {
			p.state = psDone
			return actEvent, 0
		}
		st := &t.Steps[p.step]
		switch st.Kind {
		case StepText, StepThinking:
			p.prose(st)
		case StepTools:
			return p.tools(st)
		case StepStall:
			p.step++
			return actPause, st.Duration
		case StepError:
			p.buf = p.enc.AppendError(p.buf, st.ErrType, st.Message)
			p.state, p.end = psEnd, endError
		case StepRaw:
			p.buf = wireenc.AppendRaw(p.buf, st.Event, st.Data)
			p.step++
		case StepEOF:
			p.state, p.end = psEnd, endEOF
			return actEOF, 0
		case StepComment:
			p.buf = wireenc.AppendComment(p.buf, st.Text)
			p.step++
		default:
			p.step++
		}
		return actEvent, 0
	case psDone:
		p.state, p.end = psEnd, endDone
		m := &p.msg
		m.StopReason = t.Stop
		if m.StopReason == llm.StopNone {
			m.StopReason = llm.StopStop
			if p.sentTool {
				m.StopReason = llm.StopToolUse
			}
		}
		m.ErrorMessage = t.ErrorMessage
		m.Usage = p.usage()
		p.buf = p.enc.AppendDoneRaw(p.buf, m, t.RawStop)
		return actEvent, 0
	}
	if p.end == endNone {
		p.end = endEOF
	}
	return actEOF, 0
}

// usage returns the turn's usage, or an estimate when it has none.
func (p *player) usage() llm.Usage {
	u := p.turn.Usage
	if u == (llm.Usage{}) {
		u.Input = p.inTokens
		u.Output = int64(p.outBytes+3) / 4
	}
	u.TotalTokens = u.Input + u.Output + u.CacheRead + u.CacheWrite
	return u
}

func (p *player) chunkOf(st *Step) int {
	if st.Chunk > 0 {
		return st.Chunk
	}
	return p.chunk
}

// blockIndex sets the wire index of a new block: its content index on the
// wires that number every block, so that quirks on one block do not shift
// the others.
func (p *player) blockIndex(ci int) {
	if p.wire != wireenc.OpenAIChat {
		p.enc.SetWireIndex(ci, ci)
	}
}

// prose plays a text or thinking step: start, deltas, end.
func (p *player) prose(st *Step) {
	if p.sub == 0 {
		kind, start := llm.BlockText, llm.EventTextStart
		if st.Kind == StepThinking {
			kind, start = llm.BlockThinking, llm.EventThinkingStart
		}
		ci, b := p.msg.AddBlock(kind)
		if kind == llm.BlockThinking {
			b.Signature = append(b.Signature, st.Signature...)
			b.Redacted = st.Redacted
		}
		p.blockIndex(ci)
		p.sub, p.pos = 1, 0
		p.emit(start, ci, nil)
		return
	}
	ci := len(p.msg.Content) - 1
	b := &p.msg.Content[ci]
	if p.pos < len(st.Text) && !st.Redacted {
		n := splitPoint(st.Text[p.pos:], p.chunkOf(st))
		b.Text = append(b.Text, st.Text[p.pos:p.pos+n]...)
		p.pos += n
		p.outBytes += n
		t := llm.EventTextDelta
		if b.Type == llm.BlockThinking {
			t = llm.EventThinkingDelta
		}
		p.emit(t, ci, b.Text[len(b.Text)-n:])
		return
	}
	t := llm.EventTextEnd
	if b.Type == llm.BlockThinking {
		t = llm.EventThinkingEnd
	}
	p.sub = 0
	p.step++
	p.emit(t, ci, nil)
}

// tools plays a tools step: each call's start, its argument deltas (one
// call after the other, or round-robin when interleaved), its end.
func (p *player) tools(st *Step) (action, time.Duration) {
	calls := st.Calls
	switch p.sub {
	case 0: // start the calls: all now when interleaved, else one
		if p.call == 0 {
			p.cpos = p.cpos[:0]
			p.cci = p.cci[:0]
		}
		c := &calls[p.call]
		ci, b := p.msg.AddBlock(llm.BlockToolCall)
		if c.ID == "" {
			// call_scripted_<stream>_<n>: unique per answer, as a real
			// provider's ids are, so that a session's later results do
			// not pair with an earlier answer's calls.
			b.ID = append(b.ID, idPrefix(p.wire)...)
			if st := p.enc.Meta().Stream; st != 0 {
				b.ID = strconv.AppendUint(b.ID, st, 10)
				b.ID = append(b.ID, '_')
			}
			b.ID = strconv.AppendInt(b.ID, int64(p.nextID), 10)
			p.nextID++
		} else {
			b.ID = append(b.ID, c.ID...)
		}
		b.Name = append(b.Name, c.Name...)
		p.cpos = append(p.cpos, 0)
		p.cci = append(p.cci, ci)
		idx := ci
		if p.wire == wireenc.OpenAIChat {
			idx = p.nextTool
		}
		switch {
		case c.NoIndex:
			idx = wireenc.NoIndex
		case c.ReuseIndex:
			idx = p.lastTool
		case p.wire == wireenc.OpenAIChat:
			p.nextTool++
		}
		if idx != wireenc.NoIndex {
			p.lastTool = idx
		}
		p.enc.SetWireIndex(ci, idx)
		p.sentTool = true
		p.outBytes += len(c.Name)
		if !st.Interleave || p.call == len(calls)-1 {
			p.sub = 1
			if !st.Interleave {
				p.rr = p.call
			} else {
				p.rr = 0
			}
		} else {
			p.call++
		}
		p.emit(llm.EventToolCallStart, ci, nil)
		return actEvent, 0
	case 1: // argument deltas
		k, ok := p.nextDeltaCall(st)
		if ok {
			c := &calls[k]
			limit := len(c.Args)
			if c.Cut > 0 {
				limit = c.Cut
			}
			if p.cpos[k] >= limit { // the scripted cut inside the arguments
				p.state, p.end = psEnd, endEOF
				return actEOF, 0
			}
			n := splitPoint(c.Args[p.cpos[k]:limit], p.chunkOf(st))
			ci := p.cci[k]
			b := &p.msg.Content[ci]
			b.RawArgs = append(b.RawArgs, c.Args[p.cpos[k]:p.cpos[k]+n]...)
			p.cpos[k] += n
			p.outBytes += n
			p.emit(llm.EventToolCallDelta, ci, b.RawArgs[len(b.RawArgs)-n:])
			return actEvent, 0
		}
		p.sub = 2
		if st.Interleave {
			p.rr = 0
		}
		fallthrough
	default: // end the call(s)
		k := p.rr
		ci := p.cci[k]
		if st.Interleave && k < len(calls)-1 {
			p.rr++
		} else if !st.Interleave && k < len(calls)-1 {
			p.call = k + 1
			p.sub = 0
		} else {
			p.step++
			p.sub, p.call, p.rr = 0, 0, 0
		}
		p.emit(llm.EventToolCallEnd, ci, nil)
		return actEvent, 0
	}
}

// nextDeltaCall returns the call whose argument delta goes next, or false
// when every current call has sent all its arguments (a call with a cut
// that is due is returned, so that the cut happens).
func (p *player) nextDeltaCall(st *Step) (int, bool) {
	if !st.Interleave {
		k := p.rr
		c := &st.Calls[k]
		return k, p.cpos[k] < len(c.Args) || (c.Cut > 0 && p.cpos[k] >= c.Cut)
	}
	n := len(st.Calls)
	for i := 0; i < n; i++ {
		k := (p.rr + i) % n
		c := &st.Calls[k]
		if p.cpos[k] < len(c.Args) || (c.Cut > 0 && p.cpos[k] >= c.Cut) {
			p.rr = (k + 1) % n
			return k, true
		}
	}
	return 0, false
}

func idPrefix(w wireenc.Wire) string {
	if w == wireenc.Anthropic {
		return "toolu_scripted_"
	}
	return "call_scripted_"
}

// splitPoint returns the length of the next delta of s: at most chunk
// bytes, cut back to a UTF-8 boundary but never below one rune; all of s
// when chunk <= 0.
func splitPoint(s string, chunk int) int {
	if chunk <= 0 || chunk >= len(s) {
		return len(s)
	}
	n := chunk
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	if n == 0 {
		_, n = utf8.DecodeRuneInString(s)
	}
	return n
}
