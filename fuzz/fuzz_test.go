package fuzz

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/provider/scripted"
	"github.com/ocbench/ocbench/streamwrap/repair"
)

func TestGenerateIsDeterministic(t *testing.T) {
	for i := uint64(0); i < 200; i++ {
		a, b := Generate(7, i), Generate(7, i)
		if !bytes.Equal(a.Body, b.Body) || a.Wire != b.Wire {
			t.Fatalf("case %d differs between two generations", i)
		}
	}
	if bytes.Equal(Generate(7, 1).Body, Generate(8, 1).Body) {
		t.Error("the seed does not change the cases")
	}
}

// The generator covers the catalogue: every wire, every quirk, cuts,
// length stops and parallel calls appear in a modest run.
func TestGenerateCoversTheCatalogue(t *testing.T) {
	wires := map[string]bool{}
	quirks := map[scripted.Quirk]bool{}
	var cut, length, parallel, entities bool
	for i := uint64(0); i < 3000; i++ {
		c := Generate(1, i)
		wires[c.Wire.String()] = true
		cut = cut || c.Cut
		length = length || c.Length
		parallel = parallel || len(c.Calls) > 1
		entities = entities || c.HTMLEntities
		for _, call := range c.Calls {
			for _, q := range call.Quirks {
				quirks[q] = true
			}
		}
	}
	if len(wires) != 3 || !cut || !length || !parallel || !entities {
		t.Errorf("wires %v cut %v length %v parallel %v entities %v", wires, cut, length, parallel, entities)
	}
	for _, q := range append(argQuirks, scripted.QuirkPadName, scripted.QuirkNamespace, scripted.QuirkHTMLEntities) {
		if !quirks[q] {
			t.Errorf("quirk %v never generated", q)
		}
	}
}

// The checker is not vacuous: a body whose tool call is cut mid-arguments
// but then claims success must be caught if the pipeline executed it, and
// the counters must add up.
func TestRunCounts(t *testing.T) {
	rep, err := Run(context.Background(), Options{N: 300, Seed: 3, Profile: repair.ProfileExtended})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Cases != 300 || rep.Calls < 300 || rep.Executed+rep.Refused < rep.Calls-rep.Calls/2 || rep.Repaired == 0 || rep.Truncated == 0 {
		t.Errorf("report %+v", rep)
	}
	if rep.Panics != 0 || rep.Hangs != 0 {
		t.Errorf("panics %d hangs %d", rep.Panics, rep.Hangs)
	}
}

func TestInventedSeesThroughEncodings(t *testing.T) {
	var r runner
	cases := []struct {
		got, sent string
		entities  bool
		bad       bool
	}{
		{`{"a":"x\ny"}`, `{"a":"x\ny",}`, false, false},
		{`{"a":"x\ny"}`, `"{\"a\":\"x\\ny\"}"`, false, false},
		{`{"a":true,"b":null}`, `{'a': True, 'b': None}`, false, false},
		{`{"a":"<b>"}`, `{"a":"&lt;b&gt;"}`, true, false},
		{`{"a":"zzz"}`, `{"a":"x"}`, false, true},
		{`{"k":1}`, `{"a":1}`, false, true},
		{`{"a":12}`, `{"a":1}`, false, true},
		{`{}`, `null`, false, false},
	}
	for _, c := range cases {
		v, err := r.p.Parse(c.got)
		if err != nil {
			t.Fatal(err)
		}
		if bad := r.invented(v, c.sent, c.entities); (bad != "") != c.bad {
			t.Errorf("invented(%s, %s) = %q", c.got, c.sent, bad)
		}
	}
}

func TestFailuresAreReplayable(t *testing.T) {
	dir := t.TempDir()
	c := Generate(1, 5)
	path, err := writeFailure(dir, c, repair.ProfileExtended, []Violation{{Rule: "object", Call: 0, Detail: "test"}})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := os.ReadFile(path)
	note, _ := os.ReadFile(strings.TrimSuffix(path, ".sse") + ".txt")
	if !bytes.Equal(body, c.Body) || !strings.Contains(string(note), "ocbench replay --wire "+c.Wire.String()) {
		t.Errorf("failure files: %s\n%s", filepath.Base(path), note)
	}
}
