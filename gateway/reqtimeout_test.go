package gateway

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider"
	"github.com/ocbench/ocbench/provider/scripted"
)

// RequestTimeout bounds each request on its own: a stream past it ends
// with an in-band error (a non-streaming answer with 504), never as a
// success, and the next requests on the same keep-alive connection get a
// full RequestTimeout of their own, however long the connection has lived.
func TestRequestTimeoutPerRequest(t *testing.T) {
	const timeout = 400 * time.Millisecond
	fast := scripted.Turn{Steps: []scripted.Step{scripted.Text("quick")}}
	under := scripted.Turn{Steps: []scripted.Step{scripted.Text("hello"), scripted.Stall(100 * time.Millisecond),
		scripted.Text(" there"), scripted.Stall(100 * time.Millisecond), scripted.Text(" done")}}
	over := scripted.Turn{Steps: []scripted.Step{scripted.Text("hello"), scripted.Stall(300 * time.Millisecond),
		scripted.Text(" there"), scripted.Stall(300 * time.Millisecond), scripted.Text(" late"), scripted.Stall(300 * time.Millisecond)}}
	s := &scripted.Script{Turns: []scripted.Turn{fast, under, over}}
	r := startRig(t, s, Config{RequestTimeout: timeout, IdleTimeout: 5 * time.Second})

	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1}}
	t.Cleanup(client.CloseIdleConnections)
	conns := 0
	do := func(stream bool) (*http.Response, []byte, time.Duration) {
		t.Helper()
		trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) {
			if !i.Reused {
				conns++
			}
		}}
		req, err := http.NewRequest(http.MethodPost, r.url+"/v1/chat/completions", strings.NewReader(chatBody(stream)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		return resp, b, time.Since(start)
	}
	streamed := func(name, text string, fail bool) {
		t.Helper()
		resp, b, took := do(true)
		m := decodeSSE(t, provider.WireOpenAIChat, bytes.NewReader(b))
		switch {
		case resp.StatusCode != http.StatusOK:
			t.Errorf("%s: status %d: %s", name, resp.StatusCode, b)
		case fail && (m.StopReason != llm.StopError || m.ErrorMessage == "" || m.TextContent() != text):
			t.Errorf("%s: want the text %q then an error, got text %q stop %v error %q\n%s", name, text, m.TextContent(), m.StopReason, m.ErrorMessage, b)
		case fail && took > 3*timeout/2+300*time.Millisecond:
			t.Errorf("%s: ended after %v, not at the request timeout (%v)", name, took, timeout)
		case !fail && (m.StopReason == llm.StopError || m.TextContent() != text):
			t.Errorf("%s: want %q as a success, got text %q stop %v error %q", name, text, m.TextContent(), m.StopReason, m.ErrorMessage)
		}
	}

	streamed("fast", "quick", false)
	// The connection has lived longer than the timeout by the end of the
	// next request, which itself stays well within it.
	time.Sleep(timeout * 3 / 4)
	streamed("within the timeout on an old connection", "hello there done", false)
	streamed("past the timeout", "hello there", true)
	streamed("after a timed-out request", "quick", false)
	time.Sleep(timeout * 3 / 4)
	if resp, b, _ := do(false); resp.StatusCode != http.StatusOK || !bytes.Contains(b, []byte("hello there done")) {
		t.Errorf("non-streaming within the timeout: status %d: %s", resp.StatusCode, b)
	}
	if resp, b, took := do(false); resp.StatusCode != http.StatusGatewayTimeout || took > 3*timeout/2+300*time.Millisecond {
		t.Errorf("non-streaming past the timeout: status %d after %v, want 504 at the timeout: %s", resp.StatusCode, took, b)
	}
	if conns != 1 {
		t.Errorf("%d connections for the requests, want 1: a timed-out request must not cost its connection", conns)
	}
}

// The request context of the gateway's own server behaves as a context:
// cancellation reaches what derives from it (context.WithCancel and
// context.AfterFunc attach through its AfterFunc), with its error and
// cause, a registration stopped in time never runs, and one made after
// the cancellation runs at once.
func TestRequestContextCancels(t *testing.T) {
	rc := newReqContext(nil, time.Minute)
	child, cancelChild := context.WithCancelCause(rc)
	defer cancelChild(nil)
	ran := make(chan string, 4)
	context.AfterFunc(rc, func() { ran <- "after" })
	stop := context.AfterFunc(rc, func() { ran <- "stopped" })
	gone, cancelGone := context.WithCancel(rc)
	cancelGone()
	if gone.Err() == nil || !stop() {
		t.Fatal("a context derived and cancelled, or an AfterFunc stopped, before the parent's cancellation")
	}
	if n := len(rc.fns); n != 2 {
		t.Errorf("%d registrations left, want 2 (the child and the AfterFunc not stopped)", n)
	}
	if _, ok := rc.Deadline(); ok || rc.Err() != nil || child.Err() != nil {
		t.Fatal("a request context with a deadline or an error before any request")
	}
	rc.cancel(context.DeadlineExceeded)
	if !errors.Is(child.Err(), context.DeadlineExceeded) || !errors.Is(context.Cause(child), context.DeadlineExceeded) {
		t.Errorf("child: err %v cause %v, want the parent's deadline", child.Err(), context.Cause(child))
	}
	select {
	case <-child.Done():
	default:
		t.Error("the child is not done")
	}
	if got := <-ran; got != "after" {
		t.Errorf("ran %q", got)
	}
	late := make(chan struct{})
	if context.AfterFunc(rc, func() { close(late) })() {
		t.Error("an AfterFunc made after the cancellation could be stopped")
	}
	<-late
	select {
	case got := <-ran:
		t.Errorf("%q ran", got)
	case <-time.After(20 * time.Millisecond):
	}
}

// A connection's requests share one context while nothing cancels it, and
// a handler that leaves registrations on it (more than the proxy's chains
// keep) has them cancelled when it returns, as with a context of its own;
// the next request then gets a new context.
func TestRequestContextReuse(t *testing.T) {
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	hs := newHTTPServer(s)
	var seen []context.Context
	leaked := make(chan struct{}, maxKept+1)
	hs.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Context())
		if r.URL.Path == "/leak" {
			for range maxKept + 1 {
				context.AfterFunc(r.Context(), func() { leaked <- struct{}{} })
			}
		}
		if r.Context().Err() != nil {
			w.WriteHeader(http.StatusInternalServerError)
		}
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go hs.serve(ln)
	t.Cleanup(func() { ln.Close(); hs.closeAll(); hs.wg.Wait() })
	get := func(p string) string { return "GET " + p + " HTTP/1.1\r\nHost: a\r\n\r\n" }
	rs := rawExchange(t, "http://"+ln.Addr().String(), get("/a")+get("/b")+get("/leak")+get("/c")+get("/d"), 5)
	for i, resp := range rs {
		if resp.StatusCode != http.StatusOK {
			t.Errorf("request %d ran under a cancelled context", i)
		}
	}
	for range maxKept + 1 {
		select {
		case <-leaked:
		case <-time.After(5 * time.Second):
			t.Fatal("what a handler left registered was not cancelled when it returned")
		}
	}
	if seen[0] != seen[1] || seen[1] != seen[2] || seen[3] == seen[2] || seen[3] != seen[4] {
		t.Errorf("contexts shared: %v %v %v %v (want the first three, then the last two)", seen[0] == seen[1], seen[1] == seen[2], seen[2] == seen[3], seen[3] == seen[4])
	}
}
