package gateway

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ocbench/ocbench/llm"
)

// upstreamClient is the gateway's own HTTP/1.1 client for an http://
// upstream: it posts a proxied request and reads the answer on the
// handler's goroutine, over persistent connections it pools. net/http's
// Transport runs two goroutines per connection and hands every request,
// answer and end of body between them and the caller; on the proxy's path
// (one small POST, one streamed answer) those hand-offs and their
// scheduler wake-ups cost more than the proxying itself.
//
// It is strict about what it reads: a status line, header lines, and a
// body framed by chunked transfer coding (CRLF line ends, sizes in hex),
// by Content-Length, or by the connection's close. Anything else (an
// unknown transfer or content coding, conflicting lengths, a body cut
// before its framing ends) is an *UpstreamProtocolError or
// io.ErrUnexpectedEOF, never a clean end. HTTPS upstreams, upstreams
// reached through a proxy from the environment and URLs with credentials
// stay with net/http (see newUpstreamClient).
type upstreamClient struct {
	addr string // host:port to dial
	host string // the Host header
	dial net.Dialer

	mu       sync.Mutex
	idle     []*upConn // most recently used last
	sweeping bool      // a sweep of expired idle connections is scheduled
}

const (
	upMaxIdle     = 1024             // idle connections kept
	upIdleTimeout = 90 * time.Second // an idle connection is closed after this (net/http's default)
	upBufSize     = 16 << 10         // read buffer per connection: the longest header line
	srvBufStart   = 4 << 10          // a client connection's read buffer until a line or a read needs more
	upMaxHead     = 1 << 20          // header bytes of one answer
	upMaxChunkExt = 4096             // longest chunk-size line, extensions included
	upMaxTrailer  = 64 << 10         // trailer bytes after the last chunk
	// upFreshFor: a connection pooled less than this ago is taken without
	// the liveness peek. An upstream closes an idle connection at its
	// idle timeout (seconds), or announces the close in its answer
	// (Connection: close: never pooled). One that closes right after an
	// answer without saying so makes a request on such a connection fail
	// (reported as the upstream's failure, never retried: the upstream
	// may have read it) where the peek would have sent it on a new one.
	// Under load nearly every stream takes a connection this fresh: one
	// system call fewer per stream.
	upFreshFor = 2 * time.Millisecond
)

// UpstreamProtocolError is an upstream answer that is not valid HTTP/1.1
// as the gateway reads it. The connection it came on is closed.
type UpstreamProtocolError struct{ Msg string }

func (e *UpstreamProtocolError) Error() string { return "gateway: upstream protocol error: " + e.Msg }

func protoErr(msg string) error { return &UpstreamProtocolError{Msg: msg} }

// newUpstreamClient returns a client for the upstream endpoint u, or nil
// when u is one net/http must serve: not plain http, with credentials in
// the URL, or sent through a proxy by the environment (HTTP_PROXY).
func newUpstreamClient(u *url.URL) *upstreamClient {
	if u == nil || u.Scheme != "http" || u.User != nil || u.Host == "" {
		return nil
	}
	if p, err := http.ProxyFromEnvironment(&http.Request{URL: u}); err != nil || p != nil {
		return nil
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	return &upstreamClient{
		addr: net.JoinHostPort(u.Hostname(), port),
		host: u.Host,
		dial: net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second},
	}
}

// upConn is one pooled connection with its buffers.
type upConn struct {
	nc    net.Conn
	buf   []byte // read buffer; unread bytes are buf[r:w]
	r, w  int
	fills uint32 // reads of the connection so far
	// full says the last read filled all the room it had: the peer
	// sends more than the buffer holds, and the next fill grows it.
	full     bool
	wbuf     []byte // the request head being written
	idleFrom time.Time
	reused   bool
	// interrupt ends a wait on the connection at once (a cancelled
	// request); made once per connection.
	interrupt func()
	peek      peeker // whether the upstream closed it while idle
	// resp is the head of the answer being read: post returns it, and
	// its caller reads it before the connection can serve another
	// request (the body is the caller's own, made per answer).
	resp upResponse
	memo answerMemo // the last answer's head
}

