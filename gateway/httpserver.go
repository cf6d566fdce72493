package gateway

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The gateway's own HTTP/1.1 server. net/http's server costs a proxied
// stream more than the proxying: per request a Request with its header
// map built through textproto, a cancellable context, and a background
// reader goroutine (started once the body is read, stopped at the
// handler's end by a read deadline in the past: two goroutine wake-ups),
// then its buffered and chunked writers. Here one goroutine per
// connection reads a request in place from the connection's buffer (the
// lean upstream client's reader, upConn), runs the gateway's one handler
// chain on a Request and header map reused across the connection's
// requests, and writes what the handler flushes in one write: the head
// with the first chunk, and the last chunk with the end of the body.
//
// It keeps what net/http gave the gateway: the header deadline
// (Config.HeaderTimeout), keep-alive connections closed when idle
// (Config.KeepAliveTimeout), 1 MiB of headers at most (431), strict
// request framing (Content-Length or chunked, never both; anything else
// 400 or 501), 100-continue, a request context cancelled when the client
// goes away while its handler runs, and a shutdown that closes idle
// connections at once and waits for the busy ones.
//
// A client that leaves is noticed by reading its connection once the
// request's body is read, as net/http does, but only for a handler still
// running after watchDelay: the short streams that make most of the load
// end before that and pay a clock reading for it (the connection's
// timer, once set, is left to run), not two goroutine switches.

const (
	srvDiscardBody = 256 << 10 // an unread body past this closes the connection (net/http's limit)
	watchDelay     = 100 * time.Millisecond
)

// Connection states, for shutdown.
const (
	connIdle   = iota // between requests (or before the first)
	connActive        // reading or serving a request
	connClosed        // closed by shutdown while idle
)

type httpServer struct {
	s       *Server
	handler http.Handler

	mu      sync.Mutex
	conns   map[*srvConn]struct{}
	closing atomic.Bool
	wg      sync.WaitGroup // connection goroutines
}

func newHTTPServer(s *Server) *httpServer {
	return &httpServer{s: s, handler: s.handler, conns: map[*srvConn]struct{}{}}
}

// serve accepts connections until ln is closed; temporary accept errors
// (out of file descriptors) are retried with a backoff, as net/http does.
func (hs *httpServer) serve(ln net.Listener) error {
	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if hs.closing.Load() {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || isTemporary(err) {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				hs.s.cfg.Logf("gateway: accept error: %v; retrying in %v", err, backoff)
				time.Sleep(backoff)
				continue
			}
			return err
		}
		backoff = 0
		c := newSrvConn(hs, nc)
		hs.mu.Lock()
		if hs.closing.Load() {
			hs.mu.Unlock()
			nc.Close()
			continue
		}
		hs.conns[c] = struct{}{}
		hs.wg.Add(1)
		hs.mu.Unlock()
		go c.serve()
	}
}

func isTemporary(err error) bool {
	t, ok := err.(interface{ Temporary() bool })
	return ok && t.Temporary()
}

// shutdown closes idle connections until none is left or deadline; it
// reports whether every connection ended. New requests on busy
// connections are answered (503, draining) and the connections closed.
func (hs *httpServer) shutdown(deadline time.Time) bool {
	hs.closing.Store(true)
	tick := time.Millisecond
	for {
		hs.mu.Lock()
		for c := range hs.conns {
			if c.state.CompareAndSwap(connIdle, connClosed) {
				c.nc.Close()
			}
		}
		n := len(hs.conns)
		hs.mu.Unlock()
		if n == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(min(tick, time.Until(deadline)+time.Millisecond))
		tick = min(2*tick, 50*time.Millisecond)
	}
}

// closeAll closes every connection: their handlers' writes fail and their
// contexts are cancelled.
func (hs *httpServer) closeAll() {
	hs.mu.Lock()
	for c := range hs.conns {
		c.nc.Close()
		c.cancel()
	}
	hs.mu.Unlock()
}

// srvConn is one client connection and what its requests reuse.
type srvConn struct {
	hs     *httpServer
	nc     net.Conn      // the connection itself
	dc     *deadlineConn // nc with its deadlines set when they matter
	in     upConn        // the read buffer, read in place
	state  atomic.Int32
	remote string
	cs     *connState // what its requests reuse

	// The requests' context (reqctx.go): rmu guards rctx, its timer and
	// the connection's cancellation.
	rmu       sync.Mutex
	rctx      *reqContext
	rtimer    *time.Timer
	timerAt   time.Time // when rtimer fires; zero: not armed
	cancelled bool      // the client went away or the connection closed
	closed    bool

	tmpl *http.Request // zero but for its context (rctx)
	req  *http.Request
	url  url.URL
	hdr  http.Header
	vals []string // backing of the header values
	seen uint16   // the commonKeys the request being read has sent
	host string   // the last request's Host
	body srvBody
	w    respWriter

	// The watcher: mu guards what follows but watched and gone. The
	// timer, once set, runs to its time whatever the requests in between
	// (a Reset and a Stop per request cost more than its rare firing):
	// at its time it watches the request armed watchDelay ago or
	// earlier, waits again for a later one, or, the connection idle,
	// leaves the next arm to set it.
	mu       sync.Mutex
	timer    *time.Timer
	timerSet bool      // the timer will fire
	armedAt  time.Time // when the request being served was armed
	armed    bool
	watching bool
	aborting bool
	stopped  bool // the connection closed: the timer is not set again
	watched  sync.WaitGroup
	gone     bool // the watcher saw the client leave

	memo headMemo // the last request's header lines
}

