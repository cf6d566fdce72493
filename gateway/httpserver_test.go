package gateway

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider"
	"github.com/ocbench/ocbench/provider/scripted"
)

// readServerRequest reads raw as a request, step bytes per connection
// read, and returns it with its body read to the end.
func readServerRequest(raw []byte, step int) (*http.Request, []byte, error) {
	hs := &httpServer{s: &Server{}}
	hs.s.cfg.setDefaults()
	c := newSrvConn(hs, clientConn{&scriptConn{data: raw, step: step}})
	r, err := c.readRequest()
	if err != nil {
		return nil, nil, err
	}
	body, err := io.ReadAll(r.Body)
	return r, body, err
}

// clientConn is a scriptConn with a client's address.
type clientConn struct{ *scriptConn }

func (clientConn) RemoteAddr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1} }

// Repeated Content-Length lines are read as net/http reads them: they must
// say the same, byte for byte, and the header map keeps one value, also
// when the read buffer grew between them.
func TestServerRepeatedContentLength(t *testing.T) {
	pad := strings.Repeat("0", 16) + "5" // 17 digits: longer ones the server refuses, net/http not
	long := "X-Long: " + strings.Repeat("a", 6000) + "\r\n"
	for _, c := range []struct {
		name, lines string
		ok          bool
	}{
		{"equal", "Content-Length: 5\r\nContent-Length: 5\r\n", true},
		{"equal but for white space", "Content-Length: 5\r\nContent-Length: \t5 \r\n", true},
		{"equal, three", "Content-Length: 5\r\nContent-Length: 5\r\nContent-Length: 5\r\n", true},
		{"equal across a grown buffer", "Content-Length: 5\r\n" + long + "Content-Length: 5\r\n", true},
		{"equal and padded", "Content-Length: " + pad + "\r\nContent-Length: " + pad + "\r\n", true},
		{"same number, other bytes", "Content-Length: 5\r\nContent-Length: 05\r\n", false},
		{"padded, other bytes", "Content-Length: " + pad + "\r\nContent-Length: 0" + pad + "\r\n", false},
		{"different", "Content-Length: 5\r\n" + long + "Content-Length: 6\r\n", false},
	} {
		raw := []byte("POST / HTTP/1.1\r\nHost: a\r\n" + c.lines + "\r\nhello")
		for _, step := range []int{len(raw), 7} {
			r, body, err := readServerRequest(raw, step)
			hr, herr := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
			if (err == nil) != c.ok || (herr == nil) != c.ok {
				t.Errorf("%s, step %d: err %v, net/http's %v; want read: %v", c.name, step, err, herr, c.ok)
				continue
			}
			if !c.ok {
				continue
			}
			if got, want := r.Header["Content-Length"], hr.Header["Content-Length"]; strings.Join(got, ",") != strings.Join(want, ",") || string(body) != "hello" {
				t.Errorf("%s, step %d: Content-Length %q body %q; net/http %q", c.name, step, got, body, want)
			}
		}
	}
}

