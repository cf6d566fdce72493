package streamwrap

import (
	"github.com/ocbench/ocbench/llm"
)

// RawStopReasoner is implemented by provider streams that expose the wire's
// own stop or finish reason (for example "end_turn", "tool_calls",
// "sensitive"). The returned slice is borrowed and valid until the next
// call to Next. Every decorator stream of this package implements it by
// delegating to the stream it wraps, so the capability survives the chain.
type RawStopReasoner interface {
	RawStopReason() []byte
}

// Unwrapper is implemented by every decorator stream: Unwrap returns the
// stream it wraps, so that callers can reach optional capabilities of the
// provider stream, as http.ResponseController does with Unwrap.
type Unwrapper interface {
	Unwrap() llm.Stream
}

// eventViews is implemented by streams whose events carry objects other than
// the live partial message: OpenClaw's event.message (set on done and error by
// real providers, on any event by hand-made recordings) and the toolCall of
// toolcall_end when it is not the shared block. Production streams do not
// implement it; the case harness of this package does, to run OpenClaw's
// recorded cases with their distinct objects. Decorator streams forward it.
type eventViews interface {
	// viewMessage returns the event's message object, or nil when it has none.
	viewMessage() *llm.Message
	// viewToolCall returns toolcall_end's toolCall object, or nil when it
	// is the block at ContentIndex of Message.
	viewToolCall() *llm.Block
	// hasViews reports whether the stream (or one it wraps) has views at
	// all; decorator streams over a production stream do not.
	hasViews() bool
}

// Every decorator stream of this package implements llm.Stepper: Step is
// Next followed by Event (when Next reported true) and Message, in one
// dynamic call instead of three, and a provider decoder implements it too,
// so the layer above calls it directly. Each decorator type defines its own
// Step (never base: a promoted Step would bypass the type's Event and
// Message overrides); an inner stream without one is reached through
// an llm.StreamStepper held in the layer.

// passer is implemented by decorator streams that pass most events through
// untouched and without looking at them (the stop-reason stage passes every
// event but the terminal ones; the argument stage every event but
// toolcall_end and the terminal ones; the entity, repair and trimming
// stages the events of the blocks they do not touch). The layer above such
// a passer calls its passThrough instead of its Step: that pulls from the
// passer's own inner stream and hands the passer only the events it does
// not pass, which saves most of a layer's call and bookkeeping on most
// events. The pass-through layers are fused into the layer above, and
// passers stacked directly on one another share one passThrough.
type passer interface {
	// passThrough returns the passer's passThrough, or nil when it cannot
	// be skipped.
	passThrough() *passThrough
	// settle is the passer's Step given what its pull returned: every event
	// the mask does not pass, and the end.
	settle(ev *llm.Event, msg *llm.Message, ok bool) (*llm.Event, *llm.Message, bool)
}

// maxFused bounds the passers one passThrough skips.
const maxFused = 6

// passThrough is the Step of skipped passers p[:n], innermost first, each
// passing the event types of its mask.
type passThrough struct {
	next llm.Stepper // what p[0] pulls from
	all  uint32      // the event types every passer passes, bit 1<<Type
	n    int
	mask [maxFused]uint32
	p    [maxFused]passer
}

// fuse makes t the passThrough of p, which pulls from next and passes the
// event types of mask. When next is itself a passThrough with room (the
// passers below p), t takes its passers and puts p above them.
func (t *passThrough) fuse(next llm.Stepper, mask uint32, p passer) *passThrough {
	if q, ok := next.(*passThrough); ok && q.n < maxFused {
		*t = *q
	} else {
		*t = passThrough{next: next, all: ^uint32(0)}
	}
	t.mask[t.n], t.p[t.n] = mask, p
	t.n++
	t.all &= mask
	return t
}

// Step returns the pulled event when every passer passes it, else hands it
// up the passers, each settling what the one below made of it unless it
// passes that.
func (t *passThrough) Step() (*llm.Event, *llm.Message, bool) {
	ev, msg, ok := t.next.Step()
	if ok && t.all&passBit(ev) != 0 {
		return ev, msg, true
	}
	return t.up(ev, msg, ok)
}

