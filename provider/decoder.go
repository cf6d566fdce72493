package provider

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/ocbench/ocbench/llm"
	"github.com/valyala/fastjson"
)

// Default limits.
const (
	DefaultMaxEventBytes = 4 << 20 // longest SSE line or event
	DefaultMaxArgBytes   = 8 << 20 // argument text of one tool call
	readBufferSize       = 64 << 10
)

// Options configure a Decoder. The zero value is usable.
type Options struct {
	// API, Provider and Model identify the message (llm.Message fields).
	// API defaults to the wire's pi-ai api id; Model is replaced by the
	// model the stream names, when it names one.
	API             llm.API
	Provider, Model string
	// BaseURL is the endpoint the stream came from; with OpenClaw, the
	// message names it (by hash) in encrypted reasoning's replay marker.
	BaseURL string
	// MaxEventBytes bounds one SSE line and one event's data (default 4 MiB).
	MaxEventBytes int
	// MaxArgBytes bounds the argument text of one tool call (default 8 MiB).
	MaxArgBytes int
	// Reasoning marks a reasoning model (llm.Model.Reasoning): OpenAI Chat
	// Completions reasoning deltas (reasoning_content, reasoning,
	// reasoning_text) become thinking blocks. Off, they are dropped, as
	// @openclaw/ai 2026.9.6 does for a model that is not a reasoning model
	// (shouldEmitOpenAICompletionsReasoning).
	Reasoning bool
	// OpenClaw applies @openclaw/ai 2026.9.6's transport rules, which
	// OpenClaw 2026.9.6 streams through (spec streamwrap.md §1.5): chat
	// tool-call fragments keyed by index then id and never split, and each
	// wire's own end-of-stream checks of the finished tool calls (a turn
	// refused ends with a *TransportError; chat and Anthropic remove the
	// tool calls of a failed turn, Responses keep them), plus the
	// commentary text phase those transports give text before tool calls.
	// The openclaw repair profile decodes with it; it never repairs
	// anything the transports do not.
	OpenClaw bool
}

func (o *Options) setDefault(w Wire) {
	if o.API == "" {
		o.API = w.API()
	}
	if o.MaxEventBytes <= 0 {
		o.MaxEventBytes = DefaultMaxEventBytes
		if o.OpenClaw {
			// OpenClaw's SSE sanitizer bounds an event by its length in
			// UTF-16 units (ocMaxEventUnits); three bytes at most each.
			o.MaxEventBytes = 3*ocMaxEventUnits + 1<<10
		}
	}
	if o.MaxArgBytes <= 0 {
		o.MaxArgBytes = DefaultMaxArgBytes
		if o.OpenClaw {
			o.MaxArgBytes = 64 << 20 // OpenClaw has no bound of its own
		}
	}
}

// RawStopReasoner is implemented by streams that can report the wire's own
// stop or finish reason ("end_turn", "tool_calls", "refusal", ...), which
// llm.Message has no field for. The returned bytes are borrowed from the
// stream and valid until it is reset; nil when the wire sent none.
type RawStopReasoner interface {
	RawStopReason() []byte
}

// Decoder decodes one SSE response body of a given wire format into an
// llm.Stream. It implements llm.Stream and RawStopReasoner.
//
// Event.Delta is borrowed from the decoder's parser and valid until the next
// call to Next. The Message is owned by the decoder and valid until Reset,
// PutDecoder or Close; decorators may mutate it in place. After a warm-up,
// Reset followed by decoding a stream allocates nothing, except for a model
// name or response id that differs from the previous stream's (one string
// each). A Decoder is not safe for concurrent use.
type Decoder struct {
	wire Wire
	opts Options
	r    io.Reader
	br   *bufio.Reader // reads src
	src  source
	done <-chan struct{}
	ctx  context.Context

	p     fastjson.Parser
	msg   llm.Message
	ev    llm.Event
	q     []llm.Event
	qi    int
	state uint8

	err     error
	errMsg  string
	stop    llm.StopReason
	stopped bool // the wire's stop reason (or terminal event) was seen
	rawStop []byte
	stopErr error // why a wire stop reason maps to an error
	// stopUnknown: the wire's stop reason is one the decoder does not know
	stopUnknown bool

	data []byte // current event's data: dbuf, or borrowed from the read buffer
	name []byte // current event's name: nbuf, or borrowed
	dbuf []byte
	u8   []byte // with Options.OpenClaw: data with ill-formed UTF-8 replaced
	dd   []byte // with Options.OpenClaw: data without repeated member names
	nbuf []byte
	win  []byte // buffered bytes not yet framed (a window on br's buffer)
	wn   int    // bytes taken from win not yet discarded from br

	dataBorrowed, nameBorrowed bool
	// frame: the current event's bytes before its data when windowEvent
	// framed it (borrowed), nil otherwise; frameName: its name in frame
	frame     []byte
	frameName span
	long      []byte // a line longer than the read buffer
	crBuf     []byte // src.back's buffer
	off       int64  // body offset of the current event
	cut       bool   // the body ended inside a line
	noff      int64  // body offset after the last line read
	slots     []slot
	slotGen   uint64       // changes with slots' set (never 0 after Reset; lane.go's cache)
	side      []byte       // Anthropic content_block_start inputs
	sbuf      []byte       // unescaped strings of the current event (fast path)
	kbuf      []byte       // an unescaped member name
	env       []byte       // chat: the last chunk's leading envelope members (fast.go)
	envModel  span         // chat: where env holds the model, absent when it does not
	envID     span         // chat: where env holds the response id, absent when it does not
	tc        [4]toolSpans // chat: tool_calls elements of the current choice
	ref       bool         // decode with the fastjson reference only (tests)
	flat      bool         // decode without shapes (tests)

	// usage as the wire reports it; converted at the end
	uIn, uOut, uCacheRead, uCacheWrite, uReason int64
	uReasonShown                                llm.ReasoningPlace // OpenClaw: reasoningTokens reported
	uTotalFloor                                 int64              // OpenClaw Responses: the reported total

	gotModel    bool
	gotID       bool
	modelIntern string
	idIntern    string

	oc      ocState    // Options.OpenClaw's per-stream state (openclaw.go)
	shapes  shapeState // the event shapes of the stream (shape.go)
	chUsage span       // chat: the usage member of the chunk's first choice
	chScan  chatScan   // chat: what the scan saw of the chunk's choices

	// ArgMismatches counts Responses tool calls whose .done arguments were
	// not an extension of the streamed deltas (the .done text won).
	argMismatches int
}

