package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"runtime/pprof"
	"strings"
	"sync"
	"time"

	"github.com/ocbench/ocbench/bench"
	"github.com/ocbench/ocbench/bench/peerdata"
	"github.com/ocbench/ocbench/internal/progress"
)

func init() {
	register("bench", "measure every stage against its peers (the main job)", runBench)
}

func runBench(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	filter := fs.String("filter", "", "run only scenarios (ours and the peers') whose name matches this regular expression")
	count := fs.Int("count", 1, "run each scenario this many times (medians are reported)")
	dur := fs.Duration("duration", 100*time.Millisecond, "measuring time per scenario, like -benchtime")
	all := fs.Bool("all", false, "measure every scenario: all repair quirks, not only "+strings.Join(bench.DefaultRepairQuirks, ", ")+" (a --filter also selects from all)")
	jsonOut := fs.Bool("json", false, "print the report as JSON instead of a table")
	benchfmt := fs.String("benchfmt", "", "write Go benchmark lines for benchstat to this file (- for stdout)")
	htmlOut := fs.String("html", "", "write a self-contained HTML report to this file (- for stdout)")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the run to this file")
	memprofile := fs.String("memprofile", "", "write a heap profile at the end of the run to this file")
	peers := fs.String("peers", "auto", "which peers to build and run: auto (all but the SDKs whose root package is not compiled yet), all, or none")
	nodePeer := fs.Bool("node-peer", false, "install the Node peer (Node 24 and openclaw@2026.9.6 with peers/node/setup.sh, into $"+bench.NodePeerEnv+" or the user cache) if it is missing, and run it; once installed it runs by default")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if extraArgs(fs, stderr) {
		return 2
	}
	var re *regexp.Regexp
	if *filter != "" {
		var err error
		if re, err = regexp.Compile(*filter); err != nil {
			fmt.Fprintf(stderr, "ocbench bench: --filter: %v\n", err)
			return 2
		}
	}
	if *count < 1 || *dur <= 0 {
		fmt.Fprintln(stderr, "ocbench bench: --count must be at least 1 and --duration positive")
		return 2
	}
	if *peers != "auto" && *peers != "all" && *peers != "none" {
		fmt.Fprintf(stderr, "ocbench bench: --peers must be auto, all or none, not %q\n", *peers)
		return 2
	}
	// Every output is opened before any measuring: a bad path fails now,
	// not after minutes with the results lost.
	outs := &outputs{stdout: stdout}
	defer outs.closeAll()
	if *jsonOut {
		outs.claimStdout("--json")
	}
	benchW := outs.open("--benchfmt", *benchfmt)
	htmlW := outs.open("--html", *htmlOut)
	cpuW := outs.open("--cpuprofile", *cpuprofile)
	memW := outs.open("--memprofile", *memprofile)
	if outs.err != nil {
		fmt.Fprintf(stderr, "ocbench bench: %v\n", outs.err)
		return 2
	}

	scs, err := bench.Scenarios()
	if err != nil {
		fmt.Fprintf(stderr, "ocbench bench: %v\n", err)
		return 1
	}
	// A default run measures a subset; --all or a --filter the full set.
	if re == nil && !*all {
		re = bench.DefaultSelection(scs)
	}
	scs = bench.Filter(scs, re)
	opts := bench.Options{Duration: *dur, Count: *count}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	// The peers: the Go peer packages of the peers module and the Node
	// peer (OpenClaw's own chain), each narrowed by the filter.
	npeer := 0
	var nodeStreams []peerdata.WireStream
	var notes []string
	peersDir, peersErr := "", error(nil)
	if *peers != "none" {
		peersDir, peersErr = bench.FindPeersDir(".")
		if peersErr != nil {
			notes = append(notes, "peers not measured: "+peersErr.Error())
		} else {
			for _, p := range peerdata.PeerPackagesIn(peersDir) {
				npeer += len(p.Select(re))
			}
			nodeStreams = bench.NodeBenches(re)
		}
	}
	if len(scs) == 0 && npeer == 0 {
		fmt.Fprintf(stderr, "ocbench bench: --filter %q matches no scenario\n", *filter)
		return 1
	}

	if cpuW != nil {
		if err := pprof.StartCPUProfile(cpuW); err != nil {
			fmt.Fprintf(stderr, "ocbench bench: %v\n", err)
			return 2
		}
		defer pprof.StopCPUProfile()
	}

	tr := newBenchTracker(progress.New(stderr), len(scs)*opts.Count, opts, npeer > 0)
	if npeer > 0 {
		tr.guess(peerdata.PeerPackagesIn(peersDir), re)
	}
	started := time.Now()
	opts.Progress = tr.ours
	opts.Measured = tr.result
	// The Node peer: installed on request (in the background, while our
	// own scenarios run), run when installed, else a note says how.
	var np *bench.NodePeer
	var nodeNote string
	nodeReady := make(chan struct{})
	if len(nodeStreams) > 0 {
		nodeDir := bench.NodePeerDir()
		_, missing := bench.FindNodePeer(peersDir, nodeDir)
		install := missing != nil && *nodePeer
		if missing == nil || install {
			tr.node(len(nodeStreams), install)
		}
		go func() {
			defer close(nodeReady)
			if install {
				if err := bench.NodeSetup(ctx, peersDir, nodeDir, lineWriter{tr.line}); err != nil {
					tr.nodeInstalled()
					nodeNote = bench.ImplOpenClawNode + " not run: " + err.Error()
					return
				}
				tr.nodeInstalled()
			}
			var err error
			if np, err = bench.FindNodePeer(peersDir, nodeDir); err != nil {
				nodeNote = bench.ImplOpenClawNode + " not run: " + err.Error()
			}
		}()
	} else {
		close(nodeReady)
	}
	tr.start()
	// The peers are planned (which of their packages the build cache
	// lacks) and built in the background while our own scenarios run.
	var pr *bench.PeerRunner
	planned := make(chan error, 1)
	if npeer > 0 {
		go func() {
			p, err := bench.PlanPeers(ctx, peersDir, re, *peers == "all", opts)
			if err == nil {
				pr = p
				pr.Log = stderr
				pr.Built = tr.built
				pr.Measured = tr.measured
				pr.Ran = tr.ran
				tr.planned(pr)
				pr.Build(ctx)
				planned <- nil
				return
			}
			planned <- err
		}()
	} else {
		planned <- nil
	}
	results := bench.Run(ctx, scs, opts)
	tr.oursDone()
	if err := <-planned; err != nil {
		notes = append(notes, "peers not measured: "+err.Error())
		tr.planFailed()
		pr = nil
	}
	if pr != nil && ctx.Err() == nil {
		notes = append(notes, pr.Skipped...)
		pr.Widen()
		peerRes, err := pr.Run(ctx)
		results = append(results, peerRes...)
		if err != nil && ctx.Err() == nil {
			notes = append(notes, "peers: "+err.Error())
		}
	}
	// The Node peer last, after the other peers: its run alternates Node's
	// batches with our own chain's on the same bytes (the paired rows).
	select {
	case <-nodeReady:
	case <-ctx.Done():
	}
	if nodeNote != "" {
		notes = append(notes, nodeNote)
	}
	if np != nil && ctx.Err() == nil {
		tr.nodeStarting()
		nodeRes, err := np.Run(ctx, nodeStreams, opts, lineWriter{tr.line}, tr.measured)
		results = append(results, nodeRes...)
		if err != nil && ctx.Err() == nil {
			notes = append(notes, "peers: "+err.Error())
		}
	}
	tr.stop()
	// Every background job, the progress line included, has ended: a
	// scenario charged allocations that the peer planner made on another
	// goroutine is counted again alone.
	bench.Recount(ctx, scs, results)
	rep := bench.NewReport(results, opts, started)
	rep.Notes = append(rep.Notes, notes...)

	if memW != nil {
		if err := pprof.WriteHeapProfile(memW); err != nil {
			fmt.Fprintf(stderr, "ocbench bench: --memprofile: %v\n", err)
		}
	}
	if benchW != nil {
		if err := rep.WriteBenchfmt(benchW); err != nil {
			fmt.Fprintf(stderr, "ocbench bench: --benchfmt: %v\n", err)
			return 1
		}
	}
	if htmlW != nil {
		if err := rep.WriteHTML(htmlW); err != nil {
			fmt.Fprintf(stderr, "ocbench bench: --html: %v\n", err)
			return 1
		}
	}
	switch {
	case *jsonOut:
		err = rep.WriteJSON(stdout)
	case !outs.stdoutTaken():
		err = rep.WriteTable(stdout)
		for _, n := range rep.Notes {
			fmt.Fprintln(stdout, "note:", n)
		}
	default:
		for _, n := range rep.Notes {
			fmt.Fprintln(stderr, "note:", n)
		}
	}
	if err == nil {
		err = outs.closeAll()
	}
	if err != nil {
		fmt.Fprintf(stderr, "ocbench bench: %v\n", err)
		return 1
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		return 130
	}
	for _, s := range rep.Summaries {
		if s.Err != "" {
			return 1
		}
	}
	return 0
}

