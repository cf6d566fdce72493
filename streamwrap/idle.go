package streamwrap

import (
	"context"
	"errors"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"github.com/ocbench/ocbench/llm"
)

// Idle-timeout constants of OpenClaw 2026.9.6 (llm-idle-timeout.ts).
const (
	MaxTimerTimeout        = 2147000000 * time.Millisecond // MAX_TIMER_TIMEOUT_MS
	DefaultIdleTimeout     = 120000 * time.Millisecond
	SelfHostedIdleTimeout  = 300000 * time.Millisecond
	CronIdleTimeout        = 60000 * time.Millisecond
	CloudFirstEventTimeout = 120000 * time.Millisecond
	LocalFirstEventTimeout = 300000 * time.Millisecond
)

// ErrIdleTimeout matches every *IdleTimeoutError with errors.Is.
var ErrIdleTimeout = errors.New("streamwrap: LLM idle timeout")

// IdleTimeoutError is the error of a stream that saw no activity for
// Timeout. Its text is OpenClaw's, "LLM idle timeout (<N>s): no response
// from model" with N the whole seconds of Timeout; due to Hyrum's law that
// text cannot be changed.
type IdleTimeoutError struct {
	Timeout time.Duration
}

func (e *IdleTimeoutError) Error() string {
	return "LLM idle timeout (" + strconv.FormatInt(int64(e.Timeout/time.Second), 10) + "s): no response from model"
}

// Is makes errors.Is(err, ErrIdleTimeout) true.
func (e *IdleTimeoutError) Is(target error) bool { return target == ErrIdleTimeout }

// IdleScope selects what the idle timer polices.
type IdleScope uint8

const (
	// IdleFull polices stream creation and every gap between events.
	IdleFull IdleScope = iota
	// IdleCreationOnly polices stream creation only (OpenClaw's
	// scope:"creation-only", installed when only a first-event timeout is set).
	IdleCreationOnly
)

// IdleConfig configures IdleTimeout.
type IdleConfig struct {
	// Timeout is the longest silence allowed; it must be positive.
	Timeout time.Duration
	Scope   IdleScope
	// OnIdleTimeout, when set, is called once, from the timer's goroutine,
	// when the timeout fires, before the stream's context is cancelled.
	OnIdleTimeout func(err error)
	// LastToolActivity, when set, reports the last tool activity of the run;
	// the first timer of a stream is shortened by the time since then when
	// that is within Timeout (never below 1 ms).
	LastToolActivity func() time.Time
	// ReuseContext lets consecutive calls made with the same context share
	// the context derived for the inner stream (until a timeout cancels
	// it), so that a call allocates nothing. The caller then promises to
	// cancel the contexts it passes once it stops calling (the engine
	// does: its per-run call context); otherwise the last derived context
	// stays registered with its parent until the parent ends.
	ReuseContext bool
	// CallContext, when set, returns the cancel function of a call's
	// context when the caller made that context for the call and lets the
	// timer cancel it, else nil: the stream then derives no context of its
	// own (nothing to allocate or register with the parent), and a timeout
	// cancels the caller's context with the *IdleTimeoutError. The caller
	// cancels such a context once it stops calling with it.
	CallContext func(ctx context.Context) context.CancelCauseFunc
}

