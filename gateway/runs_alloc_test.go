package gateway

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/transcript"
)

// TestRunsAllocationsDoNotGrow serves 1,000 runs of /v1/runs (each a fresh
// session, as the loadtest sends them) in one process and fails if the
// allocations per run at the end exceed those at the start: nothing the
// gateway keeps (idle session handles, pooled writers, metrics) may grow
// with the runs it has served.
func TestRunsAllocationsDoNotGrow(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	runs := scriptedRuns(t, true, transcript.SyncNone)
	srv, err := New(Config{Runs: runs})
	if err != nil {
		t.Fatal(err)
	}
	h := srv.Handler()
	i := 0
	run := func() {
		i++
		req := httptest.NewRequest("POST", "/v1/runs", strings.NewReader(`{"session":"r`+strconv.Itoa(i)+`","message":"read AGENTS.md"}`))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "event: result") || strings.Contains(rec.Body.String(), `"error":"`) {
			t.Fatalf("run %d: %d %.300s", i, rec.Code, rec.Body.String())
		}
	}
	for range 20 {
		run()
	}
	first := testing.AllocsPerRun(50, run)
	for range 1000 {
		run()
	}
	last := testing.AllocsPerRun(50, run)
	t.Logf("allocations per run: %.0f after 20 runs, %.0f after 1,070", first, last)
	if last > first+2 {
		t.Fatalf("allocations per run grew from %.0f to %.0f over 1,000 runs", first, last)
	}
}
