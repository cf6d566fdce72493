package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ocbench/ocbench/bench/peerdata"
)

// The Node peer: OpenClaw 2026.9.6's own stream path (its @openclaw/ai
// transport and its stream wrappers, in process on Node) timed on the very
// bytes of ocbench's decode+chain scenarios. peers/node/setup.sh installs
// Node and openclaw into NodePeerDir; peers/node/chain.mjs builds and warms
// OpenClaw's chain, then times batches of repetitions on request. Nothing
// here is needed to build or test ocbench: without the install the peer is
// skipped with a note saying how to enable it.
//
// The comparison is paired: Node's batches and batches of ocbench's own
// decode+chain on the same stream alternate, round after round, so that
// both are measured in the same minutes of a machine whose speed drifts
// (a Node median measured after ours moved by a third within an hour).
// Each side's figure is the median time of one whole stream over all its
// timed repetitions; each batch starts with one untimed repetition on both
// sides. Both rows are reported under NodePeerStage, apart from ocbench's
// own decode+chain rows.

// ImplOpenClawNode is the Node peer's name in reports.
const ImplOpenClawNode = "openclaw-node"

// NodePeerStage is the stage of the paired comparison: ocbench's whole
// decode and decorator chain against OpenClaw's, measured interleaved.
const NodePeerStage = "decode+chain-paired"

// NodePeerEnv names the environment variable that overrides NodePeerDir.
const NodePeerEnv = "OCBENCH_NODE_DIR"

// nodeMinReps is the least number of rounds (each a Node batch of at
// least one timed repetition, then one of ocbench).
const nodeMinReps = 5

// ErrNodePeerMissing means the Node peer is not installed; its message
// says how to install it.
var ErrNodePeerMissing = errors.New("the Node peer (OpenClaw's own chain on Node) is not installed")

// NodePeerDir is where peers/node/setup.sh installs Node and openclaw:
// $OCBENCH_NODE_DIR, else the user cache directory's ocbench/node.
func NodePeerDir() string {
	if d := os.Getenv(NodePeerEnv); d != "" {
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "ocbench", "node")
}

// NodePeer runs peers/node/chain.mjs with the installed Node.
type NodePeer struct {
	Node   string // the Node binary
	Script string // peers/node/chain.mjs
	Dir    string // the install (OCBENCH_NODE_DIR for the script)
}

// NodeMissingError is ErrNodePeerMissing with what is missing and how to
// enable the peer.
type NodeMissingError struct{ Missing string }

func (e *NodeMissingError) Error() string {
	return fmt.Sprintf("%s (no %s): run peers/node/setup.sh once, or ocbench bench --node-peer, to install Node 24 and openclaw@2026.9.6 (about 200 MB, npm needed) and include it", ErrNodePeerMissing, e.Missing)
}

func (e *NodeMissingError) Unwrap() error { return ErrNodePeerMissing }

// FindNodePeer returns the Node peer of the peers module at peersDir
// installed in dir, or a *NodeMissingError.
func FindNodePeer(peersDir, dir string) (*NodePeer, error) {
	p := &NodePeer{
		Node:   filepath.Join(dir, "node", "package", "bin", "node"),
		Script: filepath.Join(peersDir, "node", "chain.mjs"),
		Dir:    dir,
	}
	if dir == "" {
		return nil, &NodeMissingError{Missing: "cache directory (set " + NodePeerEnv + ")"}
	}
	// ready is the last file setup.sh writes: a half-finished install
	// (node unpacked, OpenClaw's packages still arriving) is not a peer.
	for _, f := range []string{p.Script, p.Node, filepath.Join(dir, "ready")} {
		if _, err := os.Stat(f); err != nil {
			return nil, &NodeMissingError{Missing: f}
		}
	}
	return p, nil
}