// benchTracker keeps the one status line of a bench run: ocbench's own
// scenarios and, at the same time, the peers' builds, then the peers'
// benchmarks. The time left is the larger of what our scenarios and the
// builds still need, plus the peers' benchmarks, each first estimated
// from the measuring time and the stale source bytes, then corrected by
// how fast the finished items actually went.
type benchTracker struct {
	line  *progress.Line
	opts  bench.Options
	peers bool              // peers are part of the run
	pr    *bench.PeerRunner // set once the peers are planned

	mu         sync.Mutex
	t0         time.Time
	oursTotal  int
	oursDone_  int
	oursName   string
	oursStart  time.Time
	oursOver   bool
	buildLeft  []time.Duration // expected build time of each package not yet built
	buildStart time.Time
	buildRatio float64 // actual/expected of finished builds
	built_     int
	peerTotal  int
	peerDone   int
	peerName   string
	peerFirst  time.Time // when the first and the last peer result came
	peerLast   time.Time
	// The Node peer: cases to run, done, and whether it is being
	// installed (with when the install started).
	nodeTotal   int
	nodeDone    int
	installing  bool
	installFrom time.Time
	nodeFrom    time.Time // when Node was started
	ticker      *time.Ticker
	quit        chan struct{}
}

func newBenchTracker(line *progress.Line, oursTotal int, o bench.Options, peers bool) *benchTracker {
	return &benchTracker{line: line, opts: o, peers: peers, oursTotal: oursTotal, buildRatio: 1, quit: make(chan struct{})}
}

