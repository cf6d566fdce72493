// Package jsonrepair holds the JSON-repair peer: kaptinlin/jsonrepair (a
// Go port of the jsonrepair library) on the argument texts of ocbench's
// repair scenarios.
package jsonrepair

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kaptinlin/jsonrepair"

	"github.com/ocbench/ocbench/bench/peerdata"
	"github.com/ocbench/ocbench/peers/peerkit"
	"github.com/ocbench/ocbench/streamwrap/repair"
)

// The JSON-repair peer: kaptinlin/jsonrepair (a Go port of the jsonrepair
// library) on the very argument texts of ocbench's repair scenarios
// (peerdata.RepairInputs). The two do not promise the same thing: ocbench
// refuses what it cannot repair without inventing content (a cut text) and
// decodes HTML entities only on the xAI path, kaptinlin closes cut texts
// and keeps entities. TestAgree records where they
// differ; the benchmark measures each on the same bytes.

func describeErr(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, repair.ErrTruncated):
		return "refused (truncated)"
	}
	s := err.Error()
	if len(s) > 40 {
		s = s[:37] + "..."
	}
	return "error: " + s
}

// TestAgree runs ocbench and kaptinlin on every repair
// input. It fails when ocbench's result is wrong (not the original object,
// or a cut text not refused) or when either returns text that is not valid
// JSON; differences between the two are logged as a table, not failures.
func TestAgree(t *testing.T) {
	var tab strings.Builder
	fmt.Fprintf(&tab, "\n%-30s %-22s %-30s %s\n", "input", "ocbench", "kaptinlin-jsonrepair", "kaptinlin vs original object")
	differ := 0
	for _, in := range peerdata.RepairInputs() {
		ours, _, oerr := peerdata.RepairOurs(nil, &in, nil)
		switch {
		case in.Refused && !errors.Is(oerr, repair.ErrTruncated):
			t.Errorf("%s: ocbench did not refuse a cut text: %v %q", in.Name, oerr, ours)
		case !in.Refused && oerr != nil:
			t.Errorf("%s: ocbench: %v", in.Name, oerr)
		case !in.Refused && !json.Valid(ours):
			t.Errorf("%s: ocbench output is not valid JSON: %q", in.Name, ours)
		case !in.Refused && !peerdata.SameJSON(ours, in.Want):
			t.Errorf("%s: ocbench output is not the original object", in.Name)
		}
		theirs, kerr := jsonrepair.Repair(string(in.Args))
		verdict := ""
		switch {
		case kerr != nil:
			verdict = "no output"
		case !json.Valid([]byte(theirs)):
			t.Errorf("%s: kaptinlin returned invalid JSON without an error: %q", in.Name, theirs)
		case in.Refused:
			verdict = "closed a cut text (ocbench refuses)"
		case peerdata.SameJSON([]byte(theirs), in.Want):
			verdict = "same value"
		default:
			verdict = "DIFFERENT value: " + shortJSON(theirs)
		}
		if verdict != "same value" {
			differ++
		}
		fmt.Fprintf(&tab, "%-30s %-22s %-30s %s\n", in.Name, describeErr(oerr), describeErr(kerr), verdict)
	}
	t.Logf("repair: ocbench and kaptinlin/jsonrepair differ on %d inputs:%s", differ, tab.String())
}

func shortJSON(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}

func BenchmarkPeers(b *testing.B) {
	inputs := map[string]peerdata.RepairInput{}
	for _, in := range peerdata.RepairInputs() {
		inputs[in.Name] = in
	}
	peerkit.RunPeers(b, "jsonrepair", func(b *testing.B, pb peerdata.PeerBench) {
		in, ok := inputs[pb.Input]
		if !ok {
			b.Fatalf("no repair input %s", pb.Input)
		}
		text := string(in.Args)
		if _, err := jsonrepair.Repair(text); err != nil {
			b.Skipf("kaptinlin cannot repair %s: %v", in.Name, err)
		}
		b.SetBytes(int64(len(in.Args)))
		b.ReportAllocs()
		for b.Loop() {
			_, _ = jsonrepair.Repair(text)
		}
	})
}