// up is Step after the pull, for an event that not every passer passes.
func (t *passThrough) up(ev *llm.Event, msg *llm.Message, ok bool) (*llm.Event, *llm.Message, bool) {
	for i := 0; i < t.n; i++ {
		if !ok || t.mask[i]&passBit(ev) == 0 {
			ev, msg, ok = t.p[i].settle(ev, msg, ok)
		}
	}
	return ev, msg, ok
}

// argsOnlyBit is the bit of a passer's mask for a toolcall_delta marked
// ArgsOnly; the bits below it are the event types'.
const argsOnlyBit = 1 << 31

const _ = uint(31 - llm.EventError) // the types' bits lie below argsOnlyBit

// passBit is e's bit in a passer's mask: its type's, or argsOnlyBit for a
// toolcall_delta that only appended to its call's raw arguments.
func passBit(e *llm.Event) uint32 {
	if e.ArgsOnly {
		return argsOnlyBit
	}
	return 1 << e.Type
}

// passMask returns the mask of every event type but those of except; a
// toolcall_delta marked ArgsOnly is passed as toolcall_delta is (a passer
// that may pass it while acting on other deltas adds argsOnlyBit).
func passMask(except ...llm.EventType) uint32 {
	m := ^uint32(0)
	for _, t := range except {
		m &^= 1 << t
		if t == llm.EventToolCallDelta {
			m &^= argsOnlyBit
		}
	}
	return m
}

// base is embedded by every decorator stream: it holds the inner stream and
// forwards what the decorator does not override.
type base struct {
	inner llm.Stream
	next  llm.Stepper  // inner as a stepper (or &leaf, or its passThrough)
	ev    *llm.Event   // the inner stream's current event, after advance
	msg   *llm.Message // the inner stream's message, after advance
	// src, pass and pt: next, when it is a passThrough, as the layers
	// that are no passers themselves (promotion, diagnostics) pull from
	// it, doing its Step in their own, one dynamic call per event fewer:
	// src is its inner stepper, pass its mask of the events that every
	// passer passes, pt the passThrough for the others (up). Otherwise src
	// is next, pass every event and pt nil.
	//
	//	ev, msg, ok := s.src.Step()
	//	if !ok || s.pass&passBit(ev) == 0 {
	//		ev, msg, ok = s.up(ev, msg, ok)
	//	}
	src   llm.Stepper
	pass  uint32
	pt    *passThrough
	views eventViews      // nil for production streams
	raw   RawStopReasoner // nil when the inner stream has no raw stop reason
	leaf  llm.StreamStepper
}

func (b *base) init(inner llm.Stream) {
	b.inner = inner
	b.next = nil
	if l := layerOf(inner); l.b != nil {
		// A decorator of this package: what the assertions below would
		// find, known from its type.
		if l.p != nil {
			if pt := l.p.passThrough(); pt != nil {
				b.next = pt
			}
		}
		if b.next == nil {
			b.next = l.st
		}
		b.setNext(b.next)
		if l.b.views != nil { // l.hasViews()
			b.views = l.views
		}
		b.raw = l.raw
		return
	}
	if p, ok := inner.(passer); ok {
		if pt := p.passThrough(); pt != nil {
			b.next = pt
		}
	}
	if b.next == nil {
		if st, ok := inner.(llm.Stepper); ok {
			b.next = st
		} else {
			b.leaf.S = inner
			b.next = &b.leaf
		}
	}
	b.setNext(b.next)
	if v, ok := inner.(eventViews); ok && v.hasViews() {
		b.views = v
	}
	b.raw, _ = inner.(RawStopReasoner)
}

// layer is a decorator stream of this package seen through the interfaces
// base.init asks of the stream it wraps: b is its base, p nil when it is no
// passer; every decorator steps, has views (base's) and forwards the raw
// stop reason (base's).
type layer struct {
	b     *base
	st    llm.Stepper
	p     passer
	views eventViews
	raw   RawStopReasoner
}

