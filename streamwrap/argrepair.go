package streamwrap

import (
	"bytes"
	"context"
	"strings"
	"sync"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/streamwrap/repair"
)

// ShouldRepairMalformedToolCallArguments is OpenClaw's gate for the
// argument-repair decorator (streamwrap.md §4.4): provider id kimi on
// anthropic-messages, any openai-completions model, and the Azure and
// ChatGPT Responses transports. Plain openai-responses and kimi-coding are
// not repaired.
func ShouldRepairMalformedToolCallArguments(provider string, api llm.API) bool {
	switch api {
	case "openai-completions", "azure-openai-responses", "openai-chatgpt-responses":
		return true
	case "anthropic-messages":
		return strings.ToLower(trimSpace(provider)) == "kimi"
	}
	return false
}

// RepairConfig configures RepairMalformedToolCallArguments.
type RepairConfig struct {
	// Logf, when set, receives OpenClaw's one-time warning per repaired
	// block ("repairing malformed tool call arguments with N leading chars
	// and M trailing chars").
	Logf func(format string, args ...any)
}

// RepairMalformedToolCallArguments is OpenClaw's
// wrapStreamFnRepairMalformedToolCallArguments (streamwrap.md §4.4). It
// joins each tool call's toolcall_delta fragments, re-evaluates OpenClaw's
// repair (repair.OpenClawShouldTry, repair.OpenClawExtract) when a delta
// may have closed an object, writes a repair into the live block, and on
// toolcall_end and on the final message writes the stored repair again.
//
// It does not gate itself: Chain applies it only when
// ShouldRepairMalformedToolCallArguments holds. Where OpenClaw resets a
// failed block's arguments to {}, this resets them to undecided (empty),
// which is what a Go decoder's block holds before toolcall_end and which
// llm.Block.AppendJSON writes as {}; the provider stage then decides them
// at toolcall_end as pi-ai's parse would.
func RepairMalformedToolCallArguments(next llm.StreamFunc, cfg RepairConfig) llm.StreamFunc {
	return func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		inner, err := next(ctx, req)
		if err != nil {
			return nil, err
		}
		s := repairPool.Get().(*repairStream)
		s.init(inner)
		s.cfg = cfg
		return s, nil
	}
}

var (
	closerSeen = []byte("}")
	closerNone = []byte{}
)

var repairPool = sync.Pool{New: func() any { return new(repairStream) }}

// argState is the per-content-index state of the repair decorator.
type argState struct {
	buf       []byte // joined deltas (partialJsonByIndex)
	units     int    // len(buf) in UTF-16 code units
	repaired  []byte // stored repair (repairedArgsByIndex)
	hasRepair bool
	closer    bool // buf contains '}' or ']'
	span      spanScan
	smart     bool // buf contains a typographic double quote (U+201C–U+201F)
	preSeen   bool // hadPreexistingArgsByIndex has an entry
	pre       bool
	disabled  bool
	logged    bool
}

func (a *argState) clearIndex() {
	a.buf = a.buf[:0]
	a.units = 0
	a.closer = false
	a.span.reset()
	a.smart = false
	a.preSeen, a.pre, a.disabled, a.logged = false, false, false, false
}

// add appends delta d to the joined buffer and brings the buffer's
// UTF-16 length, balanced-span scan, smart-quote and closer flags up to
// date (FuzzArgStateAdd holds them to the whole buffer's).
func (a *argState) add(d []byte) {
	// A short delta is read once for what the steps below ask of it: all
	// ASCII (one UTF-16 unit a byte, no part of a smart quote) and a
	// closer.
	ascii, closer := false, false
	if len(d) <= repair.ShortDelta {
		ascii, closer = repair.ScanDelta(d)
	} else if !a.closer {
		closer = hasCloser(d)
	}
	old := len(a.buf)
	a.buf = append(a.buf, d...)
	if ascii {
		a.units += len(d)
	} else {
		a.units += utf16Len(d)
	}
	a.span.feed(a.buf, old)
	if !a.smart && !ascii {
		// An ASCII delta completes no smart quote: its three bytes would
		// lie in the two before it.
		a.smart = hasSmartQuote(a.buf[max(0, old-2):])
	}
	if closer {
		a.closer = true
	}
}

type repairStream struct {
	base
	cfg      RepairConfig
	args     []argState
	name     []byte // scratch: the tool name given to the smart-quote parser
	scratch  []byte
	finished bool
	pt       passThrough
}

func (s *repairStream) state(i int) *argState {
	for len(s.args) <= i {
		if len(s.args) < cap(s.args) {
			s.args = s.args[:len(s.args)+1]
		} else {
			s.args = append(s.args, argState{})
		}
	}
	return &s.args[i]
}