// NodeBenches are the decode+chain inputs the Node peer runs under filter
// (nil: all): those whose paired name or ocbench's decode+chain scenario
// name it matches.
func NodeBenches(filter *regexp.Regexp) []peerdata.WireStream {
	var out []peerdata.WireStream
	for _, ws := range peerdata.WireStreams() {
		if filter == nil || filter.MatchString(NodePeerStage+"/"+ws.Name) || filter.MatchString("decode+chain/"+ws.Name) {
			out = append(out, ws)
		}
	}
	return out
}

// nodeLine is one line of chain.mjs's output: a case ready (its decoded
// message) or failed, or one batch's times.
type nodeLine struct {
	Name  string  `json:"name"`
	Ready bool    `json:"ready"`
	Times []int64 `json:"times"`
	Text  string  `json:"text"`
	Calls []struct {
		Name string `json:"name"`
	} `json:"calls"`
	StopReason   string `json:"stopReason"`
	ErrorMessage string `json:"errorMessage"`
	Error        string `json:"error"`
}

// pairedCase is one stream of a paired run and what each side measured.
type pairedCase struct {
	ws          peerdata.WireStream
	op          func() error
	node, ours  []time.Duration
	mallocs     uint64
	bytes       uint64
	nodeErr     string
	oursErr     string
	measuredOps int64
}

// Run measures OpenClaw's chain and ocbench's on each stream, paired (see
// NodePeerStage): 2·Count+1 rounds (at least nodeMinReps), each a Node
// batch of Duration/2 then an ocbench batch of Duration/2 per stream. It
// returns, per stream in order, ocbench's result and Node's (Node's alone
// when Node failed on it). A stream
// OpenClaw decoded differently from the generator (text or tool calls) is
// reported as failed, not timed: a peer that did other work is no
// comparison; ocbench's first run is checked the same way. Node's
// allocations are not measured (MemNotMeasured). measured, when set, is
// called per Node result.
func (p *NodePeer) Run(ctx context.Context, streams []peerdata.WireStream, o Options, log io.Writer, measured func(Result)) ([]Result, error) {
	o.setDefaults()
	if len(streams) == 0 {
		return nil, nil
	}
	tmp, err := os.MkdirTemp("", "ocbench-node-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	type jobCase struct {
		Name  string   `json:"name"`
		Wire  string   `json:"wire"`
		Tools []string `json:"tools"`
		File  string   `json:"file"`
	}
	job := struct {
		WarmMs int64     `json:"warmMs"`
		Cases  []jobCase `json:"cases"`
	}{WarmMs: o.Duration.Milliseconds()}
	cases := make([]*pairedCase, len(streams))
	byName := map[string]*pairedCase{}
	for i, ws := range streams {
		f := filepath.Join(tmp, ws.Name+".sse")
		if err := os.WriteFile(f, ws.Stream.Body, 0o600); err != nil {
			return nil, err
		}
		var tools []string
		for _, c := range ws.Stream.Calls {
			tools = append(tools, c.Name)
		}
		job.Cases = append(job.Cases, jobCase{Name: ws.Name, Wire: ws.Name, Tools: tools, File: f})
		cases[i] = &pairedCase{ws: ws}
		byName[ws.Name] = cases[i]
	}
	jobFile := filepath.Join(tmp, "job.json")
	b, err := json.Marshal(job)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(jobFile, b, 0o600); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, p.Node, p.Script, jobFile)
	cmd.Env = append(os.Environ(), NodePeerEnv+"="+p.Dir, "NO_COLOR=1")
	// OpenClaw logs to stderr; only its last lines matter when it fails.
	var tail tailBuffer
	cmd.Stderr = &tail
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	var errs []error
	next := func() (nodeLine, bool) {
		var l nodeLine
		for sc.Scan() {
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				errs = append(errs, fmt.Errorf("peers/node: bad output line: %v", err))
				continue
			}
			return l, true
		}
		return l, false
	}
	// Setup: every case is ready (checked) or failed, on both sides.
	for range cases {
		l, ok := next()
		if !ok {
			break
		}
		c := byName[l.Name]
		if c == nil {
			errs = append(errs, fmt.Errorf("peers/node: result for unknown stream %q", l.Name))
			continue
		}
		if err := checkNodeDecoded(c.ws, l); err != nil {
			c.nodeErr = err.Error()
			continue
		}
		c.op = chainOp(c.ws)
		if err := c.op(); err != nil {
			c.oursErr = err.Error()
		}
	}
	load0 := loadAverage()
	batch := max(o.Duration/2, time.Millisecond)
	rounds := max(nodeMinReps, 2*o.Count+1)
	enc := json.NewEncoder(stdin)
