package bench

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/bench/peerdata"
	"github.com/ocbench/ocbench/engine"
	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/transcript"
)

// TestScenariosFirstOp runs every scenario's setup and first operation
// (which checks its result), so that a broken scenario fails here rather
// than in a user's run.
func TestScenariosFirstOp(t *testing.T) {
	scs, err := Scenarios()
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range scs {
		t.Run(sc.Name, func(t *testing.T) {
			op, teardown, err := sc.Setup()
			if err != nil {
				t.Fatalf("setup: %v", err)
			}
			if teardown != nil {
				defer teardown()
			}
			if err := op(); err != nil {
				t.Fatalf("first op: %v", err)
			}
			if err := op(); err != nil {
				t.Fatalf("second op: %v", err)
			}
		})
	}
}

// TestCheckRepairedRejects: the repair scenarios' first-op check rejects
// a decision that keeps the text as it came, for every input but the
// valid one (peerdata's TestRepairInputs pins the inputs themselves).
func TestCheckRepairedRejects(t *testing.T) {
	for _, in := range peerdata.RepairInputs() {
		err := checkRepaired(&in, in.Args, nil)
		if in.Quirk == "valid" && err != nil {
			t.Errorf("%s: check rejects the valid text: %v", in.Name, err)
		}
		if in.Quirk != "valid" && err == nil {
			t.Errorf("%s: check accepts the unrepaired text", in.Name)
		}
	}
}

// TestChecksReject makes sure the first-op checks of the other stages can
// fail.
func TestChecksReject(t *testing.T) {
	if err := checkTurn(&engine.Result{Turns: 1, StopReason: llm.StopStop}); err == nil {
		t.Error("checkTurn accepts a run of one model call")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	w, err := transcript.OpenWriter(path, transcript.WriterOptions{Durability: transcript.SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	turn := transcriptTurn(1)
	for i := range turn[:3] {
		if _, err := w.AppendMessage(&turn[i]); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	if err := checkAppended(path, turn[:]); err == nil {
		t.Error("checkAppended accepts a file missing a message")
	}
	if err := checkAppended(path, []llm.Message{turn[1], turn[0], turn[2]}); err == nil {
		t.Error("checkAppended accepts messages out of order")
	}
	if !bytes.Equal(TranscriptSession(), TranscriptSession()) {
		t.Error("TranscriptSession is not deterministic")
	}
}

// TestScenarioNames: a scenario's name is its stage and input, which is
// how peers' lines (BenchmarkPeers/<stage>/<input>/<impl>) find it.
func TestScenarioNames(t *testing.T) {
	scs, err := Scenarios()
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range scs {
		if sc.Name != sc.Stage+"/"+sc.Input || sc.Impl != Ours || strings.Count(sc.Name, "/") != 1 {
			t.Errorf("scenario %q: stage %q input %q impl %q", sc.Name, sc.Stage, sc.Input, sc.Impl)
		}
	}
}

// TestDefaultSelection: a default run measures every stage but only the
// default repair quirks; the peers' benchmarks follow by name.
func TestDefaultSelection(t *testing.T) {
	scs, err := Scenarios()
	if err != nil {
		t.Fatal(err)
	}
	re := DefaultSelection(scs)
	stages := map[string]bool{}
	for _, sc := range scs {
		stages[sc.Stage] = true
	}
	kept := Filter(scs, re)
	keptStages := map[string]bool{}
	for _, sc := range kept {
		keptStages[sc.Stage] = true
		if strings.HasPrefix(sc.Stage, "repair") {
			q := ""
			for _, in := range peerdata.RepairInputs() {
				if in.Name == sc.Input {
					q = in.Quirk
				}
			}
			if !slices.Contains(DefaultRepairQuirks, q) {
				t.Errorf("%s (quirk %q) is in the default selection", sc.Name, q)
			}
		}
	}
	if len(keptStages) != len(stages) {
		t.Errorf("stages %v, default run keeps %v", stages, keptStages)
	}
	if len(kept) >= len(scs) || len(kept) < len(scs)/2 {
		t.Errorf("default selection keeps %d of %d scenarios", len(kept), len(scs))
	}
	if re.MatchString("repair/small-python") || !re.MatchString("repair/small-valid") || !re.MatchString("decode+chain/anthropic") {
		t.Error("the selection does not match peer benchmark names as it matches ours")
	}
}