// answerMemo is an answer's head, byte for byte, and what readOneHead
// learnt from it. An upstream that answers alike (a local server, a
// gateway's own scripted upstream) sends the same head every time but
// for its Date, whose value the gateway does not read: a head that
// repeats the last one but for that value (checked to hold no control
// character, as a parse would) is not parsed again. A head with an
// X-Request-Id or another varying line is parsed as before; the compare
// fails at its first differing byte.
type answerMemo struct {
	head   []byte
	ds, de int // the Date value's place in head; ds == de: none
	ok     bool
	status int
	mode   int
	remain int64
	keep   bool
	// requestID and retryAfter are the head's, kept as strings.
	requestID, retryAfter string
}

func newUpConn(nc net.Conn) *upConn {
	cn := &upConn{nc: nc, buf: make([]byte, upBufSize)}
	cn.interrupt = func() { nc.SetDeadline(aLongTimeAgo) }
	return cn
}

// upRequest is one POST: a request target, header lines (already
// validated) and the body.
type upRequest struct {
	target string
	head   []byte // "Name: value\r\n" lines
	body   []byte
	// watch, when set, is the caller's watch of its context, kept from
	// one request to the next; nil: one for this request alone.
	watch *ctxWatch
}

// ctxWatch ends a wait on the connection a request is using when the
// request's context is cancelled. context.AfterFunc per request costs two
// allocations and a registration with the context; a watch registers once
// per context and serves every request made under it (a connection of
// the gateway's own server keeps its proxy chain's context while nothing
// cancels it), the connection in use set and cleared under its lock.
type ctxWatch struct {
	ctx  context.Context
	stop func() bool
	mu   sync.Mutex
	gen  uint64 // the registration; a late run of an older one is ignored
	cn   *upConn
	hit  bool // the context was cancelled: the wait was ended
}

// attach watches ctx for a request on cn.
func (w *ctxWatch) attach(ctx context.Context, cn *upConn) {
	w.mu.Lock()
	if w.ctx != ctx {
		if w.stop != nil {
			w.stop()
		}
		w.gen++
		gen := w.gen
		w.ctx, w.hit = ctx, false
		w.stop = context.AfterFunc(ctx, func() { w.fire(gen) })
	}
	w.cn = cn
	if w.hit {
		cn.interrupt()
	}
	w.mu.Unlock()
}

func (w *ctxWatch) fire(gen uint64) {
	w.mu.Lock()
	if gen == w.gen {
		w.hit = true
		if w.cn != nil {
			w.cn.interrupt()
		}
	}
	w.mu.Unlock()
}

// detach ends the request's watch and reports whether its connection was
// left alone (not interrupted).
func (w *ctxWatch) detach() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.cn = nil
	return !w.hit
}

// release ends the watch's registration (a watch for one request).
func (w *ctxWatch) release() {
	w.mu.Lock()
	if w.stop != nil {
		w.stop()
	}
	w.ctx, w.stop = nil, nil
	w.mu.Unlock()
}

// addHeader appends a header line, refusing values that could split it.
func (r *upRequest) addHeader(k, v string) error {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			return errors.New("gateway: a header value for the upstream holds a control character")
		}
	}
	r.head = append(append(append(append(r.head, k...), ": "...), v...), "\r\n"...)
	return nil
}

// upResponse is an answer's head and its body.
type upResponse struct {
	status     int
	requestID  string // X-Request-Id, else Request-Id
	retryAfter string
	body       *upBody
}