rounds:
	for range rounds {
		for _, c := range cases {
			if c.op == nil || c.nodeErr != "" || c.oursErr != "" {
				continue
			}
			if ctx.Err() != nil {
				break rounds
			}
			if err := enc.Encode(struct {
				Name string `json:"name"`
				Ms   int64  `json:"ms"`
			}{c.ws.Name, batch.Milliseconds()}); err != nil {
				errs = append(errs, fmt.Errorf("peers/node: %v", err))
				break rounds
			}
			l, ok := next()
			switch {
			case !ok:
				break rounds
			case l.Name != c.ws.Name:
				errs = append(errs, fmt.Errorf("peers/node: batch of %q answered for %q", c.ws.Name, l.Name))
				break rounds
			case l.Error != "" || len(l.Times) == 0:
				c.nodeErr = "openclaw threw: " + firstLine(l.Error)
				continue
			}
			for _, ns := range l.Times {
				c.node = append(c.node, time.Duration(ns))
			}
			if err := c.oursBatch(batch); err != nil {
				c.oursErr = err.Error()
			}
		}
	}
	stdin.Close()
	if log != nil {
		load1 := loadAverage()
		fmt.Fprintf(log, "peers/node: paired, %d rounds of %v batches; load average %s at the start, %s at the end\n", rounds, batch, load0, load1)
		if busy(load0) || busy(load1) {
			fmt.Fprintf(log, "peers/node: the machine was busy (more runnable threads than its %d CPUs): Node, whose collector and compiler run on threads of their own, loses more time to that than ocbench, so the ratio overstates ocbench's lead; measure on a quiet machine\n", runtime.NumCPU())
		}
	}
	var out []Result
	for _, c := range cases {
		node, ours := c.results()
		if c.nodeErr == "" {
			out = append(out, ours) // a failed peer leaves nothing to pair with
		}
		out = append(out, node)
		if measured != nil {
			measured(node)
		}
	}
	if err := cmd.Wait(); err != nil {
		if log != nil && tail.Len() > 0 {
			fmt.Fprintf(log, "peers/node:\n%s\n", strings.TrimSpace(tail.String()))
		}
		errs = append(errs, fmt.Errorf("peers/node/chain.mjs failed (%v)", err))
	}
	return out, errors.Join(errs...)
}

