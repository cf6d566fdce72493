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

// A step whose p99 misses the bar once (a burst of other work on the
// machine, here the server's first 12 answers taking 80 ms) is run again
// instead of ending the search; a step whose requests fail is not retried.
func TestFindMaxRetriesASlowStep(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		switch k := n.Add(1); {
		case k <= 12:
			time.Sleep(80 * time.Millisecond)
		case k > 400:
			http.Error(w, "full", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {}\n\n")
	}))
	defer srv.Close()
	cfg := loadtest.Config{Target: srv.URL, Body: []byte(`{}`), Rate: 40, Duration: 500 * time.Millisecond, Connections: 16}
	var log strings.Builder
	rep, err := findMaxRate(context.Background(), cfg, &log)
	if err != nil || rep == nil {
		t.Fatalf("the slow first step ended the search: %v\n%s", err, log.String())
	}
	if rep.SuccessRate != 1 || rep.Rate < 40 {
		t.Errorf("held %.0f/s, success %.2f\n%s", rep.Rate, rep.SuccessRate, log.String())
	}
	t.Logf("held %.0f/s\n%s", rep.Rate, log.String())
}
