package scripted

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider"
	"github.com/ocbench/ocbench/provider/wireenc"
)

// Options configure a Provider. The zero value plays Default() by position
// on the OpenAI Chat wire.
type Options struct {
	// Wire is the wire format of in-process streams whose request does not
	// name one (req.Model.API). Over HTTP the path decides.
	Wire wireenc.Wire
	// Script is played when Pick is nil (default: Default()).
	Script *Script
	// Pick chooses the turn of each request (default: ByPosition(Script)).
	Pick Picker
	// Model names the model when the request names none (default
	// "scripted-1"); Provider is the message's provider (default
	// "scripted").
	Model, Provider string
}

// Provider plays scripts in process (Stream) or over HTTP (Handler,
// Start). It is safe for concurrent use.
type Provider struct {
	pick     Picker
	wire     wireenc.Wire
	model    string
	provider string
	created  int64
	streams  sync.Pool     // *state
	players  sync.Pool     // *player, for HTTP
	answers  atomic.Uint64 // answers played: each one's Meta.Stream
}

// New returns a Provider. It fails only on an invalid Options.Script.
func New(o Options) (*Provider, error) {
	if o.Script == nil && o.Pick == nil {
		o.Script = Default()
	}
	if o.Script != nil {
		if err := o.Script.Validate(); err != nil {
			return nil, err
		}
	}
	if o.Pick == nil {
		o.Pick = ByPosition(o.Script)
	}
	if o.Model == "" {
		o.Model = "scripted-1"
	}
	if o.Provider == "" {
		o.Provider = "scripted"
	}
	return &Provider{pick: o.Pick, wire: o.Wire, model: o.Model, provider: o.Provider, created: time.Now().Unix()}, nil
}

// MustNew is New for scripts known to be valid; it panics otherwise.
func MustNew(o Options) *Provider {
	p, err := New(o)
	if err != nil {
		panic(err)
	}
	return p
}

// StreamFunc returns p.Stream as an llm.StreamFunc.
func (p *Provider) StreamFunc() llm.StreamFunc { return p.Stream }

var metaIDs = [...]string{wireenc.OpenAIChat: "chatcmpl-scripted", wireenc.OpenAIResponses: "resp_scripted", wireenc.Anthropic: "msg_scripted"}

func (p *Provider) meta(w wireenc.Wire, req *llm.Request) wireenc.Meta {
	m := wireenc.Meta{ID: metaIDs[w], Model: p.model, Created: p.created, Stream: p.answers.Add(1)}
	if req != nil && req.Model.ID != "" {
		m.Model = req.Model.ID
	}
	return m
}

// choose picks the turn of req; a nil turn is a refusal.
func (p *Provider) choose(req *llm.Request) (*Script, *Turn, *provider.HTTPError) {
	if req == nil {
		req = &emptyRequest
	}
	s, t := p.pick(req)
	if t == nil {
		return nil, nil, &provider.HTTPError{Status: 500, Type: "api_error", Message: "scripted: the script has no turn for this request"}
	}
	if h := t.HTTPError; h != nil {
		return s, t, &provider.HTTPError{Status: h.Status, RetryAfter: h.RetryAfter, Type: errType(h), Message: errMessage(h)}
	}
	return s, t, nil
}

// Stream plays the turn that answers req, in process: the turn is encoded
// in the request's wire format (req.Model.API, else Options.Wire) as it is
// read, and decoded by package provider's decoder. A scripted HTTP error
// is returned as a *provider.HTTPError after the turn's first-event
// latency. Cancelling ctx ends a stalled or sleeping stream with an
// aborted error event.
func (p *Provider) Stream(ctx context.Context, req *llm.Request) (llm.Stream, error) {
	s, t, herr := p.choose(req)
	if herr != nil {
		if t != nil {
			if d := latencyOf(s, t).FirstEvent; d > 0 {
				if err := sleepCtx(ctx, nil, d); err != nil {
					return nil, err
				}
			}
		}
		return nil, herr
	}
	w := p.wire
	if req != nil {
		if rw, ok := wireenc.ParseWire(string(req.Model.API)); ok {
			w = rw
		}
	}
	st, _ := p.streams.Get().(*state)
	if st == nil {
		st = &state{}
	}
	st.reset(p, ctx, w, req, s, t)
	return &stream{st: st}, nil
}

// emptyRequest stands for a nil request; pickers only read it.
var emptyRequest llm.Request

// estimateInput is the prompt size in tokens at four bytes a token.
func estimateInput(req *llm.Request) int64 {
	if req == nil {
		return 0
	}
	n := len(req.System)
	for i := range req.Messages {
		for j := range req.Messages[i].Content {
			b := &req.Messages[i].Content[j]
			n += len(b.Text) + len(b.Name) + len(b.Arguments)
		}
	}
	for i := range req.Tools {
		n += len(req.Tools[i].Name) + len(req.Tools[i].Description) + len(req.Tools[i].Parameters)
	}
	return int64(n+3) / 4
}

// state is the pooled part of an in-process stream: the player, the body
// reader the decoder reads, and the decoder.
type state struct {
	p    *Provider
	d    *provider.Decoder
	body body
}

