package gateway

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ocbench/ocbench/provider/scripted"
)

// countingUpstream is a scripted upstream that counts the TCP connections
// it accepts.
func countingUpstream(t *testing.T, s *scripted.Script, h func(http.Handler) http.Handler) (url string, conns *atomic.Int64) {
	t.Helper()
	p, err := scripted.New(scripted.Options{Script: s, Pick: scripted.Sequential(s)})
	if err != nil {
		t.Fatal(err)
	}
	conns = new(atomic.Int64)
	var handler http.Handler = p.Handler()
	if h != nil {
		handler = h(handler)
	}
	srv := httptest.NewUnstartedServer(handler)
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL, conns
}

func streamOnce(t *testing.T, client *http.Client, url string) string {
	resp, err := client.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(chatBody(true)))
	if err != nil {
		t.Error(err)
		return ""
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("status %d, %v: %s", resp.StatusCode, err, b)
	}
	return string(b)
}

// Every proxied stream that ends cleanly gives its upstream connection back
// to the pool: N streams, one after the other, use one connection, and N
// concurrent streams no more than N (before: one new connection per stream,
// since the stream stopped at [DONE] and closed the body before its EOF).
func TestProxyReusesUpstreamConnections(t *testing.T) {
	s := &scripted.Script{Turns: []scripted.Turn{{Steps: []scripted.Step{scripted.Text("hello there")}}}}
	up, conns := countingUpstream(t, s, nil)
	r := startGateway(t, Config{Upstream: up})
	client := &http.Client{}
	const n = 20
	for range n {
		if b := streamOnce(t, client, r.url); !strings.Contains(b, "hello there") || !strings.Contains(b, "[DONE]") {
			t.Fatalf("stream lost its content: %s", b)
		}
	}
	if c := conns.Load(); c != 1 {
		t.Errorf("%d sequential streams opened %d upstream connections, want 1", n, c)
	}
	const par = 8
	for range 3 {
		var wg sync.WaitGroup
		for range par {
			wg.Add(1)
			go func() { defer wg.Done(); streamOnce(t, client, r.url) }()
		}
		wg.Wait()
	}
	if c := conns.Load(); c > 1+par {
		t.Errorf("3 rounds of %d concurrent streams: %d upstream connections in all, want at most %d", par, c, 1+par)
	}
}

// An upstream that stalls after its last event (the body never ends) costs
// the stream at most the drain's bound, and its connection is not reused.
func TestProxyDrainIsBounded(t *testing.T) {
	s := &scripted.Script{Turns: []scripted.Turn{{Steps: []scripted.Step{scripted.Text("hi")}}}}
	stall := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(rw, r)
			rw.(http.Flusher).Flush()
			select { // the body stays open after [DONE]
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		})
	}
	up, conns := countingUpstream(t, s, stall)
	r := startGateway(t, Config{Upstream: up})
	for i := range 2 {
		start := time.Now()
		b := streamOnce(t, http.DefaultClient, r.url)
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("stream %d took %v: the drain waited on the stalled upstream", i, d)
		}
		if !strings.Contains(b, "[DONE]") || strings.Contains(b, "error") {
			t.Errorf("stream %d: %s", i, b)
		}
	}
	if c := conns.Load(); c != 2 {
		t.Errorf("a stalled connection was reused: %d connections for 2 streams", c)
	}
}

// An upstream that ends its body a little after its last event (within the
// drain's bound) keeps its connection, and the drain's read deadline does
// not stay on it: the next stream, after the deadline would have passed,
// reuses the connection and succeeds.
func TestProxyDrainWaitsForALateEnd(t *testing.T) {
	s := &scripted.Script{Turns: []scripted.Turn{{Steps: []scripted.Step{scripted.Text("hi")}}}}
	late := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(rw, r)
			rw.(http.Flusher).Flush()
			time.Sleep(drainWait / 4) // then the chunked body's end
		})
	}
	up, conns := countingUpstream(t, s, late)
	r := startGateway(t, Config{Upstream: up})
	for i := range 3 {
		if b := streamOnce(t, http.DefaultClient, r.url); !strings.Contains(b, "[DONE]") || strings.Contains(b, "error") {
			t.Fatalf("stream %d: %s", i, b)
		}
		time.Sleep(2 * drainWait)
	}
	if c := conns.Load(); c != 1 {
		t.Errorf("3 streams whose upstream ended late opened %d connections, want 1", c)
	}
}

// The gateway's own client posts through its transport directly; an
// upstream's redirect is still followed, as http.Client does (307: the
// same POST, body and all, to the new place).
func TestProxyFollowsUpstreamRedirect(t *testing.T) {
	s := &scripted.Script{Turns: []scripted.Turn{{Steps: []scripted.Step{scripted.Text("moved along")}}}}
	moved := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/old/") {
				http.Redirect(rw, r, strings.TrimPrefix(r.URL.Path, "/old"), http.StatusTemporaryRedirect)
				return
			}
			h.ServeHTTP(rw, r)
		})
	}
	up, _ := countingUpstream(t, s, moved)
	r := startGateway(t, Config{Upstream: up + "/old/v1"})
	if b := streamOnce(t, http.DefaultClient, r.url); !strings.Contains(b, "moved along") || !strings.Contains(b, "[DONE]") {
		t.Fatalf("redirect not followed: %s", b)
	}
}