func TestServerRequestFraming(t *testing.T) {
	cases := []struct {
		name, raw, body string
		status          int // 0: read; else the status it is refused with (-1: no answer)
	}{
		{"length", "POST /v1/chat/completions HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello", "hello", 0},
		{"chunked", "POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;e=1\r\n world\r\n0\r\nT: 1\r\n\r\n", "hello world", 0},
		{"bare LF head", "GET /healthz HTTP/1.1\nHost: a\n\n", "", 0},
		{"query", "GET /v1/models?x=%20y HTTP/1.1\r\nHost: a\r\n\r\n", "", 0},
		{"http/1.0 without host", "GET / HTTP/1.0\r\n\r\n", "", 0},
		{"no host", "GET / HTTP/1.1\r\n\r\n", "", 400},
		{"two hosts", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", "", 400},
		{"bad host", "GET / HTTP/1.1\r\nHost: a b\r\n\r\n", "", 400},
		{"both framings", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n\r\n", "", 400},
		{"conflicting lengths", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", "", 400},
		{"signed length", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +3\r\n\r\nabc", "", 400},
		{"gzip coding", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", "", 501},
		{"chunked on 1.0", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "", 501},
		{"version 2", "GET / HTTP/2.0\r\nHost: a\r\n\r\n", "", 505},
		{"not http", "SSH-2.0-OpenSSH\r\n\r\n", "", 400},
		{"folded header", "GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n continued\r\n\r\n", "", 400},
		{"space before colon", "GET / HTTP/1.1\r\nHost: a\r\nX-A : 1\r\n\r\n", "", 400},
		{"control in value", "GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\x00\r\n\r\n", "", 400},
		{"odd expect", "POST / HTTP/1.1\r\nHost: a\r\nExpect: 200-ok\r\nContent-Length: 1\r\n\r\na", "", 417},
		{"line too long", "GET / HTTP/1.1\r\nHost: a\r\nX-Long: " + strings.Repeat("a", upBufSize) + "\r\n\r\n", "", 431},
		// Lines and bodies past the buffer a connection starts with.
		{"line past the first buffer", "GET / HTTP/1.1\r\nHost: a\r\nX-Long: " + strings.Repeat("a", upBufSize-100) + "\r\n\r\n", "", 0},
		{"body past the first buffer", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 100000\r\n\r\n" + strings.Repeat("b", 100000), strings.Repeat("b", 100000), 0},
		{"headers too long", "GET / HTTP/1.1\r\nHost: a\r\n" + strings.Repeat("X-A: "+strings.Repeat("a", 1000)+"\r\n", 1100) + "\r\n", "", 431},
		{"head cut", "GET / HTTP/1.1\r\nHo", "", -1},
		{"chunked body cut", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel", "", -2},
		{"bad chunk size", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "", -2},
	}
	for _, tc := range cases {
		for _, step := range []int{1, 3, 1 << 20} {
			r, body, err := readServerRequest([]byte(tc.raw), step)
			var re *requestError
			var pe *UpstreamProtocolError
			status := 0
			switch {
			case err == nil:
			case r == nil && errors.As(err, &re):
				status = re.status
			case r == nil && errors.As(err, &pe):
				status = 431
			case r == nil:
				status = -1
			default:
				status = -2 // the body failed
				if !errors.Is(err, errBadRequestBody) && !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Errorf("%s (reads of %d): body error %v", tc.name, step, err)
				}
			}
			if status != tc.status || status == 0 && string(body) != tc.body {
				t.Errorf("%s (reads of %d): status %d body %q err %v; want %d %q", tc.name, step, status, body, err, tc.status, tc.body)
			}
		}
	}
}

// A client connection's read buffer starts small (an idle connection
// holds it) and grows to upBufSize only when a line does not fit or the
// client sends faster than it drains: then reads take upBufSize at a time.
func TestServerReadBufferGrows(t *testing.T) {
	for _, tc := range []struct {
		name string
		raw  string
		want int // the buffer's length after the request is read
	}{
		{"small request", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello", srvBufStart},
		{"long line", "GET / HTTP/1.1\r\nHost: a\r\nX-Long: " + strings.Repeat("a", 6000) + "\r\n\r\n", 2 * srvBufStart},
		{"big body", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 100000\r\n\r\n" + strings.Repeat("b", 100000), upBufSize},
	} {
		hs := &httpServer{s: &Server{}}
		hs.s.cfg.setDefaults()
		sc := &scriptConn{data: []byte(tc.raw), step: 1 << 20}
		c := newSrvConn(hs, clientConn{sc})
		r, err := c.readRequest()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		fills := c.in.fills
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			t.Fatalf("%s: body: %v", tc.name, err)
		}
		if got := len(c.in.buf); got != tc.want {
			t.Errorf("%s: buffer %d bytes, want %d", tc.name, got, tc.want)
		}
		if tc.name == "big body" {
			// 4 KiB, 8 KiB, then 16 KiB reads: 100,000 bytes in at most 9.
			if reads := c.in.fills - fills; reads > 9 {
				t.Errorf("big body: %d reads", reads)
			}
		}
	}
}

// FuzzServerRequest reads arbitrary bytes as a client's request: no
// panic, and what the gateway's server reads, net/http's parser reads too,
// to the same method, target, host, length and body; the server may refuse
// more.
func FuzzServerRequest(f *testing.F) {
	for _, s := range []string{
		"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
		"POST /v1/runs HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2;x=y\r\n{}\r\n0\r\nT: v\r\n\r\n",
		"GET /v1/models/a%2Fb?q=1 HTTP/1.1\r\nHost: [::1]:80\r\nConnection: close\r\n\r\n",
		"GET http://example.com/healthz HTTP/1.1\r\nHost: example.com\r\n\r\n",
		"OPTIONS * HTTP/1.1\r\nHost: a\r\nOrigin: http://x\r\n\r\n",
		"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\nx",
	} {
		f.Add([]byte(s), uint8(2))
	}
	f.Fuzz(func(t *testing.T, raw []byte, step uint8) {
		r, body, err := readServerRequest(raw, int(step)+1)
		if err != nil {
			return
		}
		hr, herr := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
		if herr != nil {
			t.Fatalf("read %s %q what net/http refuses: %v", r.Method, r.RequestURI, herr)
		}
		hbody, herr := io.ReadAll(hr.Body)
		if herr != nil {
			t.Fatalf("read the body %q to its end where net/http fails: %v", body, herr)
		}
		if r.Method != hr.Method || r.RequestURI != hr.RequestURI || r.Host != hr.Host ||
			r.ContentLength != hr.ContentLength || r.URL.Path != hr.URL.Path || r.URL.RawQuery != hr.URL.RawQuery ||
			!bytes.Equal(body, hbody) {
			t.Fatalf("read %s %q host %q length %d path %q body %q; net/http: %s %q host %q length %d path %q body %q",
				r.Method, r.RequestURI, r.Host, r.ContentLength, r.URL.Path, body,
				hr.Method, hr.RequestURI, hr.Host, hr.ContentLength, hr.URL.Path, hbody)
		}
		for k, v := range r.Header {
			if strings.Join(v, ",") != strings.Join(hr.Header[k], ",") {
				t.Fatalf("header %s: %q; net/http %q", k, v, hr.Header[k])
			}
		}
	})
}

// FuzzServerRequestsOnOneConnection reads the requests of one
// connection (a keep-alive client's, whose later requests may be read from
// the connection's memo of the last one's header lines) as net/http reads
// them: the same framing, bodies and header values, request by request.
func FuzzServerRequestsOnOneConnection(f *testing.F) {
	post := func(length int, body string, extra string) string {
		return fmt.Sprintf("POST /v1/chat/completions HTTP/1.1\r\nHost: a\r\nContent-Length: %d\r\n%s\r\n%s", length, extra, body)
	}
	f.Add([]byte(post(2, "{}", "")+post(5, "hello", "")+post(10, "0123456789", "")), uint8(255))
	f.Add([]byte(post(2, "{}", "Accept: x\r\n")+post(2, "ab", "Accept: x\r\n")+post(3, "abc", "Accept: y\r\n")), uint8(3))
	f.Add([]byte(post(1, "a", "")+"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 12a\r\n\r\nb"), uint8(255))
	f.Add([]byte(post(1, "a", "")+"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1234567890123456789\r\n\r\n"), uint8(7))
	f.Fuzz(func(t *testing.T, raw []byte, step uint8) {
		hs := &httpServer{s: &Server{}}
		hs.s.cfg.setDefaults()
		c := newSrvConn(hs, clientConn{&scriptConn{data: raw, step: int(step) + 1}})
		br := bufio.NewReader(bytes.NewReader(raw))
		for i := 0; i < 4; i++ {
			r, err := c.readRequest()
			if err != nil {
				return
			}
			body, err := io.ReadAll(r.Body)
			// As the server's loop: the watch its body's end armed ends
			// before the next request is read (else, on a slow run, its
			// timer's read races with readRequest's).
			c.disarm()
			if err != nil {
				return
			}
			hr, herr := http.ReadRequest(br)
			if herr != nil {
				t.Fatalf("request %d: read %s %q what net/http refuses: %v", i+1, r.Method, r.RequestURI, herr)
			}
			hbody, herr := io.ReadAll(hr.Body)
			if herr != nil {
				t.Fatalf("request %d: read the body %q to its end where net/http fails: %v", i+1, body, herr)
			}
			if r.Method != hr.Method || r.RequestURI != hr.RequestURI || r.Host != hr.Host ||
				r.ContentLength != hr.ContentLength || !bytes.Equal(body, hbody) {
				t.Fatalf("request %d: %s %q host %q length %d body %q; net/http: %s %q host %q length %d body %q", i+1,
					r.Method, r.RequestURI, r.Host, r.ContentLength, body, hr.Method, hr.RequestURI, hr.Host, hr.ContentLength, hbody)
			}
			for k, v := range r.Header {
				if strings.Join(v, ",") != strings.Join(hr.Header[k], ",") {
					t.Fatalf("request %d: header %s: %q; net/http %q", i+1, k, v, hr.Header[k])
				}
			}
			if got, want := r.Header.Get("Content-Length"), hr.Header.Get("Content-Length"); got != want {
				t.Fatalf("request %d: Content-Length %q; net/http %q", i+1, got, want)
			}
		}
	})
}

// dialRaw opens a connection to the gateway for the test, with a
// deadline.
func dialRaw(t *testing.T, url string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(5 * time.Second))
	return c
}

// rawExchange writes req on a fresh connection to the gateway and reads
// n answers.
func rawExchange(t *testing.T, url, req string, n int) []*http.Response {
	t.Helper()
	c := dialRaw(t, url)
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	var out []*http.Response
	for range n {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("answer %d: %v", len(out)+1, err)
		}
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("answer %d body: %v", len(out)+1, err)
		}
		resp.Body = io.NopCloser(bytes.NewReader(b))
		out = append(out, resp)
	}
	return out
}

func respBody(r *http.Response) string { b, _ := io.ReadAll(r.Body); return string(b) }

// The server end to end on a socket: pipelined requests answered in order,
// a chunked request body and 100-continue on a streaming route, HEAD,
// HTTP/1.0, and a malformed request answered 400 and closed.
func TestServerOverSocket(t *testing.T) {
	r := startRig(t, malformedScript(), Config{})
	body := chatBody(true)
	chunked := fmt.Sprintf("POST /v1/chat/completions HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(body), body)

	t.Run("pipelined", func(t *testing.T) {
		rs := rawExchange(t, r.url, "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n"+chunked+rawRequest("/v1/chat/completions", body)+"GET /nowhere HTTP/1.1\r\nHost: a\r\n\r\n", 4)
		if rs[0].StatusCode != 200 || !strings.Contains(respBody(rs[0]), `"ok"`) || rs[0].ContentLength <= 0 {
			t.Errorf("healthz: %d length %d", rs[0].StatusCode, rs[0].ContentLength)
		}
		for _, resp := range rs[1:3] {
			m := decodeSSE(t, provider.WireOpenAIChat, resp.Body)
			if resp.StatusCode != 200 || m.StopReason != llm.StopToolUse || resp.Header.Get("X-Request-Id") == "" {
				t.Errorf("stream: %d %v %q", resp.StatusCode, m.StopReason, m.ErrorMessage)
			}
			if resp.Header.Get("Content-Type") != "text/event-stream" || resp.Header.Get("Date") == "" {
				t.Errorf("stream head: %v", resp.Header)
			}
		}
		if rs[3].StatusCode != 404 {
			t.Errorf("unknown route: %d", rs[3].StatusCode)
		}
	})

	t.Run("100-continue", func(t *testing.T) {
		c := dialRaw(t, r.url)
		fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n", len(body))
		br := bufio.NewReader(c)
		line, err := br.ReadString('\n')
		if err != nil || line != "HTTP/1.1 100 Continue\r\n" {
			t.Fatalf("before the body: %q %v", line, err)
		}
		br.ReadString('\n')
		io.WriteString(c, body)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		if m := decodeSSE(t, provider.WireOpenAIChat, resp.Body); resp.StatusCode != 200 || m.StopReason != llm.StopToolUse {
			t.Errorf("after 100-continue: %d %v", resp.StatusCode, m.StopReason)
		}
	})

	t.Run("head and http/1.0", func(t *testing.T) {
		c0 := dialRaw(t, r.url)
		io.WriteString(c0, "HEAD /healthz HTTP/1.1\r\nHost: a\r\n\r\nGET /healthz HTTP/1.1\r\nHost: a\r\n\r\n")
		br := bufio.NewReader(c0)
		head, err := http.ReadResponse(br, &http.Request{Method: http.MethodHead})
		if err != nil || head.StatusCode != 200 || head.ContentLength <= 0 {
			t.Fatalf("HEAD: %v %v", head, err)
		}
		get, err := http.ReadResponse(br, nil)
		if err != nil || get.StatusCode != 200 || respBody(get) == "" || get.ContentLength != head.ContentLength {
			t.Errorf("GET after HEAD: %v %v", get, err)
		}
		c := dialRaw(t, r.url)
		io.WriteString(c, "GET /healthz HTTP/1.0\r\n\r\n")
		all, err := io.ReadAll(c) // an HTTP/1.0 answer ends with the connection
		if err != nil || !bytes.HasPrefix(all, []byte("HTTP/1.0 200 OK\r\n")) || !bytes.Contains(all, []byte(`"ok"`)) {
			t.Errorf("HTTP/1.0: %q %v", all, err)
		}
	})

	t.Run("malformed", func(t *testing.T) {
		c := dialRaw(t, r.url)
		io.WriteString(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n")
		all, err := io.ReadAll(c)
		if err != nil || !bytes.HasPrefix(all, []byte("HTTP/1.1 400 Bad Request\r\n")) {
			t.Errorf("both framings: %q %v", all, err)
		}
	})
}

// A handler that panics after its answer began: the client sees the
// answer cut, never a clean end, and the connection is closed.
func TestServerPanicCutsAnswer(t *testing.T) {
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	s.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte("data: 1\n\n"))
		http.NewResponseController(w).Flush()
		panic(http.ErrAbortHandler)
	})
	ln := listen(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln, time.Second) }()
	defer func() { cancel(); <-done }()
	resp, err := http.Get("http://" + ln.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil || string(b) != "data: 1\n\n" {
		t.Errorf("body %q err %v; want the first event then a cut", b, err)
	}
}

// A connection's watch timer, left set across requests, watches each
// request after watchDelay of its own: short requests are not watched
// (their answers come whole), and a long one after them notices its
// client leaving and has its context cancelled.
// serveRaw serves s on loopback for the test and returns a connection to
// it, with a reader of its answers.
func serveRaw(t *testing.T, s *Server) (net.Conn, *bufio.Reader) {
	t.Helper()
	ln := listen(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln, time.Second) }()
	t.Cleanup(func() { cancel(); <-done })
	c := dialRaw(t, "http://"+ln.Addr().String())
	return c, bufio.NewReader(c)
}

func TestServerWatchAcrossRequests(t *testing.T) {
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	cancelled := make(chan time.Duration, 1)
	s.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/short" {
			io.WriteString(w, "ok")
			return
		}
		start := time.Now()
		select {
		case <-r.Context().Done():
			cancelled <- time.Since(start)
		case <-time.After(5 * time.Second):
			cancelled <- -1
		}
	})
	c, br := serveRaw(t, s)
	for range 5 {
		io.WriteString(c, "GET /short HTTP/1.1\r\nHost: a\r\n\r\n")
		resp, err := http.ReadResponse(br, nil)
		if err != nil || respBody(resp) != "ok" {
			t.Fatalf("short request: %v %v", resp, err)
		}
		time.Sleep(watchDelay / 3) // the timer set by the first fires among these
	}
	io.WriteString(c, "GET /long HTTP/1.1\r\nHost: a\r\n\r\n")
	time.Sleep(watchDelay / 2)
	c.Close() // before the long request's own watchDelay is up
	if d := <-cancelled; d < watchDelay || d > 3*time.Second {
		t.Errorf("the long request's context ended after %v; want past watchDelay, once its client left", d)
	}
}

