package bench

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ocbench/ocbench/bench/peerdata"
)

// TestNodePeerMissing: without the install the Node peer is not found, and
// the error says how to enable it.
func TestNodePeerMissing(t *testing.T) {
	_, err := FindNodePeer("../peers", t.TempDir())
	if !errors.Is(err, ErrNodePeerMissing) {
		t.Fatalf("FindNodePeer on an empty dir: %v, want ErrNodePeerMissing", err)
	}
	for _, want := range []string{"peers/node/setup.sh", "--node-peer", "openclaw@2026.9.6"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	if _, err := FindNodePeer("../peers", ""); !errors.Is(err, ErrNodePeerMissing) {
		t.Errorf("no install dir: %v", err)
	}
}

// TestNodePeerHalfInstalled: an install that setup.sh has not finished
// (no ready file yet) is not taken as the peer, whatever it already holds.
func TestNodePeerHalfInstalled(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"node/package/bin/node", "oc/node_modules/openclaw/package.json"} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	_, err := FindNodePeer("../peers", dir)
	if !errors.Is(err, ErrNodePeerMissing) || !strings.Contains(err.Error(), "ready") {
		t.Fatalf("half-installed peer: %v, want ErrNodePeerMissing naming the ready file", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ready"), []byte("node 24.22.3\nopenclaw 2026.9.6\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := FindNodePeer("../peers", dir); err != nil {
		t.Fatalf("finished install not found: %v", err)
	}
}

// TestNodeDecodedChecked: a Node result whose message differs from the
// generated stream (text, call count, call name, a failed stream) is not
// taken as a timing.
func TestNodeDecodedChecked(t *testing.T) {
	ws := peerdata.WireStreams()[1]
	good := nodeLine{Name: ws.Name, Text: ws.Stream.Text, StopReason: "toolUse"}
	for _, c := range ws.Stream.Calls {
		good.Calls = append(good.Calls, struct {
			Name string `json:"name"`
		}{c.Name})
	}
	if err := checkNodeDecoded(ws, good); err != nil {
		t.Fatalf("the generated message is refused: %v", err)
	}
	bad := []func(l *nodeLine){
		func(l *nodeLine) { l.Text = l.Text[1:] },
		func(l *nodeLine) { l.Calls = l.Calls[:1] },
		func(l *nodeLine) { l.Calls = append(l.Calls[:0:0], l.Calls...); l.Calls[0].Name = "other" },
		func(l *nodeLine) { l.StopReason, l.ErrorMessage = "error", "boom" },
		func(l *nodeLine) { l.Error = "TypeError: x\n at y" },
	}
	for i, f := range bad {
		l := good
		f(&l)
		if err := checkNodeDecoded(ws, l); err == nil {
			t.Errorf("case %d: a wrong message was accepted", i)
		}
	}
}

// TestNodeNotMeasuredAllocs: the Node peer's allocations are shown as not
// measured, never as 0.
func TestNodeNotMeasuredAllocs(t *testing.T) {
	rs := []Result{
		{Name: "decode+chain/anthropic", Stage: "decode+chain", Input: "anthropic", Impl: Ours, Iterations: 10, NsPerOp: 1e6, AllocsPerOp: 7, BytesPerOp: 500, Run: 1},
		{Name: "decode+chain/anthropic", Stage: "decode+chain", Input: "anthropic", Impl: ImplOpenClawNode, Iterations: 5, NsPerOp: 1e8, MemNotMeasured: true, Run: 1},
	}
	rep := NewReport(rs, Options{}, time.Now())
	var tab, bf bytes.Buffer
	if err := rep.WriteTable(&tab); err != nil {
		t.Fatal(err)
	}
	var node string
	for _, l := range strings.Split(tab.String(), "\n") {
		if strings.Contains(l, ImplOpenClawNode) {
			node = l
		}
	}
	if !strings.Contains(node, "ocbench 100.0x faster") || !strings.Contains(node, " -  ") {
		t.Errorf("node row: %q", node)
	}
	if err := rep.WriteBenchfmt(&bf); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(bf.String(), "\n") {
		if strings.Contains(l, "impl="+ImplOpenClawNode) && strings.Contains(l, "allocs/op") {
			t.Errorf("benchfmt claims Node allocations: %q", l)
		}
	}
	if len(rep.Ratios) != 1 || !rep.Ratios[0].PeerMemNotMeasured {
		t.Errorf("ratios: %+v", rep.Ratios)
	}
}

// TestNodePeerReal runs OpenClaw's own chain on Node on the Anthropic
// stream, paired with ocbench's, when the Node peer is installed.
func TestNodePeerReal(t *testing.T) {
	np, err := FindNodePeer("../peers", NodePeerDir())
	if err != nil {
		t.Skipf("Node peer not run: %v", err)
	}
	var ws []peerdata.WireStream
	for _, w := range peerdata.WireStreams() {
		if w.Name == "anthropic" {
			ws = append(ws, w)
		}
	}
	var log bytes.Buffer
	seen := 0
	rs, err := np.Run(context.Background(), ws, Options{Duration: time.Millisecond}, &log, func(Result) { seen++ })
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if len(rs) != 2 || seen != 1 {
		t.Fatalf("results %+v (callback %d)", rs, seen)
	}
	ours, node := rs[0], rs[1]
	if node.Err != "" || node.Impl != ImplOpenClawNode || node.Name != NodePeerStage+"/anthropic" || node.NsPerOp <= 0 || node.Iterations < nodeMinReps || !node.MemNotMeasured || node.MBPerSec <= 0 {
		t.Errorf("node result %+v", node)
	}
	if ours.Err != "" || ours.Impl != Ours || ours.Name != node.Name || ours.NsPerOp <= 0 || ours.Iterations < nodeMinReps || ours.MemNotMeasured {
		t.Errorf("ocbench result %+v", ours)
	}
	t.Logf("paired medians: OpenClaw's chain on Node %.1f ms (%d), ocbench %.3f ms (%d): %.0fx", node.NsPerOp/1e6, node.Iterations, ours.NsPerOp/1e6, ours.Iterations, node.NsPerOp/ours.NsPerOp)
}