// post sends req and reads the answer's head, valid until the body is
// closed (the connection then serves other requests). The body must be
// closed.
// Cancelling ctx ends a wait on the upstream at once (the connection is
// then dropped) and is reported as ctx's error.
func (c *upstreamClient) post(ctx context.Context, req *upRequest) (*upResponse, error) {
	w, own := req.watch, req.watch == nil
	if own {
		w = new(ctxWatch)
	}
	for {
		cn, err := c.get(ctx)
		if err != nil {
			return nil, err
		}
		w.attach(ctx, cn)
		stop := func() {
			w.detach()
			if own {
				w.release()
			}
		}
		if err := cn.writeRequest(c.host, req); err != nil {
			stop()
			cn.nc.Close()
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if cn.reused {
				// The upstream closed an idle connection as the request
				// went out: nothing it could act on reached it.
				continue
			}
			return nil, err
		}
		resp, err := cn.readHead()
		if err != nil {
			stop()
			cn.nc.Close()
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, err
		}
		resp.body.client, resp.body.conn, resp.body.watch, resp.body.ownWatch, resp.body.ctx = c, cn, w, own, ctx
		return resp, nil
	}
}

var aLongTimeAgo = time.Unix(1, 0)

// get returns an idle connection that the upstream has not closed, or a
// new one.
func (c *upstreamClient) get(ctx context.Context) (*upConn, error) {
	for {
		c.mu.Lock()
		n := len(c.idle)
		if n == 0 {
			c.mu.Unlock()
			break
		}
		cn := c.idle[n-1]
		c.idle[n-1] = nil
		c.idle = c.idle[:n-1]
		c.mu.Unlock()
		idle := time.Since(cn.idleFrom)
		if idle < upIdleTimeout && cn.r == cn.w && (idle < upFreshFor || cn.peek.alive(cn.nc)) {
			cn.reused = true
			return cn, nil
		}
		cn.nc.Close()
	}
	nc, err := c.dial.DialContext(ctx, "tcp", c.addr)
	if err != nil {
		return nil, err
	}
	return newUpConn(nc), nil
}

// put pools a connection whose answer was read to its end.
func (c *upstreamClient) put(cn *upConn) {
	cn.idleFrom = time.Now()
	cn.r, cn.w = 0, 0
	c.mu.Lock()
	if len(c.idle) >= upMaxIdle {
		c.mu.Unlock()
		cn.nc.Close()
		return
	}
	c.idle = append(c.idle, cn)
	if !c.sweeping {
		c.sweeping = true
		time.AfterFunc(upIdleTimeout, c.sweep)
	}
	c.mu.Unlock()
}

// sweep closes the connections idle for longer than upIdleTimeout (the
// oldest are first in the list) and comes back while any are left.
func (c *upstreamClient) sweep() {
	c.mu.Lock()
	i := 0
	for i < len(c.idle) && time.Since(c.idle[i].idleFrom) >= upIdleTimeout {
		c.idle[i].nc.Close()
		i++
	}
	c.idle = append(c.idle[:0], c.idle[i:]...)
	clear(c.idle[len(c.idle):cap(c.idle)])
	if c.sweeping = len(c.idle) > 0; c.sweeping {
		time.AfterFunc(upIdleTimeout/4, c.sweep)
	}
	c.mu.Unlock()
}

// closeIdle closes every pooled connection.
func (c *upstreamClient) closeIdle() {
	c.mu.Lock()
	for _, cn := range c.idle {
		cn.nc.Close()
	}
	c.idle = c.idle[:0]
	c.mu.Unlock()
}

