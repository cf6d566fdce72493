package main

import (
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ocbench/ocbench/loadtest"
)

// failingAfter answers SSE until it has served n requests, then 503.
func failingAfter(n int64) *httptest.Server {
	var served atomic.Int64
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if served.Add(1) > n {
			http.Error(w, "full", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {}\n\n")
	}))
}

// The two searches of --vs take turns step by step, each keeps its own
// bounds, and each ends with its own best step: the target that fails
// sooner holds the lower rate.
func TestFindMaxPairAlternates(t *testing.T) {
	a, b := failingAfter(60), failingAfter(400)
	defer a.Close()
	defer b.Close()
	cfg := loadtest.Config{Body: []byte(`{}`), Rate: 40, Duration: 300 * time.Millisecond, Connections: 16}
	ca, cb := cfg, cfg
	ca.Target, cb.Target = a.URL, b.URL
	var log strings.Builder
	ra, rb, err := findMaxPair(context.Background(), ca, cb, "a", "b", &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if ra.Rate >= rb.Rate || ra.SuccessRate != 1 || rb.SuccessRate != 1 {
		t.Errorf("held a %.0f/s, b %.0f/s: the target failing sooner should hold less\n%s", ra.Rate, rb.Rate, log.String())
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) < 4 || !strings.HasPrefix(lines[0], "a rate") || !strings.HasPrefix(lines[1], "b rate") {
		t.Errorf("the steps did not alternate, a first:\n%s", log.String())
	}
	var out strings.Builder
	if err := writePairTable(&out, ra, rb, "a", "b"); err != nil || !strings.Contains(out.String(), "ratio             a/b ") {
		t.Errorf("table: %v\n%s", err, out.String())
	}
	t.Logf("a %.0f/s, b %.0f/s\n%s", ra.Rate, rb.Rate, log.String())
}

// The CPU line of a --vs direct pair: the proxy's own CPU per request is
// the route's gateway process minus the scripted upstream alone, and the
// ratio is of the two routes' CPU per request with the load generator's.
func TestPairCPU(t *testing.T) {
	chat := &loadtest.Report{Rate: 12800, GatewayCPUUsPerReq: 75, LoadgenCPUUsPerReq: 56}
	direct := &loadtest.Report{Rate: 19200, GatewayCPUUsPerReq: 41, LoadgenCPUUsPerReq: 56}
	c, ok := pairCPU(chat, direct, "direct")
	if !ok || c.Own != 34 || math.Abs(c.Ratio-97.0/131) > 1e-9 {
		t.Errorf("pairCPU = %+v, %v; want own 34, ratio 97/131", c, ok)
	}
	var out strings.Builder
	if err := writePairTable(&out, chat, direct, "chat", "direct"); err != nil ||
		!strings.Contains(out.String(), "the proxy's own 34µs; with the load generator's, chat/direct 0.74") {
		t.Errorf("table: %v\n%s", err, out.String())
	}
	out.Reset()
	if err := writePairJSON(&out, chat, direct, "chat", "direct"); err != nil || !strings.Contains(out.String(), `"ownUs": 34`) {
		t.Errorf("JSON: %v\n%s", err, out.String())
	}
	// Another pair than --vs direct, or a step without CPU figures: the
	// difference would not be the proxy's, and nothing is printed.
	if _, ok := pairCPU(chat, direct, "messages"); ok {
		t.Error("a --vs messages pair got a proxy CPU figure")
	}
	if _, ok := pairCPU(chat, &loadtest.Report{Rate: 1}, "direct"); ok {
		t.Error("a step without CPU figures got a proxy CPU figure")
	}
	out.Reset()
	writePairTable(&out, chat, direct, "chat", "messages")
	if strings.Contains(out.String(), "proxy's own") {
		t.Errorf("--vs messages printed a proxy CPU line:\n%s", out.String())
	}
}
