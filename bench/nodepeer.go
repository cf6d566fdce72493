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
	"strings"
	"time"

	"github.com/ocbench/ocbench/bench/peerdata"
)

// The Node peer: OpenClaw 2026.9.6's own stream path (its @openclaw/ai
// transport and its stream wrappers, in process on Node) timed on the very
// bytes of ocbench's decode+chain scenarios. peers/node/setup.sh installs
// Node and openclaw into NodePeerDir; peers/node/chain.mjs does the timing
// and prints one JSON line per stream. Nothing here is needed to build or
// test ocbench: without the install the peer is skipped with a note saying
// how to enable it.

// ImplOpenClawNode is the Node peer's name in reports.
const ImplOpenClawNode = "openclaw-node"

// NodePeerStage is the stage the Node peer is compared on: ocbench's whole
// decode and decorator chain against OpenClaw's.
const NodePeerStage = "decode+chain"

// NodePeerEnv names the environment variable that overrides NodePeerDir.
const NodePeerEnv = "OCBENCH_NODE_DIR"

// nodeMinReps is the least number of timed repetitions per stream, after
// the warm-up; more are run while the run's duration is not used up.
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
// (nil: all).
func NodeBenches(filter *regexp.Regexp) []peerdata.WireStream {
	var out []peerdata.WireStream
	for _, ws := range peerdata.WireStreams() {
		if filter == nil || filter.MatchString(NodePeerStage+"/"+ws.Name) {
			out = append(out, ws)
		}
	}
	return out
}

// nodeLine is one line of chain.mjs's output.
type nodeLine struct {
	Name     string  `json:"name"`
	Reps     int64   `json:"reps"`
	MedianNs float64 `json:"medianNs"`
	Text     string  `json:"text"`
	Calls    []struct {
		Name string `json:"name"`
	} `json:"calls"`
	StopReason   string `json:"stopReason"`
	ErrorMessage string `json:"errorMessage"`
	Error        string `json:"error"`
}

// Run times OpenClaw's chain on each stream (warm median of at least
// nodeMinReps repetitions and o.Duration of them) and returns one Result
// per stream, in order. A stream OpenClaw decoded differently from the
// generator (text or tool calls) is reported as failed, not timed: a peer
// that did other work is no comparison. Node's allocations are not
// measured (MemNotMeasured). measured, when set, is called per result.
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
		MinReps int       `json:"minReps"`
		MinMs   int64     `json:"minMs"`
		Cases   []jobCase `json:"cases"`
	}{MinReps: nodeMinReps * o.Count, MinMs: o.Duration.Milliseconds() * int64(o.Count)}
	byName := map[string]peerdata.WireStream{}
	for _, ws := range streams {
		f := filepath.Join(tmp, ws.Name+".sse")
		if err := os.WriteFile(f, ws.Stream.Body, 0o600); err != nil {
			return nil, err
		}
		var tools []string
		for _, c := range ws.Stream.Calls {
			tools = append(tools, c.Name)
		}
		job.Cases = append(job.Cases, jobCase{Name: ws.Name, Wire: ws.Name, Tools: tools, File: f})
		byName[ws.Name] = ws
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
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	var out []Result
	var errs []error
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var l nodeLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			errs = append(errs, fmt.Errorf("peers/node: bad output line: %v", err))
			continue
		}
		ws, ok := byName[l.Name]
		if !ok {
			errs = append(errs, fmt.Errorf("peers/node: result for unknown stream %q", l.Name))
			continue
		}
		r := Result{Name: NodePeerStage + "/" + ws.Name, Stage: NodePeerStage, Input: ws.Name, Impl: ImplOpenClawNode, Run: 1, MemNotMeasured: true}
		if err := checkNodeDecoded(ws, l); err != nil {
			r.Err = err.Error()
		} else {
			r.Iterations = l.Reps
			r.NsPerOp = l.MedianNs
			r.MBPerSec = float64(len(ws.Stream.Body)) * 1e3 / r.NsPerOp
			r.EventsPerSec = float64(ws.Stream.Events) * 1e9 / r.NsPerOp
			r.NsPerEvent = r.NsPerOp / float64(ws.Stream.Events)
		}
		out = append(out, r)
		if measured != nil {
			measured(r)
		}
	}
	if err := cmd.Wait(); err != nil {
		if log != nil && tail.Len() > 0 {
			fmt.Fprintf(log, "peers/node:\n%s\n", strings.TrimSpace(tail.String()))
		}
		errs = append(errs, fmt.Errorf("peers/node/chain.mjs failed (%v); %d results kept", err, len(out)))
	} else if len(out) < len(streams) {
		errs = append(errs, fmt.Errorf("peers/node/chain.mjs gave %d results for %d streams", len(out), len(streams)))
	}
	return out, errors.Join(errs...)
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
