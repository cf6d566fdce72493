package engine

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"testing"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider/scripted"
	"github.com/ocbench/ocbench/transcript"
)

// TestRunSetupAllocationsDoNotGrow runs 1,000 one-turn runs with the full
// setup (sample workspace, built-in tools, a new session file each, a
// shared cached renderer) in one process and fails if the allocations per
// run at the end exceed those at the start: nothing may accumulate per
// run.
func TestRunSetupAllocationsDoNotGrow(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	if testing.Short() {
		t.Skip("1,000 runs")
	}
	p, _ := sampleRun(t, false)
	dir := t.TempDir()
	i := 0
	run := func() {
		i++
		p.SessionFile = filepath.Join(dir, "run"+strconv.Itoa(i)+".jsonl")
		if _, err := Run(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	allocsDoNotGrow(t, run, 20, 50)
}

// allocsDoNotGrow warms run up, counts its allocations per call over
// measured calls, makes 1,000 calls more, counts again, and fails if the
// second count exceeds the first by more than 2.
func allocsDoNotGrow(t *testing.T, run func(), warm, measured int) {
	t.Helper()
	for range warm {
		run()
	}
	first := testing.AllocsPerRun(measured, run)
	for range 1000 {
		run()
	}
	last := testing.AllocsPerRun(measured, run)
	t.Logf("allocations per run: %.1f after %d runs, %.1f after 1,000 more", first, warm+measured+1, last)
	if last > first+2 {
		t.Fatalf("allocations per run grew from %.1f to %.1f over 1,000 runs", first, last)
	}
}

// TestRunSetupCostIndependentOfSessionCount: opening a session must not
// cost in proportion to the number of sessions beside it (a directory
// listing per open did). Runs also under -race, with a tolerance for the
// race detector's noise: the listing cost about 2 allocations per file.
func TestRunSetupCostIndependentOfSessionCount(t *testing.T) {
	dir := t.TempDir()
	prov := scripted.MustNew(scripted.Options{Script: &scripted.Script{Turns: []scripted.Turn{{Steps: []scripted.Step{scripted.Text("hello")}}}}})
	p := Params{Prompt: "hi", Model: llm.Model{ID: "scripted-1", API: "openai-completions", Provider: "scripted"},
		StreamFunc: prov.StreamFunc(), SystemPrompt: "s", Session: SessionOptions{Durability: transcript.SyncNone}}
	i := 0
	run := func() {
		i++
		p.SessionFile = filepath.Join(dir, "run"+strconv.Itoa(i)+".jsonl")
		if _, err := Run(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	for range 5 {
		run()
	}
	few := testing.AllocsPerRun(20, run)
	for j := range 2000 {
		if err := os.WriteFile(filepath.Join(dir, "other"+strconv.Itoa(j)+".jsonl"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	many := testing.AllocsPerRun(20, run)
	t.Logf("allocations per run: %.0f beside ~30 sessions, %.0f beside ~2,030", few, many)
	if many > few*1.25+20 {
		t.Fatalf("a run beside 2,000 other sessions allocates %.0f, beside 30 %.0f", many, few)
	}
}

// TestLiveSessionRunAllocationsDoNotGrow is TestRunSetupAllocationsDoNotGrow
// for what /v1/runs does: 1,000 runs of 16 live sessions of a DirStore in
// turn (each grows by 2 messages a run, to about 165), with the sample
// workspace's prompt and the built-in tools. The allocations per run at the
// end may not exceed those at the start: nothing accumulates per run, and
// nothing a run allocates grows with its session.
func TestLiveSessionRunAllocationsDoNotGrow(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	if testing.Short() {
		t.Skip("1,000 runs")
	}
	p, _ := sampleRun(t, true)
	run := liveRuns(t, &p, 16)
	allocsDoNotGrow(t, func() { run() }, 32, 48)
}

// liveRuns returns a function that runs p on the next of the live
// sessions "live0" ... "live<sessions-1>" in turn and returns the run's
// result, failing the test on an error.
func liveRuns(tb testing.TB, p *Params, sessions int) func() Result {
	i := 0
	return func() Result {
		i++
		p.SessionID = "live" + strconv.Itoa(i%sessions)
		res, err := Run(context.Background(), *p)
		if err != nil {
			tb.Fatal(err)
		}
		return res
	}
}

// TestRunCostFlatInHistory: a warm run of a live session (what /v1/runs
// makes) costs as many allocations, and allocates as many bytes, whether
// the session holds 12 messages or 1,000: what the run prepares and
// estimates of its history is extended from the last run's, not worked
// out again from the start (transcript.Preparer, livePrep). A run that
// walked the history allocated 1.3 more times and 800 more bytes per
// message.
func TestRunCostFlatInHistory(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	if testing.Short() {
		t.Skip("sessions of 1,000 messages")
	}
	measure := func(n int) (allocs, bytes float64) {
		p, st := sampleRun(t, true)
		const sessions = 4
		seedSessions(t, st, sessions, n)
		next := liveRuns(t, &p, sessions)
		run := func() { next() }
		for range 2 * sessions {
			run()
		}
		// The median run: a slice that grows by appends (the session's
		// entries, its context) is copied once in many runs, by one of
		// them.
		var as, bs []float64
		var m0, m1 runtime.MemStats
		for range 41 {
			runtime.ReadMemStats(&m0)
			run()
			runtime.ReadMemStats(&m1)
			as, bs = append(as, float64(m1.Mallocs-m0.Mallocs)), append(bs, float64(m1.TotalAlloc-m0.TotalAlloc))
		}
		slices.Sort(as)
		slices.Sort(bs)
		return as[20], bs[20]
	}
	a12, b12 := measure(12)
	a1000, b1000 := measure(1000)
	t.Logf("per run: %.1f allocations, %.0f bytes at 12 messages; %.1f, %.0f at 1,000", a12, b12, a1000, b1000)
	if a1000 > a12+3 || b1000 > b12+8<<10 {
		t.Fatalf("a run of a 1,000-message session costs %.1f allocations and %.0f bytes, one of 12 messages %.1f and %.0f: the run works through its history", a1000, b1000, a12, b12)
	}
}
