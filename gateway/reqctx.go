package gateway

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// reqContext is the context of the requests of one connection of the
// gateway's own server, one after the other: cancelled when the client
// goes away or the connection closes, and past RequestTimeout of the
// request being served (context.DeadlineExceeded). A context.WithTimeout
// per request costs a context, a timer started and stopped, a Request
// copy to carry it, and a registration with its parent; here a request
// that ends in time hands the same context, never cancelled, to the next
// one, and the connection's timer moves only once per RequestTimeout.
//
// A context once cancelled stays cancelled: the connection's next
// request gets a new one (srvConn.renew). The callbacks registered
// through AfterFunc (how context.WithCancel and context.AfterFunc attach
// to a context of a type of their own) run on the goroutine that cancels.
type reqContext struct {
	cs      *connState
	timeout time.Duration // RequestTimeout, the bound of every request under it

	mu       sync.Mutex
	done     chan struct{}
	err      error
	deadline time.Time // of the request being served; zero between requests
	fns      []*reqAfter
}

// reqAfter is one AfterFunc registration.
type reqAfter struct{ f func() }

func newReqContext(cs *connState, timeout time.Duration) *reqContext {
	return &reqContext{cs: cs, timeout: timeout, done: make(chan struct{})}
}

func (c *reqContext) Deadline() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.deadline, !c.deadline.IsZero()
}

func (c *reqContext) Done() <-chan struct{} { return c.done }

func (c *reqContext) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *reqContext) Value(key any) any {
	if key == (connStateKey{}) {
		return c.cs
	}
	return nil
}

// AfterFunc arranges for f to run when c is cancelled (at once, on this
// goroutine, when it already is); stop unregisters it and reports whether
// it had not run.
func (c *reqContext) AfterFunc(f func()) (stop func() bool) {
	a := &reqAfter{f: f}
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		f()
		return func() bool { return false }
	}
	c.fns = append(c.fns, a)
	c.mu.Unlock()
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		for i, x := range c.fns {
			if x == a {
				c.fns = append(c.fns[:i], c.fns[i+1:]...)
				c.fns[len(c.fns):cap(c.fns)][0] = nil
				return true
			}
		}
		return false
	}
}

// cancel cancels c with err (once) and runs its callbacks.
func (c *reqContext) cancel(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	close(c.done)
	fns := c.fns
	c.fns = nil
	c.mu.Unlock()
	for _, a := range fns {
		a.f()
	}
}

// boundedBy reports whether ctx is a request context of the gateway's own
// server that already bounds the request by timeout.
func boundedBy(ctx context.Context, timeout time.Duration) bool {
	c, ok := ctx.(*reqContext)
	return ok && c.timeout == timeout
}

// The connection's side: renew before a request is read, begin and end
// around its handler. rmu orders them with the timer and with cancel, so
// that a timer that fires late, or a client that leaves, never reaches
// the next request's context.

// renew makes sure the next request gets a context not cancelled: a new
// one (and a new request template carrying it) once the previous one was.
func (c *srvConn) renew() {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	if c.rctx != nil && c.rctx.Err() == nil {
		return
	}
	c.rctx = newReqContext(c.cs, c.hs.s.cfg.RequestTimeout)
	if c.cancelled {
		c.rctx.cancel(context.Canceled)
	}
	c.tmpl = (&http.Request{}).WithContext(c.rctx)
}

// begin starts the request's RequestTimeout. The timer, once armed, is
// left to fire at its time: it then re-arms itself for the request being
// served, if any.
func (c *srvConn) begin(now time.Time) {
	c.rmu.Lock()
	d := now.Add(c.rctx.timeout)
	c.rctx.mu.Lock()
	c.rctx.deadline = d
	c.rctx.mu.Unlock()
	if c.timerAt.IsZero() || c.timerAt.After(d) {
		c.timerAt = d
		if c.rtimer == nil {
			c.rtimer = time.AfterFunc(c.rctx.timeout, c.expire)
		} else {
			c.rtimer.Reset(c.rctx.timeout)
		}
	}
	c.rmu.Unlock()
}

// maxKept is how many registrations a context may carry from one request
// to the next: those of the proxy's per-connection chains (one per wire),
// which derive their context once and keep it.
const maxKept = 3

// end ends the request's RequestTimeout. A context that carries more
// registrations than the chains keep is cancelled, as a per-request
// context would have been when its handler returned, so that nothing a
// handler left registered outlives its request.
func (c *srvConn) end() {
	c.rmu.Lock()
	c.rctx.mu.Lock()
	c.rctx.deadline = time.Time{}
	leftover := len(c.rctx.fns) > maxKept
	c.rctx.mu.Unlock()
	if leftover {
		c.rctx.cancel(context.Canceled)
	}
	c.rmu.Unlock()
}

// expire is the timer: it cancels the request being served if it is past
// its deadline, or waits again for its deadline.
func (c *srvConn) expire() {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	c.timerAt = time.Time{}
	if c.rctx == nil || c.closed {
		return
	}
	d, ok := c.rctx.Deadline()
	if !ok {
		return // between requests: the next one arms the timer
	}
	if left := time.Until(d); left > 0 {
		c.timerAt = d
		c.rtimer.Reset(left)
		return
	}
	c.rctx.cancel(context.DeadlineExceeded)
}

// cancel cancels the connection's context (the client went away, or the
// connection closes) and every one its later requests would get.
func (c *srvConn) cancel() {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	c.cancelled = true
	if c.rctx != nil {
		c.rctx.cancel(context.Canceled)
	}
}

// ctxDone reports whether the connection's context was cancelled by the
// client or the connection (not by a request timeout).
func (c *srvConn) ctxDone() bool {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	return c.cancelled
}
