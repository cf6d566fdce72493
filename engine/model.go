package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider"
	"github.com/ocbench/ocbench/streamwrap"
)

// callModel makes one model call with the current history and returns
// the final assistant message (owned by the caller), whether an Interrupt
// cut it short, and the error that ended it (nil for stop, length and
// toolUse). A request the provider refuses is retried when the provider
// says it is temporary, then reported as an assistant message with
// stopReason error, so that it lands in the transcript like any failure.
func (r *runner) callModel(ctx context.Context) (*llm.Message, bool, error) {
	p := r.p
	msgs, gerr := r.contextGuard()
	if gerr != nil {
		// Not sent: the run compacts as for a provider overflow.
		return r.failedMessage(llm.StopError, gerr.Error()), false, fmt.Errorf("%w: %w", ErrProvider, gerr)
	}
	r.req.Messages = msgs
	r.emit(EventTurnStart, nil)
	for attempt := 0; ; attempt++ {
		// One cancellable call context serves every call of the run until
		// something cancels it (the turn timeout, an interrupt, a cut
		// stream); the turn timer is reset per call, not made anew.
		cctx, cancel := r.callScope(ctx)
		if p.Queue.setPhase(cancel) {
			p.Queue.setPhase(nil)
			m := r.failedMessage(llm.StopAborted, "Request was aborted")
			return m, true, ErrInterrupted
		}
		r.armTurnTimer()
		s, err := r.fn(cctx, &r.req)
		if err != nil {
			r.disarmTurnTimer()
			p.Queue.setPhase(nil)
			cause := context.Cause(cctx)
			if errors.Is(cause, ErrInterrupted) && ctx.Err() == nil {
				return r.failedMessage(llm.StopAborted, "Request was aborted"), true, ErrInterrupted
			}
			if ctx.Err() != nil {
				return r.failedMessage(llm.StopAborted, "Request was aborted"), false, ctx.Err()
			}
			if wait, ok := r.retryWait(err, attempt); ok {
				r.res.Retries++
				r.emit(EventRetry, func(e *Event) { e.Err = r.red.Error(err); e.Wait = wait })
				t := time.NewTimer(wait)
				select {
				case <-t.C:
					continue
				case <-ctx.Done():
					t.Stop()
					return r.failedMessage(llm.StopAborted, "Request was aborted"), false, ctx.Err()
				}
			}
			return r.failedMessage(llm.StopError, err.Error()), false, fmt.Errorf("%w: %w", ErrProvider, err)
		}
		m, interrupted, err := r.drain(ctx, cctx, cancel, s)
		r.disarmTurnTimer()
		p.Queue.setPhase(nil)
		if m.StopReason == llm.StopAborted || m.StopReason == llm.StopError {
			// The history takes another message for a failed call
			// (addToHistory): the slot is left to it.
			m = r.unslot(m)
		}
		return m, interrupted, err
	}
}

// errTurnTimeout is the cause of a call context ended by Params.TurnTimeout.
var errTurnTimeout = errors.New("engine: model call timed out")

// callScope returns the run's call context, derived from ctx: the one of
// the previous call while nothing has cancelled it, else a new one.
func (r *runner) callScope(ctx context.Context) (context.Context, context.CancelCauseFunc) {
	if c := r.call.Load(); c != nil && c.parent == ctx && c.ctx.Err() == nil {
		return c.ctx, c.cancel
	}
	c := &r.scope0 // the run's first scope lives in the runner
	if old := r.call.Load(); old != nil {
		old.cancel(nil)
		c = new(callScope)
	}
	c.parent = ctx
	c.memo = sanCtx{Context: ctx, r: r}
	c.ctx, c.cancel = context.WithCancelCause(&c.memo)
	r.call.Store(c)
	return c.ctx, c.cancel
}

// callScope is one call context of a run; the turn timer cancels the
// current one.
type callScope struct {
	parent context.Context
	ctx    context.Context
	cancel context.CancelCauseFunc
	memo   sanCtx // ctx's parent
}

// sanCtx is a call context's parent: the run's context, which also
// carries the replay sanitizer's memo of the run's history (runner.san)
// to the chain's SanitizeReplayToolCalls.
type sanCtx struct {
	context.Context
	r *runner
}

// noReplayMemo makes calls sanitize without the memo (tests compare).
var noReplayMemo bool

func (c *sanCtx) Value(key any) any {
	if _, ok := key.(streamwrap.ReplayMemoKey); ok {
		if m := c.r.san; m != nil && !noReplayMemo {
			return m
		}
		return nil
	}
	return c.Context.Value(key)
}