// layerOf returns s as a layer when it is a decorator of this package, else
// a layer with a nil b. It switches on the concrete types, which costs no
// itab lookups: init's interface assertions on the same call sites see a
// different type in each layer, and miss the runtime's per-site caches for
// a chain's first thousands of streams (TestLayerOfAgreesWithAssertions
// holds it to the assertions).
func layerOf(s llm.Stream) layer {
	switch v := s.(type) {
	case *stageStream:
		return layer{&v.base, v, v, v, v}
	case *promoteStream:
		return layer{&v.base, v, nil, v, v}
	case *trimStream:
		return layer{&v.base, v, v, v, v}
	case *repairStream:
		return layer{&v.base, v, v, v, v}
	case *entityStream:
		return layer{&v.base, v, v, v, v}
	case *transformStream:
		return layer{&v.base, v, nil, v, v}
	case *stopStream:
		return layer{&v.base, v, v, v, v}
	case *dropStream:
		return layer{&v.base, v, nil, v, v}
	case *idleStream:
		return layer{&v.base, v, nil, v, v}
	case *diagStream:
		return layer{&v.base, v, nil, v, v}
	}
	return layer{}
}

// setNext makes n what b pulls from (next), and sets src, pass and pt.
func (b *base) setNext(n llm.Stepper) {
	b.next, b.src, b.pass, b.pt = n, n, ^uint32(0), nil
	if t, ok := n.(*passThrough); ok {
		b.src, b.pass, b.pt = t.next, t.all, t
	}
}

func (b *base) clear() { *b = base{} }

func (b *base) Event() *llm.Event     { return b.curEvent() }
func (b *base) Message() *llm.Message { return b.curMessage() }

// took caches what a pull of the inner stream returned (advance's, for a
// passer's settle) and returns ok.
func (b *base) took(ev *llm.Event, msg *llm.Message, ok bool) bool {
	b.msg = msg
	if ok {
		b.ev = ev
	}
	return ok
}

// advance moves the inner stream on and caches its event and message, so
// that a chain of N decorators costs O(N) per event rather than O(N²)
// delegated calls.
//
// It is small enough to be inlined into each decorator's Next, so that the
// one dynamic call per event and layer has its own call site, whose target
// (the next layer of a given chain) never changes.
func (b *base) advance() (ok bool) {
	var ev *llm.Event
	ev, b.msg, ok = b.next.Step()
	if ok {
		b.ev = ev
	}
	return ok
}

// up is what a pull from src (see base.src) needs after src's Step when
// not every passer of pt passes the event: pt's up, or nothing.
func (b *base) up(ev *llm.Event, msg *llm.Message, ok bool) (*llm.Event, *llm.Message, bool) {
	if b.pt == nil {
		return ev, msg, ok
	}
	return b.pt.up(ev, msg, ok)
}

func (b *base) curEvent() *llm.Event {
	if b.ev != nil {
		return b.ev
	}
	return b.inner.Event()
}

func (b *base) curMessage() *llm.Message {
	if b.msg != nil {
		return b.msg
	}
	return b.inner.Message()
}
func (b *base) Err() error { return b.inner.Err() }

// Unwrap returns the wrapped stream.
func (b *base) Unwrap() llm.Stream { return b.inner }

// RawStopReason forwards the provider's raw stop reason, or nil.
func (b *base) RawStopReason() []byte {
	if b.raw != nil {
		return b.raw.RawStopReason()
	}
	return nil
}

// ReportsActivity forwards the inner stream's llm.ActivityReporter answer:
// a decorator adds no waits of its own.
func (b *base) ReportsActivity() bool {
	for {
		l := layerOf(b.inner)
		if l.b == nil {
			break
		}
		b = l.b // its answer is its base's
	}
	r, ok := b.inner.(llm.ActivityReporter)
	return ok && r.ReportsActivity()
}

func (b *base) viewMessage() *llm.Message {
	if b.views != nil {
		return b.views.viewMessage()
	}
	return nil
}

func (b *base) hasViews() bool { return b.views != nil }

func (b *base) viewToolCall() *llm.Block {
	if b.views != nil {
		return b.views.viewToolCall()
	}
	return nil
}

// eventMessages returns OpenClaw's event.partial and event.message for the
// current event e of s: partial is the live message during a non-terminal
// event; on done and error the live message is event.message and partial is
// nil (they are the same object). Streams with views may report both.
func (b *base) eventMessages(e *llm.Event) (partial, message *llm.Message) {
	live := b.curMessage()
	if b.views != nil {
		message = b.views.viewMessage()
		if message == live {
			return nil, message
		}
		if e.Type.IsTerminal() && message == nil {
			return nil, live
		}
		return live, message
	}
	if e.Type.IsTerminal() {
		return nil, live
	}
	return live, nil
}

