package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/ocbench/ocbench/bench"
	"github.com/ocbench/ocbench/internal/progress"
)

// TestBenchTrackerETA: the first estimate covers our scenarios, the peers'
// builds (running meanwhile) and their benchmarks; it shrinks as work is
// done and grows when a build overruns its estimate.
func TestBenchTrackerETA(t *testing.T) {
	o := bench.Options{Duration: 100 * time.Millisecond, Count: 1}
	tr := newBenchTracker(progress.New(&bytes.Buffer{}), 10, o, true)
	tr.start()
	defer tr.stop()
	pr := &bench.PeerRunner{Peers: []bench.PlannedPeer{
		{PeerPackage: bench.PeerPackage{Dir: "a"}, Selected: make([]bench.PeerBench, 3), StaleBytes: 500e3}, // 2 s + 10 s
	}}
	tr.planned(pr)
	now := time.Now()
	tr.mu.Lock()
	first := tr.left(now)
	tr.mu.Unlock()
	// The build (12 s) outlasts our 10 scenarios (1.3 s); then 3 peer
	// benchmarks of 130 ms.
	if want := 12*time.Second + 3*130*time.Millisecond; first < want-time.Second || first > want+time.Second {
		t.Errorf("first estimate %v, want about %v", first, want)
	}
	tr.mu.Lock()
	later := tr.left(now.Add(6 * time.Second))
	over := tr.left(now.Add(60 * time.Second))
	tr.mu.Unlock()
	if later >= first {
		t.Errorf("estimate did not shrink: %v then %v", first, later)
	}
	if over < 14*time.Second {
		t.Errorf("a build running 60 s against a 12 s estimate leaves %v", over)
	}
	tr.built(pr.Peers[0], 12*time.Second, nil)
	tr.oursDone()
	tr.measured(bench.Result{Name: "x"})
	tr.mu.Lock()
	end := tr.left(time.Now())
	tr.mu.Unlock()
	if end != 2*130*time.Millisecond {
		t.Errorf("after the build and our scenarios, %v left for 2 peer benchmarks", end)
	}
}