// First estimates of the Node peer: starting Node and loading OpenClaw,
// and each stream's warm-up and timed repetitions; installing it (npm).
const (
	nodeStartup = 8 * time.Second
	nodePerCase = 1200 * time.Millisecond
	nodeInstall = 60 * time.Second
)

// guess takes the first estimate of the peers before their plan is known
// (which takes a go list of the build cache): every package the filter
// selects, its cold build time unless its test binary is kept from an
// earlier run; the SDKs that need --peers all are left out unless kept.
func (t *benchTracker) guess(pkgs []peerdata.PeerPackage, re *regexp.Regexp) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, p := range pkgs {
		sel := p.Select(re)
		if len(sel) == 0 {
			continue
		}
		kept := bench.KeptPeerBinary(p.Dir)
		if p.Heavy != "" && !kept {
			continue
		}
		if !kept {
			t.buildLeft = append(t.buildLeft, p.ColdBuild)
		} else {
			t.buildLeft = append(t.buildLeft, 0)
		}
		t.peerTotal += len(sel) * t.opts.Count
	}
}

// node counts the Node peer's cases in; installing: it is being installed.
func (t *benchTracker) node(cases int, installing bool) {
	t.mu.Lock()
	t.nodeTotal = cases
	t.installing = installing
	t.installFrom = time.Now()
	t.mu.Unlock()
}

// nodeStarting: Node is being started on the peer's streams.
func (t *benchTracker) nodeStarting() {
	t.mu.Lock()
	t.nodeFrom = time.Now()
	t.mu.Unlock()
}

// nodeInstalled: the Node peer's install is over (done or failed).
func (t *benchTracker) nodeInstalled() {
	t.mu.Lock()
	t.installing = false
	t.mu.Unlock()
	t.draw()
}

