package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/ocbench/ocbench/bench"
	"github.com/ocbench/ocbench/bench/peerdata"
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
		{PeerPackage: peerdata.PeerPackage{Dir: "a"}, Selected: make([]peerdata.PeerBench, 3), StaleBytes: 500e3}, // 2 s + 10 s
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

// TestBenchNodePeerSkipped: without the Node peer installed, bench still
// succeeds, and a note says how to enable the openclaw-node row.
func TestBenchNodePeerSkipped(t *testing.T) {
	t.Setenv(bench.NodePeerEnv, t.TempDir())
	var out, errb bytes.Buffer
	if code := run([]string{"bench", "--filter", `^decode\+chain/anthropic$`, "--duration", "5ms"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var note string
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(l, "note: "+bench.ImplOpenClawNode+" not run") {
			note = l
		}
	}
	if note == "" || !strings.Contains(note, "peers/node/setup.sh") || !strings.Contains(note, "--node-peer") {
		t.Errorf("no note on how to enable the Node peer:\n%s", out.String())
	}
	if strings.Contains(out.String(), bench.ImplOpenClawNode+"  ") {
		t.Errorf("a Node row without Node:\n%s", out.String())
	}
}

// TestBenchTrackerGuessCoversPeers: from the first draw, before the peers'
// plan (a go list) is known, the estimate covers their cold builds, their
// benchmarks and the Node peer, and the plan then replaces the guess.
func TestBenchTrackerGuessCoversPeers(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // no kept binaries
	o := bench.Options{Duration: 100 * time.Millisecond, Count: 1}
	tr := newBenchTracker(progress.New(&bytes.Buffer{}), 2, o, true)
	pkgs := []peerdata.PeerPackage{
		{Dir: "a", ColdBuild: 20 * time.Second, Benchmarks: []peerdata.PeerBench{{Stage: "decode", Input: "x", Impl: "p"}, {Stage: "decode", Input: "y", Impl: "p"}}},
		{Dir: "b", ColdBuild: 5 * time.Second, Benchmarks: []peerdata.PeerBench{{Stage: "repair", Input: "z", Impl: "q"}}},
		{Dir: "heavy", ColdBuild: 100 * time.Second, Heavy: "sdk", Benchmarks: []peerdata.PeerBench{{Stage: "decode", Input: "x", Impl: "h"}}},
	}
	tr.guess(pkgs, nil)
	tr.node(3, false)
	tr.start()
	defer tr.stop()
	now := time.Now()
	tr.mu.Lock()
	first := tr.left(now)
	tr.mu.Unlock()
	// 25 s of builds (the heavy SDK is not built by default), 3 peer
	// benchmarks of 130 ms, Node's start and 3 streams.
	want := 25*time.Second + 3*130*time.Millisecond + nodeStartup + 3*nodePerCase
	if first < want-time.Second || first > want+time.Second {
		t.Errorf("first estimate %v, want about %v", first, want)
	}
	tr.planned(&bench.PeerRunner{Peers: []bench.PlannedPeer{
		{PeerPackage: pkgs[1], Selected: pkgs[1].Benchmarks, Cached: true},
	}})
	tr.mu.Lock()
	planned := tr.left(now)
	tr.mu.Unlock()
	if want := 130*time.Millisecond + nodeStartup + 3*nodePerCase; planned < want-time.Second || planned > want+time.Second {
		t.Errorf("after the plan (one kept binary, one benchmark) %v, want about %v", planned, want)
	}
}

// TestBenchPrintsResultsAsMeasured: each figure is on stderr as soon as it
// is measured (as go test -bench prints its lines), not only in the final
// table.
func TestBenchPrintsResultsAsMeasured(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"bench", "--filter", `^decode/anthropic$`, "--peers", "none", "--duration", "5ms"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	found := false
	for _, l := range strings.Split(errb.String(), "\n") {
		f := strings.Fields(l)
		if len(f) >= 4 && f[0] == "decode/anthropic" && f[1] == "ocbench" && strings.HasSuffix(f[2], "/op") && strings.Contains(l, "MB/s") {
			found = true
		}
	}
	if !found {
		t.Errorf("no result line on stderr:\n%s", errb.String())
	}
}