const (
	stateFresh uint8 = iota
	stateStarted
	stateFinished // terminal event queued
	stateEnded    // terminal event delivered
)

// slot is an open block and its wire key.
type slot struct {
	key    int64
	choice int32
	ci     int32
	kind   llm.BlockType
	delta  bool  // a non-empty delta arrived (Anthropic start input)
	done   bool  // Responses: function_call_arguments.done arrived
	inOff  int32 // Anthropic: start input in d.side
	inLen  int32
	parts  int32 // Responses with Options.OpenClaw: the reasoning item's summary parts
}

var (
	_ llm.Stream           = (*Decoder)(nil)
	_ llm.Stepper          = (*Decoder)(nil)
	_ RawStopReasoner      = (*Decoder)(nil)
	_ llm.ActivityReporter = (*Decoder)(nil)
)

// source is the body as the read buffer sees it: with an activity function
// (SetContext), every read is reported before it may wait and again when it
// returns, as llm.ActivityReporter promises.
type source struct {
	r   io.Reader
	act func()
	// The SSE line rules the decoder's framing (which splits at '\n') does
	// not see: a stream's leading byte order mark is dropped, and a '\r'
	// not followed by '\n' ends a line as '\n' does. head holds the first
	// nhead bytes while they could still be a BOM.
	head  [2]byte
	nhead int
	begun bool
	// Lone CRs: while lazy, no read is searched for '\r'; the framing
	// looks for one where it frames a line (the shapes' framed matches
	// take none), and at the first it finds gives back what it has not
	// framed (back, read before r again) and makes the source eager:
	// from then on every read has its lone CRs made '\n', cr holding a
	// '\r' read last until the byte after it is known. Neither is set
	// where '\r' alone is no line end (OpenClaw's own Anthropic SSE
	// parser turns only "\r\n" into "\n").
	lazy, eager, cr bool
	back            []byte
	one             [1]byte // back's byte read ahead (crAlone)
}