// planFailed: the Go peers will not run.
func (t *benchTracker) planFailed() {
	t.mu.Lock()
	t.buildLeft, t.peerTotal, t.peers = nil, 0, false
	t.mu.Unlock()
}

// planned takes the peers' plan: what is built, with first estimates; it
// replaces the guess.
func (t *benchTracker) planned(pr *bench.PeerRunner) {
	t.mu.Lock()
	t.pr = pr
	t.buildLeft, t.peerTotal = nil, 0
	for _, p := range pr.Peers {
		t.buildLeft = append(t.buildLeft, p.ExpectedBuild())
		t.peerTotal += len(p.Selected) * t.opts.Count
	}
	t.buildStart = time.Now()
	t.mu.Unlock()
	t.draw()
}

// perScenario is the first estimate of one measurement: the measuring
// time plus warm-up, setup and, for the peers, testing's calibration runs.
func (t *benchTracker) perScenario() time.Duration { return t.opts.Duration * 13 / 10 }

func (t *benchTracker) start() {
	t.mu.Lock()
	t.t0 = time.Now()
	t.oursStart = t.t0
	t.buildStart = t.t0
	t.mu.Unlock()
	t.ticker = time.NewTicker(500 * time.Millisecond)
	go func() {
		for {
			select {
			case <-t.ticker.C:
				t.draw()
			case <-t.quit:
				return
			}
		}
	}()
	t.draw()
}

func (t *benchTracker) stop() {
	if t.ticker != nil {
		t.ticker.Stop()
		close(t.quit)
	}
	t.line.Done()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.line.Println("done in %s: %d ocbench measurements, %d peer measurements", progress.Dur(time.Since(t.t0)), t.oursDone_, t.peerDone+t.nodeDone)
}

// lineWriter prints what is written to it as lines above the status line.
type lineWriter struct{ l *progress.Line }

func (w lineWriter) Write(p []byte) (int, error) {
	for _, s := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		w.l.Println("%s", s)
	}
	return len(p), nil
}

func (t *benchTracker) ours(done, _ int, name string) {
	t.mu.Lock()
	t.oursDone_, t.oursName = done, name
	t.mu.Unlock()
	t.draw()
}

func (t *benchTracker) oursDone() {
	t.mu.Lock()
	t.oursOver = true
	t.mu.Unlock()
	t.draw()
}

func (t *benchTracker) built(p bench.PlannedPeer, took time.Duration, err error) {
	t.mu.Lock()
	exp := p.ExpectedBuild()
	if len(t.buildLeft) > 0 {
		t.buildLeft = t.buildLeft[1:]
	}
	if exp > 0 {
		r := float64(took) / float64(exp)
		t.buildRatio = (t.buildRatio*float64(t.built_) + r) / float64(t.built_+1)
	}
	t.built_++
	t.buildStart = time.Now()
	t.mu.Unlock()
	switch {
	case err != nil:
		t.line.Println("peers: %s: build failed", p.Dir)
	case p.Cached:
		t.line.Println("peers: peers/%s reused (test binary kept from an earlier run)", p.Dir)
	default:
		t.line.Println("peers: built peers/%s in %s", p.Dir, progress.Dur(took))
	}
	t.draw()
}

// result prints one measured result above the status line, as go test
// -bench prints each benchmark: the figures come as they are measured.
func (t *benchTracker) result(r bench.Result) {
	t.line.Println("%s", bench.ResultLine(r))
}

// ran: a peer package is done; benchmarks it did not give (skipped by
// the peer, or a failed build or test) are no longer waited for.
func (t *benchTracker) ran(p bench.PlannedPeer, results int) {
	t.mu.Lock()
	if miss := len(p.Selected)*t.opts.Count - results; miss > 0 {
		t.peerTotal -= miss
	}
	t.mu.Unlock()
	t.draw()
}

func (t *benchTracker) measured(r bench.Result) {
	t.result(r)
	t.mu.Lock()
	if r.Impl == bench.ImplOpenClawNode {
		t.nodeDone++
	} else {
		t.peerDone++
		t.peerLast = time.Now()
		if t.peerDone == 1 {
			t.peerFirst = t.peerLast
		}
	}
	t.peerName = r.Name + " " + r.Impl
	t.mu.Unlock()
	t.draw()
}