// A stream that outlasts the keep-alive and header deadlines, with the
// client's connection watched meanwhile, is not cut by either, and the
// connection serves the next request.
func TestServerLongStreamKeepsDeadlinesApart(t *testing.T) {
	const short = 250 * time.Millisecond
	s := &scripted.Script{Turns: []scripted.Turn{{Steps: []scripted.Step{scripted.Text("a"), scripted.Stall(4 * short), scripted.Text("b")}}}}
	r := startRig(t, s, Config{KeepAliveTimeout: short, HeaderTimeout: short, BodyTimeout: short})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	defer client.CloseIdleConnections()
	for i := range 2 {
		resp, err := client.Post(r.url+"/v1/chat/completions", "application/json", strings.NewReader(chatBody(true)))
		if err != nil {
			t.Fatal(err)
		}
		m := decodeSSE(t, provider.WireOpenAIChat, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || m.TextContent() != "ab" || m.StopReason != llm.StopStop {
			t.Fatalf("stream %d: %d %q %v %s", i, resp.StatusCode, m.TextContent(), m.StopReason, m.ErrorMessage)
		}
	}
}

// Header names are canonical as net/http makes them, the common ones (found
// by their length) and the rest alike.
func TestCanonicalKey(t *testing.T) {
	names := []string{"x-api-keys", "accepts", "content-lengthx", "a", "", "anthropic-versions-and-more", "x_y"}
	for _, k := range commonKeys {
		names = append(names, k, strings.ToLower(k), strings.ToUpper(k), k[:len(k)-1]+"q")
	}
	for _, n := range names {
		if got, want := canonicalKey([]byte(n)), textproto.CanonicalMIMEHeaderKey(n); got != want {
			t.Errorf("%q: %q, want %q", n, got, want)
		}
	}
}

// An answer ended whole gets its length in the sorted head, in place of a
// Content-Length set after WriteHeader.
func TestServerHeadLength(t *testing.T) {
	for _, late := range []string{"", "99"} {
		w := &respWriter{c: &srvConn{hs: &httpServer{}}, r: &http.Request{Method: http.MethodPost, ProtoMinor: 1}, hdr: http.Header{}, clen: -1}
		w.hdr.Set("X-B", "b")
		w.hdr.Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusOK)
		if late != "" {
			w.hdr.Set("Content-Length", late)
		}
		w.Write([]byte("hello"))
		w.writeHead(true)
		head, _, _ := strings.Cut(string(w.out), "Date: ")
		if want := "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/plain\r\nX-B: b\r\n"; head != want || !strings.HasSuffix(string(w.out), "\r\n\r\nhello") {
			t.Errorf("late %q: %q", late, w.out)
		}
	}
}

