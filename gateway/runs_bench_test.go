package gateway

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider/scripted"
	"github.com/ocbench/ocbench/transcript"
)

// BenchmarkRunLiveSession is one POST /v1/runs continuing one of 256 live
// sessions in turn, as `ocbench loadtest --route runs --sessions 256`
// sends them: the handler, the engine's run and its transcript, with
// allocations per run (what the collector has to mark and sweep).
func BenchmarkRunLiveSession(b *testing.B) {
	runs := scriptedRuns(b, true, transcript.SyncNone)
	srv, err := New(Config{Runs: runs})
	if err != nil {
		b.Fatal(err)
	}
	h := srv.Handler()
	const sessions = 256
	var bodies [sessions]string
	for i := range bodies {
		bodies[i] = `{"session":"s` + strconv.Itoa(i) + `","message":"read AGENTS.md"}`
	}
	i := 0
	run := func() {
		req := httptest.NewRequest("POST", "/v1/runs", strings.NewReader(bodies[i%sessions]))
		i++
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "event: result") {
			b.Fatalf("run %d: %d %.300s", i, rec.Code, rec.Body.String())
		}
	}
	// Every session once, then a few rounds: the sessions are live and
	// their transcripts a few turns long, as in a load test's steady state.
	for range 2 * sessions {
		run()
	}
	b.ReportAllocs()
	for b.Loop() {
		run()
	}
}

// scriptedRuns returns the runs of OpenClaw's agent on the scripted
// provider, in a temporary workspace that holds an AGENTS.md, with
// temporary sessions, closed when tb ends.
func scriptedRuns(tb testing.TB, buffered bool, sync transcript.Durability) *EngineRuns {
	tb.Helper()
	ws := tb.TempDir()
	os.WriteFile(filepath.Join(ws, "AGENTS.md"), []byte("# Agents\nBe brief.\n"), 0o644)
	p, err := scripted.New(scripted.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	runs := &EngineRuns{SessionsDir: tb.TempDir(), Workspace: ws, StreamBuffered: buffered, Durability: sync,
		Model: llm.Model{ID: "scripted-1", API: "openai-completions", Provider: "scripted"}, StreamFunc: p.Stream}
	tb.Cleanup(func() { runs.Close() })
	return runs
}
