package loadtest

import (
	"bytes"
	"io"
	"net/http"
	"sync/atomic"
)

// sessionPool hands out session numbers so that no two requests in flight
// ever continue the same session: a gateway answers a second run on a
// session that has one in flight with 409, which would be a failure the
// load generator made, not the server.
//
// The free numbers sit in a buffered channel as large as the pool, so
// taking one and giving it back never block and never allocate. When every
// number is out (more requests in flight than sessions) a request gets a
// fresh session instead of waiting for one: waiting would hold the attack
// behind the server and hide its latency (the rate sent would fall), and a
// fresh session is what a new user brings. Such requests are counted.
type sessionPool struct {
	free  chan uint64
	next  atomic.Uint64 // the next fresh session number
	fresh atomic.Uint64 // requests that found every session out
}

func newSessionPool(n int) *sessionPool {
	p := &sessionPool{free: make(chan uint64, n)}
	for i := 0; i < n; i++ {
		p.free <- uint64(i)
	}
	p.next.Store(uint64(n))
	return p
}

// take returns a session no request in flight uses.
func (p *sessionPool) take() uint64 {
	select {
	case s := <-p.free:
		return s
	default:
		p.fresh.Add(1)
		return p.next.Add(1) - 1
	}
}

// give returns a session whose answer was read to its end. A session whose
// answer was cut short (a timeout, a reset) may still have its run going
// on the server, so it is given up and a fresh one takes its place in the
// pool. Fresh sessions taken when the pool was empty are not kept: the
// pool stays at its size.
func (p *sessionPool) give(s uint64, complete bool) {
	if !complete {
		s = p.next.Add(1) - 1
	}
	select {
	case p.free <- s:
	default:
	}
}

// sessionTransport sends each request with the body of a session taken
// from pool for exactly as long as the request is in flight: the session
// goes back when the answer's body is closed (after being read to its
// end, or not) or when the round trip fails.
type sessionTransport struct {
	base http.RoundTripper
	pool *sessionPool
	body func(session uint64) []byte
}

func (t *sessionTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	s := t.pool.take()
	b := t.body(s)
	r := *req // a RoundTripper leaves the caller's request as it was
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.GetBody = nil
	r.ContentLength = int64(len(b))
	resp, err := t.base.RoundTrip(&r)
	if err != nil {
		t.pool.give(s, false)
		return nil, err
	}
	resp.Body = &sessionBody{ReadCloser: resp.Body, pool: t.pool, session: s}
	return resp, nil
}

// sessionBody gives its session back once, when closed.
type sessionBody struct {
	io.ReadCloser
	pool    *sessionPool
	session uint64
	eof     bool
	closed  atomic.Bool
}

func (b *sessionBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.eof = true
	}
	return n, err
}

func (b *sessionBody) Close() error {
	err := b.ReadCloser.Close()
	if !b.closed.Swap(true) {
		b.pool.give(b.session, b.eof)
	}
	return err
}