// The head's entries are sorted by name however many there are (by
// insertion up to 16), and a value's line breaks become spaces.
func TestServerHeadSortedAndValuesOnOneLine(t *testing.T) {
	for n := range 24 {
		var e []headerEntry
		for i := range n {
			e = append(e, headerEntry{name: fmt.Sprintf("X-%c%d", 'z'-rune(i*7%26), i%3)})
		}
		sortHeaderEntries(e)
		if !slices.IsSortedFunc(e, func(a, b headerEntry) int { return strings.Compare(a.name, b.name) }) {
			t.Errorf("%d entries not sorted: %v", n, e)
		}
	}
	for v, want := range map[string]string{"": "", "plain value": "plain value", "a\r\nb": "a  b", "\n": " ", "tab\there": "tab\there", "x\r": "x "} {
		if got := string(appendHeaderValue([]byte("K: "), v)); got != "K: "+want {
			t.Errorf("%q: %q, want %q", v, got, "K: "+want)
		}
	}
}

// deadlineRecorder is a connection that records the read deadlines set.
type deadlineRecorder struct {
	net.Conn
	set []time.Time
}

func (d *deadlineRecorder) SetReadDeadline(t time.Time) error { d.set = append(d.set, t); return nil }
func (d *deadlineRecorder) Read(p []byte) (int, error)        { return 0, nil }