// eventToolCall returns toolcall_end's toolCall for e: the view's object
// when it has one, else the block at ContentIndex of the live message.
func (b *base) eventToolCall(e *llm.Event) *llm.Block {
	if b.views != nil {
		if tc := b.views.viewToolCall(); tc != nil {
			return tc
		}
	}
	return b.curMessage().Block(e.ContentIndex)
}

// closeInner closes the inner stream once and reports its error.
func (b *base) closeInner() error {
	if b.inner == nil {
		return nil
	}
	err := b.inner.Close()
	b.inner = nil
	return err
}

var (
	_ RawStopReasoner      = (*base)(nil)
	_ Unwrapper            = (*base)(nil)
	_ eventViews           = (*base)(nil)
	_ llm.ActivityReporter = (*base)(nil)
)

// isToolCall reports whether b is a tool-call block (OpenClaw's toolCall,
// toolUse and functionCall blocks are all BlockToolCall here).
func isToolCall(b *llm.Block) bool { return b != nil && b.Type == llm.BlockToolCall }

// trimSpace trims JavaScript's String.prototype.trim whitespace from both
// ends of s (ASCII whitespace, NBSP, the Unicode spaces, line and paragraph
// separators and the BOM). It never allocates. s is returned at once when
// it starts and ends with printable ASCII, which starts and ends no
// JavaScript space: what almost every id, name and JSON object does.
func trimSpace[T string | []byte](s T) T {
	if n := len(s); n > 0 && s[0]-0x21 < 0x5f && s[n-1]-0x21 < 0x5f {
		return s
	}
	for len(s) > 0 {
		n := leadingSpace(s)
		if n == 0 {
			break
		}
		s = s[n:]
	}
	for len(s) > 0 {
		n := trailingSpace(s)
		if n == 0 {
			break
		}
		s = s[:len(s)-n]
	}
	return s
}

// leadingSpace returns the byte length of the JS whitespace rune s starts
// with, or 0.
func leadingSpace[T string | []byte](s T) int {
	c := s[0]
	switch c {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return 1
	}
	if c < 0x80 {
		return 0
	}
	if c == 0xc2 && len(s) >= 2 && s[1] == 0xa0 {
		return 2
	}
	if len(s) >= 3 && isWideSpace(s[0], s[1], s[2]) {
		return 3
	}
	return 0
}

func trailingSpace[T string | []byte](s T) int {
	n := len(s)
	c := s[n-1]
	switch c {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return 1
	}
	if c < 0x80 {
		return 0
	}
	if n >= 2 && s[n-2] == 0xc2 && c == 0xa0 {
		return 2
	}
	if n >= 3 && isWideSpace(s[n-3], s[n-2], c) {
		return 3
	}
	return 0
}

// isWideSpace reports whether the 3-byte UTF-8 sequence is one of the JS
// whitespace runes U+1680, U+2000–U+200A, U+2028, U+2029, U+202F, U+205F,
// U+3000 or U+FEFF.
func isWideSpace(a, b, c byte) bool {
	switch {
	case a == 0xe1 && b == 0x9a && c == 0x80: // U+1680
		return true
	case a == 0xe2 && b == 0x80 && (c >= 0x80 && c <= 0x8a || c == 0xa8 || c == 0xa9 || c == 0xaf):
		return true
	case a == 0xe2 && b == 0x81 && c == 0x9f: // U+205F
		return true
	case a == 0xe3 && b == 0x80 && c == 0x80: // U+3000
		return true
	case a == 0xef && b == 0xbb && c == 0xbf: // U+FEFF
		return true
	}
	return false
}

// setBytes replaces dst's content with src, reusing dst's capacity. src may
// alias dst.
func setBytes(dst, src []byte) []byte {
	if len(src) == 0 {
		return dst[:0]
	}
	n := copy(dst[:cap(dst)], src)
	if n == len(src) {
		return dst[:n]
	}
	return append(dst[:0], src...)
}

// setString replaces dst's content with s, reusing dst's capacity. s may
// alias dst.
func setString(dst []byte, s string) []byte {
	if len(s) == 0 {
		return dst[:0]
	}
	if len(s) <= cap(dst) {
		return dst[:copy(dst[:cap(dst)], s)]
	}
	return append(dst[:0], s...)
}