// armTurnTimer starts Params.TurnTimeout for the current call. The run
// has one timer (a turnClock), and a call only moves its deadline (due):
// the timer, still pending from an earlier call, finds the deadline later
// than its own firing and waits the rest (fire). A timer reset and a stop
// per call cost more than the clock read, and the turn timeout almost
// never fires.
func (r *runner) armTurnTimer() {
	c := r.turn0
	if c == nil {
		c = takeTurnClock(r)
		r.turn0 = c
		if c.timer == nil {
			// A new clock, armed at once (no reset after): its first
			// firing, at least TurnTimeout after base, finds this deadline
			// past and does not read c.timer, which it reads only to wait
			// for a deadline a later arm stored, after setting it.
			c.timer = time.AfterFunc(c.timeout, c.fire)
			return
		}
	}
	due := time.Since(c.base) + c.timeout
	if due <= 0 {
		due = math.MaxInt64 // past time.Duration's range: never
	}
	// Strictly later than any deadline stored before (fire relies on it),
	// also on a clock that reads the same nanosecond twice.
	due = max(due, c.last+1)
	c.last = due
	c.due.Store(int64(due))
	if c.idle.CompareAndSwap(true, false) {
		c.timer.Reset(c.timeout)
	}
}

func (r *runner) disarmTurnTimer() {
	if r.turn0 != nil {
		r.turn0.due.Store(0)
	}
}

// turnClock is the timer of a run's turn timeout, with the current call's
// deadline (due, in nanoseconds after base; 0: no call armed) and whether
// the timer is not pending (idle). A run takes one from turnClocks of its
// TurnTimeout and gives it back at its end, pending or not: runs do not
// make and stop a timer each. Deadlines only grow, also across the runs
// of one clock (the same timeout, the same base), so a pending firing is
// never later than the deadline it serves.
type turnClock struct {
	timer   *time.Timer
	timeout time.Duration
	base    time.Time
	// last is the last deadline stored, written by the run holding the
	// clock only.
	last time.Duration
	due  atomic.Int64
	idle atomic.Bool
	// run is the runner whose call the clock ends (nil while it is free);
	// gen counts the runs that took it, so that a firing that raced with
	// the clock's passing to another run does not end that run's call.
	run atomic.Pointer[runner]
	gen atomic.Uint64
}

// turnClocks holds free clocks, at most maxFreeTurnClocks (past that, a
// clock's timer is stopped and the clock dropped).
var turnClocks struct {
	mu   sync.Mutex
	free []*turnClock
}

const maxFreeTurnClocks = 64

// takeTurnClock returns a clock of r's TurnTimeout for r: a free one, or
// a new one without a timer (armTurnTimer makes it).
func takeTurnClock(r *runner) *turnClock {
	d := r.p.TurnTimeout
	var c *turnClock
	tc := &turnClocks
	tc.mu.Lock()
	for i := len(tc.free) - 1; i >= 0; i-- {
		if tc.free[i].timeout == d {
			c = tc.free[i]
			last := len(tc.free) - 1
			tc.free[i], tc.free[last] = tc.free[last], nil
			tc.free = tc.free[:last]
			break
		}
	}
	tc.mu.Unlock()
	if c == nil {
		c = &turnClock{timeout: d, base: time.Now(), last: d}
		c.due.Store(int64(d))
	}
	c.gen.Add(1)
	c.run.Store(r)
	return c
}

// release disarms c and frees it (see turnClocks).
func (c *turnClock) release() {
	c.due.Store(0)
	c.run.Store(nil)
	tc := &turnClocks
	tc.mu.Lock()
	if len(tc.free) < maxFreeTurnClocks {
		tc.free = append(tc.free, c)
		c = nil
	}
	tc.mu.Unlock()
	if c != nil {
		c.timer.Stop()
	}
}

// fire runs on the timer's goroutine: it ends the current call once its
// deadline has passed, waits again for a deadline a later call moved, and
// leaves the timer idle (for the next arm to reset) when no call is
// armed. A late firing after the call ended finds it disarmed, or at
// worst spends a call context the next call of the run replaces; never
// one of a run that took the clock since (gen).
func (c *turnClock) fire() {
	for {
		due := c.due.Load()
		if due != 0 {
			if left := time.Duration(due) - time.Since(c.base); left > 0 {
				c.timer.Reset(left)
				return
			}
			// Deadlines only grow and a release stores 0: when the swap
			// succeeds, due was still the deadline of the run that took
			// the clock last before g was read.
			g := c.gen.Load()
			if c.due.CompareAndSwap(due, 0) {
				if r := c.run.Load(); r != nil && c.gen.Load() == g {
					if s := r.call.Load(); s != nil {
						s.cancel(errTurnTimeout)
					}
				}
			}
			continue
		}
		c.idle.Store(true)
		// An arm between the load and the store saw the timer pending and
		// left it to this goroutine.
		if c.due.Load() == 0 || !c.idle.CompareAndSwap(true, false) {
			return
		}
	}
}

// endCalls releases the run's call context and turn clock.
func (r *runner) endCalls() {
	if r.turn0 != nil {
		r.turn0.release()
		r.turn0 = nil
	}
	if c := r.call.Load(); c != nil {
		c.cancel(nil)
	}
}

