package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ocbench/ocbench/provider/scripted"
)

// scriptConn is a net.Conn that answers reads from a fixed byte string, at
// most step bytes per read, and swallows writes.
type scriptConn struct {
	net.Conn
	data   []byte
	step   int
	closed bool
}

func (c *scriptConn) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(c.data), c.step)
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}
func (c *scriptConn) Write(p []byte) (int, error)      { return len(p), nil }
func (c *scriptConn) Close() error                     { c.closed = true; return nil }
func (c *scriptConn) SetDeadline(time.Time) error      { return nil }
func (c *scriptConn) SetReadDeadline(time.Time) error  { return nil }
func (c *scriptConn) SetWriteDeadline(time.Time) error { return nil }

// readRaw reads raw as an answer, step bytes per connection read, and
// returns its status and body, the error that ended it, and whether the
// connection was pooled.
func readRaw(raw []byte, step int) (status int, body []byte, err error, pooled bool) {
	c := &upstreamClient{}
	cn := &upConn{nc: &scriptConn{data: raw, step: step}, buf: make([]byte, upBufSize)}
	resp, err := cn.readHead()
	if err != nil {
		return 0, nil, err, false
	}
	resp.body.client, resp.body.conn = c, cn
	p := make([]byte, 7) // small reads cross every boundary
	for {
		n, rerr := resp.body.Read(p)
		body = append(body, p[:n]...)
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			err = rerr
			break
		}
	}
	resp.body.Close()
	return resp.status, body, err, len(c.idle) == 1
}