// IdleTimeout is OpenClaw's streamWithIdleTimeout (streamwrap.md §4.8).
//
// How it waits without a goroutine per event: the decorator derives a
// cancellable context for the inner StreamFunc and arms one timer per
// stream (time.AfterFunc). Activity (every event, and every provider frame
// reported through llm.WithActivity) only records a monotonic timestamp;
// when the timer fires it re-arms itself for the remaining time if there
// was activity, and otherwise cancels the context with the
// *IdleTimeoutError and calls OnIdleTimeout. Cancellation reaches the I/O
// boundary, where the provider's blocked read returns (net/http aborts the
// body read; provider.Decoder.SetContext ends the stream), so the blocked
// Next returns and the stream ends with an error event whose message says
// "LLM idle timeout (Ns): no response from model". Inner streams must
// honour their context; one that does not keeps its Next blocked.
//
// When the inner stream reports its reads (llm.ActivityReporter, as
// provider.Decoder does under the transport's context), the clock is read
// per read rather than per event: an event only marks the stream as having
// delivered something since the last read. A stream stalled on the
// provider has delivered nothing since the read it waits in, so the
// timeout fires Timeout after that read, which is after its last event by
// only the consumer's handling of that event. If the timer finds events
// delivered since the last read (a consumer working through buffered
// events for a whole Timeout), it allows a full Timeout from then and
// stamps every event until the next read; a consumer that stops calling
// Next in that state is thus timed out up to one Timeout late.
//
// Calls one after another (an agent run's model calls) reuse one stream
// state, its timer and, when IdleConfig.ReuseContext allows it, the
// derived contexts: a steady-state call allocates nothing here.
//
// The creation phase (the inner StreamFunc call) is policed in both scopes:
// a stream that arrives after the timeout is closed and the call returns
// the *IdleTimeoutError. A failure of the inner call passes through
// unchanged without calling OnIdleTimeout.
func IdleTimeout(next llm.StreamFunc, cfg IdleConfig) llm.StreamFunc {
	if cfg.Timeout <= 0 {
		return next
	}
	// free holds the state of the last closed stream for the next call;
	// concurrent calls get states of their own.
	free := new(atomic.Pointer[idleStream])
	return func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		s := free.Swap(nil)
		if s == nil {
			s = &idleStream{cfg: cfg, free: free, epoch: time.Now(), at: -1}
			// The timer holds the state weakly: a timer left pending
			// between calls (see release) keeps no dropped chain alive.
			ws := weak.Make(s)
			s.fireFn = func() {
				if s := ws.Value(); s != nil {
					s.fire()
				}
			}
			s.activityFn = s.activity
		}
		s.begin(ctx)
		inner, err := next(s.actx, req)
		if s.fired.Load() {
			if inner != nil {
				inner.Close()
			}
			s.disarm()
			return nil, s.timeoutErr()
		}
		if err != nil {
			s.disarm()
			s.release()
			return nil, err
		}
		if cfg.Scope == IdleCreationOnly {
			s.disarm()
		}
		s.init(inner)
		if s.ReportsActivity() {
			s.mode.Store(idleClean)
		}
		return s, nil
	}
}

type idleStream struct {
	base
	cfg  IdleConfig
	free *atomic.Pointer[idleStream]
	// parent is the context ctx derives from; ctx is the inner stream's
	// (cancelled at a timeout) and actx carries the activity hook.
	parent context.Context
	ctx    context.Context
	actx   context.Context
	cancel context.CancelCauseFunc
	// lent says ctx is the caller's (IdleConfig.CallContext), which the
	// stream cancels only at a timeout.
	lent  bool
	timer *time.Timer
	// epoch is when the state was made; deadlines and at are times since.
	epoch time.Time
	// fireFn (fire, through a weak pointer) and activityFn are made once.
	fireFn, activityFn func()
	// deadline is the time since epoch at which the timer may fire; activity
	// moves it forward.
	deadline atomic.Int64
	// mode says how events count as activity (idleEachEvent, ...).
	mode  atomic.Uint32
	fired atomic.Bool
	// mu orders the timer's decision to fire with the start and end of a
	// call, so that a late firing never reaches the next call.
	mu sync.Mutex
	// armed says a call is policed (written under mu by the stream's own
	// goroutine, which alone may read it without mu).
	armed bool
	// at is when the timer is due (time since epoch), or -1 when it is
	// not pending (as far as the state knows: a firing clears it).
	at      time.Duration
	idleErr *IdleTimeoutError
	ended   bool
	closed  bool
}

// How events count as activity (idleStream.mode).
const (
	// idleEachEvent: every event stamps the clock; the inner stream does
	// not report its reads.
	idleEachEvent uint32 = iota
	// idleClean: the inner stream reports its reads, and no event was
	// delivered since the last report.
	idleClean
	// idleDirty: events were delivered since the last report; their times
	// were not taken.
	idleDirty
	// idleHeld: the timer found the stream dirty at its deadline: every
	// event stamps the clock until the next report.
	idleHeld
)

