package loadtest

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// busyServer answers a run on a session with 409 when a run on that
// session is in flight, as the gateway does, and records what it saw.
type busyServer struct {
	mu       sync.Mutex
	inFlight map[string]bool
	maxSeen  int // most runs in flight at once
	runs     atomic.Int64
	clashes  atomic.Int64
	sessions sync.Map
}

func (b *busyServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s := string(body)
	b.mu.Lock()
	if b.inFlight[s] {
		b.mu.Unlock()
		b.clashes.Add(1)
		http.Error(w, "the session is in use by another run", http.StatusConflict)
		return
	}
	b.inFlight[s] = true
	b.maxSeen = max(b.maxSeen, len(b.inFlight))
	b.mu.Unlock()
	b.runs.Add(1)
	b.sessions.Store(s, true)
	w.Header().Set("Content-Type", "text/event-stream")
	io.WriteString(w, "data: {\"a\":1}\n\n")
	w.(http.Flusher).Flush()
	time.Sleep(3 * time.Millisecond) // a run takes time: they overlap
	// The session is released before the answer ends, as engine.Run
	// returns before the gateway writes the result.
	b.mu.Lock()
	delete(b.inFlight, s)
	b.mu.Unlock()
	io.WriteString(w, "data: {\"session\":\"x\",\"stopReason\":\"stop\"}\n\n")
}

// Runs over few sessions at a rate that keeps several in flight never put
// two in-flight runs on one session, and every session stays in the pool.
func TestSessionsNeverShareARunInFlight(t *testing.T) {
	srv := &busyServer{inFlight: map[string]bool{}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	const sessions = 24
	rep, err := Run(context.Background(), Config{Target: ts.URL, Rate: 1500, Duration: time.Second, Connections: 16,
		SampleRate: 50, Sessions: sessions, BodyFunc: func(n uint64) []byte { return strconv.AppendUint(nil, n, 10) }})
	if err != nil {
		t.Fatal(err)
	}
	if c := srv.clashes.Load(); c != 0 || rep.SuccessRate != 1 || rep.StreamErrors != 0 {
		t.Fatalf("%d runs met another on its session; success %v, sampler errors %d, codes %v", c, rep.SuccessRate, rep.StreamErrors, rep.StatusCodes)
	}
	srv.mu.Lock()
	overlap := srv.maxSeen
	srv.mu.Unlock()
	if overlap < 2 {
		t.Errorf("at most %d run in flight: the test did not overlap runs", overlap)
	}
	// 16 connections and the sampler never hold all 24 sessions, so
	// every run continued one of them.
	n := 0
	srv.sessions.Range(func(k, _ any) bool {
		if v, err := strconv.Atoi(k.(string)); err != nil || v >= sessions {
			t.Errorf("run on session %q, outside the pool", k)
		}
		n++
		return true
	})
	if rep.FreshSessions != 0 || n != sessions {
		t.Errorf("%d fresh sessions, %d sessions used of %d", rep.FreshSessions, n, sessions)
	}
	t.Logf("%d runs, up to %d in flight, p99 %.2fms", srv.runs.Load(), overlap, rep.LatencyP99Ms)
}

// With more requests in flight than sessions, the excess goes to fresh
// sessions instead of a busy one, and is counted.
func TestSessionsExhaustedTakeFreshOnes(t *testing.T) {
	srv := &busyServer{inFlight: map[string]bool{}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	rep, err := Run(context.Background(), Config{Target: ts.URL, Rate: 1000, Duration: 500 * time.Millisecond, Connections: 16,
		Sessions: 2, BodyFunc: func(n uint64) []byte { return strconv.AppendUint(nil, n, 10) }})
	if err != nil {
		t.Fatal(err)
	}
	if c := srv.clashes.Load(); c != 0 || rep.SuccessRate != 1 {
		t.Fatalf("%d clashes, success %v", c, rep.SuccessRate)
	}
	if rep.FreshSessions == 0 {
		t.Errorf("no fresh session with up to 16 runs in flight on 2 sessions (max in flight %d)", srv.maxSeen)
	}
}

// A session whose answer was cut short is not handed out again: its run
// may still hold it on the server.
func TestSessionPoolRetiresCutShortSessions(t *testing.T) {
	p := newSessionPool(2)
	a, b := p.take(), p.take()
	if a == b || a > 1 || b > 1 {
		t.Fatalf("took %d and %d from a pool of 2", a, b)
	}
	if c := p.take(); c < 2 || p.fresh.Load() != 1 {
		t.Fatalf("empty pool gave %d (fresh count %d)", c, p.fresh.Load())
	}
	p.give(a, true)
	p.give(b, false)
	got := map[uint64]bool{p.take(): true, p.take(): true}
	if !got[a] || got[b] || len(got) != 2 {
		t.Fatalf("after giving back %d whole and %d cut short, took %v", a, b, got)
	}
	if n := testing.AllocsPerRun(100, func() { p.give(p.take(), true) }); n != 0 {
		t.Errorf("take and give allocate %.0f times", n)
	}
}