func TestUpstreamResponseFraming(t *testing.T) {
	var proto *UpstreamProtocolError
	cases := []struct {
		name   string
		raw    string
		body   string
		pooled bool
		err    any // nil, io.ErrUnexpectedEOF, or &proto
	}{
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\n\r\n", "hello world", true, nil},
		{"chunked with trailers", "HTTP/1.1 200 OK\r\ntransfer-encoding: Chunked\r\n\r\nA\r\n0123456789\r\n0\r\nX-T: 1\r\n\r\n", "0123456789", true, nil},
		{"length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", "hello", true, nil},
		{"same length twice", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello", "hello", true, nil},
		{"close delimited", "HTTP/1.1 200 OK\r\n\r\nuntil the end", "until the end", false, nil},
		{"connection close", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nhi", "hi", false, nil},
		{"http/1.0", "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nhi", "hi", false, nil},
		{"interim 103 skipped", "HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", "ok", true, nil},
		{"no content", "HTTP/1.1 204 No Content\r\n\r\n", "", true, nil},
		{"chunked cut in data", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nshort", "short", false, io.ErrUnexpectedEOF},
		{"chunked without last chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n", "hi", false, io.ErrUnexpectedEOF},
		{"length cut", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", "short", false, io.ErrUnexpectedEOF},
		{"bare LF in chunk line", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\nhi\r\n0\r\n\r\n", "", false, &proto},
		{"no CRLF after data", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhiX\r\n0\r\n\r\n", "hi", false, &proto},
		{"bad chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "", false, &proto},
		{"huge chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\n", "", false, &proto},
		{"conflicting lengths", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello", "", false, &proto},
		{"signed length", "HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\nhello", "", false, &proto},
		{"gzip transfer coding", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", "", false, &proto},
		{"compressed body", "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 2\r\n\r\nhi", "", false, &proto},
		{"protocol switch", "HTTP/1.1 101 Switching Protocols\r\n\r\n", "", false, &proto},
		{"not http", "SSH-2.0-OpenSSH\r\n\r\n", "", false, &proto},
		{"status not a number", "HTTP/1.1 2x0 OK\r\n\r\n", "", false, &proto},
		{"folded header", "HTTP/1.1 200 OK\r\nX-A: 1\r\n continued\r\nContent-Length: 0\r\n\r\n", "", false, &proto},
		{"space before colon", "HTTP/1.1 200 OK\r\nContent-Length : 2\r\n\r\nhi", "", false, &proto},
		{"head cut", "HTTP/1.1 200 OK\r\nContent-Le", "", false, io.ErrUnexpectedEOF},
		{"line too long", "HTTP/1.1 200 OK\r\nX-Long: " + strings.Repeat("a", upBufSize) + "\r\n\r\n", "", false, &proto},
	}
	for _, tc := range cases {
		for _, step := range []int{1, 3, 1 << 20} {
			status, body, err, pooled := readRaw([]byte(tc.raw), step)
			switch want := tc.err.(type) {
			case nil:
				if err != nil || string(body) != tc.body || pooled != tc.pooled || status/100 != 2 {
					t.Errorf("%s (reads of %d): status %d body %q err %v pooled %v; want body %q pooled %v",
						tc.name, step, status, body, err, pooled, tc.body, tc.pooled)
				}
			case error:
				if !errors.Is(err, want) || pooled {
					t.Errorf("%s (reads of %d): err %v pooled %v, want %v", tc.name, step, err, pooled, want)
				}
			default:
				if !errors.As(err, &proto) || pooled {
					t.Errorf("%s (reads of %d): err %v pooled %v, want an UpstreamProtocolError", tc.name, step, err, pooled)
				}
			}
		}
	}
}

// FuzzUpstreamResponse reads arbitrary bytes as an upstream's answer: no
// panic, and where net/http reads the same bytes to a clean end, the lean
// client reads the same status and body or refuses them; it never reads to
// a clean end what net/http finds cut or malformed.
func FuzzUpstreamResponse(f *testing.F) {
	for _, s := range []string{
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;a=b\r\nhello\r\n0\r\nT: 1\r\n\r\n",
		"HTTP/1.1 429 Too Many\r\nRetry-After: 1\r\nContent-Length: 2\r\n\r\n{}",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n1\r\na\r\n0\r\n\r\n",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n\r\nrest",
	} {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, raw []byte, step uint8) {
		status, body, err, _ := readRaw(raw, int(step)+1)
		br := bufio.NewReader(bytes.NewReader(raw))
		resp, herr := http.ReadResponse(br, &http.Request{Method: http.MethodPost})
		for herr == nil && resp.StatusCode/100 == 1 && resp.StatusCode != 101 {
			// Interim answers, which net/http's Transport skips.
			resp, herr = http.ReadResponse(br, &http.Request{Method: http.MethodPost})
		}
		if herr != nil {
			return
		}
		hbody, herr := io.ReadAll(resp.Body)
		if err != nil {
			return // refusing what net/http reads is allowed: the lean client is stricter
		}
		if herr != nil {
			t.Fatalf("read to a clean end (status %d, %q) what net/http finds broken: %v", status, body, herr)
		}
		if resp.StatusCode != status || !bytes.Equal(hbody, body) {
			t.Fatalf("status %d body %q; net/http: %d %q", status, body, resp.StatusCode, hbody)
		}
	})
}

// rawUpstream serves each accepted connection with handle.
func rawUpstream(t *testing.T, handle func(c net.Conn, br *bufio.Reader)) (string, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	conns := new(atomic.Int64)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() { defer c.Close(); handle(c, bufio.NewReader(c)) }()
		}
	}()
	return "http://" + ln.Addr().String(), conns
}

// readRequest reads one request (head and Content-Length body).
func readRequest(br *bufio.Reader) (*http.Request, error) {
	req, err := http.ReadRequest(br)
	if err != nil {
		return nil, err
	}
	_, err = io.Copy(io.Discard, req.Body)
	return req, err
}

// An upstream that closes its idle keep-alive connections: each request
// still succeeds, on a fresh connection (the idle one is found closed
// before the request is written, not after).
func TestLeanClientSkipsClosedIdleConnections(t *testing.T) {
	base, conns := rawUpstream(t, func(c net.Conn, br *bufio.Reader) {
		if _, err := readRequest(br); err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		time.Sleep(20 * time.Millisecond) // then close, keep-alive notwithstanding
	})
	u, _ := url.Parse(base + "/v1/chat/completions")
	c := newUpstreamClient(u)
	for i := range 3 {
		resp, err := c.post(context.Background(), &upRequest{target: "/v1/chat/completions", body: []byte("{}")})
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		b, err := io.ReadAll(resp.body)
		resp.body.Close()
		if err != nil || string(b) != "ok" {
			t.Fatalf("request %d: %q %v", i, b, err)
		}
		time.Sleep(60 * time.Millisecond)
	}
	if n := conns.Load(); n != 3 {
		t.Errorf("%d connections for 3 requests, each after the upstream closed the last", n)
	}
}

// A watch kept across requests (as a connection of the gateway's own
// server keeps its chain's) serves every request made under one context
// without cost to the pooling, ends the wait of the request under way
// when that context is cancelled (its connection dropped), and under the
// next context leaves the requests alone.
func TestLeanClientWatchAcrossRequests(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	base, conns := rawUpstream(t, func(c net.Conn, br *bufio.Reader) {
		for {
			req, err := readRequest(br)
			if err != nil {
				return
			}
			if req.URL.Path == "/stall" {
				io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n")
				<-release
				return
			}
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		}
	})
	u, _ := url.Parse(base + "/x")
	c := newUpstreamClient(u)
	t.Cleanup(c.closeIdle)
	w := new(ctxWatch)
	get := func(ctx context.Context, path string) (string, error) {
		t.Helper()
		resp, err := c.post(ctx, &upRequest{target: path, body: []byte("{}"), watch: w})
		if err != nil {
			return "", err
		}
		b, err := io.ReadAll(resp.body)
		resp.body.Close()
		return string(b), err
	}
	ctx, cancel := context.WithCancel(context.Background())
	for i := range 3 {
		if b, err := get(ctx, "/x"); err != nil || b != "ok" {
			t.Fatalf("request %d: %q %v", i, b, err)
		}
	}
	if n := conns.Load(); n != 1 || len(c.idle) != 1 {
		t.Fatalf("%d connections, %d idle: want one, reused", n, len(c.idle))
	}
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	if b, err := get(ctx, "/stall"); !errors.Is(err, context.Canceled) || b != "hi" {
		t.Fatalf("stalled: %q %v; want hi then context.Canceled", b, err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("cancel took %v", d)
	}
	if len(c.idle) != 0 {
		t.Error("the interrupted connection was pooled")
	}
	next := context.Background()
	for i := range 3 {
		if b, err := get(next, "/x"); err != nil || b != "ok" {
			t.Fatalf("request %d under the next context: %q %v", i, b, err)
		}
	}
	if n := conns.Load(); n != 2 || len(c.idle) != 1 {
		t.Errorf("%d connections, %d idle: want a second one, reused", n, len(c.idle))
	}
}

// A connection pooled moments ago is taken without the liveness peek (the
// peeker is set up at a connection's first peek); one idle for longer is
// peeked, and all requests share the one connection.
func TestLeanClientPeeksOnlyStaleConnections(t *testing.T) {
	base, conns := rawUpstream(t, func(c net.Conn, br *bufio.Reader) {
		for {
			if _, err := readRequest(br); err != nil {
				return
			}
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		}
	})
	u, _ := url.Parse(base + "/x")
	c := newUpstreamClient(u)
	t.Cleanup(c.closeIdle)
	peeked := func() bool {
		t.Helper()
		resp, err := c.post(context.Background(), &upRequest{target: "/x", body: []byte("{}")})
		if err != nil {
			t.Fatal(err)
		}
		cn := resp.body.conn
		if b, err := io.ReadAll(resp.body); err != nil || string(b) != "ok" {
			t.Fatalf("%q %v", b, err)
		}
		resp.body.Close()
		return cn.peek.used()
	}
	peeked() // a new connection
	if peeked() {
		t.Error("a connection pooled moments ago was peeked")
	}
	time.Sleep(2 * upFreshFor)
	if !peeked() && (peeker{}).canPeek() {
		t.Error("a connection idle past upFreshFor was not peeked")
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}

// Cancelling the request's context ends a read that waits on a silent
// upstream at once, reports the cancellation, and drops the connection.
func TestLeanClientCancelEndsWait(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	base, _ := rawUpstream(t, func(c net.Conn, br *bufio.Reader) {
		if _, err := readRequest(br); err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n")
		<-release
	})
	u, _ := url.Parse(base + "/x")
	c := newUpstreamClient(u)
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := c.post(ctx, &upRequest{target: "/x"})
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	b, err := io.ReadAll(resp.body)
	if !errors.Is(err, context.Canceled) || string(b) != "hi" {
		t.Fatalf("read %q, %v; want hi then context.Canceled", b, err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("cancel took %v", d)
	}
	resp.body.Close()
	if len(c.idle) != 0 {
		t.Error("a cancelled connection was pooled")
	}
}

// A header value that could split the request is refused before anything
// is sent.
func TestLeanClientRefusesHeaderInjection(t *testing.T) {
	var r upRequest
	if err := r.addHeader("Authorization", "Bearer k\r\nX-Evil: 1"); err == nil {
		t.Fatal("a CRLF in a header value was accepted")
	}
	if err := r.addHeader("Authorization", "Bearer k\tok"); err != nil {
		t.Fatal(err)
	}
}

// An upstream that fails mid-stream through the lean client is a failure
// for the proxy's client: an in-band error, never a clean end.
func TestProxyReportsUpstreamCutAsFailure(t *testing.T) {
	base, _ := rawUpstream(t, func(c net.Conn, br *bufio.Reader) {
		if _, err := readRequest(br); err != nil {
			return
		}
		ev := `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"}}]}` + "\n\n"
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
		io.WriteString(c, strconv.FormatInt(int64(len(ev)), 16)+"\r\n"+ev+"\r\n")
		io.WriteString(c, "40\r\ndata: {\"choi") // cut inside a chunk
	})
	r := startGateway(t, Config{Upstream: base})
	resp := post(t, r.url+"/v1/chat/completions", chatBody(true))
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"error"`) || strings.Contains(string(b), "[DONE]") {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
}

// A request body past the one-write size (sent as two buffers) reaches the
// upstream whole, and concurrent streams share the pooled connections
// without crossing answers.
func TestLeanClientLargeBodiesAndConcurrency(t *testing.T) {
	s := &scripted.Script{Turns: []scripted.Turn{{Steps: []scripted.Step{scripted.Text("the answer")}}}}
	var bad atomic.Int64
	check := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, err := io.ReadAll(r.Body)
			if err != nil || int64(len(b)) != r.ContentLength || !json.Valid(b) {
				bad.Add(1)
			}
			r.Body = io.NopCloser(bytes.NewReader(b))
			h.ServeHTTP(w, r)
		})
	}
	up, conns := countingUpstream(t, s, check)
	r := startGateway(t, Config{Upstream: up})
	big := `{"model":"m","stream":true,"messages":[{"role":"user","content":"` + strings.Repeat("x", 200<<10) + `"}]}`
	resp := post(t, r.url+"/v1/chat/completions", big)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(b), "the answer") || !strings.Contains(string(b), "[DONE]") {
		t.Fatalf("large body: %d %.300s", resp.StatusCode, b)
	}
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				if b := streamOnce(t, http.DefaultClient, r.url); !strings.Contains(b, "the answer") || !strings.Contains(b, "[DONE]") {
					t.Errorf("stream: %.300s", b)
					return
				}
			}
		}()
	}
	wg.Wait()
	if n := bad.Load(); n != 0 {
		t.Errorf("%d request bodies arrived damaged", n)
	}
	if c := conns.Load(); c > 17 {
		t.Errorf("%d upstream connections for at most 16 concurrent streams", c)
	}
}

// Header names are RFC 9110 tokens: every byte is tried in a name.
func TestHeaderNameBytes(t *testing.T) {
	const tchar = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	for c := range 256 {
		if c == ':' {
			continue // the end of the name
		}
		_, _, err := parseHeaderLine([]byte("X-" + string([]byte{byte(c)}) + ": v"))
		if want := strings.IndexByte(tchar, byte(c)) >= 0; (err == nil) != want {
			t.Errorf("byte %#x in a header name: error %v, want accepted %v", c, err, want)
		}
	}
}

// validHeaderValue, eight bytes at a time, agrees with the byte-by-byte
// rule (no control character but tab) wherever the bad byte sits.
func TestValidHeaderValue(t *testing.T) {
	slow := func(v []byte) bool {
		for _, c := range v {
			if c < ' ' && c != '\t' || c == 0x7f {
				return false
			}
		}
		return true
	}
	base := []byte("application/json; charset=utf-8 \xc3\xa9\xff~")
	for n := 0; n <= len(base); n++ {
		v := append([]byte(nil), base[:n]...)
		if got := validHeaderValue(v); got != slow(v) {
			t.Errorf("%q: %v", v, got)
		}
		for i := 0; i < n; i++ {
			for _, c := range []byte{0, '\t', '\n', '\r', 0x1f, ' ', 0x7e, 0x7f, 0x80, 0xff} {
				w := append([]byte(nil), v...)
				w[i] = c
				if got, want := validHeaderValue(w), slow(w); got != want {
					t.Errorf("%q: %v, want %v", w, got, want)
				}
			}
		}
	}
}

// isToken, four bytes a branch, agrees with isTokenChar byte by byte for
// every byte at every place, on strings and byte slices.
func TestIsToken(t *testing.T) {
	base := "Content-Type-X"
	for n := 0; n <= len(base); n++ {
		for i := 0; i < n; i++ {
			for c := range 256 {
				b := []byte(base[:n])
				b[i] = byte(c)
				if got, want := isToken(b), isTokenChar(byte(c)); got != want || isToken(string(b)) != want {
					t.Fatalf("%q: %v, want %v", b, got, want)
				}
			}
		}
	}
	if !isToken("") || validHeaderName("") {
		t.Error("the empty name")
	}
}

// seqConn answers the n-th request (write) with answers[n], at most step
// bytes per read.
type seqConn struct {
	scriptConn
	answers []string
	n       int
}

func (c *seqConn) Write(p []byte) (int, error) {
	if c.n < len(c.answers) {
		c.data = []byte(c.answers[c.n])
	}
	c.n++
	return len(p), nil
}

// Answers read one after the other on a connection, their heads repeated
// but for the Date (not parsed again: answerMemo) or not, read as each
// alone on a fresh connection: status, ids, framing, body and errors.
func TestUpstreamHeadsRepeated(t *testing.T) {
	head := func(date, extra string) string {
		return "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nDate: " + date + "\r\n" + extra + "Transfer-Encoding: chunked\r\n\r\n"
	}
	body := "5\r\nhello\r\n0\r\n\r\n"
	answers := []string{
		head("Thu, 03 Dec 2026 10:00:00 GMT", "X-Request-Id: r1\r\n") + body,
		head("Thu, 03 Dec 2026 10:00:00 GMT", "X-Request-Id: r1\r\n") + body,
		head("Thu, 03 Dec 2026 10:00:01 GMT", "X-Request-Id: r1\r\n") + body,
		head("Thu, 03 Dec 2026 10:00:01 GMT", "X-Request-Id: r2\r\n") + body,
		head("Thu, 03 Dec 2026 10:00:01 GMT", "X-Request-Id: r2\r\n") + "5\r\nhel", // cut
	}
	tail := []string{
		"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 3\r\nDate: Thu, 03 Dec 2026 10:00:01 GMT\r\nContent-Length: 2\r\n\r\nno",
		"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 3\r\nDate: Thu, 03 Dec 2026 10:00:02 GMT\r\nContent-Length: 2\r\n\r\nno",
		"HTTP/1.1 200 OK\r\nDate: Thu, 03 Dec 2026 10:00:03 GMT\r\nContent-Length: 3\r\n\r\nabc",
		"HTTP/1.1 200 OK\r\nDate: Thu, 03 Dec 2026 10:00:03 GMT\r\nContent-Length: 3\r\n\r\nabc",
		"HTTP/1.1 200 OK\r\nDate: Thu, 03 Dec 2026 10:00:0\x01 GMT\r\nContent-Length: 3\r\n\r\nabc",
	}
	for _, seq := range [][]string{answers[:4], answers, tail} {
		c := &upstreamClient{}
		cn := newUpConn(&seqConn{scriptConn: scriptConn{step: 1 << 20}, answers: seq})
		for i, raw := range seq {
			wantStatus, wantBody, wantErr, _ := readRaw([]byte(raw), 1<<20)
			fresh := &upConn{nc: &scriptConn{data: []byte(raw), step: 1 << 20}, buf: make([]byte, upBufSize)}
			wantResp, _ := fresh.readHead()
			cn.nc.Write(nil)
			resp, err := cn.readHead()
			if err != nil || wantErr != nil && wantStatus == 0 {
				if (err != nil) != (wantErr != nil) || fmt.Sprint(err) != fmt.Sprint(wantErr) {
					t.Fatalf("answer %d: head error %v, alone %v", i, err, wantErr)
				}
				break
			}
			if resp.status != wantStatus || resp.requestID != wantResp.requestID || resp.retryAfter != wantResp.retryAfter ||
				resp.body.mode != wantResp.body.mode || resp.body.keep != wantResp.body.keep || resp.body.remain != wantResp.body.remain {
				t.Fatalf("answer %d: %+v %+v, alone %+v %+v", i, *resp, *resp.body, *wantResp, *wantResp.body)
			}
			resp.body.client, resp.body.conn = c, cn
			got, rerr := io.ReadAll(resp.body)
			if string(got) != string(wantBody) || fmt.Sprint(rerr) != fmt.Sprint(wantErr) {
				t.Fatalf("answer %d: body %q %v, alone %q %v", i, got, rerr, wantBody, wantErr)
			}
			resp.body.Close()
			if rerr != nil {
				break
			}
			if i > 0 && !cn.memo.ok {
				t.Errorf("answer %d: no head kept", i)
			}
		}
	}
}