// writeRequest writes the request in one system call (two buffers for a
// large body), the first without a wait for the answer after it (see
// peeker.send).
func (cn *upConn) writeRequest(host string, req *upRequest) error {
	b := append(cn.wbuf[:0], "POST "...)
	b = append(b, req.target...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, host...)
	b = append(b, "\r\nUser-Agent: ocbench-gateway\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(len(req.body)), 10)
	b = append(b, "\r\n"...)
	b = append(b, req.head...)
	b = append(b, "\r\n"...)
	var err error
	if len(req.body) <= 64<<10 {
		b = append(b, req.body...)
		err = cn.peek.send(cn.nc, b)
	} else {
		bufs := net.Buffers{b, req.body}
		_, err = bufs.WriteTo(cn.nc)
	}
	if cap(b) <= 128<<10 {
		cn.wbuf = b[:0]
	}
	return err
}

// fill reads more bytes from the connection; what is unread is kept. A
// buffer smaller than upBufSize (a client connection's starts at
// srvBufStart, so that an idle one holds little) doubles when a line does
// not fit in it or the last read filled it.
func (cn *upConn) fill() error {
	if cn.r > 0 {
		cn.w = copy(cn.buf, cn.buf[cn.r:cn.w])
		cn.r = 0
	}
	if cn.w == len(cn.buf) || cn.full && len(cn.buf) < upBufSize {
		if len(cn.buf) >= upBufSize {
			return protoErr("a line longer than " + strconv.Itoa(upBufSize) + " bytes")
		}
		b := make([]byte, min(2*len(cn.buf), upBufSize))
		copy(b, cn.buf[:cn.w])
		cn.buf = b
	}
	cn.fills++
	n, err := cn.nc.Read(cn.buf[cn.w:])
	cn.full = n == len(cn.buf)-cn.w
	cn.w += n
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

// line returns the next line without its line end; crlf requires "\r\n"
// (chunk framing), otherwise a bare "\n" is accepted as well (headers,
// as net/http reads them). The slice is valid until the next read.
func (cn *upConn) line(crlf bool, max int) ([]byte, error) {
	for {
		if i := bytes.IndexByte(cn.buf[cn.r:cn.w], '\n'); i >= 0 {
			l := cn.buf[cn.r : cn.r+i]
			cn.r += i + 1
			if len(l) > 0 && l[len(l)-1] == '\r' {
				l = l[:len(l)-1]
			} else if crlf {
				return nil, protoErr("a chunk line not ended by CRLF")
			}
			if len(l) > max {
				return nil, protoErr("a line longer than " + strconv.Itoa(max) + " bytes")
			}
			return l, nil
		}
		if cn.w-cn.r > max {
			return nil, protoErr("a line longer than " + strconv.Itoa(max) + " bytes")
		}
		if err := cn.fill(); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
}

// Body framing.
const (
	bodyNone    = iota // no body (204, 304)
	bodyLength         // Content-Length bytes
	bodyChunked        // chunked transfer coding
	bodyClose          // up to the connection's close
)

// readHead reads a status line and headers (skipping 1xx answers) and
// returns the answer with its body's framing.
func (cn *upConn) readHead() (*upResponse, error) {
	for {
		resp, err := cn.readOneHead()
		if err != nil || resp != nil {
			return resp, err
		}
	}
}

// readOneHead reads one answer head; nil, nil for an interim 1xx one.
func (cn *upConn) readOneHead() (*upResponse, error) {
	if m := &cn.memo; m.ok {
		if cn.r == cn.w {
			if err := cn.fill(); err != nil {
				if err == io.EOF {
					err = io.ErrUnexpectedEOF // as line reports it
				}
				return nil, err
			}
		}
		in := cn.buf[cn.r:cn.w]
		if len(in) >= len(m.head) && string(in[:m.ds]) == string(m.head[:m.ds]) &&
			string(in[m.de:len(m.head)]) == string(m.head[m.de:]) && validHeaderValue(in[m.ds:m.de]) {
			cn.r += len(m.head)
			resp := &cn.resp
			*resp = upResponse{status: m.status, requestID: m.requestID, retryAfter: m.retryAfter,
				body: &upBody{mode: m.mode, remain: m.remain, keep: m.keep}}
			return resp, nil
		}
	}
	l, err := cn.line(false, upBufSize)
	if err != nil {
		return nil, err
	}
	// Where the head starts in the buffer (l is a slice of it), and the
	// reads so far: the head is kept only when no read moved it.
	start, fills := cap(cn.buf)-cap(l), cn.fills
	dates, dateAt, dateLen := 0, 0, 0
	total := len(l)
	status, http10, err := parseStatusLine(l)
	if err != nil {
		return nil, err
	}
	resp := &cn.resp
	*resp = upResponse{status: status, body: &upBody{mode: bodyClose, keep: !http10}}
	var length int64 = -1
	chunked := false
	_, err = cn.headers(total, func(name, value []byte) error {
		switch {
		case asciiEqualFold(name, "content-length"):
			n, ok := parseContentLength(value)
			if !ok || length >= 0 && n != length {
				return protoErr("an invalid or conflicting Content-Length")
			}
			length = n
		case asciiEqualFold(name, "transfer-encoding"):
			// Only chunked is read (as net/http does): any other coding
			// would hand the decoder bytes it cannot read.
			// An HTTP/1.0 answer cannot carry one (net/http would read
			// the body up to the close): the framing is ambiguous.
			if chunked || http10 || !asciiEqualFold(value, "chunked") {
				return protoErr("unsupported Transfer-Encoding " + strconv.Quote(string(value)))
			}
			chunked = true
		case asciiEqualFold(name, "content-encoding"):
			// None was asked for: a compressed body would decode as garbage.
			if len(value) > 0 && !asciiEqualFold(value, "identity") {
				return protoErr("unrequested Content-Encoding " + strconv.Quote(string(value)))
			}
		case asciiEqualFold(name, "connection"):
			if hasToken(value, "close") {
				resp.body.keep = false
			} else if http10 && hasToken(value, "keep-alive") {
				resp.body.keep = true
			}
		case asciiEqualFold(name, "x-request-id"):
			resp.requestID = string(value)
		case asciiEqualFold(name, "request-id"):
			if resp.requestID == "" {
				resp.requestID = string(value)
			}
		case asciiEqualFold(name, "retry-after"):
			resp.retryAfter = string(value)
		case asciiEqualFold(name, "date"):
			// Where the value sits in the buffer (value is a slice of it).
			dates, dateAt, dateLen = dates+1, cap(cn.buf)-cap(value), len(value)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	switch {
	case status == http.StatusSwitchingProtocols:
		return nil, protoErr("an unrequested protocol switch")
	case status < 200:
		return nil, nil
	case status == http.StatusNoContent || status == http.StatusNotModified:
		resp.body.mode = bodyNone
	case chunked:
		// A length beside chunked framing is ignored, and the connection
		// not reused: the two framings disagree (RFC 9112 §6.3).
		resp.body.mode = bodyChunked
		if length >= 0 {
			resp.body.keep = false
		}
	case length >= 0:
		resp.body.mode, resp.body.remain = bodyLength, length
	default:
		resp.body.keep = false
	}
	if resp.body.mode == bodyClose {
		resp.body.keep = false
	}
	if m := &cn.memo; cn.fills == fills && cn.r-start <= maxHeadMemo && dates <= 1 {
		// The head came in the buffer as it was: kept for the next
		// answer to compare.
		m.head = append(m.head[:0], cn.buf[start:cn.r]...)
		m.ds, m.de = 0, 0
		if dates == 1 {
			m.ds = dateAt - start
			m.de = m.ds + dateLen
		}
		m.ok, m.status, m.mode, m.remain, m.keep = true, resp.status, resp.body.mode, resp.body.remain, resp.body.keep
		m.requestID, m.retryAfter = resp.requestID, resp.retryAfter
	} else {
		m.ok = false
	}
	return resp, nil
}

// errHeadTooLong ends a head past upMaxHead bytes.
var errHeadTooLong = protoErr("headers longer than " + strconv.Itoa(upMaxHead) + " bytes")

// headers reads header lines up to the empty line that ends them and
// calls each with every name and value, until each fails; total is the
// size of the head before them, which may not pass upMaxHead. badLine
// tells a malformed line from a failed read.
func (cn *upConn) headers(total int, each func(name, value []byte) error) (badLine bool, err error) {
	for {
		l, err := cn.line(false, upBufSize)
		if err != nil {
			return false, err
		}
		if total += len(l) + 2; total > upMaxHead {
			return false, errHeadTooLong
		}
		if len(l) == 0 {
			return false, nil
		}
		name, value, err := parseHeaderLine(l)
		if err != nil {
			return true, err
		}
		if err := each(name, value); err != nil {
			return false, err
		}
	}
}

func parseStatusLine(l []byte) (status int, http10 bool, err error) {
	// "HTTP/1.1 200 OK"; the reason may be empty, the space before it too.
	if len(l) < 12 || !bytes.HasPrefix(l, []byte("HTTP/1.")) || (l[7] != '0' && l[7] != '1') || l[8] != ' ' {
		return 0, false, protoErr("not an HTTP/1.x status line")
	}
	if len(l) > 12 && l[12] != ' ' {
		return 0, false, protoErr("a malformed status code")
	}
	for _, c := range l[9:12] {
		if c < '0' || c > '9' {
			return 0, false, protoErr("a malformed status code")
		}
		status = status*10 + int(c-'0')
	}
	if status < 100 {
		return 0, false, protoErr("a malformed status code")
	}
	return status, l[7] == '0', nil
}

// parseHeaderLine splits "Name: value", the value trimmed of spaces and
// tabs. A name must be a token and sit right before its colon; a line
// starting with white space (obsolete folding) is refused.
func parseHeaderLine(l []byte) (name, value []byte, err error) {
	i := bytes.IndexByte(l, ':')
	if i <= 0 {
		return nil, nil, protoErr("a malformed header line")
	}
	if !isToken(l[:i]) {
		return nil, nil, protoErr("a malformed header name")
	}
	v := l[i+1:]
	for len(v) > 0 && (v[0] == ' ' || v[0] == '\t') {
		v = v[1:]
	}
	for len(v) > 0 && (v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
		v = v[:len(v)-1]
	}
	if !validHeaderValue(v) {
		return nil, nil, protoErr("a control character in a header value")
	}
	return l[:i], v, nil
}

// validHeaderValue reports whether v holds no control character but tab.
// Eight bytes are checked at a time: a word with no byte below 0x20 and
// no DEL (bytes of 0x80 and above, obs-text, pass) needs no closer look.
func validHeaderValue(v []byte) bool {
	i := 0
	for ; i+8 <= len(v); i += 8 {
		x := binary.LittleEndian.Uint64(v[i:])
		if ((x-0x2020202020202020)|((x^0x7f7f7f7f7f7f7f7f)-0x0101010101010101))&^x&0x8080808080808080 != 0 {
			break
		}
	}
	if i+4 <= len(v) {
		x := binary.LittleEndian.Uint32(v[i:])
		if ((x-0x20202020)|((x^0x7f7f7f7f)-0x01010101))&^x&0x80808080 == 0 {
			i += 4
		}
	}
	for _, c := range v[i:] {
		if c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// isToken reports whether b is made of token characters only, four
// table lookups per branch.
func isToken[T string | []byte](b T) bool {
	for ; len(b) >= 4; b = b[4:] {
		if tokenBits[b[0]]&tokenBits[b[1]]&tokenBits[b[2]]&tokenBits[b[3]] == 0 {
			return false
		}
	}
	for i := 0; i < len(b); i++ {
		if tokenBits[b[i]] == 0 {
			return false
		}
	}
	return true
}

// isTokenChar reports whether c may appear in a header name (an RFC 9110
// token), by table: it runs for every byte of every header name.
func isTokenChar(c byte) bool { return tokenChars[c] }

// tokenBits is tokenChars as 1 and 0, for isToken's ands.
var tokenBits = func() (t [256]uint8) {
	for c, ok := range tokenChars {
		if ok {
			t[c] = 1
		}
	}
	return t
}()

var tokenChars = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.IndexByte("!#$%&'*+-.^_`|~", byte(c)) >= 0
	}
	return t
}()

func asciiEqualFold(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i := range len(b) {
		c := b[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// hasToken reports whether a comma-separated header value holds tok.
func hasToken(v []byte, tok string) bool {
	for len(v) > 0 {
		var t []byte
		t, v, _ = bytes.Cut(v, []byte(","))
		if asciiEqualFold(bytes.TrimSpace(t), tok) {
			return true
		}
	}
	return false
}

// parseContentLength accepts decimal digits only, as net/http does.
func parseContentLength(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// parseChunkSize reads a chunk-size line: hex digits, then optional white
// space and ";extensions", which are ignored.
func parseChunkSize(l []byte) (int64, error) {
	if i := bytes.IndexByte(l, ';'); i >= 0 {
		l = l[:i]
	}
	for len(l) > 0 && (l[len(l)-1] == ' ' || l[len(l)-1] == '\t') {
		l = l[:len(l)-1]
	}
	if len(l) == 0 || len(l) > 15 {
		return 0, protoErr("a malformed chunk size")
	}
	var n int64
	for _, c := range l {
		v, ok := llm.HexDigit(c)
		if !ok {
			return 0, protoErr("a malformed chunk size")
		}
		n = n<<4 | int64(v)
	}
	return n, nil
}

// upBody is an answer's body read in place from its connection's buffer.
// At its framing's end the connection goes back to the pool (Close), unless
// the answer said otherwise.
type upBody struct {
	client *upstreamClient
	conn   *upConn
	ctx    context.Context
	// watch ends a wait on the connection when ctx is cancelled;
	// ownWatch: made for this body alone.
	watch    *ctxWatch
	ownWatch bool
	mode     int
	remain   int64 // bytes left in the body (bodyLength) or in the chunk
	keep     bool  // the connection may be reused after the body
	crlf     bool  // a chunk's data is read and its CRLF is next
	done     bool  // the framing ended cleanly
	err      error // sticky
	closed   bool
	// onBlock is told right before a read that waits on the upstream:
	// what the bytes already read produced can be sent on meanwhile.
	onBlock blocker
}

// blocker is told that a body is about to wait on its upstream.
type blocker interface{ blocking() }

// Read copies body bytes into p: every byte already buffered, across chunk
// boundaries, and at most one read of the connection.
func (b *upBody) Read(p []byte) (int, error) {
	if b.closed {
		return 0, errors.New("gateway: read of a closed upstream body")
	}
	n := 0
	blocked := false
	for n < len(p) && b.err == nil && !b.done {
		cn := b.conn
		if b.mode == bodyNone || b.mode == bodyLength && b.remain == 0 {
			b.done = true
			break
		}
		if b.mode == bodyChunked && b.remain == 0 {
			// A chunk boundary: read on only while the framing is in the
			// buffer, or nothing is returned yet.
			if n > 0 && !b.framingBuffered() {
				break
			}
			b.err = b.nextChunk()
			continue
		}
		if cn.r == cn.w {
			if n > 0 || blocked {
				break
			}
			if b.onBlock != nil {
				b.onBlock.blocking()
			}
			blocked = true
			if err := cn.fill(); err != nil {
				if err == io.EOF && b.mode == bodyClose {
					b.done = true
				} else {
					b.err = b.readErr(err)
				}
				break
			}
		}
		k := cn.w - cn.r
		if k > len(p)-n {
			k = len(p) - n
		}
		if b.mode != bodyClose && int64(k) > b.remain {
			k = int(b.remain)
		}
		copy(p[n:], cn.buf[cn.r:cn.r+k])
		cn.r += k
		n += k
		b.remain -= int64(k)
	}
	if n > 0 {
		return n, nil
	}
	if b.err != nil {
		return 0, b.err
	}
	if b.done {
		return 0, io.EOF
	}
	return 0, nil
}

// framingBuffered reports whether the next chunk's framing (the CRLF after
// the data and the size line) is whole in the buffer.
func (b *upBody) framingBuffered() bool {
	rest := b.conn.buf[b.conn.r:b.conn.w]
	if b.crlf {
		if len(rest) < 2 {
			return false
		}
		rest = rest[2:]
	}
	return bytes.IndexByte(rest, '\n') >= 0
}

// finishBuffered reads the rest of the body from the buffer alone, without
// waiting on the upstream, and reports whether its framing ended cleanly.
func (b *upBody) finishBuffered() bool {
	for !b.done && b.err == nil && !b.closed {
		cn := b.conn
		switch {
		case b.mode == bodyNone || b.mode == bodyLength && b.remain == 0:
			b.done = true
		case b.mode == bodyClose:
			return false
		case b.mode == bodyChunked && b.remain == 0:
			if !b.endBuffered() {
				return false
			}
			b.err = b.nextChunk()
		case cn.r == cn.w:
			return false
		default:
			k := int64(cn.w - cn.r)
			k = min(k, b.remain)
			cn.r += int(k)
			b.remain -= k
		}
	}
	return b.done
}

// endBuffered is framingBuffered, and after a last chunk's size line the
// end of its trailer section too: nextChunk then reads without waiting.
func (b *upBody) endBuffered() bool {
	if !b.framingBuffered() {
		return false
	}
	rest := b.conn.buf[b.conn.r:b.conn.w]
	if b.crlf {
		rest = rest[2:]
	}
	i := bytes.IndexByte(rest, '\n')
	if size, err := parseChunkSize(bytes.TrimSuffix(rest[:i], []byte("\r"))); err != nil || size > 0 {
		return true // data follows, or nextChunk reports the error
	}
	rest = rest[i+1:]
	return bytes.HasPrefix(rest, []byte("\r\n")) || bytes.Contains(rest, []byte("\r\n\r\n"))
}

// nextChunk reads the framing before the next chunk's data: the CRLF that
// ends the previous chunk, the size line, and after the last chunk the
// trailer section.
func (b *upBody) nextChunk() error {
	cn := b.conn
	block := func() {
		if b.onBlock != nil {
			b.onBlock.blocking()
		}
	}
	if b.crlf {
		for cn.w-cn.r < 2 {
			block()
			if err := cn.fill(); err != nil {
				return b.readErr(err)
			}
		}
		if cn.buf[cn.r] != '\r' || cn.buf[cn.r+1] != '\n' {
			return protoErr("chunk data not followed by CRLF")
		}
		cn.r += 2
		b.crlf = false
	}
	if bytes.IndexByte(cn.buf[cn.r:cn.w], '\n') < 0 {
		block()
	}
	l, err := cn.line(true, upMaxChunkExt)
	if err != nil {
		return b.readErr(err)
	}
	size, err := parseChunkSize(l)
	if err != nil {
		return err
	}
	if size > 0 {
		b.remain, b.crlf = size, true
		return nil
	}
	// The trailer section: header lines, CRLF-ended like the framing,
	// read and dropped.
	for total := 0; ; {
		l, err := cn.line(true, upBufSize)
		if err != nil {
			return b.readErr(err)
		}
		if len(l) == 0 {
			b.done = true
			return nil
		}
		if total += len(l); total > upMaxTrailer {
			return protoErr("trailers longer than " + strconv.Itoa(upMaxTrailer) + " bytes")
		}
		if _, _, err := parseHeaderLine(l); err != nil {
			return err
		}
	}
}

// drain reads the rest of the body, at most max bytes and for at most
// wait (the connection's read deadline; cleared again when the body ends
// cleanly, so that the pooled connection carries none).
func (b *upBody) drain(wait time.Duration, max int) {
	if b.closed || b.done || b.err != nil {
		return
	}
	nc := b.conn.nc
	nc.SetReadDeadline(time.Now().Add(wait))
	var scratch [4096]byte
	for n := 0; n < max; {
		k, err := b.Read(scratch[:])
		n += k
		if err != nil {
			break
		}
	}
	if b.done {
		nc.SetReadDeadline(time.Time{})
	}
}

// readErr is what a failed read of the body reports: the context's error
// when it was cancelled, a cut body as io.ErrUnexpectedEOF.
func (b *upBody) readErr(err error) error {
	if b.ctx != nil && b.ctx.Err() != nil {
		return b.ctx.Err()
	}
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Close ends the body: the connection is pooled when its answer was read
// to the end, else closed. (The proxy drains a finished stream's body,
// boundedly, before it closes it: see upstreamCall.drain.)
func (b *upBody) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	stopped := true
	if b.watch != nil {
		stopped = b.watch.detach()
		if b.ownWatch {
			b.watch.release()
		}
	}
	if b.done && b.keep && stopped && b.conn.r == b.conn.w {
		b.client.put(b.conn)
	} else {
		b.conn.nc.Close()
	}
	b.conn = nil
	return nil
}
