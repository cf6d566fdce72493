package main

import (
	"context"
	"io"
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
