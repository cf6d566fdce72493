package peers

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kaptinlin/jsonrepair"

	"github.com/ocbench/ocbench/bench"
	"github.com/ocbench/ocbench/streamwrap/repair"
)

// The JSON-repair peer: kaptinlin/jsonrepair (a Go port of the jsonrepair
// library) on the very argument texts of ocbench's repair scenarios
// (bench.RepairInputs). The two do not promise the same thing: ocbench
// refuses what it cannot repair without inventing content (a cut text) and
// decodes HTML entities only on the xAI path, kaptinlin closes cut texts
// and keeps entities. TestRepairAgainstKaptinlin records where they
// differ; the benchmark measures each on the same bytes.

// kaptinlinImpl is the peer's name in benchmark lines ('/' separates the
// name's parts, so the repository's slash is a dash).
const kaptinlinImpl = "kaptinlin-jsonrepair"

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

// TestRepairAgainstKaptinlin runs ocbench and kaptinlin on every repair
// input. It fails when ocbench's result is wrong (not the original object,
// or a cut text not refused) or when either returns text that is not valid
// JSON; differences between the two are logged as a table, not failures.
func TestRepairAgainstKaptinlin(t *testing.T) {
	var tab strings.Builder
	fmt.Fprintf(&tab, "\n%-30s %-22s %-30s %s\n", "input", "ocbench", "kaptinlin-jsonrepair", "kaptinlin vs original object")
	differ := 0
	for _, in := range bench.RepairInputs() {
		ours, _, oerr := bench.RepairOurs(nil, &in, nil)
		switch {
		case in.Refused && !errors.Is(oerr, repair.ErrTruncated):
			t.Errorf("%s: ocbench did not refuse a cut text: %v %q", in.Name, oerr, ours)
		case !in.Refused && oerr != nil:
			t.Errorf("%s: ocbench: %v", in.Name, oerr)
		case !in.Refused && !json.Valid(ours):
			t.Errorf("%s: ocbench output is not valid JSON: %q", in.Name, ours)
		case !in.Refused && !bench.SameJSON(ours, in.Want):
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
		case bench.SameJSON([]byte(theirs), in.Want):
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

func benchRepair(b *testing.B) {
	// The validity check of the fast path against encoding/json's.
	for _, in := range bench.RepairInputs() {
		if in.Quirk != "valid" {
			continue
		}
		object := strings.TrimSuffix(in.Name, "-valid")
		b.Run("validate/"+object+"/encoding-json", func(b *testing.B) {
			if !json.Valid(in.Args) {
				b.Fatalf("%s: encoding/json rejects the valid arguments", in.Name)
			}
			b.SetBytes(int64(len(in.Args)))
			b.ReportAllocs()
			for b.Loop() {
				_ = json.Valid(in.Args)
			}
		})
	}
	for _, in := range bench.RepairInputs() {
		b.Run("repair/"+in.Name+"/"+kaptinlinImpl, func(b *testing.B) {
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
}

// TestPeerInputsHaveScenarios: every repair, validate and tokenize peer
// benchmark has an ocbench scenario of the same stage and input, so that
// each of its lines gets a ratio.
func TestPeerInputsHaveScenarios(t *testing.T) {
	scs, err := bench.Scenarios()
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, sc := range scs {
		have[sc.Stage+"/"+sc.Input] = true
	}
	var want []string
	for _, in := range bench.RepairInputs() {
		want = append(want, "repair/"+in.Name)
		if in.Quirk == "valid" {
			want = append(want, "validate/"+strings.TrimSuffix(in.Name, "-valid"))
		}
	}
	for _, enc := range tokenizeEncodings {
		want = append(want, "tokenize/"+enc.String())
	}
	for _, w := range want {
		if !have[w] {
			t.Errorf("peer input %s has no ocbench scenario", w)
		}
	}
}