func newSrvConn(hs *httpServer, nc net.Conn) *srvConn {
	c := &srvConn{hs: hs, nc: nc, hdr: http.Header{}}
	cfg := &hs.s.cfg
	c.dc = &deadlineConn{Conn: nc, slack: cfg.WriteTimeout / 8,
		readSlack: min(cfg.KeepAliveTimeout, cfg.HeaderTimeout, cfg.BodyTimeout) / 8}
	c.in.nc = c.dc
	c.in.buf = make([]byte, srvBufStart)
	c.cs = new(connState)
	c.renew()
	c.req = new(http.Request)
	c.body.c = c
	c.w.c = c
	c.w.hdr = http.Header{}
	if a := nc.RemoteAddr(); a != nil {
		c.remote = a.String()
	}
	return c
}

func (c *srvConn) close() {
	c.nc.Close()
	c.cancel()
	c.rmu.Lock()
	c.closed = true
	if c.rtimer != nil {
		c.rtimer.Stop()
	}
	c.rmu.Unlock()
	c.mu.Lock()
	c.stopped = true
	if c.timer != nil {
		c.timer.Stop()
	}
	c.mu.Unlock()
	c.hs.mu.Lock()
	delete(c.hs.conns, c)
	c.hs.mu.Unlock()
	c.hs.wg.Done()
}

func (c *srvConn) serve() {
	defer c.close()
	cfg := &c.hs.s.cfg
	for first := true; ; first = false {
		// Wait for the next request: the header deadline for a new
		// connection, the keep-alive one between requests.
		if c.in.r == c.in.w {
			wait := cfg.KeepAliveTimeout
			if first {
				wait = cfg.HeaderTimeout
			}
			c.dc.SetReadDeadline(time.Now().Add(wait))
			if err := c.in.fill(); err != nil {
				return
			}
		}
		if !c.state.CompareAndSwap(connIdle, connActive) {
			return // shutdown closed it
		}
		// The request's time, read once: its header deadline, its
		// RequestTimeout, its watch and instrument's start.
		now := time.Now()
		if !first {
			c.dc.SetReadDeadline(now.Add(cfg.HeaderTimeout))
		}
		c.renew()
		req, err := c.readRequest()
		if err != nil {
			c.refuse(err)
			return
		}
		if !c.serveRequest(req, now) {
			return
		}
		if !c.state.CompareAndSwap(connActive, connIdle) || c.hs.closing.Load() {
			return
		}
	}
}

// serveRequest runs the handler and ends the answer; false: the
// connection is not reused.
func (c *srvConn) serveRequest(r *http.Request, now time.Time) (keep bool) {
	w := &c.w
	w.reset(r)
	c.begin(now)
	c.cs.start = now
	if c.body.done() {
		c.arm(now)
	}
	defer func() {
		c.end()
		c.disarm()
		if p := recover(); p != nil {
			if p != http.ErrAbortHandler {
				c.hs.s.cfg.Logf("gateway: panic serving %s: %v\n%s", c.remote, p, debug.Stack())
			}
			keep = false // the answer is cut, never ended cleanly
		}
	}()
	c.hs.handler.ServeHTTP(w, r)
	// The watch ends before what it saw is read (disarm waits for it; the
	// deferred call is then a no-op).
	c.disarm()
	if c.gone || c.ctxDone() {
		return false
	}
	if !c.body.finish() {
		w.closeAfter = true
	}
	if err := w.finish(); err != nil {
		return false
	}
	return !w.closeAfter
}

// arm starts the wait before the client's connection is watched.
func (c *srvConn) arm(now time.Time) {
	c.mu.Lock()
	c.armed, c.armedAt = true, now
	if !c.timerSet && !c.stopped {
		c.timerSet = true
		if c.timer == nil {
			c.timer = time.AfterFunc(watchDelay, c.watch)
		} else {
			c.timer.Reset(watchDelay)
		}
	}
	c.mu.Unlock()
}

// disarm ends the wait, or the watch: a read under way is interrupted by
// a deadline in the past, and any byte it read stays in the buffer for
// the next request.
func (c *srvConn) disarm() {
	c.mu.Lock()
	if !c.armed {
		c.mu.Unlock()
		return
	}
	c.armed = false
	watching := c.watching
	if watching {
		c.aborting = true
		c.dc.interrupt()
	}
	c.mu.Unlock()
	if watching {
		c.watched.Wait()
		c.mu.Lock()
		c.aborting = false
		c.mu.Unlock()
		c.dc.resume()
	}
}