// begin starts a call under ctx: the contexts of the previous call are
// kept when allowed and still live, and the call is armed. The timer is
// reset only when it is not pending or due after the call's first
// deadline: a timer still pending from an earlier call of a kept state
// (see release) is due no later than that, and its firing re-arms it for
// the deadline, so that calls one after another touch no timer.
func (s *idleStream) begin(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.cfg.ReuseContext || s.parent != ctx || s.ctx == nil || s.fired.Load() || s.ctx.Err() != nil {
		if s.cancel != nil && !s.lent {
			s.cancel(nil)
		}
		s.parent = ctx
		if s.cfg.CallContext != nil {
			s.cancel = s.cfg.CallContext(ctx)
		} else {
			s.cancel = nil
		}
		if s.lent = s.cancel != nil; s.lent {
			s.ctx = ctx
		} else {
			s.ctx, s.cancel = context.WithCancelCause(ctx)
		}
		s.actx = llm.WithActivity(s.ctx, s.activityFn)
	}
	s.fired.Store(false)
	s.mode.Store(idleEachEvent)
	s.idleErr = nil
	s.ended, s.closed = false, false
	t0 := time.Now()
	first := s.cfg.Timeout
	if s.cfg.LastToolActivity != nil {
		if t := s.cfg.LastToolActivity(); !t.IsZero() {
			// Measured from the time just taken: one clock read less,
			// and the first deadline is then exactly t + Timeout.
			if since := t0.Sub(t); since >= 0 && since < s.cfg.Timeout {
				first = max(s.cfg.Timeout-since, time.Millisecond)
			}
		}
	}
	d := t0.Sub(s.epoch) + first
	s.deadline.Store(int64(d))
	s.armed = true
	switch {
	case s.timer == nil:
		s.timer = time.AfterFunc(first, s.fireFn)
		s.at = d
	case s.at < 0 || s.at > d:
		s.timer.Reset(first)
		s.at = d
	}
}

// release ends the call: the state goes back for the next call, its
// contexts kept only when ReuseContext allows it and nothing cancelled
// them. The timer is left pending with the contexts kept (it goes quiet
// when it fires disarmed, at most Timeout later: the next call's begin
// then resets it), and stopped otherwise. A pending timer holds the state
// only weakly, so a chain dropped between calls is not kept alive by it.
func (s *idleStream) release() {
	s.base.clear()
	s.mu.Lock()
	keep := s.cfg.ReuseContext && !s.fired.Load()
	if !keep {
		if s.cancel != nil {
			if !s.lent {
				s.cancel(nil)
			}
			s.ctx, s.actx, s.cancel, s.parent, s.lent = nil, nil, nil, nil, false
		}
		if s.at >= 0 {
			s.timer.Stop()
			s.at = -1
		}
	}
	s.mu.Unlock()
	s.free.CompareAndSwap(nil, s)
}

// stamp records activity now: the timer, when it fires, re-arms itself
// for the remaining time.
func (s *idleStream) stamp() {
	s.deadline.Store(int64(time.Since(s.epoch) + s.cfg.Timeout))
}

// activity is the provider's report (llm.WithActivity). From a reporting
// stream it also says that every event delivered so far came before it.
// The deadline is stored before the mode, and fire loads them in the
// other order, so a timer that sees the stream clean sees this deadline.
func (s *idleStream) activity() {
	s.stamp()
	if s.mode.Load() != idleEachEvent {
		s.mode.Store(idleClean)
	}
}

// extend moves the deadline to d unless activity put it later.
func (s *idleStream) extend(d time.Duration) {
	for {
		old := s.deadline.Load()
		if old >= int64(d) || s.deadline.CompareAndSwap(old, int64(d)) {
			return
		}
	}
}

// delivered records the delivery of an event; it is small enough to be
// inlined into step, so that the common case, a dirty stream, costs one
// load.
func (s *idleStream) delivered() {
	if m := s.mode.Load(); m != idleDirty {
		s.markDelivered(m)
	}
}

func (s *idleStream) markDelivered(mode uint32) {
	if mode == idleClean {
		s.mode.Store(idleDirty)
	} else {
		s.stamp()
	}
}

func (s *idleStream) fire() {
	s.mu.Lock()
	s.at = -1
	if s.fired.Load() || !s.armed {
		s.mu.Unlock()
		return
	}
	mode := s.mode.Load()
	now := time.Since(s.epoch)
	if d := time.Duration(s.deadline.Load()); d > now {
		s.timer.Reset(d - now)
		s.at = d
		s.mu.Unlock()
		return
	}
	if mode == idleDirty {
		// Events came after the last report at times not taken, the last
		// of them at the latest now: allow a full Timeout from now, and
		// stamp each event until the next report.
		s.extend(now + s.cfg.Timeout)
		s.mode.CompareAndSwap(idleDirty, idleHeld)
		s.timer.Reset(s.cfg.Timeout)
		s.at = now + s.cfg.Timeout
		s.mu.Unlock()
		return
	}
	err := &IdleTimeoutError{Timeout: s.cfg.Timeout}
	s.idleErr = err
	s.fired.Store(true)
	cancel := s.cancel
	s.mu.Unlock()
	// The hook runs before the cancellation releases the blocked reader, so
	// that it has run by the time the consumer sees the error.
	if s.cfg.OnIdleTimeout != nil {
		s.cfg.OnIdleTimeout(err)
	}
	cancel(err)
}