// The keep-alive wait, renewed before each request, moves the timer once
// per slack, and never sooner than asked; an earlier deadline (a header
// wait) and a cleared one are set as asked.
func TestServerReadDeadlineSlack(t *testing.T) {
	rec := &deadlineRecorder{}
	const slack = time.Second
	c := &deadlineConn{Conn: rec, slack: time.Hour, readSlack: slack}
	t0 := time.Now()
	read := func(rd time.Time) time.Time {
		c.SetReadDeadline(rd)
		c.Read(nil)
		if !c.rdSet.IsZero() && (c.rdSet.Before(rd) || c.rdSet.Sub(rd) > slack) {
			t.Fatalf("asked %v, in force %v", rd.Sub(t0), c.rdSet.Sub(t0))
		}
		return c.rdSet
	}
	first := read(t0.Add(time.Minute))
	if !first.Equal(t0.Add(time.Minute)) {
		t.Fatalf("a first deadline is set as asked: %v", first.Sub(t0))
	}
	moved := read(t0.Add(time.Minute + time.Millisecond))
	if !moved.Equal(t0.Add(time.Minute + time.Millisecond + slack)) {
		t.Fatalf("moved later: %v", moved.Sub(t0))
	}
	for i := 2; i < 100; i++ { // keep-alive renewals within slack
		read(t0.Add(time.Minute + time.Duration(i)*time.Millisecond))
	}
	if len(rec.set) != 2 {
		t.Errorf("%d timer changes for renewals within slack", len(rec.set))
	}
	if hdr := read(t0.Add(10 * time.Second)); !hdr.Equal(t0.Add(10 * time.Second)) {
		t.Errorf("an earlier deadline: %v", hdr.Sub(t0))
	}
	c.SetReadDeadline(time.Time{})
	c.Read(nil)
	if !rec.set[len(rec.set)-1].IsZero() || !c.rdSet.IsZero() {
		t.Errorf("a cleared deadline: %v", rec.set)
	}
}