// retryWait decides whether a refused request is retried and after how
// long: only errors the provider marks temporary (429, 408, 409, 5xx),
// at most RateLimitRetries times, honouring Retry-After up to MaxRetryWait.
func (r *runner) retryWait(err error, attempt int) (time.Duration, bool) {
	p := r.p
	if p.RateLimitRetries < 0 || attempt >= p.RateLimitRetries {
		return 0, false
	}
	var he *provider.HTTPError
	if !errors.As(err, &he) || !he.Temporary() {
		return 0, false
	}
	wait := he.RetryAfter
	if wait <= 0 {
		wait = 500 * time.Millisecond << attempt
	}
	if wait > p.MaxRetryWait {
		return 0, false
	}
	return wait, true
}

func (r *runner) failedMessage(reason llm.StopReason, text string) *llm.Message {
	m := &llm.Message{Role: llm.RoleAssistant, API: r.p.Model.API, Provider: r.p.Model.Provider, Model: r.p.Model.ID,
		Timestamp: r.p.Now().UnixMilli()}
	m.Fail(reason, r.red.String(text))
	return m
}

// stepPast steps st until it ends (false) or its deltas have passed
// limit bytes (true, the rest left unread).
func stepPast(st llm.Stepper, limit int) bool {
	size := 0
	for {
		e, _, ok := st.Step()
		if !ok {
			return false
		}
		if size += len(e.Delta); size > limit {
			return true
		}
	}
}

// drain reads the stream to its end, forwarding events, and returns a
// clone of the final message, placed in the history's next element
// (histSlot) when it may be.
func (r *runner) drain(ctx, cctx context.Context, cancel context.CancelCauseFunc, s llm.Stream) (*llm.Message, bool, error) {
	p := r.p
	size := 0
	tooLarge := false
	emit := p.OnEvent != nil
	// The chain's outer layer steps (llm.Stepper): the event and the
	// message in one call instead of three.
	st := llm.Stepping(s)
	quiet := !emit
	if quiet {
		// Nobody sees the events: a loop that holds nothing but the size.
		if stepPast(st, p.MaxMessageBytes) {
			tooLarge = true
			cancel(ErrMessageTooLarge) // as below
			stepPast(st, math.MaxInt)
		}
	}
	for !quiet {
		e, msg, ok := st.Step()
		if !ok {
			break
		}
		size += len(e.Delta)
		if emit {
			r.ev = Event{Kind: EventStream, Turn: r.turn, Stream: e, Message: r.redactedStreamMessage(e, msg)}
			p.OnEvent(&r.ev)
		}
		if size > p.MaxMessageBytes && !tooLarge {
			// Cut the call through its context and let every layer of
			// the chain see the stream end, rather than closing it
			// mid-flight.
			tooLarge, emit = true, false
			cancel(ErrMessageTooLarge)
		}
	}
	serr := s.Err()
	m := cloneMessage(&r.mem, s.Message(), r.histSlot())
	_ = s.Close()
	redactMessage(r.red, m)
	if m.Timestamp == 0 {
		m.Timestamp = p.Now().UnixMilli()
	}
	if m.API == "" {
		m.API = p.Model.API
	}
	if m.Provider == "" {
		m.Provider = p.Model.Provider
	}
	if m.Model == "" {
		m.Model = p.Model.ID
	}
	cause := context.Cause(cctx)
	switch {
	case tooLarge:
		m.Fail(llm.StopError, fmt.Sprintf("assistant message exceeded %d bytes; the stream was cut (endless stream?)", p.MaxMessageBytes))
		return m, false, fmt.Errorf("%w: over %d bytes", ErrMessageTooLarge, p.MaxMessageBytes)
	case ctx.Err() != nil:
		m.Fail(llm.StopAborted, "Request was aborted")
		return m, false, ctx.Err()
	case cause == nil:
		// The call context is live (the common case): no cause to match.
	case errors.Is(cause, ErrInterrupted):
		m.Fail(llm.StopAborted, "Request was aborted")
		return m, true, ErrInterrupted
	case errors.Is(cause, errTurnTimeout):
		m.Fail(llm.StopError, fmt.Sprintf("model call timed out after %s", p.TurnTimeout))
		return m, false, fmt.Errorf("%w: %s", ErrProvider, m.ErrorMessage)
	}
	switch m.StopReason {
	case llm.StopError, llm.StopAborted:
		if m.ErrorMessage == "" {
			m.ErrorMessage = "model call failed"
		}
		if serr == nil {
			serr = errors.New(m.ErrorMessage)
		}
		return m, false, fmt.Errorf("%w: %w", ErrProvider, serr)
	case llm.StopNone:
		// A stream that ended without a terminal event (contract breach
		// of a custom StreamFunc): treat as truncated.
		m.Fail(llm.StopError, "stream ended before the message was complete")
		return m, false, fmt.Errorf("%w: %s", ErrProvider, m.ErrorMessage)
	}
	return m, false, nil
}