// watch runs on the timer's goroutine while the handler runs on: it reads
// the connection, which only the client's close (or a pipelined request)
// ends.
func (c *srvConn) watch() {
	c.mu.Lock()
	if !c.armed || c.watching || c.stopped {
		c.timerSet = false
		c.mu.Unlock()
		return
	}
	if left := watchDelay - time.Since(c.armedAt); left > 0 {
		c.timer.Reset(left) // a later request than the one the timer was set for
		c.mu.Unlock()
		return
	}
	c.timerSet = false
	c.watching = true
	c.watched.Add(1)
	c.mu.Unlock()
	err := c.in.fill()
	c.mu.Lock()
	c.watching = false
	var pe *UpstreamProtocolError
	if err != nil && !c.aborting && !errors.As(err, &pe) && !isTimeout(err) {
		c.gone = true
		c.cancel()
	}
	c.mu.Unlock()
	c.watched.Done()
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// requestError is a request the server refuses before any handler: the
// status and text net/http answers it with.
type requestError struct {
	status int
	msg    string
}

func (e *requestError) Error() string { return e.msg }

func badRequest(msg string) error { return &requestError{http.StatusBadRequest, msg} }

// refuse answers a request that could not be read, when the client can
// still be told (not on a timeout or a closed connection), and the
// connection is closed.
func (c *srvConn) refuse(err error) {
	var re *requestError
	var pe *UpstreamProtocolError
	status, msg := 0, ""
	switch {
	case errors.As(err, &re):
		status, msg = re.status, re.msg
	case errors.As(err, &pe): // a line past the buffer
		status, msg = http.StatusRequestHeaderFieldsTooLarge, "request header too large"
	default:
		return
	}
	text := strconv.Itoa(status) + " " + http.StatusText(status)
	b := append(c.w.out[:0], "HTTP/1.1 "...)
	b = append(b, text...)
	b = append(b, "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"...)
	b = append(b, text...)
	if status == http.StatusBadRequest && msg != "" {
		b = append(b, ": "...)
		b = append(b, msg...)
	}
	c.dc.SetWriteDeadline(time.Now().Add(time.Second))
	c.nc.Write(b)
}

// headMemo is a request's header lines, byte for byte, and what
// readRequest learnt from them. A keep-alive client sends the same lines
// on every request (an SDK's fixed set) but for the body's length: the
// next request that repeats them, its one Content-Length value aside, is
// not parsed again, and its header map is the one they made, that value
// replaced. The gateway's handlers only read the map (a handler that adds
// or removes a key makes the next request parse its lines again).
type headMemo struct {
	head                              []byte
	ok                                bool
	minor                             int
	keys                              int // entries in the header map they made
	length                            int64
	hosts                             int
	chunked, keepAlive, expect, close bool
	// ls and le bound the one Content-Length value in head, and value is
	// the header map's for it; ls < 0: head is compared whole (no such
	// line, or more than one).
	ls, le int
	value  *string
	hits   int // requests read from the memo (for tests)
}

// match returns how many bytes of in repeat m's lines, the Content-Length
// value among them and the length it gives; ok false: they differ (or in
// holds too little of them yet).
func (m *headMemo) match(in []byte) (n int, value []byte, length int64, ok bool) {
	if m.ls < 0 {
		return len(m.head), nil, m.length, bytes.HasPrefix(in, m.head)
	}
	if !bytes.HasPrefix(in, m.head[:m.ls]) {
		return 0, nil, 0, false
	}
	j := m.ls
	for j < len(in) && j-m.ls <= 18 && '0' <= in[j] && in[j] <= '9' {
		j++
	}
	value = in[m.ls:j]
	if length, ok = parseContentLength(value); !ok || !bytes.HasPrefix(in[j:], m.head[m.le:]) {
		return 0, nil, 0, false
	}
	return j + len(m.head) - m.le, value, length, true
}

// maxHeadMemo bounds the header lines kept for comparison.
const maxHeadMemo = 2 << 10

// readRequest reads a request line and headers in place and returns the
// connection's Request, reset, for them.
func (c *srvConn) readRequest() (*http.Request, error) {
	l, err := c.in.line(false, upBufSize)
	if err != nil {
		return nil, err
	}
	total := len(l)
	r := c.req
	*r = *c.tmpl
	method, target, minor, err := parseRequestLine(l)
	if err != nil {
		return nil, err
	}
	r.Method = method
	r.Proto, r.ProtoMajor, r.ProtoMinor = "HTTP/1.1", 1, minor
	if minor == 0 {
		r.Proto = "HTTP/1.0"
	}
	if err := c.setTarget(r, target); err != nil {
		return nil, err
	}
	r.Header, r.RemoteAddr, r.ContentLength = c.hdr, c.remote, 0
	var length int64 = -1
	chunked, hosts, keepAlive, expect := false, 0, false, false
	m := &c.memo
	if m.ok && m.minor == minor && len(c.hdr) == m.keys {
		if n, value, n64, ok := m.match(c.in.buf[c.in.r:c.in.w]); ok && total+n <= upMaxHead {
			// The same header lines as the connection's last request: its
			// header map, left as it was but for the length's value, and
			// what they told.
			c.in.r += n
			if m.ls >= 0 && *m.value != string(value) {
				*m.value = intern(value)
			}
			m.hits++
			chunked, hosts, keepAlive, expect, r.Close = m.chunked, m.hosts, m.keepAlive, m.expect, m.close
			if hosts > 0 {
				r.Host = c.host
			}
			return c.finishRequest(r, minor, n64, chunked, hosts, keepAlive, expect)
		}
	}
	m.ok = false
	clear(c.hdr)
	c.vals, c.seen = c.vals[:0], 0
	start, fills := c.in.r, c.in.fills
	// The Content-Length lines, and the last one's value: its place in the
	// buffer and its length.
	lengths, lenAt, lenLen := 0, 0, 0
	// The first Content-Length value, which a repeat must equal (copied:
	// the read buffer may move as more lines come; an accepted value has
	// at most 18 digits).
	var firstLen [18]byte
	bad, err := c.in.headers(total, func(name, value []byte) error {
		// The name found once among the common ones: what the request's
		// framing reads, and the map's key.
		i := commonKeyTable.indexFold(name)
		switch i {
		case keyHost:
			if hosts++; hosts > 1 || !validHost(value) {
				return badRequest("invalid or repeated Host header")
			}
			if string(value) != c.host { // a keep-alive client names the same host each time
				c.host = string(value)
			}
			r.Host = c.host
			return nil // as net/http: Host is not in the header map
		case keyContentLength:
			// As net/http: repeated lines must say the same, byte for
			// byte ("5" and "05" conflict), and the map keeps one.
			if lengths > 0 {
				if string(value) != string(firstLen[:lenLen]) {
					return badRequest("invalid or conflicting Content-Length")
				}
				lengths++
				return nil
			}
			n, ok := parseContentLength(value)
			if !ok {
				return badRequest("invalid or conflicting Content-Length")
			}
			length = n
			lengths++
			copy(firstLen[:], value)
			lenAt, lenLen = cap(c.in.buf)-cap(value), len(value)
		case keyTransferEncoding:
			if chunked || minor == 0 || !asciiEqualFold(value, "chunked") {
				return &requestError{http.StatusNotImplemented, "unsupported transfer encoding"}
			}
			chunked = true
			return nil
		case keyConnection:
			if hasToken(value, "close") {
				r.Close = true
			} else if hasToken(value, "keep-alive") {
				keepAlive = true
			}
		case keyExpect:
			if !asciiEqualFold(value, "100-continue") {
				return &requestError{http.StatusExpectationFailed, "unsupported Expect"}
			}
			expect = true
		}
		c.addHeader(i, name, value)
		return nil
	})
	switch {
	case bad:
		return nil, badRequest("malformed header line")
	case err == errHeadTooLong:
		return nil, &requestError{http.StatusRequestHeaderFieldsTooLarge, "request header too large"}
	case err != nil:
		return nil, err
	}
	if c.in.fills == fills && c.in.r-start <= maxHeadMemo {
		// The head came in the buffer as it was: kept for the next
		// request to compare.
		m.head = append(m.head[:0], c.in.buf[start:c.in.r]...)
		m.ok, m.minor, m.keys = true, minor, len(c.hdr)
		m.length, m.chunked, m.hosts, m.keepAlive, m.expect, m.close = length, chunked, hosts, keepAlive, expect, r.Close
		m.ls, m.le, m.value = -1, -1, nil
		if lengths == 1 {
			m.ls = lenAt - start
			m.le, m.value = m.ls+lenLen, &c.hdr[commonKeys[keyContentLength]][0]
		}
	}
	return c.finishRequest(r, minor, length, chunked, hosts, keepAlive, expect)
}

// finishRequest checks what the header lines told and sets the request's
// framing and body from it.
func (c *srvConn) finishRequest(r *http.Request, minor int, length int64, chunked bool, hosts int, keepAlive, expect bool) (*http.Request, error) {
	if minor == 1 && hosts == 0 {
		return nil, badRequest("missing required Host header")
	}
	if minor == 0 && !keepAlive {
		r.Close = true
	}
	if r.URL.Host != "" {
		r.Host = r.URL.Host // an absolute request target names the host (RFC 9112 §3.2.2)
	}
	switch {
	case chunked && length >= 0:
		return nil, badRequest("both Transfer-Encoding and Content-Length")
	case chunked:
		r.ContentLength, r.TransferEncoding = -1, chunkedCoding
		c.body.reset(bodyChunked, 0, expect && minor == 1)
	case length > 0:
		r.ContentLength = length
		c.body.reset(bodyLength, length, expect && minor == 1)
	default:
		c.body.reset(bodyNone, 0, false)
	}
	if r.ContentLength == 0 {
		r.Body = http.NoBody
	} else {
		r.Body = &c.body
	}
	return r, nil
}

var chunkedCoding = []string{"chunked"}

// parseRequestLine splits "METHOD target HTTP/1.x".
func parseRequestLine(l []byte) (method string, target []byte, minor int, err error) {
	sp1 := indexByte(l, ' ')
	if sp1 <= 0 {
		return "", nil, 0, badRequest("malformed request line")
	}
	rest := l[sp1+1:]
	sp2 := indexByte(rest, ' ')
	if sp2 <= 0 {
		return "", nil, 0, badRequest("malformed request line")
	}
	target, proto := rest[:sp2], rest[sp2+1:]
	for _, ch := range l[:sp1] {
		if !isTokenChar(ch) {
			return "", nil, 0, badRequest("invalid method")
		}
	}
	for _, ch := range target {
		if ch <= ' ' || ch == 0x7f {
			return "", nil, 0, badRequest("malformed request line")
		}
	}
	switch string(proto) {
	case "HTTP/1.1":
		minor = 1
	case "HTTP/1.0":
	default:
		if len(proto) >= 5 && string(proto[:5]) == "HTTP/" {
			return "", nil, 0, &requestError{http.StatusHTTPVersionNotSupported, "unsupported protocol version"}
		}
		return "", nil, 0, badRequest("malformed HTTP version")
	}
	return intern(l[:sp1]), target, minor, nil
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

// setTarget sets r.URL and r.RequestURI. A plain path (the proxy's routes)
// is taken as is; anything with escapes or a query, an absolute URL or
// "*" goes through url.ParseRequestURI, as net/http does.
func (c *srvConn) setTarget(r *http.Request, target []byte) error {
	c.url = url.URL{}
	r.URL = &c.url
	if len(target) > 0 && target[0] == '/' && !containsAny(target, "%?#") {
		r.RequestURI = intern(target)
		c.url.Path = r.RequestURI
		return nil
	}
	r.RequestURI = string(target)
	u, err := url.ParseRequestURI(r.RequestURI)
	if err != nil {
		return badRequest("invalid request target")
	}
	r.URL = u
	return nil
}

func containsAny(b []byte, chars string) bool {
	for _, x := range b {
		for i := 0; i < len(chars); i++ {
			if x == chars[i] {
				return true
			}
		}
	}
	return false
}

// validHost accepts what net/http's server accepts in a Host header: the
// bytes of a host, an IP literal and a port, no white space or controls.
func validHost(v []byte) bool {
	for _, ch := range v {
		switch {
		case ch >= 'a' && ch <= 'z', ch >= 'A' && ch <= 'Z', ch >= '0' && ch <= '9':
		case indexByte([]byte("!$%&'()*+,-.:;=[]_~"), ch) >= 0:
		default:
			return false
		}
	}
	return true
}

// addHeader adds one header to the request's map, the name canonical
// (the common ones without an allocation) and the value in the
// connection's value backing.
// i is name's index among commonKeys, or -1.
func (c *srvConn) addHeader(i int, name, value []byte) {
	// A common name is looked up in the map only when the request
	// repeats it (seen), which a client seldom does.
	var k string
	repeated := true
	if i >= 0 {
		k, repeated = commonKeys[i], c.seen&(1<<i) != 0
		c.seen |= 1 << i
	} else {
		k = textproto.CanonicalMIMEHeaderKey(string(name))
	}
	if repeated {
		if old, ok := c.hdr[k]; ok {
			c.hdr[k] = append(old[:len(old):len(old)], intern(value))
			return
		}
	}
	// The previous request's value in the same place, when it repeats
	// (a keep-alive client sends the same headers in the same order).
	var v string
	if n := len(c.vals); n < cap(c.vals) && c.vals[:n+1][n] == string(value) {
		v = c.vals[:n+1][n]
	} else {
		v = intern(value)
	}
	c.vals = append(c.vals, v)
	n := len(c.vals)
	c.hdr[k] = c.vals[n-1 : n : n]
}

// commonKeys are the canonical names of the headers SDKs send.
var (
	commonKeys = [...]string{"Accept", "Accept-Encoding", "Anthropic-Beta", "Anthropic-Version", "Authorization",
		"Connection", "Content-Length", "Content-Type", "Expect", "Origin", "User-Agent", "X-Api-Key",
		"Host", "Transfer-Encoding"}
	commonKeyTable = newNameTable(commonKeys[:]...)
	// The ones readRequest acts on.
	keyHost, keyContentLength, keyTransferEncoding = commonKeyIndex("Host"), commonKeyIndex("Content-Length"), commonKeyIndex("Transfer-Encoding")
	keyConnection, keyExpect                       = commonKeyIndex("Connection"), commonKeyIndex("Expect")
	_                                              [16 - len(commonKeys)]struct{} // srvConn.seen has a bit for each
)

func commonKeyIndex(k string) int {
	i := commonKeyTable.index([]byte(k))
	if i < 0 {
		panic("BUG: " + k + " is not a common key")
	}
	return i
}

func canonicalKey(name []byte) string {
	if i := commonKeyTable.indexFold(name); i >= 0 {
		return commonKeys[i]
	}
	return textproto.CanonicalMIMEHeaderKey(string(name))
}

// nameTable finds a name among a few, comparing only those of its length.
type nameTable struct {
	names []string
	lower []string // names in lower case
	byLen [32][]uint8
}

func newNameTable(names ...string) *nameTable {
	t := &nameTable{names: names}
	for i, n := range names {
		t.lower = append(t.lower, strings.ToLower(n))
		t.byLen[len(n)] = append(t.byLen[len(n)], uint8(i))
	}
	return t
}

// index is the index of b among the names, or -1.
func (t *nameTable) index(b []byte) int {
	if len(b) < len(t.byLen) {
		for _, i := range t.byLen[len(b)] {
			if string(b) == t.names[i] {
				return int(i)
			}
		}
	}
	return -1
}

// indexFold is index with ASCII case ignored.
func (t *nameTable) indexFold(b []byte) int {
	if len(b) < len(t.byLen) {
		for _, i := range t.byLen[len(b)] {
			if asciiEqualFold(b, t.lower[i]) {
				return int(i)
			}
		}
	}
	return -1
}

// intern returns the methods, paths and header values that nearly every
// request carries without an allocation.
func intern(b []byte) string {
	switch string(b) {
	case http.MethodGet:
		return http.MethodGet
	case http.MethodPost:
		return http.MethodPost
	case http.MethodHead:
		return http.MethodHead
	case http.MethodOptions:
		return http.MethodOptions
	case "/v1/chat/completions":
		return "/v1/chat/completions"
	case "/v1/messages":
		return "/v1/messages"
	case "/v1/responses":
		return "/v1/responses"
	case "/v1/runs":
		return "/v1/runs"
	case "/healthz":
		return "/healthz"
	case "application/json":
		return "application/json"
	case "gzip":
		return "gzip"
	case "text/event-stream":
		return "text/event-stream"
	case "keep-alive":
		return "keep-alive"
	case "*/*":
		return "*/*"
	}
	return string(b)
}

// srvBody is a request's body, read in place from the connection's
// buffer with the lean client's framing (upBody).
type srvBody struct {
	c        *srvConn
	up       upBody
	expect   bool // the client waits for "100 Continue" before sending it
	sentCont bool
}

func (b *srvBody) reset(mode int, length int64, expect bool) {
	b.up = upBody{conn: &b.c.in, mode: mode, remain: length, keep: true}
	b.expect, b.sentCont = expect, false
}

// done reports whether the body has been read to its end.
func (b *srvBody) done() bool {
	return b.up.done || b.up.mode == bodyNone || b.up.mode == bodyLength && b.up.remain == 0 && b.up.err == nil
}

var errBadRequestBody = errors.New("gateway: malformed request body")

func (b *srvBody) Read(p []byte) (int, error) {
	if b.up.err == nil && !b.done() && b.expect && !b.sentCont {
		b.sentCont = true
		b.c.w.ensureDeadline()
		if _, err := b.c.nc.Write([]byte("HTTP/1.1 100 Continue\r\n\r\n")); err != nil {
			return 0, err
		}
	}
	wasDone := b.done()
	n, err := b.up.Read(p)
	if pe, ok := err.(*UpstreamProtocolError); ok {
		err = fmt.Errorf("%w: %s", errBadRequestBody, pe.Msg)
	}
	if !wasDone && b.done() {
		b.c.arm(time.Now())
	}
	return n, err
}

func (b *srvBody) Close() error { return nil }

// buffered reports whether the body is n bytes framed by its length and
// all of them are in the connection's buffer, so that reading it cannot
// wait.
func (b *srvBody) buffered(n int64) bool {
	return b.up.mode == bodyLength && b.up.remain == n && !b.sentCont && int64(b.c.in.w-b.c.in.r) >= n
}

// finish makes the connection ready for its next request: what is left of
// a body the handler did not read is skipped when it is already buffered
// (a refused request's small body) or short; false: the connection must
// close.
func (b *srvBody) finish() bool {
	if b.done() || b.up.finishBuffered() {
		return b.up.err == nil
	}
	if b.up.err != nil || b.expect && !b.sentCont || b.up.mode != bodyLength || b.up.remain > srvDiscardBody {
		return false
	}
	b.c.dc.SetReadDeadline(time.Now().Add(b.c.hs.s.cfg.BodyTimeout))
	var scratch [4096]byte
	for !b.done() {
		if _, err := b.up.Read(scratch[:]); err != nil && err != io.EOF {
			return false
		}
	}
	return true
}

// respWriter is the http.ResponseWriter of a connection's requests. What
// the handler writes is gathered in out and goes out on Flush (or past
// respFlushAt, or at the end): the head with the first chunk in one
// write, and the last chunk with the end of the body in one write. An
// answer that ends before any flush gets a Content-Length.
type respWriter struct {
	c          *srvConn
	r          *http.Request
	hdr        http.Header
	status     int
	wroteHdr   bool  // WriteHeader was called
	headDone   bool  // the head is in out or sent
	chunked    bool  // chunked body
	noBody     bool  // HEAD, 204, 304
	clen       int64 // a Content-Length the handler set; -1 none
	written    int64
	closeAfter bool
	deadline   bool // the handler set a write deadline
	pre        []byte
	out        []byte
	keys       []headerEntry // writeHead's, reused
	err        error
}

const respFlushAt = 16 << 10

func (w *respWriter) reset(r *http.Request) {
	clear(w.hdr)
	*w = respWriter{c: w.c, r: r, hdr: w.hdr, pre: w.pre[:0], out: w.out[:0], keys: w.keys[:0], clen: -1, closeAfter: r.Close}
	if cap(w.out) > 4*respFlushAt {
		w.out = nil
	}
	if cap(w.pre) > 4*respFlushAt {
		w.pre = nil
	}
}

func (w *respWriter) Header() http.Header { return w.hdr }

func (w *respWriter) WriteHeader(code int) {
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", code))
	}
	if w.wroteHdr {
		return
	}
	if code < 200 && code != http.StatusSwitchingProtocols {
		return // no interim answers from the gateway's handlers
	}
	w.wroteHdr, w.status = true, code
	if cl := w.hdr.Get("Content-Length"); cl != "" {
		if n, ok := parseContentLength([]byte(cl)); ok {
			w.clen = n
		} else {
			delete(w.hdr, "Content-Length")
		}
	}
	w.noBody = w.r.Method == http.MethodHead || code == http.StatusNoContent || code == http.StatusNotModified
}

func (w *respWriter) Write(b []byte) (int, error) {
	if !w.wroteHdr {
		w.WriteHeader(http.StatusOK)
	}
	if w.err != nil {
		return 0, w.err
	}
	if w.noBody {
		if w.r.Method == http.MethodHead {
			w.written += int64(len(b)) // for its Content-Length, as net/http does
			return len(b), nil
		}
		return 0, http.ErrBodyNotAllowed
	}
	if w.clen >= 0 && w.written+int64(len(b)) > w.clen {
		return 0, http.ErrContentLength
	}
	w.written += int64(len(b))
	if !w.headDone {
		if len(w.pre)+len(b) <= respFlushAt {
			w.pre = append(w.pre, b...)
			return len(b), nil
		}
		w.writeHead(false)
	}
	if len(b) >= respFlushAt {
		// A large write goes out with what is gathered, without a copy.
		w.frame(len(b))
		bufs := net.Buffers{w.out, b}
		if w.chunked {
			bufs = append(bufs, crlf)
		}
		w.out = w.out[:0]
		w.ensureDeadline()
		if _, err := bufs.WriteTo(w.c.nc); err != nil {
			return 0, w.failed(err)
		}
		return len(b), nil
	}
	w.frame(len(b))
	w.out = append(w.out, b...)
	if w.chunked {
		w.out = append(w.out, crlf...)
	}
	if len(w.out) >= respFlushAt {
		if err := w.flushOut(); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}

var crlf = []byte("\r\n")

// frame appends a chunk's size line for n bytes of data.
func (w *respWriter) frame(n int) {
	if w.chunked && n > 0 {
		w.out = strconv.AppendInt(w.out, int64(n), 16)
		w.out = append(w.out, crlf...)
	}
}

// writeHead appends the status line and headers to out, then the body
// gathered so far. end: the answer is complete, so its length is known.
func (w *respWriter) writeHead(end bool) {
	w.headDone = true
	h := w.hdr
	head := w.r.Method == http.MethodHead
	setLen := false // Content-Length: w.clen, written in its place below
	if w.clen < 0 && (!w.noBody || head && end && w.written > 0) {
		switch {
		case end:
			w.clen, setLen = w.written, true
		case w.r.ProtoMinor == 0:
			w.closeAfter = true // an HTTP/1.0 body ends with the connection
		default:
			w.chunked = true
		}
	}
	if w.noBody && !head {
		delete(h, "Content-Length")
	}
	// The header's entries in one pass, sorted by name; what the head
	// depends on is noted on the way.
	w.keys = w.keys[:0]
	hasType, hasLen, closeAsked := false, false, false
	for k, vs := range h {
		switch k {
		case "Content-Type":
			hasType = true
		case "Content-Length":
			hasLen = true
		case "Connection":
			closeAsked = hasTokenStr(vs, "close")
		}
		w.keys = append(w.keys, headerEntry{k, vs})
	}
	if !hasType && !w.noBody && len(w.pre) > 0 {
		ct := []string{http.DetectContentType(w.pre)}
		h["Content-Type"] = ct
		w.keys = append(w.keys, headerEntry{"Content-Type", ct})
	}
	if setLen && !hasLen {
		w.keys = append(w.keys, headerEntry{name: "Content-Length"})
	}
	if w.c.hs.closing.Load() || closeAsked {
		w.closeAfter = true
	}
	b := append(w.out, "HTTP/1."...)
	b = append(b, byte('0'+w.r.ProtoMinor))
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(w.status), 10)
	b = append(b, ' ')
	if t := http.StatusText(w.status); t != "" {
		b = append(b, t...)
	} else {
		b = append(b, "status code "...)
		b = strconv.AppendInt(b, int64(w.status), 10)
	}
	b = append(b, crlf...)
	sortHeaderEntries(w.keys)
	for _, e := range w.keys {
		k := e.name
		if !validHeaderName(k) || k == "Transfer-Encoding" {
			continue
		}
		if setLen && k == "Content-Length" {
			b = append(b, "Content-Length: "...)
			b = strconv.AppendInt(b, w.clen, 10)
			b = append(b, crlf...)
			continue
		}
		for _, v := range e.values {
			b = append(b, k...)
			b = append(b, ": "...)
			b = appendHeaderValue(b, v)
			b = append(b, crlf...)
		}
	}
	b = append(b, "Date: "...)
	b = append(b, httpDate()...)
	b = append(b, crlf...)
	if w.chunked {
		b = append(b, "Transfer-Encoding: chunked\r\n"...)
	}
	if w.closeAfter && !closeAsked {
		b = append(b, "Connection: close\r\n"...)
	} else if !w.closeAfter && w.r.ProtoMinor == 0 {
		b = append(b, "Connection: keep-alive\r\n"...)
	}
	b = append(b, crlf...)
	w.out = b
	if len(w.pre) > 0 && !w.noBody {
		w.frame(len(w.pre))
		w.out = append(w.out, w.pre...)
		if w.chunked {
			w.out = append(w.out, crlf...)
		}
	}
	w.pre = w.pre[:0]
}

// headerEntry is one name of a header and its values.
type headerEntry struct {
	name   string
	values []string
}

// sortHeaderEntries sorts a head's entries by name: by insertion for the
// few an answer has (a handful; slices.SortFunc's pattern-defeating
// quicksort and its comparison closure cost more than the sorting), by
// slices.SortFunc past that.
func sortHeaderEntries(e []headerEntry) {
	if len(e) > 16 {
		slices.SortFunc(e, func(a, b headerEntry) int { return strings.Compare(a.name, b.name) })
		return
	}
	for i := 1; i < len(e); i++ {
		for j := i; j > 0 && e[j].name < e[j-1].name; j-- {
			e[j], e[j-1] = e[j-1], e[j]
		}
	}
}

func hasTokenStr(vs []string, tok string) bool {
	for _, v := range vs {
		if hasToken([]byte(v), tok) {
			return true
		}
	}
	return false
}

func validHeaderName(k string) bool {
	return k != "" && isToken(k)
}

// appendHeaderValue appends v with line breaks made spaces, as net/http
// writes them: a value cannot split the head.
func appendHeaderValue(b []byte, v string) []byte {
	for i := 0; i < len(v); i++ {
		if v[i] <= '\r' && (v[i] == '\r' || v[i] == '\n') {
			return appendHeaderValueSlow(b, v)
		}
	}
	return append(b, v...) // the usual value: whole, in one copy
}

func appendHeaderValueSlow(b []byte, v string) []byte {
	for i := 0; i < len(v); i++ {
		ch := v[i]
		if ch == '\r' || ch == '\n' {
			ch = ' '
		}
		b = append(b, ch)
	}
	return b
}

// Flush sends what is gathered, the head first if not yet sent.
func (w *respWriter) Flush() { w.FlushError() }

func (w *respWriter) FlushError() error {
	if !w.wroteHdr {
		w.WriteHeader(http.StatusOK)
	}
	if w.err != nil {
		return w.err
	}
	if !w.headDone {
		w.writeHead(false)
	}
	return w.flushOut()
}

// flushOut writes what is gathered in one system call.
func (w *respWriter) flushOut() error {
	if len(w.out) == 0 {
		return nil
	}
	w.ensureDeadline()
	_, err := w.c.nc.Write(w.out)
	w.out = w.out[:0]
	if err != nil {
		return w.failed(err)
	}
	return nil
}

// failed records a failed write: the answer cannot go on, nor the
// connection.
func (w *respWriter) failed(err error) error {
	w.err, w.closeAfter = err, true
	return err
}

// SetWriteDeadline and SetReadDeadline are what http.ResponseController
// calls.
func (w *respWriter) SetWriteDeadline(t time.Time) error {
	w.deadline = !t.IsZero()
	return w.c.dc.SetWriteDeadline(t)
}

func (w *respWriter) SetReadDeadline(t time.Time) error { return w.c.dc.SetReadDeadline(t) }

// ensureDeadline gives a write WriteTimeout unless the handler set a
// deadline of its own.
func (w *respWriter) ensureDeadline() {
	if !w.deadline {
		w.deadline = true
		w.c.dc.SetWriteDeadline(time.Now().Add(w.c.hs.s.cfg.WriteTimeout))
	}
}

// finish ends the answer: the head if not yet sent (with a
// Content-Length), what is gathered and the last chunk, in one write, under
// the handler's write deadline or else WriteTimeout.
func (w *respWriter) finish() error {
	if !w.wroteHdr {
		w.WriteHeader(http.StatusOK)
	}
	if w.err != nil {
		return w.err
	}
	if !w.headDone {
		w.writeHead(true)
	}
	if w.chunked {
		w.out = append(w.out, "0\r\n\r\n"...)
	} else if w.clen >= 0 && w.written < w.clen && !w.noBody {
		w.closeAfter = true // short of its declared length: the client sees the cut
	}
	// The write deadline stays: the next answer's first write moves it
	// on (or, close enough, keeps it), and an idle connection writes
	// nothing.
	return w.flushOut()
}

// deadlineConn sets a connection's deadlines only when they matter, as
// most requests need no timer change: a read deadline is set right before
// a read of the connection (a request whose body came with its head is
// read without one, so its header and body deadlines cost nothing), and
// a write deadline within slack of the one in force is left as it is (a
// keep-alive connection's answers move it on once per slack). A read
// deadline moved later is set readSlack beyond what is asked, and one
// asked up to readSlack before the one in force is left as it is: the
// keep-alive wait, renewed before every request, changes the connection's
// timer once per readSlack, and an idle connection is closed at most
// readSlack (an eighth of the shortest read wait) late. A read
// deadline asked earlier than that (a request's header and body waits
// after the keep-alive one) is set as asked.
type deadlineConn struct {
	net.Conn
	slack       time.Duration // of write deadlines
	readSlack   time.Duration // of read deadlines
	mu          sync.Mutex    // rd, rdSet, interrupted: the watcher reads while the handler sets
	rd          time.Time     // the read deadline asked for
	rdSet       time.Time     // the one in force
	interrupted bool          // a read is being ended: rd waits
	wdSet       time.Time     // the write deadline in force
}

func (c *deadlineConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	c.rd = t
	c.mu.Unlock()
	return nil
}

func (c *deadlineConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	if !c.interrupted && !c.rd.Equal(c.rdSet) && !c.withinSlack() {
		t := c.rd
		if !t.IsZero() && !c.rdSet.IsZero() && t.After(c.rdSet) {
			t = t.Add(c.readSlack)
		}
		if err := c.Conn.SetReadDeadline(t); err != nil {
			c.mu.Unlock()
			return 0, err
		}
		c.rdSet = t
	}
	c.mu.Unlock()
	return c.Conn.Read(p)
}

// withinSlack reports whether the read deadline asked for is at most
// readSlack before the one in force, which then stays.
func (c *deadlineConn) withinSlack() bool {
	return !c.rd.IsZero() && !c.rd.After(c.rdSet) && c.rdSet.Sub(c.rd) <= c.readSlack
}

// interrupt ends a read under way (or about to start) at once; resume
// lets the next read set the deadline asked for again.
func (c *deadlineConn) interrupt() {
	c.mu.Lock()
	c.interrupted = true
	c.rdSet = aLongTimeAgo
	c.Conn.SetReadDeadline(aLongTimeAgo)
	c.mu.Unlock()
}

func (c *deadlineConn) resume() {
	c.mu.Lock()
	c.interrupted = false
	c.mu.Unlock()
}

func (c *deadlineConn) SetWriteDeadline(t time.Time) error {
	if !t.IsZero() && !c.wdSet.IsZero() && t.Sub(c.wdSet) <= c.slack && c.wdSet.Sub(t) <= c.slack {
		return nil
	}
	c.wdSet = t
	return c.Conn.SetWriteDeadline(t)
}

// httpDate is the Date header's value, formatted once a second.
func httpDate() string {
	now := time.Now()
	sec := now.Unix()
	if d := dateCache.Load(); d != nil && d.sec == sec {
		return d.s
	}
	d := &cachedDate{sec: sec, s: now.UTC().Format(http.TimeFormat)}
	dateCache.Store(d)
	return d.s
}

type cachedDate struct {
	sec int64
	s   string
}

var dateCache atomic.Pointer[cachedDate]
