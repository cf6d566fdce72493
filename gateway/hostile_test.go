package gateway

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider"
)

// bigUpstream is an OpenAI-compatible upstream on loopback that answers
// every request with n chat chunks of size bytes of text each, as fast as
// the gateway reads them.
func bigUpstream(t testing.TB, n, size int) string {
	t.Helper()
	text := strings.Repeat("x", size)
	chunk := []byte(`data: {"id":"c1","object":"chat.completion.chunk","model":"m1","choices":[{"index":0,"delta":{"content":"` + text + `"},"finish_reason":null}]}` + "\n\n")
	end := []byte(`data: {"id":"c1","object":"chat.completion.chunk","model":"m1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n")
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < n; i++ {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
		w.Write(end)
	})}
	return serveHTTP(t, srv)
}

// dialSmall connects to the gateway with a tiny receive buffer, so that a
// client that never reads fills the path quickly.
func dialSmall(t *testing.T, url string) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(network, address string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) {
			syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		})
	}}
	c, err := d.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func rawRequest(path, body string) string {
	return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", path, len(body), body)
}

// normalChat is what a well-behaved client does meanwhile: it must be
// served, never refused with 429.
func normalChat(t *testing.T, url string) {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(chatBody(true)))
	if err != nil {
		t.Fatalf("normal client: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("normal client: %d %s", resp.StatusCode, b)
	}
	m := decodeSSE(t, provider.WireOpenAIChat, resp.Body)
	if m.StopReason == llm.StopError {
		t.Fatalf("normal client: stream failed: %s", m.ErrorMessage)
	}
}

func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > d {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start)
}

// TestHostileClients attacks a gateway with two stream slots the way the
// hardening issue did: bodies trickled a byte at a time, clients that
// never read their answers, idle keep-alive connections, and a shutdown
// with stuck clients. Normal clients keep being served, slots come back
// by the deadlines and shutdown ends within grace plus a second.
func TestHostileClients(t *testing.T) {
	cfg := Config{MaxStreams: 2, BodyTimeout: 300 * time.Millisecond, WriteTimeout: 300 * time.Millisecond,
		KeepAliveTimeout: 300 * time.Millisecond, HeaderTimeout: 300 * time.Millisecond}

	t.Run("slow bodies hold no slot", func(t *testing.T) {
		r := startRig(t, malformedScript(), cfg)
		body := chatBody(true)
		var conns []net.Conn
		for i := 0; i < 4; i++ { // twice the slots
			c := dialSmall(t, r.url)
			req := rawRequest("/v1/chat/completions", body)
			c.Write([]byte(req[:len(req)-len(body)+1])) // headers and one byte
			conns = append(conns, c)
		}
		stop := make(chan struct{})
		defer close(stop)
		go func() { // trickle one byte now and then, never finishing
			for i := 1; ; i++ {
				select {
				case <-stop:
					return
				case <-time.After(50 * time.Millisecond):
				}
				for _, c := range conns {
					c.Write([]byte{body[i%len(body)]})
				}
			}
		}()
		time.Sleep(50 * time.Millisecond)
		for i := 0; i < 3; i++ {
			normalChat(t, r.url)
		}
		// The trickling clients are answered 408 by the body deadline.
		for _, c := range conns {
			c.SetReadDeadline(time.Now().Add(3 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatalf("slow body: %v", err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestTimeout {
				t.Errorf("slow body answered %d, want 408", resp.StatusCode)
			}
		}
	})

	t.Run("never-reading clients lose their slots", func(t *testing.T) {
		c := cfg
		c.Upstream = bigUpstream(t, 1000, 1000) // 1 MB answers: more than the (small) socket buffers hold
		r := startGatewayOn(t, c, smallSendBuffers{listen(t)})
		for i := 0; i < 2; i++ {
			conn := dialSmall(t, r.url)
			conn.Write([]byte(rawRequest("/v1/chat/completions", chatBody(true))))
		}
		waitFor(t, "both slots taken", 2*time.Second, func() bool { return r.srv.m.inFlightValue() == 2 })
		// The slots come back once the socket buffers are full and a write
		// has blocked for WriteTimeout; without the deadline they never do.
		took := waitFor(t, "slots back", 5*time.Second, func() bool { return r.srv.m.inFlightValue() == 0 })
		t.Logf("slots back %v after both were taken (write timeout %v)", took, c.WriteTimeout)
		// A normal client is served again (the big answer, read whole).
		resp := post(t, r.url+"/v1/chat/completions", chatBody(true))
		n, _ := io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != 200 || n < 1000*1000 {
			t.Errorf("normal client after: %d, %d bytes", resp.StatusCode, n)
		}
	})

	t.Run("idle keep-alive connections are closed", func(t *testing.T) {
		r := startRig(t, malformedScript(), cfg)
		c := dialSmall(t, r.url)
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		start := time.Now()
		c.SetReadDeadline(time.Now().Add(3 * time.Second))
		if _, err := br.ReadByte(); err != io.EOF {
			t.Fatalf("idle connection: %v, want EOF from the server", err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("idle connection closed after %v", d)
		}
		// A connection that sends nothing at all is closed by the header deadline.
		c2 := dialSmall(t, r.url)
		c2.SetReadDeadline(time.Now().Add(3 * time.Second))
		if _, err := c2.Read(make([]byte, 1)); err != io.EOF {
			t.Fatalf("silent connection: %v, want EOF", err)
		}
	})

	t.Run("shutdown ends within grace with stuck clients", func(t *testing.T) {
		c := cfg
		c.Upstream = bigUpstream(t, 1000, 1000)
		c.WriteTimeout = time.Minute // the grace, not the write deadline, must end them
		c.BodyTimeout = time.Minute
		// The drain window must outlast a loaded machine's delay between
		// seeing the drain begin and connecting for /healthz: at 400 ms the
		// listener was sometimes closed first (EOF) under load 4-6.
		c.DrainDelay = 2 * time.Second
		srv, err := New(c)
		if err != nil {
			t.Fatal(err)
		}
		ln := smallSendBuffers{listen(t)}
		url := "http://" + ln.Addr().String()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		const grace = 3 * time.Second
		go func() { done <- srv.Serve(ctx, ln, grace) }()
		for i := 0; i < 2; i++ { // never read
			conn := dialSmall(t, url)
			conn.Write([]byte(rawRequest("/v1/chat/completions", chatBody(true))))
		}
		slow := dialSmall(t, url) // never finishes its body
		req := rawRequest("/v1/chat/completions", chatBody(true))
		slow.Write([]byte(req[:len(req)-5]))
		waitFor(t, "slots taken", 2*time.Second, func() bool { return srv.m.inFlightValue() == 2 })
		start := time.Now()
		cancel()
		waitFor(t, "draining", time.Second, srv.drain.Load)
		resp, err := http.Get(url + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 503 {
			t.Errorf("/healthz while draining: %d", resp.StatusCode)
		}
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(grace + time.Second):
			t.Fatalf("Serve still running %v after shutdown began (grace %v)", time.Since(start), grace)
		}
		t.Logf("shutdown took %v (grace %v)", time.Since(start), grace)
	})
}

// serveHTTP serves srv on a loopback port for the test.
func serveHTTP(t testing.TB, srv *http.Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// smallSendBuffers gives accepted connections a small kernel send
// buffer, so that a client that never reads blocks the gateway's writes
// after kilobytes instead of megabytes.
type smallSendBuffers struct{ net.Listener }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(16 << 10)
	}
	return c, err
}