// Requests read one after the other on a connection get their own header
// values, Host, framing and Close, whether they repeat the previous
// request's lines (then not parsed again: headMemo) or not.
func TestServerRequestValuesPerRequest(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	c := newSrvConn(&httpServer{s: &Server{cfg: Config{WriteTimeout: time.Second}}}, a)
	reqs := []string{
		"GET / HTTP/1.1\r\nHost: h1\r\nUser-Agent: u1\r\nX-A: a1\r\nX-A: a2\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: h1\r\nUser-Agent: u1\r\nX-A: a1\r\nX-A: a3\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: h2\r\nUser-Agent: u2\r\nX-B: b\r\nX-A: a1\r\n\r\n",
		// A common name repeated, in other cases, and one sent once.
		"GET / HTTP/1.1\r\nHost: h2\r\nAccept: x\r\nuser-agent: u2\r\naccept: y\r\nX-A: a1\r\nACCEPT: z\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: h2\r\nAccept: x\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: h2\r\nAccept: x\r\n\r\n",
		"GET /b HTTP/1.1\r\nHost: h2\r\nAccept: x\r\n\r\n",
		"GET / HTTP/1.0\r\nHost: h2\r\nAccept: x\r\n\r\n",
		"GET / HTTP/1.0\r\nHost: h2\r\nAccept: x\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: h2\r\nAccept: x\r\nConnection: close\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: h2\r\nAccept: x\r\nConnection: close\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: h2\r\nContent-Length: 2\r\n\r\nab",
		"POST / HTTP/1.1\r\nHost: h2\r\nContent-Length: 2\r\n\r\ncd",
		"POST / HTTP/1.1\r\nHost: h2\r\nContent-Length: 3\r\n\r\nefg",
		// Lines that repeat but for the body's length, of other digit counts.
		"POST / HTTP/1.1\r\nHost: h2\r\nContent-Length: 12\r\nAccept: x\r\n\r\nhello, world",
		"POST / HTTP/1.1\r\nHost: h2\r\nContent-Length: 5\r\nAccept: x\r\n\r\nhello",
		"POST / HTTP/1.1\r\nHost: h2\r\nContent-Length: 0\r\nAccept: x\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: h2\r\nContent-Length: 5\r\nAccept: y\r\n\r\nworld",
		// The handler added a key: the lines are parsed again.
		"GET / HTTP/1.1\r\nHost: h3\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: h3\r\n\r\n",
	}
	go func() {
		for _, r := range reqs {
			b.Write([]byte(r))
		}
	}()
	for _, raw := range reqs {
		want, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.readRequest()
		if err != nil {
			t.Fatal(err)
		}
		if got.Host != want.Host || fmt.Sprint(got.Header) != fmt.Sprint(want.Header) ||
			got.Close != want.Close || got.ContentLength != want.ContentLength {
			t.Errorf("%q: host %q header %v close %v length %d, want %q %v %v %d", raw, got.Host, got.Header,
				got.Close, got.ContentLength, want.Host, want.Header, want.Close, want.ContentLength)
		}
		gb, _ := io.ReadAll(got.Body)
		wb, _ := io.ReadAll(want.Body)
		if string(gb) != string(wb) {
			t.Errorf("%q: body %q, want %q", raw, gb, wb)
		}
		if got.Host == "h3" {
			got.Header["X-Added"] = []string{"x"}
		}
	}
	if !c.memo.ok {
		t.Error("no request's lines kept")
	}
	// Read from the memo: the 6th, 7th (another target), 9th, 11th,
	// 13th, and the 14th, 16th and 17th, whose lengths changed.
	if c.memo.hits != 8 {
		t.Errorf("%d requests read from the memo, want 8", c.memo.hits)
	}
}

// A request the client sends while the previous one is still being
// served (pipelined, and arriving after that one was read, before its
// answer) is answered at once, not after the keep-alive wait.
func TestServerPipelinedDuringHandler(t *testing.T) {
	s, err := New(Config{KeepAliveTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			time.Sleep(watchDelay / 4) // shorter than the watch: nothing reads the connection meanwhile
		}
		io.WriteString(w, r.URL.Path)
	})
	c, br := serveRaw(t, s)
	for range 3 {
		io.WriteString(c, "GET /slow HTTP/1.1\r\nHost: a\r\n\r\n")
		time.Sleep(watchDelay / 12) // the first is being served
		io.WriteString(c, "GET /next HTTP/1.1\r\nHost: a\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		for _, want := range []string{"/slow", "/next"} {
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("answer to %s: %v", want, err)
			}
			if got := respBody(resp); got != want {
				t.Fatalf("answer %q, want %q", got, want)
			}
		}
	}
}