func (s *repairStream) Next() bool {
	_, _, ok := s.Step()
	return ok
}

// Step is Next, then Event and Message (llm.Stepper; see base.next).
func (s *repairStream) Step() (*llm.Event, *llm.Message, bool) {
	ev, msg, ok := s.next.Step()
	return s.settle(ev, msg, ok)
}

// passThrough skips the stage on every event but a tool call's deltas and
// end and the terminal ones (passer).
func (s *repairStream) passThrough() *passThrough {
	return s.pt.fuse(s.next, passMask(llm.EventToolCallDelta, llm.EventToolCallEnd, llm.EventDone, llm.EventError), s)
}

// settle is Step after the pull (passer).
func (s *repairStream) settle(ev *llm.Event, msg *llm.Message, ok bool) (*llm.Event, *llm.Message, bool) {
	if !s.took(ev, msg, ok) {
		s.finish()
		return nil, s.Message(), false
	}
	e := s.curEvent()
	switch e.Type {
	case llm.EventToolCallDelta:
		if e.ContentIndex >= 0 {
			s.onDelta(e)
		}
	case llm.EventToolCallEnd:
		if e.ContentIndex >= 0 {
			s.onEnd(e)
		}
	case llm.EventDone, llm.EventError:
		s.finish()
	}
	return s.Event(), s.Message(), true
}

// hasNonEmptyObjectArgs reports whether args is a JSON object with at least
// one member.
func hasNonEmptyObjectArgs(args []byte) bool {
	a := trimSpace(args)
	if len(a) < 2 || a[0] != '{' {
		return false
	}
	return len(trimSpace(a[1:len(a)-1])) > 0
}

func (s *repairStream) onDelta(e *llm.Event) {
	st := s.state(e.ContentIndex)
	if st.disabled {
		return
	}
	st.add(e.Delta)
	if st.units > repair.OpenClawMaxBuffer {
		st.buf = st.buf[:0]
		st.units = 0
		st.closer = false
		st.span.reset()
		st.smart = false
		st.hasRepair = false
		st.repaired = st.repaired[:0]
		st.disabled = true
		return
	}
	// OpenClawShouldTry scans the buffer for a closer only to learn whether
	// it has one; st.closer answers that in O(1), keeping long arguments
	// linear instead of quadratic.
	probe := closerNone
	if st.closer {
		probe = closerSeen
	}
	if !repair.OpenClawShouldTry(e.Delta, probe, st.hasRepair) {
		return
	}
	partial, message := s.eventMessages(e)
	pb, mb := toolBlock(partial, e.ContentIndex), toolBlock(message, e.ContentIndex)
	if !st.preSeen {
		st.preSeen = true
		st.pre = pb != nil && hasNonEmptyObjectArgs(pb.Arguments) || mb != nil && hasNonEmptyObjectArgs(mb.Arguments)
	}
	s.name = s.name[:0]
	if pb != nil {
		s.name = append(s.name, pb.Name...)
	} else if mb != nil {
		s.name = append(s.name, mb.Name...)
	}
	// Fast path: with no stored repair, no closed {…}/[…] span (which the
	// whole-buffer and balanced-prefix strategies both need) and no smart
	// quote, OpenClawExtract must fail; its failure is applied without the
	// O(len) scan, keeping long arguments linear.
	var out []byte
	var leading, trailing int
	ok := false
	if st.hasRepair || st.span.closed || st.smart {
		out, _, leading, trailing, ok = repair.OpenClawExtract(st.repaired[:0], st.buf, s.name)
	}
	if !ok {
		st.hasRepair = false
		st.repaired = st.repaired[:0]
		if !st.pre {
			if pb != nil {
				pb.Arguments = pb.Arguments[:0]
			}
			if mb != nil {
				mb.Arguments = mb.Arguments[:0]
			}
		}
		return
	}
	st.repaired = out
	st.hasRepair = true
	if pb != nil {
		pb.Arguments = setBytes(pb.Arguments, out)
	}
	if mb != nil {
		mb.Arguments = setBytes(mb.Arguments, out)
	}
	if !st.logged {
		st.logged = true
		if s.cfg.Logf != nil {
			s.cfg.Logf("repairing malformed tool call arguments with %d leading chars and %d trailing chars", leading, trailing)
		}
	}
}

func (s *repairStream) onEnd(e *llm.Event) {
	st := s.state(e.ContentIndex)
	if st.hasRepair {
		if tc := s.eventToolCall(e); isToolCall(tc) {
			tc.Arguments = setBytes(tc.Arguments, st.repaired)
		}
		partial, message := s.eventMessages(e)
		if b := toolBlock(partial, e.ContentIndex); b != nil {
			b.Arguments = setBytes(b.Arguments, st.repaired)
		}
		if b := toolBlock(message, e.ContentIndex); b != nil {
			b.Arguments = setBytes(b.Arguments, st.repaired)
		}
	}
	st.clearIndex()
}