// left estimates the time still needed (called with t.mu held).
func (t *benchTracker) left(now time.Time) time.Duration {
	per := t.perScenario()
	oursLeft := time.Duration(0)
	if !t.oursOver && t.oursTotal > 0 {
		// Correct the estimate by the pace so far.
		rem := time.Duration(t.oursTotal-t.oursDone_) * per
		if t.oursDone_ > 0 {
			pace := now.Sub(t.oursStart) / time.Duration(t.oursDone_)
			rem = time.Duration(t.oursTotal-t.oursDone_) * pace
		}
		oursLeft = rem
	}
	var buildLeft time.Duration
	for i, e := range t.buildLeft {
		e = time.Duration(float64(e) * t.buildRatio)
		if i == 0 {
			// The package being built: what is left of its estimate; once
			// it overruns, a quarter of the time it has taken so far (it
			// is taken to be at most four fifths done), so the estimate
			// grows instead of standing still.
			el := now.Sub(t.buildStart)
			e = max(e-el, el/4)
		}
		buildLeft += e
	}
	// The peers' benchmarks: corrected by their pace once two are in
	// (testing's calibration runs make them longer than our own).
	peerPer := per
	if t.peerDone >= 2 {
		peerPer = t.peerLast.Sub(t.peerFirst) / time.Duration(t.peerDone-1)
	}
	peersLeft := time.Duration(max(t.peerTotal-t.peerDone, 0)) * peerPer
	var installLeft, nodeLeft time.Duration
	if t.installing {
		el := now.Sub(t.installFrom)
		installLeft = max(nodeInstall-el, el/4)
	}
	if t.nodeTotal > 0 {
		if t.nodeDone == 0 {
			// Loading OpenClaw's bundle; once that overruns the estimate,
			// a quarter of the time it has taken so far.
			nodeLeft = nodeStartup
			if !t.nodeFrom.IsZero() {
				el := now.Sub(t.nodeFrom)
				nodeLeft = max(nodeStartup-el, el/4)
			}
		}
		nodeLeft += time.Duration(t.nodeTotal-t.nodeDone) * max(nodePerCase, t.opts.Duration*time.Duration(t.opts.Count)+nodePerCase/2)
	}
	return max(oursLeft, buildLeft, installLeft) + peersLeft + nodeLeft
}

func (t *benchTracker) draw() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.t0.IsZero() {
		return
	}
	now := time.Now()
	el := now.Sub(t.t0)
	left := t.left(now)
	frac := float64(el) / float64(el+left)
	var b strings.Builder
	fmt.Fprintf(&b, "%s %3.0f%% %s, ~%s left", progress.Bar(frac, 20), frac*100, progress.Dur(el), progress.Dur(left))
	if !t.oursOver && t.oursTotal > 0 {
		fmt.Fprintf(&b, " | ocbench %d/%d %s", min(t.oursDone_+1, t.oursTotal), t.oursTotal, t.oursName)
	}
	switch {
	case t.peers && t.pr == nil:
		b.WriteString(" | peers: checking the build cache")
	case t.pr != nil && len(t.pr.Peers) > 0:
		switch {
		case len(t.buildLeft) > 0:
			fmt.Fprintf(&b, " | peers: building %s (%d/%d built)", t.pr.Peers[t.built_].Dir, t.built_, len(t.pr.Peers))
		case t.oursOver && t.peerDone < t.peerTotal:
			fmt.Fprintf(&b, " | peers %d/%d %s", min(t.peerDone+1, t.peerTotal), t.peerTotal, t.peerName)
		case !t.oursOver:
			b.WriteString(" | peers built")
		}
	}
	switch {
	case t.installing:
		b.WriteString(" | installing the Node peer")
	case t.nodeTotal > 0 && t.oursOver && (t.pr == nil || t.peerDone >= t.peerTotal):
		fmt.Fprintf(&b, " | %s %d/%d", bench.ImplOpenClawNode, min(t.nodeDone+1, t.nodeTotal), t.nodeTotal)
	}
	t.line.Set("%s", b.String())
}