// disarm ends the policing of the call; the timer, when it fires, finds
// the call disarmed and does nothing (release decides whether it is
// stopped before then).
func (s *idleStream) disarm() {
	if !s.armed {
		return
	}
	s.mu.Lock()
	s.armed = false
	s.mu.Unlock()
}

func (s *idleStream) timeoutErr() *IdleTimeoutError {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.idleErr
}

func (s *idleStream) Next() bool {
	_, _, ok := s.Step()
	return ok
}

// Step is Next, then Event and Message (llm.Stepper; see base.next).
func (s *idleStream) Step() (*llm.Event, *llm.Message, bool) {
	if s.ended {
		return nil, s.Message(), false
	}
	ev, msg, ok := s.src.Step() // (base.src)
	if !ok || s.pass&passBit(ev) == 0 {
		ev, msg, ok = s.up(ev, msg, ok)
	}
	return s.settle(ev, msg, ok)
}

// passes reports whether the decorator would pass a non-terminal event
// through without doing anything (see diagStream.fuse): always with the
// creation-only scope; with the full scope when the stream is dirty (see
// delivered), the steady state over a provider that reports its reads.
func (s *idleStream) passes() bool {
	return s.cfg.Scope != IdleFull || s.mode.Load() == idleDirty
}

// settle is Step after the pull.
func (s *idleStream) settle(ev *llm.Event, msg *llm.Message, ok bool) (*llm.Event, *llm.Message, bool) {
	if s.ended {
		return nil, s.Message(), false
	}
	s.base.msg = msg
	if ok {
		s.base.ev = ev
	}
	if !ok {
		s.end()
		if s.fired.Load() {
			s.markTimedOut(nil)
		}
		return nil, s.Message(), false
	}
	e := s.curEvent()
	if e.Type.IsTerminal() {
		s.end()
		if s.fired.Load() {
			s.markTimedOut(e)
		}
		return e, s.Message(), true
	}
	if s.cfg.Scope == IdleFull {
		s.delivered()
	}
	return e, s.Message(), true
}

func (s *idleStream) end() {
	s.ended = true
	// Not dirty, so that passes holds no more (a fused diagnostics layer
	// then hands everything to settle, which knows the stream ended).
	s.mode.Store(idleEachEvent)
	s.disarm()
}

// markTimedOut turns the end of the stream into the idle-timeout failure.
func (s *idleStream) markTimedOut(e *llm.Event) {
	err := s.timeoutErr()
	if err == nil {
		return
	}
	s.curMessage().Fail(llm.StopError, err.Error())
	if e != nil {
		e.Type = llm.EventError
		e.Reason = llm.StopError
	}
}

func (s *idleStream) Err() error {
	if s.fired.Load() {
		if err := s.timeoutErr(); err != nil {
			return err
		}
	}
	return s.inner.Err()
}

// Close closes the inner stream; the stream's state then serves the next
// call, so it must not be used after Close.
func (s *idleStream) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	s.disarm()
	err := s.closeInner()
	s.release()
	return err
}

// IdleTimeoutInput holds what OpenClaw's resolveLlmIdleTimeoutMs reads.
// Zero durations mean "not set".
type IdleTimeoutInput struct {
	// ModelRequestTimeout is the model's configured request timeout.
	ModelRequestTimeout time.Duration
	// RunTimeout is the run's explicit timeout (MaxTimerTimeout means none).
	RunTimeout time.Duration
	// AgentDefaultTimeout is agents.defaults.timeoutSeconds.
	AgentDefaultTimeout time.Duration
	// Cron marks a cron-triggered run.
	Cron bool
	// Model gives the base URL, provider id and model id.
	Model llm.Model
	// LocalService marks a provider configured as a local service
	// (localService, or apiKey custom-local / ollama-local).
	LocalService bool
}

func clampTimer(d time.Duration) time.Duration {
	return min(max(d, time.Millisecond), MaxTimerTimeout)
}