// finish patches the result: every stored repair is written onto the
// tool-call block at its index; then all state is cleared.
func (s *repairStream) finish() {
	if s.finished {
		return
	}
	s.finished = true
	m := s.curMessage()
	for i := range s.args {
		st := &s.args[i]
		if st.hasRepair {
			if b := toolBlock(m, i); b != nil {
				b.Arguments = setBytes(b.Arguments, st.repaired)
			}
		}
		st.clearIndex()
		st.hasRepair = false
		st.repaired = st.repaired[:0]
	}
	s.args = s.args[:0]
}

func (s *repairStream) Close() error {
	err := s.closeInner()
	for i := range s.args {
		st := &s.args[i]
		st.clearIndex()
		st.hasRepair = false
		st.repaired = st.repaired[:0]
	}
	*s = repairStream{args: s.args[:0], name: s.name[:0], scratch: s.scratch[:0]}
	repairPool.Put(s)
	return err
}

// toolBlock returns m's block i when it is a tool call.
func toolBlock(m *llm.Message, i int) *llm.Block {
	if m == nil {
		return nil
	}
	if b := m.Block(i); isToolCall(b) {
		return b
	}
	return nil
}

// spanScan follows repair's balanced-span scan incrementally: from the
// first '{' or '[' of the buffer, strings (with escapes) are skipped,
// closers of the wrong kind ignored, and closed is set once the depth
// returns to zero. It only answers "can a balanced span exist yet".
type spanScan struct {
	started, inStr, esc, closed, overflow bool
	depth                                 int
	kinds                                 []uint64 // bit set = '{' at that depth
}

func (z *spanScan) reset() {
	z.started, z.inStr, z.esc, z.closed, z.overflow = false, false, false, false, false
	z.depth = 0
	z.kinds = z.kinds[:0]
}

// feed scans buf[from:], the bytes appended since the last call.
func (z *spanScan) feed(buf []byte, from int) {
	if z.closed || z.overflow {
		return
	}
	for k := from; k < len(buf); k++ {
		c := buf[k]
		if !z.started {
			if c != '{' && c != '[' {
				continue
			}
			z.started = true
		}
		if z.inStr {
			switch {
			case z.esc:
				z.esc = false
			case c == '\\':
				z.esc = true
			case c == '"':
				z.inStr = false
			}
			continue
		}
		switch c {
		case '"':
			z.inStr = true
		case '{', '[':
			if z.depth >= repair.MaxDepth {
				z.overflow = true // the scan gives up: no span
				return
			}
			w := z.depth >> 6
			for len(z.kinds) <= w {
				z.kinds = append(z.kinds, 0)
			}
			if c == '{' {
				z.kinds[w] |= 1 << (z.depth & 63)
			} else {
				z.kinds[w] &^= 1 << (z.depth & 63)
			}
			z.depth++
		case '}', ']':
			if z.depth == 0 {
				continue
			}
			top := z.kinds[(z.depth-1)>>6]&(1<<((z.depth-1)&63)) != 0
			if top != (c == '}') {
				continue
			}
			z.depth--
			if z.depth == 0 {
				z.closed = true
				return
			}
		}
	}
}

// hasCloser reports whether b holds a '}' or ']' byte: bytes.IndexAny(b,
// "}]") >= 0 (both are ASCII, never part of a multi-byte rune) without its
// per-rune search, which dominated short fragments.
func hasCloser(b []byte) bool {
	if len(b) > 32 {
		return bytes.IndexByte(b, '}') >= 0 || bytes.IndexByte(b, ']') >= 0
	}
	for _, c := range b {
		if c == '}' || c == ']' {
			return true
		}
	}
	return false
}

// hasSmartQuote reports a UTF-8 U+201C, U+201D, U+201E or U+201F in b.
func hasSmartQuote(b []byte) bool {
	for i := 0; i+2 < len(b); i++ {
		if b[i] == 0xe2 && b[i+1] == 0x80 && b[i+2] >= 0x9c && b[i+2] <= 0x9f {
			return true
		}
	}
	return false
}

// RepairsToolCallArgs reports whether Chain repairs model m's malformed
// tool-call arguments: m.Compat.RepairToolCallArgs when it says always or
// never, else OpenClaw's gate (ShouldRepairMalformedToolCallArguments of
// m's provider id and API).
func RepairsToolCallArgs(m *llm.Model) bool {
	if m.Compat != nil {
		switch m.Compat.RepairToolCallArgs {
		case llm.RepairAlways:
			return true
		case llm.RepairNever:
			return false
		}
	}
	return ShouldRepairMalformedToolCallArguments(m.Provider, m.API)
}