// oursBatch runs one untimed operation, then timed ones until d has passed
// (at least one), counting their allocations.
func (c *pairedCase) oursBatch(d time.Duration) error {
	if err := c.op(); err != nil {
		return err
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	until := time.Now().Add(d)
	n := int64(0)
	for {
		t0 := time.Now()
		if err := c.op(); err != nil {
			return err
		}
		t1 := time.Now()
		c.ours = append(c.ours, t1.Sub(t0))
		n++
		if !t1.Before(until) {
			break
		}
	}
	runtime.ReadMemStats(&m1)
	c.mallocs += m1.Mallocs - m0.Mallocs
	c.bytes += m1.TotalAlloc - m0.TotalAlloc
	c.measuredOps += n
	return nil
}

// results returns Node's result and ocbench's for the case: the median
// time of one stream over every timed repetition.
func (c *pairedCase) results() (node, ours Result) {
	ws := c.ws
	node = Result{Name: NodePeerStage + "/" + ws.Name, Stage: NodePeerStage, Input: ws.Name, Impl: ImplOpenClawNode, Run: 1, MemNotMeasured: true}
	ours = Result{Name: node.Name, Stage: NodePeerStage, Input: ws.Name, Impl: Ours, Run: 1}
	fill := func(r *Result, times []time.Duration, errText string) {
		switch {
		case errText != "":
			r.Err = errText
		case len(times) == 0:
			r.Err = "not measured"
		default:
			r.Iterations = int64(len(times))
			r.NsPerOp = float64(medianDuration(times))
			r.MBPerSec = float64(len(ws.Stream.Body)) * 1e3 / r.NsPerOp
			r.EventsPerSec = float64(ws.Stream.Events) * 1e9 / r.NsPerOp
			r.NsPerEvent = r.NsPerOp / float64(ws.Stream.Events)
		}
	}
	fill(&node, c.node, c.nodeErr)
	fill(&ours, c.ours, c.oursErr)
	if c.measuredOps > 0 {
		ours.AllocsPerOp = float64(c.mallocs) / float64(c.measuredOps)
		ours.BytesPerOp = float64(c.bytes) / float64(c.measuredOps)
	}
	return node, ours
}

// loadAverage is the system's 1-minute load average, "?" where unknown: a
// paired ratio is fair to both sides only on a machine that is not busy
// with other work (Node, with its helper threads, suffers more from it).
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}

// busy reports whether the load average la is above the number of CPUs.
func busy(la string) bool {
	v, err := strconv.ParseFloat(la, 64)
	return err == nil && v > float64(runtime.NumCPU())
}

func medianDuration(ts []time.Duration) time.Duration {
	s := slices.Clone(ts)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// checkNodeDecoded fails when OpenClaw's final message is not what the
// generator put in the stream.
func checkNodeDecoded(ws peerdata.WireStream, l nodeLine) error {
	switch {
	case l.Error != "":
		return fmt.Errorf("openclaw threw: %s", firstLine(l.Error))
	case l.StopReason == "error" || l.StopReason == "aborted":
		return fmt.Errorf("openclaw: stream failed: %s", l.ErrorMessage)
	case l.Text != ws.Stream.Text:
		return fmt.Errorf("openclaw decoded other text (%d bytes, want %d)", len(l.Text), len(ws.Stream.Text))
	case len(l.Calls) != len(ws.Stream.Calls):
		return fmt.Errorf("openclaw decoded %d tool calls, want %d", len(l.Calls), len(ws.Stream.Calls))
	}
	for i, c := range l.Calls {
		if c.Name != ws.Stream.Calls[i].Name {
			return fmt.Errorf("openclaw: tool call %d is %q, want %q", i, c.Name, ws.Stream.Calls[i].Name)
		}
	}
	return nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// NodeSetup runs peers/node/setup.sh (install Node and openclaw into dir),
// its output to log.
func NodeSetup(ctx context.Context, peersDir, dir string, log io.Writer) error {
	if dir == "" {
		return errors.New("no directory to install the Node peer into (set " + NodePeerEnv + ")")
	}
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(peersDir, "node", "setup.sh"))
	cmd.Env = append(os.Environ(), NodePeerEnv+"="+dir)
	var buf bytes.Buffer
	cmd.Stdout = &buf
	cmd.Stderr = &buf
	start := time.Now()
	err := cmd.Run()
	if log != nil {
		for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
			if l != "" {
				fmt.Fprintf(log, "peers/node/setup.sh: %s\n", l)
			}
		}
	}
	if err != nil {
		return fmt.Errorf("peers/node/setup.sh failed after %s: %v", time.Since(start).Round(time.Second), err)
	}
	return nil
}

// tailBuffer keeps the last 8 KiB written to it.
type tailBuffer struct{ b []byte }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 8<<10 {
		t.b = append(t.b[:0], t.b[len(t.b)-8<<10:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) Len() int       { return len(t.b) }
func (t *tailBuffer) String() string { return string(t.b) }