func (st *state) reset(p *Provider, ctx context.Context, w wireenc.Wire, req *llm.Request, s *Script, t *Turn) {
	st.p = p
	b := &st.body
	b.ctx = ctx
	b.pl.reset(w, p.meta(w, req), wireenc.Options{}, s, t, estimateInput(req))
	b.off, b.eof, b.pause, b.paused, b.produced = 0, false, 0, false, 0
	b.cutAt = t.CutAt
	opts := provider.Options{Provider: p.provider, Model: b.pl.enc.Meta().Model, Reasoning: req != nil && req.Model.Reasoning}
	if st.d == nil {
		st.d = provider.NewDecoder(w, b, opts)
	} else {
		st.d.Reset(w, b, opts)
	}
	if ctx != nil && ctx.Done() != nil {
		st.d.SetContext(ctx)
	}
}

func (st *state) release() {
	st.body.ctx = nil
	st.body.pl.release()
	st.d.Release()
	st.p.streams.Put(st)
}

// batchBytes is how much a body produces per Read when nothing sleeps.
const batchBytes = 4 << 10

// body is the io.Reader of an in-process stream: it asks the player for
// events on demand and sleeps where the script says.
type body struct {
	pl       player
	ctx      context.Context
	timer    *time.Timer
	off      int
	eof      bool
	pause    time.Duration
	paused   bool
	produced int
	cutAt    int
}

func (b *body) Read(dst []byte) (int, error) {
	for b.off >= len(b.pl.buf) {
		if b.eof {
			return 0, io.EOF
		}
		if b.paused {
			b.paused = false
			if err := sleepCtx(b.ctx, &b.timer, b.pause); err != nil {
				return 0, err
			}
		}
		b.pl.buf = b.pl.buf[:0]
		b.off = 0
		if err := b.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(dst, b.pl.buf[b.off:])
	b.off += n
	return n, nil
}

// fill produces the next bytes: a batch of events when the turn has no
// latency, else one event after its delay.
func (b *body) fill() error {
	for {
		act, d := b.pl.next()
		switch act {
		case actPause:
			b.pause, b.paused = d, true
			return nil
		case actEOF:
			b.eof = true
			b.cut()
			return nil
		}
		if d > 0 {
			if err := sleepCtx(b.ctx, &b.timer, d); err != nil {
				return err
			}
		}
		if b.cut() || d > 0 || !b.pl.lat.isZero() || len(b.pl.buf) >= batchBytes {
			return nil
		}
	}
}

// cut applies the turn's CutAt to the bytes produced so far.
func (b *body) cut() bool {
	if b.cutAt <= 0 {
		return false
	}
	if b.produced+len(b.pl.buf) >= b.cutAt {
		b.pl.buf = b.pl.buf[:b.cutAt-b.produced]
		b.produced = b.cutAt
		b.eof = true
		return true
	}
	return false
}

// sleepCtx waits d, or until ctx is done when d <= 0; it returns the
// context's error if ctx ends first. A non-nil tp holds a timer to reuse.
func sleepCtx(ctx context.Context, tp **time.Timer, d time.Duration) error {
	var done <-chan struct{}
	if ctx != nil {
		done = ctx.Done()
	}
	if d <= 0 {
		if done == nil {
			select {} // a stall forever with no way to cancel it, as scripted
		}
		<-done
		return context.Cause(ctx)
	}
	var t *time.Timer
	if tp != nil && *tp != nil {
		t = *tp
		t.Reset(d)
	} else {
		t = time.NewTimer(d)
		if tp != nil {
			*tp = t
		}
	}
	select {
	case <-t.C:
		return nil
	case <-done:
		t.Stop()
		return context.Cause(ctx)
	}
}

// stream is the llm.Stream of an in-process turn: the real decoder over a
// scripted body. It implements provider.RawStopReasoner, and llm.Stepper
// and llm.ActivityReporter as the decoder does.
type stream struct {
	st    *state
	empty llm.Message
}

var (
	_ llm.Stream               = (*stream)(nil)
	_ llm.Stepper              = (*stream)(nil)
	_ llm.ActivityReporter     = (*stream)(nil)
	_ provider.RawStopReasoner = (*stream)(nil)
)

func (s *stream) Next() bool { return s.st != nil && s.st.d.Next() }

// Step is Next, then Event and Message (llm.Stepper).
func (s *stream) Step() (*llm.Event, *llm.Message, bool) {
	if s.st == nil {
		return nil, &s.empty, false
	}
	return s.st.d.Step()
}

// ReportsActivity forwards the decoder's answer (llm.ActivityReporter):
// the scripted body's pauses happen inside its reads.
func (s *stream) ReportsActivity() bool { return s.st != nil && s.st.d.ReportsActivity() }

func (s *stream) Event() *llm.Event {
	if s.st == nil {
		return &llm.Event{}
	}
	return s.st.d.Event()
}

func (s *stream) Message() *llm.Message {
	if s.st == nil {
		return &s.empty
	}
	return s.st.d.Message()
}

func (s *stream) Err() error {
	if s.st == nil {
		return nil
	}
	return s.st.d.Err()
}

func (s *stream) RawStopReason() []byte {
	if s.st == nil {
		return nil
	}
	return s.st.d.RawStopReason()
}

// Close ends the stream and returns its decoder and player to the pool;
// the Message must not be used afterwards. Safe to call more than once.
func (s *stream) Close() error {
	if s.st == nil {
		return nil
	}
	st := s.st
	s.st = nil
	st.d.Close()
	st.release()
	return nil
}