// ResolveIdleTimeout is OpenClaw's resolveLlmIdleTimeoutMs: the idle
// timeout for a model call, or 0 for off (streamwrap.md §4.8).
func ResolveIdleTimeout(in IdleTimeoutInput) time.Duration {
	local := isLocalModel(&in.Model)
	self := !local && isSelfHostedModel(&in.Model, in.LocalService)
	runSet := in.RunTimeout > 0 && in.RunTimeout < MaxTimerTimeout
	if in.ModelRequestTimeout > 0 {
		d := in.ModelRequestTimeout
		switch {
		case runSet:
			d = min(d, in.RunTimeout)
		case in.AgentDefaultTimeout > 0:
			d = min(d, in.AgentDefaultTimeout)
		}
		return clampTimer(d)
	}
	ceiling := DefaultIdleTimeout
	switch {
	case local:
		ceiling = MaxTimerTimeout
	case self:
		ceiling = SelfHostedIdleTimeout
	}
	if runSet {
		if in.Cron {
			if local || self {
				return clampTimer(in.RunTimeout)
			}
			return clampTimer(min(in.RunTimeout, CronIdleTimeout))
		}
		return clampTimer(min(in.RunTimeout, ceiling))
	}
	if in.AgentDefaultTimeout > 0 {
		return clampTimer(min(in.AgentDefaultTimeout, ceiling))
	}
	switch {
	case local:
		return 0
	case self:
		return SelfHostedIdleTimeout
	}
	return DefaultIdleTimeout
}

// ResolveFirstEventTimeout is resolveLlmFirstEventTimeoutMs: 300 s for
// local and self-hosted models, 120 s otherwise.
func ResolveFirstEventTimeout(in IdleTimeoutInput) time.Duration {
	if isLocalModel(&in.Model) || isSelfHostedModel(&in.Model, in.LocalService) {
		return LocalFirstEventTimeout
	}
	return CloudFirstEventTimeout
}

func baseURLHost(raw string) string {
	raw = trimSpace(raw)
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		if u2, err2 := url.Parse("http://" + raw); err2 == nil {
			u = u2
		} else {
			return ""
		}
	}
	return strings.ToLower(u.Hostname())
}

func isCloudRef(id string) bool { return strings.HasSuffix(strings.ToLower(trimSpace(id)), ":cloud") }

// isLocalModel: the base URL's host is a loopback, private, link-local or
// .local address (or an explicit Docker/OrbStack host alias), and the model
// id is not a :cloud ref.
func isLocalModel(m *llm.Model) bool {
	if isCloudRef(m.ID) {
		return false
	}
	h := baseURLHost(m.BaseURL)
	if h == "" {
		return false
	}
	switch h {
	case "localhost", "0.0.0.0", "host.docker.internal", "host.orb.internal", "docker.orb.internal":
		return true
	}
	if strings.HasSuffix(h, ".local") || strings.HasSuffix(h, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(h)
	if err != nil {
		return false
	}
	if a.Is4In6() {
		return a.Unmap() == netip.AddrFrom4([4]byte{127, 0, 0, 1})
	}
	if a.Is4() {
		b := a.As4()
		switch {
		case b[0] == 127, b[0] == 10, b[0] == 0 && b == [4]byte{}:
			return true
		case b[0] == 172 && b[1] >= 16 && b[1] <= 31:
			return true
		case b[0] == 192 && b[1] == 168:
			return true
		case b[0] == 100 && b[1] >= 64 && b[1] <= 127:
			return true
		}
		return false
	}
	b := a.As16()
	switch {
	case a.IsLoopback():
		return true
	case b[0]&0xfe == 0xfc: // fc00::/7
		return true
	case b[0] == 0xfe && b[1]&0xc0 == 0x80: // fe80::/10
		return true
	}
	return false
}

// isSelfHostedModel: a bare host name (no dots, no colons) served by a
// self-hosted provider id (ollama, lmstudio, vllm, sglang, llama-cpp, or
// one of those with a -suffix, but not ollama-cloud) or a provider
// configured as a local service; never a :cloud model.
func isSelfHostedModel(m *llm.Model, localService bool) bool {
	if isCloudRef(m.ID) {
		return false
	}
	h := baseURLHost(m.BaseURL)
	if h == "" || strings.ContainsAny(h, ".:") {
		return false
	}
	if localService {
		return true
	}
	p := strings.ToLower(trimSpace(m.Provider))
	if p == "ollama-cloud" {
		return false
	}
	for _, id := range [...]string{"ollama", "lmstudio", "vllm", "sglang", "llama-cpp"} {
		if p == id || strings.HasPrefix(p, id+"-") {
			return true
		}
	}
	return false
}