func (s *source) Read(p []byte) (int, error) {
	if s.begun && !s.eager || !s.begun && len(p) < 4 || len(p) == 0 {
		return s.read(p) // (bufio's first reads fill an empty buffer)
	}
	if s.cr && len(p) == 1 {
		return s.crAlone(p)
	}
	// Room ahead of what is read for what is held: a '\r' or the head.
	held := s.nhead
	if s.cr {
		held = 1
	}
	n, err := s.read(p[held:])
	if !s.begun {
		copy(p, s.head[:s.nhead])
		n += s.nhead
		const bom = "\xEF\xBB\xBF"
		if n < len(bom) && string(p[:n]) == bom[:n] && err == nil {
			s.nhead = copy(s.head[:], p[:n])
			return 0, nil // could still be a BOM
		}
		s.begun, s.nhead = true, 0
		if n >= len(bom) && string(p[:len(bom)]) == bom {
			n = copy(p, p[len(bom):n])
		}
		if !s.eager {
			return n, err
		}
	} else if s.cr {
		// The '\r' held back: a line end by itself unless a '\n' follows.
		p[0] = '\n'
		if n > 0 && p[1] == '\n' {
			p[0] = '\r'
		}
		if n == 0 && err == nil {
			return 0, nil // still unknown
		}
		s.cr = false
		n++
	}
	q := p[:n]
	for i := bytes.IndexByte(q, '\r'); i >= 0; {
		switch {
		case i+1 < len(q):
			if q[i+1] != '\n' {
				q[i] = '\n'
			}
		case err == nil:
			// The last byte: what follows decides.
			s.cr = true
			return n - 1, nil
		default:
			q[i] = '\n'
		}
		j := bytes.IndexByte(q[i+1:], '\r')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return n, err
}

// crAlone is an eager Read into a one-byte p (the end of the read
// buffer) while a '\r' is held: the byte after it, read ahead into one,
// decides it, and is read next from back.
func (s *source) crAlone(p []byte) (int, error) {
	p[0] = '\n'
	s.cr = false
	if len(s.back) == 0 {
		n, err := s.read(s.one[:])
		if n == 0 {
			if err == nil {
				s.cr = true
				return 0, nil // still unknown
			}
			return 1, err
		}
		s.back = s.one[:]
	}
	if s.back[0] == '\n' {
		p[0] = '\r'
	}
	return 1, nil
}

func (s *source) read(p []byte) (int, error) {
	if len(s.back) > 0 {
		n := copy(p, s.back)
		s.back = s.back[n:]
		return n, nil
	}
	if s.act == nil {
		return s.r.Read(p)
	}
	s.act()
	n, err := s.r.Read(p)
	s.act()
	return n, err
}

// NewDecoder returns a decoder of wire w reading r.
func NewDecoder(w Wire, r io.Reader, o Options) *Decoder {
	d := &Decoder{}
	d.Reset(w, r, o)
	return d
}

// Reset makes d decode a new stream, keeping its buffers.
func (d *Decoder) Reset(w Wire, r io.Reader, o Options) {
	o.setDefault(w)
	d.wire = w
	d.opts = o
	d.r = r
	keepCR := o.OpenClaw && w == WireAnthropic
	d.src = source{r: r, lazy: !keepCR}
	if d.br == nil {
		d.br = bufio.NewReaderSize(&d.src, readBufferSize)
	} else {
		d.br.Reset(&d.src)
	}
	d.done, d.ctx = nil, nil
	d.msg.Reset()
	d.msg.Role = llm.RoleAssistant
	d.msg.API = o.API
	d.msg.Provider = o.Provider
	d.msg.Model = o.Model
	if o.OpenClaw {
		d.msg.ReplayBaseURL = o.BaseURL
	}
	d.ev = llm.Event{}
	d.q = d.q[:0]
	d.qi = 0
	d.state = stateFresh
	d.err = nil
	d.errMsg = ""
	d.stop = llm.StopNone
	d.stopped = false
	d.stopErr = nil
	d.stopUnknown = false
	d.rawStop = d.rawStop[:0]
	d.data, d.dbuf = d.dbuf[:0], d.dbuf[:0]
	d.name, d.nbuf = d.nbuf[:0], d.nbuf[:0]
	d.dataBorrowed, d.nameBorrowed = false, false
	d.win, d.wn, d.frame = nil, 0, nil
	d.long = d.long[:0]
	d.off, d.noff = 0, 0
	d.cut = false
	d.slots = d.slots[:0]
	d.slotGen++
	d.side = d.side[:0]
	d.env = d.env[:0]
	d.uIn, d.uOut, d.uCacheRead, d.uCacheWrite, d.uReason = 0, 0, 0, 0, 0
	d.uReasonShown, d.uTotalFloor = llm.ReasoningHidden, 0
	d.gotModel, d.gotID = false, false
	d.argMismatches = 0
	// The OpenClaw state member by member (a whole ocState written over
	// it cost a few hundred instructions per stream); its parser keeps
	// its cache.
	oc := &d.oc
	oc.ocFlags = ocFlags{}
	oc.items = oc.items[:0]
	oc.slots = oc.slots[:0]
	oc.argKeys, oc.argStates = oc.argKeys[:0], oc.argStates[:0]
	oc.msg.reset()
	oc.tags.reset()
	oc.legacy = ocLegacy{id: oc.legacy.id[:0], name: oc.legacy.name[:0], args: oc.legacy.args[:0], follow: oc.legacy.follow[:0]}
	d.shapes.reset(w, d.flat, keepCR)
}

// SetContext makes cancellation of ctx end the stream with an error event
// of reason llm.StopAborted ("Request was aborted"); Err then returns the
// context's error. When ctx carries an activity function (llm.WithActivity),
// d calls it before and after every read of the body (see
// llm.ActivityReporter). The transport sets it; call it after Reset.
func (d *Decoder) SetContext(ctx context.Context) {
	d.ctx = llm.BaseContext(ctx) // for Err and Cause only
	d.src.act = nil
	if ctx != nil {
		d.done = ctx.Done()
		d.src.act = llm.ActivityFunc(ctx)
	}
}

// ReportsActivity reports whether d calls an activity function around its
// reads (llm.ActivityReporter): whether SetContext's context had one.
func (d *Decoder) ReportsActivity() bool { return d.src.act != nil }

// Wire returns the wire format d decodes.
func (d *Decoder) Wire() Wire { return d.wire }

// Event returns the current event, valid until the next call to Next.
func (d *Decoder) Event() *llm.Event { return &d.ev }

// Message returns the partial (after the terminal event, the final) message.
func (d *Decoder) Message() *llm.Message { return &d.msg }

// Err returns the error that ended the stream, nil after a clean done.
func (d *Decoder) Err() error { return d.err }

// RawStopReason returns the wire's stop or finish reason, borrowed.
func (d *Decoder) RawStopReason() []byte {
	if len(d.rawStop) == 0 {
		return nil
	}
	return d.rawStop
}

// ArgMismatches reports how many Responses tool calls had final
// (".done") arguments that did not extend the streamed deltas; the final
// text won. Non-zero means a dropped event or a server bug.
func (d *Decoder) ArgMismatches() int { return d.argMismatches }

// Close ends the stream and closes the body if it is an io.Closer. It does
// not return d to the pool (PutDecoder does). Safe to call more than once.
func (d *Decoder) Close() error {
	var err error
	if c, ok := d.r.(io.Closer); ok && c != nil {
		err = c.Close()
	}
	d.r = nil
	if d.state < stateFinished {
		d.q = d.q[:0]
		d.qi = 0
		d.state = stateEnded
	}
	return err
}

var decoderPool sync.Pool

// GetDecoder returns a pooled decoder reset to decode r.
func GetDecoder(w Wire, r io.Reader, o Options) *Decoder {
	if v := decoderPool.Get(); v != nil {
		d := v.(*Decoder)
		d.Reset(w, r, o)
		return d
	}
	return NewDecoder(w, r, o)
}

// PutDecoder returns d to the pool. d, its events and its Message must not
// be used afterwards. References to the body and context are dropped.
func PutDecoder(d *Decoder) {
	if d == nil {
		return
	}
	d.Release()
	decoderPool.Put(d)
}

// Release readies d for a pool of its owner's: it drops d's references to
// its body and context and the buffers a huge stream grew, and keeps what
// d learned of its wire (the event shapes), which the next Reset to the
// same wire reuses. d's events and Message must not be used afterwards;
// Reset makes it decode again. (A Reset to another wire, as a way to drop
// references, would also forget the shapes.)
func (d *Decoder) Release() {
	d.r = nil
	d.br.Reset(nil)
	d.src = source{}
	d.win, d.wn, d.data, d.name, d.frame = nil, 0, nil, nil, nil
	d.ctx, d.done = nil, nil
	d.err = nil
	d.ev = llm.Event{}
	// Do not let one huge stream pin its buffers in the pool.
	if cap(d.dbuf) > maxPooledBuffer || cap(d.long) > maxPooledBuffer || cap(d.sbuf) > maxPooledBuffer || cap(d.side) > maxPooledBuffer || cap(d.u8) > maxPooledBuffer || cap(d.dd) > maxPooledBuffer || cap(d.crBuf) > maxPooledBuffer {
		d.dbuf, d.long, d.sbuf, d.side, d.u8, d.dd, d.crBuf = nil, nil, nil, nil, nil, nil, nil
	}
	for i := range d.msg.Content[:cap(d.msg.Content)] {
		b := &d.msg.Content[:cap(d.msg.Content)][i]
		if cap(b.Text)+cap(b.RawArgs)+cap(b.Arguments)+cap(b.Signature) > maxPooledBuffer {
			d.msg.Content = nil
			break
		}
	}
}

// maxPooledBuffer bounds what a pooled decoder keeps from its last stream.
const maxPooledBuffer = 1 << 20

// Next advances to the next event.
func (d *Decoder) Next() bool {
	_, _, ok := d.Step()
	return ok
}

// Step is Next, then Event and Message (llm.Stepper).
func (d *Decoder) Step() (*llm.Event, *llm.Message, bool) {
	for d.qi >= len(d.q) {
		if d.state >= stateFinished {
			d.state = stateEnded
			d.q = d.q[:0]
			d.qi = 0
			return nil, &d.msg, false
		}
		d.q = d.q[:0]
		d.qi = 0
		if d.state == stateFresh {
			d.state = stateStarted
			d.msg.Timestamp = time.Now().UnixMilli()
			d.push(llm.EventStart, 0, nil)
			break
		}
		// Err is non-nil exactly when Done is closed, and cheaper to ask
		// per event than a receive from Done.
		if d.done != nil && d.ctx.Err() != nil {
			d.abort()
			continue
		}
		// The event at the start of the read window, when a framed shape
		// matches it (framing, data and blank line in one pass), is
		// decoded without windowEvent. (The reference decoders learn no
		// shapes.)
		var err error
		lane := laneNo
		if d.shapes.lanes {
			// The most recently used shape, with a lane (lane.go): what
			// find would have matched first.
			lane, err = d.lane()
		}
		switch lane {
		case laneDirect:
			return &d.ev, &d.msg, true // the event, unqueued
		case laneNo:
			if sh, data := d.shapes.find(d.win, true, false); sh != nil && len(data) <= d.opts.MaxEventBytes && (!d.opts.OpenClaw || d.ocClean(data)) {
				d.frame = nil
				d.take(d.win, sh.name, sh.pre, sh.pre+len(data))
				d.beginEvent(data)
				err = d.applyShape(data, sh)
			} else {
				err = d.event()
			}
		}
		if err != nil {
			d.eventFailed(err)
		}
	}
	d.ev = d.q[d.qi]
	d.qi++
	if d.ev.Type >= llm.EventToolCallEnd {
		d.apply(&d.ev) // the only types it acts on, and the rarest
	}
	return &d.ev, &d.msg, true
}

// Next calls apply only from toolcall_end's type on: done and error must
// not come before it (the conversion of a negative constant does not
// compile).
const _ = uint(llm.EventDone-llm.EventToolCallEnd) + uint(llm.EventError-llm.EventToolCallEnd)

// apply does what an event means for the message at the moment the event
// is delivered, so that decorators' changes to earlier events are seen:
// toolcall_end, done and error (Next calls it for those only).
func (d *Decoder) apply(e *llm.Event) {
	switch e.Type {
	case llm.EventToolCallEnd:
		if b := d.msg.Block(e.ContentIndex); b != nil {
			finishArgs(b)
		}
	case llm.EventDone:
		d.ocTerminal()
		d.msg.StopReason = e.Reason
	case llm.EventError:
		d.ocTerminal()
		d.msg.Fail(e.Reason, d.errMsg)
	}
}

// finishArgs decides Arguments from RawArgs: the trimmed text if it is
// valid JSON, {} if empty, otherwise left empty for the repair stage.
func finishArgs(b *llm.Block) {
	if len(b.Arguments) > 0 {
		return
	}
	raw := bytes.TrimSpace(b.RawArgs)
	if len(raw) == 0 {
		b.Arguments = append(b.Arguments[:0], "{}"...)
		return
	}
	if fastjson.ValidateBytes(raw) == nil {
		b.Arguments = append(b.Arguments[:0], raw...)
	}
}

func (d *Decoder) push(t llm.EventType, ci int, delta []byte) {
	d.q = append(d.q, llm.Event{Type: t, ContentIndex: ci, Delta: delta})
}

// event frames and decodes the next event the line way (windowEvent, or
// readLines for what it leaves). A body that ends or fails ends the
// stream here; an event without data is nothing.
func (d *Decoder) event() error {
	data := d.windowEvent()
	if data == nil {
		var err error
		if data, err = d.readLines(); err != nil {
			d.readFailed(err)
			return nil
		}
		if data == nil {
			return nil
		}
	}
	if d.opts.OpenClaw {
		if len(jsTrim(data)) == 0 {
			// OpenClaw's SSE sanitizer drops an event whose data lines
			// hold only spaces (hasReadableSseData).
			return nil
		}
		if len(data) > ocMaxEventUnits && utf16Units(data) > ocMaxEventUnits {
			d.ocFail(MsgSSEBufferExceeded, false, false)
			return nil
		}
		data = d.ocText(data)
		dup := maybeDupKeys(data)
		// (ocDedup rewrites the data with fastjson's Parse, which would
		// launder a bad escape: such data is judged first.)
		if jsonCtl(data) || dup && !jsParses(data) {
			d.beginEvent(data)
			return d.badJSON() // ocBadData says what OpenClaw makes of it
		}
		if dup {
			data = d.ocDedup(data)
		}
		if d.wire != WireAnthropic && string(data) != "[DONE]" {
			if handled, err := d.ocSDKEvent(data); handled {
				return err
			}
		}
		if d.wire == WireOpenAIChat && !d.ocChatArgsCheck(data) {
			return nil
		}
	}
	d.beginEvent(data)
	switch {
	case d.ref:
		return d.refEvent(data)
	case d.wire == WireOpenAIChat:
		return d.chatFast(data)
	case d.wire == WireAnthropic:
		return d.anthropicFast(data)
	}
	return d.responsesFast(data)
}

// eventFailed ends the stream with the error decoding an event gave.
func (d *Decoder) eventFailed(err error) {
	if d.opts.OpenClaw && errors.Is(err, ErrBadJSON) && d.ocBadData(d.data) {
		return
	}
	if d.cut {
		var se *SyntaxError
		if errors.As(err, &se) {
			err = ErrTruncated
			if d.opts.OpenClaw && d.wire == WireAnthropic {
				// parseAnthropicSseEventData on the cut tail
				d.ocFail(MsgAnthropicFragment, true, true)
				return
			}
		}
	}
	d.fail(err)
}

// parseEvent parses an event's data for the fastjson decoders. With the
// OpenClaw rules the data must also be JSON as JSON.parse takes it:
// fastjson's Parse takes bad escapes and control characters in strings,
// its Validate does not.
func (d *Decoder) parseEvent(data []byte) (*fastjson.Value, error) {
	v, err := d.p.ParseBytes(data)
	if err == nil && d.opts.OpenClaw && !jsParses(data) {
		err = ErrBadJSON
	}
	return v, err
}

// refEvent decodes an event with the wire's fastjson reference decoder
// only (tests).
func (d *Decoder) refEvent(data []byte) error {
	switch d.wire {
	case WireOpenAIChat:
		return d.chatEvent(data)
	case WireAnthropic:
		return d.anthropicEvent(data)
	}
	return d.responsesEvent(data)
}

func (d *Decoder) abort() {
	err := error(context.Canceled)
	if d.ctx != nil {
		if c := context.Cause(d.ctx); c != nil {
			err = c
		}
	}
	d.terminalError(llm.StopAborted, err, "Request was aborted")
}

func (d *Decoder) readFailed(err error) {
	if err == io.EOF {
		if d.stopped {
			d.finish()
			return
		}
		if d.opts.OpenClaw {
			switch d.wire {
			case WireOpenAIChat:
				d.ocFail(MsgChatNoFinishReason, true, true)
				return
			case WireAnthropic:
				d.ocAnthropicEOF()
				return
			default:
				if d.hasOpenToolCall() {
					d.ocFail(MsgResponsesEndedUnresolved, true, false)
				} else {
					d.ocFail(MsgResponsesNoTerminal, true, false)
				}
				return
			}
		}
		d.fail(ErrTruncated)
		return
	}
	if d.opts.OpenClaw && isEventLimit(err) {
		d.ocFail(MsgSSEBufferExceeded, false, false)
		return
	}
	if d.done != nil {
		select {
		case <-d.done:
			d.abort()
			return
		default:
		}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		d.terminalError(llm.StopAborted, err, "Request was aborted")
		return
	}
	d.fail(err)
}

// fail ends the stream with an error event, leaving open blocks as they are.
func (d *Decoder) fail(err error) {
	var msg string
	var sre *StopReasonError
	switch {
	case err == ErrTruncated:
		msg = "The provider's stream ended before the message was complete."
	case errors.As(err, &sre):
		msg = sre.Message
	default:
		var pe *ProviderError
		if errors.As(err, &pe) {
			msg = pe.Message
			if msg == "" {
				msg = pe.Error()
			}
		} else {
			msg = err.Error()
		}
	}
	d.terminalError(llm.StopError, err, msg)
}

func (d *Decoder) terminalError(reason llm.StopReason, err error, msg string) {
	if d.state >= stateFinished {
		return
	}
	if d.opts.OpenClaw && d.wire == WireOpenAIResponses {
		d.ocResponsesFailedCalls()
	}
	if d.opts.OpenClaw && d.wire != WireOpenAIResponses {
		// The chat and Anthropic transports' error cleanup removes every
		// tool call of a failed turn; Responses keeps them.
		d.oc.dropCalls = true
		if d.wire == WireOpenAIChat && d.oc.sawReasoning {
			// tagUnresolvedTextAsCommentary: after reasoning, a failed
			// turn's text is commentary.
			d.oc.tagAll = true
		}
	}
	if d.opts.OpenClaw {
		msg = ocErrorMessage(msg)
	}
	d.state = stateFinished
	d.err = err
	d.errMsg = msg
	d.setUsage()
	d.q = append(d.q, llm.Event{Type: llm.EventError, Reason: reason})
}

// finish ends every open block in opening order, then the stream with the
// stop reason the wire gave.
func (d *Decoder) finish() {
	if d.state >= stateFinished {
		return
	}
	if d.opts.OpenClaw && d.wire == WireOpenAIChat {
		d.ocFlushTags() // the normal end settles what the partitioner held
	}
	if d.opts.OpenClaw && d.wire == WireAnthropic {
		d.ocAnthropicFinish()
		return
	}
	// @openclaw/ai's Responses transport ends no item at the terminal
	// event: a text or thinking block whose item had no done gets no end.
	if !d.opts.OpenClaw || d.wire != WireOpenAIResponses {
		for i := range d.slots {
			d.endSlot(&d.slots[i])
		}
	}
	d.slots = d.slots[:0]
	d.slotGen++
	if d.opts.OpenClaw && d.wire == WireOpenAIChat {
		d.ocChatFinish()
		return
	}
	reason := d.stop
	if reason == llm.StopNone {
		reason = llm.StopStop
	}
	if reason == llm.StopStop && d.wire != WireAnthropic && d.hasToolCalls() {
		reason = llm.StopToolUse
	}
	if reason == llm.StopError {
		d.fail(d.stopError())
		return
	}
	d.state = stateFinished
	d.setUsage()
	d.q = append(d.q, llm.Event{Type: llm.EventDone, Reason: reason})
}

func (d *Decoder) hasToolCalls() bool {
	for i := range d.msg.Content {
		if d.msg.Content[i].Type == llm.BlockToolCall {
			return true
		}
	}
	return false
}

func (d *Decoder) stopError() error {
	if d.stopErr != nil {
		return d.stopErr
	}
	return &StopReasonError{Raw: string(d.rawStop), Message: "Unhandled stop reason: " + string(d.rawStop)}
}

func (d *Decoder) setUsage() {
	u := &d.msg.Usage
	u.Input = d.uIn
	u.Output = d.uOut
	u.CacheRead = d.uCacheRead
	u.CacheWrite = d.uCacheWrite
	u.Reasoning = d.uReason
	u.ReasoningShown = d.uReasonShown
	u.CacheWrite1h, u.CacheWrite1hShown = d.oc.cw1h, d.oc.cw1hShown
	u.TotalTokens = max(u.Input+u.Output+u.CacheRead+u.CacheWrite, d.uTotalFloor)
}

func (d *Decoder) endSlot(s *slot) {
	switch s.kind {
	case llm.BlockText:
		d.push(llm.EventTextEnd, int(s.ci), nil)
	case llm.BlockThinking:
		d.push(llm.EventThinkingEnd, int(s.ci), nil)
	case llm.BlockToolCall:
		d.push(llm.EventToolCallEnd, int(s.ci), nil)
	}
}

// closeSlot ends the open slot at i and removes it.
func (d *Decoder) closeSlot(i int) {
	d.endSlot(&d.slots[i])
	d.slots = append(d.slots[:i], d.slots[i+1:]...)
	d.slotGen++
}

func (d *Decoder) findSlot(choice int32, key int64, kind llm.BlockType) int {
	for i := range d.slots {
		s := &d.slots[i]
		if s.key == key && s.choice == choice && (s.kind == kind || kind == anyKind) {
			return i
		}
	}
	return -1
}

// open adds a block of type t, an open slot for it, and queues its start
// event. It returns the slot index.
func (d *Decoder) open(choice int32, key int64, t llm.BlockType) int {
	ci, _ := d.msg.AddBlock(t)
	d.slots = append(d.slots, slot{key: key, choice: choice, ci: int32(ci), kind: t})
	d.slotGen++
	switch t {
	case llm.BlockText:
		d.push(llm.EventTextStart, ci, nil)
	case llm.BlockThinking:
		d.push(llm.EventThinkingStart, ci, nil)
	case llm.BlockToolCall:
		d.push(llm.EventToolCallStart, ci, nil)
	}
	return len(d.slots) - 1
}

// appendText appends a text or thinking fragment to the slot's block and
// queues its delta.
func (d *Decoder) appendText(si int, frag []byte) error { return d.addText(si, frag, true) }

// addText is appendText; with queue false it leaves the delta event in
// d.ev instead (a lane's, the only event of its data).
func (d *Decoder) addText(si int, frag []byte, queue bool) error {
	if !validUTF8(frag) && !d.validText(frag) { // (most are valid UTF-8: validText's call saved)
		return d.badUTF8(frag)
	}
	s := &d.slots[si]
	b := &d.msg.Content[s.ci]
	b.Text = append(b.Text, frag...)
	t := llm.EventTextDelta
	if s.kind == llm.BlockThinking {
		t = llm.EventThinkingDelta
	}
	d.deliver(queue, t, int(s.ci), frag)
	return nil
}

// appendArgs appends an argument fragment to the slot's tool call and
// queues its delta.
func (d *Decoder) appendArgs(si int, frag []byte) error { return d.addArgs(si, frag, true) }

// addArgs is appendArgs; with queue false it leaves the delta event in
// d.ev instead.
func (d *Decoder) addArgs(si int, frag []byte, queue bool) error {
	if !validUTF8(frag) && !d.validText(frag) {
		return d.badUTF8(frag)
	}
	s := &d.slots[si]
	b := &d.msg.Content[s.ci]
	if len(b.RawArgs)+len(frag) > d.opts.MaxArgBytes {
		return &LimitError{What: "tool-call arguments", Limit: d.opts.MaxArgBytes}
	}
	b.RawArgs = append(b.RawArgs, frag...)
	d.deliver(queue, llm.EventToolCallDelta, int(s.ci), frag)
	return nil
}

// deliver queues an event, or leaves it in d.ev.
func (d *Decoder) deliver(queue bool, t llm.EventType, ci int, delta []byte) {
	if queue {
		d.push(t, ci, delta)
	} else {
		d.ev = llm.Event{Type: t, ContentIndex: ci, Delta: delta}
	}
}

// validUTF8 is utf8.Valid, answering the short ASCII fragments most deltas
// are with two (overlapping) word loads instead of the general loop.
func validUTF8(b []byte) bool {
	const hi = 0x8080808080808080
	switch n := len(b); {
	case n > 16:
	case n >= 8:
		if (binary.LittleEndian.Uint64(b)|binary.LittleEndian.Uint64(b[n-8:]))&hi == 0 {
			return true
		}
	case n >= 4:
		if (binary.LittleEndian.Uint32(b)|binary.LittleEndian.Uint32(b[n-4:]))&0x80808080 == 0 {
			return true
		}
	default:
		var x byte
		for _, c := range b {
			x |= c
		}
		if x < utf8.RuneSelf {
			return true
		}
	}
	return utf8.Valid(b)
}

func (d *Decoder) badUTF8(frag []byte) error {
	return &SyntaxError{Offset: d.off, Excerpt: excerpt(frag), Err: ErrInvalidUTF8}
}

func (d *Decoder) badJSON() error {
	return &SyntaxError{Offset: d.off, Excerpt: excerpt(d.data), Err: ErrBadJSON}
}

// setField copies an identifier into dst after checking its UTF-8.
func (d *Decoder) setField(dst *[]byte, v []byte) error {
	if !d.validText(v) {
		return d.badUTF8(v)
	}
	*dst = append((*dst)[:0], v...)
	return nil
}

func (d *Decoder) setModel(m []byte) {
	if len(m) == 0 || d.gotModel || d.opts.OpenClaw && d.opts.Model != "" {
		// @openclaw/ai's messages carry the configured model id.
		return
	}
	d.gotModel = true
	if string(m) != d.modelIntern {
		d.modelIntern = string(m)
	}
	d.msg.Model = d.modelIntern
}

func (d *Decoder) setResponseID(id []byte) {
	if len(id) == 0 || d.gotID {
		return
	}
	d.gotID = true
	if string(id) != d.idIntern {
		d.idIntern = string(id)
	}
	d.msg.ResponseID = d.idIntern
}

func (d *Decoder) setRawStop(r []byte) {
	d.rawStop = append(d.rawStop[:0], r...)
}

// readEvent reads lines up to the next blank line and returns the event's
// data (nil for an event without data, e.g. a comment-only block). The name
// of the event is left in d.name.
//
// Lines already in the read buffer are taken from it in place (win), and
// the event's data and name are then slices of the buffer, valid until the
// next read; a line that is not buffered whole goes through readLine,
// which reads, and first moves any borrowed data and name into d.dbuf and
// d.nbuf.
//
// What is taken from win is given back to the reader (discarded) only
// before the next read (own), not after every event.
func (d *Decoder) readEvent() ([]byte, error) {
	if data := d.windowEvent(); data != nil {
		return data, nil
	}
	return d.readLines()
}

// readLines is readEvent line by line, for what windowEvent leaves.
func (d *Decoder) readLines() ([]byte, error) {
	d.frame = nil
	d.off = d.noff
	d.data = d.dbuf[:0]
	d.name = d.nbuf[:0]
	d.dataBorrowed, d.nameBorrowed = false, false
	hasData := false
	for {
		var line []byte
		inWin := false
		if len(d.win) > 0 && d.win[0] == '\n' {
			// A blank line: the end of an event, most often.
			d.win = d.win[1:]
			d.wn++
			d.noff++
			inWin = true
		} else if i := bytes.IndexByte(d.win, '\n'); i >= 0 {
			if d.src.lazy && bytes.IndexByte(d.win[:i], '\r') >= 0 {
				d.crSeen(nil)
				continue
			}
			line = trimEOL(d.win[:i])
			d.win = d.win[i+1:]
			d.wn += i + 1
			d.noff += int64(i + 1)
			inWin = true
		} else {
			d.own()
			var err error
			line, err = d.readLine()
			if err != nil {
				if err == io.EOF && hasData && d.opts.OpenClaw && d.wire == WireAnthropic && len(bytes.TrimSpace(d.data)) == 0 {
					return nil, err // a tail without data is nothing
				}
				if err == io.EOF && hasData && (!d.opts.OpenClaw || d.wire == WireAnthropic) {
					// The body ended after a complete line but without the
					// blank line: dispatch what we have. (The OpenAI SDK under
					// @openclaw/ai dispatches an event only at its blank line;
					// its Anthropic parser dispatches the tail.)
					return d.eventData(), nil
				}
				return nil, err
			}
			d.refill()
		}
		if len(line) == 0 {
			if hasData {
				return d.eventData(), nil
			}
			if len(d.name) > 0 {
				return nil, nil
			}
			d.off = d.noff
			continue
		}
		// The field is what precedes the first colon (the whole line
		// without one); one space after the colon is not part of the value.
		var value []byte
		var isData bool
		switch {
		case len(line) >= 5 && string(line[:5]) == "data:":
			value, isData = line[5:], true
		case len(line) >= 6 && string(line[:6]) == "event:":
			value = line[6:]
		case string(line) == "data":
			isData = true
		case string(line) == "event":
		default:
			continue // a comment or another field
		}
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		if !isData {
			if inWin {
				d.name, d.nameBorrowed = value, true
			} else {
				d.nbuf = append(d.nbuf[:0], value...)
				d.name, d.nameBorrowed = d.nbuf, false
			}
			continue
		}
		n := len(d.data) + len(value)
		if hasData {
			n++
		}
		if n > d.opts.MaxEventBytes {
			return nil, &LimitError{What: "SSE event", Limit: d.opts.MaxEventBytes}
		}
		switch {
		case !hasData && inWin:
			d.data, d.dataBorrowed = value, true
		case !hasData:
			d.dbuf = append(d.dbuf[:0], value...)
			d.data = d.dbuf
		default:
			if d.dataBorrowed {
				d.dbuf = append(d.dbuf[:0], d.data...)
				d.dataBorrowed = false
			}
			d.dbuf = append(d.dbuf, '\n')
			d.dbuf = append(d.dbuf, value...)
			d.data = d.dbuf
		}
		hasData = true
	}
}

// windowEvent is readEvent's fast path, for the common event that lies
// whole in win: an optional "event:" line, one non-empty "data:" line and
// the blank line, all ending in a bare "\n". It returns the event's data
// (name in d.name), both borrowed from win, or nil with nothing consumed,
// for readEvent's line loop to frame whatever else win holds (comments,
// other fields, several data lines, "\r\n", an event cut by the buffer's
// end, an oversized event).
func (d *Decoder) windowEvent() []byte {
	w := d.win
	name := absent
	n := 0 // bytes of w the event takes
	if len(w) >= 6 && string(w[:6]) == "event:" {
		i := bytes.IndexByte(w, '\n')
		if i < 0 || w[i-1] == '\r' {
			return nil
		}
		ns := 6 // the name's start, after one space
		if i > 6 && w[6] == ' ' {
			ns = 7
		}
		name = span{ns, i}
		n = i + 1
	}
	if len(w)-n < 5 || string(w[n:n+5]) != "data:" {
		return nil
	}
	i := n + bytes.IndexByte(w[n:], '\n') // the data line's end
	if i < n || i+1 >= len(w) || w[i+1] != '\n' || w[i-1] == '\r' {
		return nil
	}
	ds := n + 5 // the data's start, after one space
	if ds < i && w[ds] == ' ' {
		ds++
	}
	if ds == i || i-ds > d.opts.MaxEventBytes || d.src.lazy && bytes.IndexByte(w[:i], '\r') >= 0 {
		return nil
	}
	d.frame, d.frameName = w[:ds], name
	d.take(w, name, ds, i)
	return d.data
}

// take frames the event of the window w whose name is at name (absent:
// none) and whose data is w[ds:e], followed by the blank line.
func (d *Decoder) take(w []byte, name span, ds, e int) {
	d.pass(w, e)
	if name.s >= 0 {
		d.name = w[name.s:name.e]
	} else {
		d.name = nil
	}
	d.nameBorrowed = true
	d.data, d.dataBorrowed = w[ds:e], true
}

// pass moves the window w past the event whose data ends at e, followed
// by the blank line.
func (d *Decoder) pass(w []byte, e int) {
	n := e + 2
	d.win = w[n:]
	d.wn += n
	d.off = d.noff
	d.noff += int64(n)
}

// eventData is the data of an event that had data lines: nil when they
// were all empty, an event without data (the SSE rule: nothing is
// dispatched for an empty data buffer; OpenClaw 2026.9.6 skips such an
// event on every wire).
func (d *Decoder) eventData() []byte {
	if len(d.data) == 0 {
		return nil
	}
	return d.data
}

// own moves the event's data and name out of the read buffer before a
// read moves its contents, and gives the consumed bytes back to it.
func (d *Decoder) own() {
	if d.dataBorrowed {
		d.dbuf = append(d.dbuf[:0], d.data...)
		d.data, d.dataBorrowed = d.dbuf, false
	}
	if d.nameBorrowed {
		d.nbuf = append(d.nbuf[:0], d.name...)
		d.name, d.nameBorrowed = d.nbuf, false
	}
	d.consume()
	d.win = nil
}

// consume discards from the reader what was taken from win.
func (d *Decoder) consume() {
	if d.wn > 0 {
		_, _ = d.br.Discard(d.wn)
		d.wn = 0
	}
}

// refill points win at what the reader holds buffered.
func (d *Decoder) refill() {
	if n := d.br.Buffered(); n > 0 {
		d.win, _ = d.br.Peek(n)
	}
}

// readLine returns the next line without its line ending. A body that ends
// inside a line gives ErrTruncated; a body that ends at a line boundary
// gives io.EOF.
func (d *Decoder) readLine() ([]byte, error) {
	line, err := d.readSlice()
	if err == nil {
		d.noff += int64(len(line))
		return trimEOL(line), nil
	}
	if err == bufio.ErrBufferFull {
		// Slow path: a line longer than the read buffer.
		d.long = append(d.long[:0], line...)
		for {
			line, err = d.readSlice()
			if len(d.long)+len(line) > d.opts.MaxEventBytes+2 {
				return nil, &LimitError{What: "SSE line", Limit: d.opts.MaxEventBytes}
			}
			d.long = append(d.long, line...)
			if err != bufio.ErrBufferFull {
				break
			}
		}
		if err == nil {
			d.noff += int64(len(d.long))
			return trimEOL(d.long), nil
		}
		line = d.long
	}
	if err == io.EOF {
		if len(line) > 0 {
			// The body ends inside a line: hand the line over, and let a
			// parse failure of it count as truncation.
			d.noff += int64(len(line))
			d.cut = true
			return trimEOL(line), nil
		}
		return nil, io.EOF
	}
	return nil, err
}

// readSlice is the read buffer's ReadSlice('\n'), but while the source is
// lazy a slice that holds a '\r' is given back to it, made eager, and
// read again (crSeen).
func (d *Decoder) readSlice() ([]byte, error) {
	for {
		line, err := d.br.ReadSlice('\n')
		if !d.src.lazy || err != nil && err != bufio.ErrBufferFull && err != io.EOF || bytes.IndexByte(line, '\r') < 0 {
			return line, err
		}
		d.crSeen(line)
	}
}

// crSeen: the framing found a '\r' in what the lazy source read (see
// source): rest, which was read from the buffer but not framed, and what
// the buffer holds past it are given back to the source, which is made
// eager. Borrowed data and name are moved out of the buffer first (own).
func (d *Decoder) crSeen(rest []byte) {
	d.own()
	b, _ := d.br.Peek(d.br.Buffered())
	d.crBuf = append(append(d.crBuf[:0], rest...), b...)
	d.src.back = d.crBuf
	d.src.lazy, d.src.eager = false, true
	d.br.Reset(&d.src)
}

func trimEOL(b []byte) []byte {
	n := len(b)
	if n > 0 && b[n-1] == '\n' {
		n--
	}
	if n > 0 && b[n-1] == '\r' {
		n--
	}
	return b[:n]
}

func jsonValid(b []byte) bool { return fastjson.ValidateBytes(b) == nil }
