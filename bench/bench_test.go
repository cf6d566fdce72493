package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ocbench/ocbench/internal/svgchart"
)

// spin burns roughly n iterations of arithmetic, so that two scenarios
// differ in cost by a known factor.
var sink uint64

func spin(n int) func() error {
	return func() error {
		x := sink
		for i := 0; i < n; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
		sink = x
		return nil
	}
}

func fixed(op func() error) func() (func() error, func(), error) {
	return func() (func() error, func(), error) { return op, nil, nil }
}

func TestRunMeasuresRelativeCost(t *testing.T) {
	scs := []Scenario{
		{Name: "spin/small", Stage: "spin", Input: "x", Impl: Ours, Bytes: 1000, Events: 10, Setup: fixed(spin(2000))},
		{Name: "spin/small", Stage: "spin", Input: "x", Impl: "slowpeer", Bytes: 1000, Events: 10, Setup: fixed(spin(20000))},
	}
	res := Run(context.Background(), scs, Options{Duration: 50 * time.Millisecond, Count: 3})
	if len(res) != 6 {
		t.Fatalf("got %d results, want 6", len(res))
	}
	rep := NewReport(res, Options{Duration: 50 * time.Millisecond, Count: 3}, time.Now())
	if len(rep.Summaries) != 2 || len(rep.Ratios) != 1 {
		t.Fatalf("summaries %d ratios %d", len(rep.Summaries), len(rep.Ratios))
	}
	r := rep.Ratios[0]
	// The peer does 10x the work; on a noisy machine accept 4x..25x.
	if r.Speedup < 4 || r.Speedup > 25 {
		t.Errorf("speedup %.2f, want about 10", r.Speedup)
	}
	if got := r.PeerNsPerOp / r.OursNsPerOp; math.Abs(got-r.Speedup) > 1e-9 {
		t.Errorf("ratio not computed from the measured medians: %v vs %v", got, r.Speedup)
	}
	ours := rep.Summaries[0]
	if ours.MBPerSec <= 0 || math.Abs(ours.MBPerSec-1000*1e3/ours.NsPerOp) > 1e-6 {
		t.Errorf("MB/s %v not derived from ns/op %v", ours.MBPerSec, ours.NsPerOp)
	}
	if ours.AllocsPerOp > 0.01 {
		t.Errorf("spin allocates %v per op", ours.AllocsPerOp)
	}
}

func TestRunReportsFailuresAndAllocs(t *testing.T) {
	boom := errors.New("boom")
	var keep [][]byte
	scs := []Scenario{
		{Name: "bad/setup", Stage: "bad", Impl: Ours, Setup: func() (func() error, func(), error) { return nil, nil, boom }},
		{Name: "bad/op", Stage: "bad", Impl: Ours, Setup: fixed(func() error { return boom })},
		{Name: "alloc/one", Stage: "alloc", Impl: Ours, Latency: true, Setup: fixed(func() error {
			keep = append(keep[:0], make([]byte, 64))
			return nil
		})},
	}
	res := Run(context.Background(), scs, Options{Duration: 20 * time.Millisecond})
	if res[0].Err != "boom" || res[1].Err != "boom" {
		t.Fatalf("errors not reported: %+v %+v", res[0], res[1])
	}
	a := res[2]
	if a.AllocsPerOp < 0.9 || a.AllocsPerOp > 1.5 {
		t.Errorf("allocs/op %v, want 1", a.AllocsPerOp)
	}
	if !(a.P50Ns > 0 && a.P50Ns <= a.P90Ns && a.P90Ns <= a.P99Ns && a.P99Ns <= a.MaxNs) {
		t.Errorf("latency percentiles out of order: %+v", a)
	}
}

func TestReportsParse(t *testing.T) {
	res := Run(context.Background(), []Scenario{
		{Name: "spin/a", Stage: "spin", Input: "a", Impl: Ours, Bytes: 10, Setup: fixed(spin(100))},
		{Name: "spin/a", Stage: "spin", Input: "a", Impl: "peer <&>", Bytes: 10, Setup: fixed(spin(1000))},
	}, Options{Duration: 10 * time.Millisecond, Count: 2})
	rep := NewReport(res, Options{Duration: 10 * time.Millisecond, Count: 2}, time.Now())

	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatalf("JSON report does not parse: %v", err)
	}
	if len(back.Ratios) != 1 || back.Ratios[0].Speedup != rep.Ratios[0].Speedup {
		t.Errorf("JSON ratios: %+v", back.Ratios)
	}

	// benchfmt lines must read back through the same parser the peers use.
	var bf bytes.Buffer
	if err := rep.WriteBenchfmt(&bf); err != nil {
		t.Fatal(err)
	}
	lines := strings.Count(bf.String(), "\nBenchmark")
	if lines != 4 {
		t.Errorf("benchfmt has %d benchmark lines, want 4:\n%s", lines, bf.String())
	}
	// key=value parts, so that benchstat -col /impl sets them side by side.
	for _, want := range []string{"\nBenchmarkSpin/input=a/impl=ocbench-", "\nBenchmarkSpin/input=a/impl=peer_<&>-"} {
		if !strings.Contains(bf.String(), want) {
			t.Errorf("benchfmt lacks %q:\n%s", want, bf.String())
		}
	}
	if got := BenchfmtName(Result{Stage: "decode", Input: "openai-chat", Impl: Ours}); got != "BenchmarkDecode/wire=openai-chat/impl=ocbench" {
		t.Errorf("BenchfmtName = %s", got)
	}
	if got := BenchfmtName(Result{Stage: "repair-openclaw", Input: "small-python", Impl: Ours}); got != "BenchmarkRepairOpenclaw/input=small-python/impl=ocbench" {
		t.Errorf("BenchfmtName = %s", got)
	}
	// One key style: camelCase, no snake_case key anywhere in the JSON.
	if m := regexp.MustCompile(`"[a-z0-9]+_[a-z0-9_]+":`).Find(js.Bytes()); m != nil {
		t.Errorf("JSON report has a snake_case key %s", m)
	}

	var tbl bytes.Buffer
	if err := rep.WriteTable(&tbl); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tbl.String(), "faster") {
		t.Errorf("table lacks the peer ratio:\n%s", tbl.String())
	}

	var h bytes.Buffer
	if err := rep.WriteHTML(&h); err != nil {
		t.Fatal(err)
	}
	checkSelfContainedHTML(t, h.Bytes())
	if n, err := svgchart.CheckCharts(h.Bytes()); n != 3 || err != nil {
		t.Errorf("checked %d charts (want throughput, ratios, allocations): %v", n, err)
	}
}

// checkSelfContainedHTML parses the report as XML (the template writes
// well-formed markup) and fails on anything that would load from elsewhere.
func checkSelfContainedHTML(t *testing.T, doc []byte) {
	t.Helper()
	body := bytes.TrimPrefix(doc, []byte("<!DOCTYPE html>\n"))
	dec := xml.NewDecoder(bytes.NewReader(body))
	dec.Strict = true
	svgs := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("HTML report is not well-formed: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			switch se.Name.Local {
			case "script", "link", "img", "iframe":
				t.Errorf("report has a <%s> element", se.Name.Local)
			case "svg":
				svgs++
			}
			for _, a := range se.Attr {
				if (a.Name.Local == "src" || a.Name.Local == "href") && a.Value != "" {
					t.Errorf("report references %s=%q", a.Name.Local, a.Value)
				}
			}
		}
	}
	if svgs == 0 {
		t.Error("report has no chart")
	}
	if regexp.MustCompile(`url\(`).Match(doc) {
		t.Error("report CSS loads a url()")
	}
}

func TestParseBenchOutput(t *testing.T) {
	in := `goos: linux
BenchmarkPeers/decode/openai-chat/openai-go-2         	      30	  37000000 ns/op	  17.22 MB/s	  18500 ns/event	 9000000 B/op	  134000 allocs/op
BenchmarkPeers/decode/openai-chat/openai-go-2         	      31	  36000000 ns/op	  17.70 MB/s	  18000 ns/event	 9000000 B/op	  134000 allocs/op
PASS
`
	res, err := ParseBenchOutput(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].Impl != "openai-go" || res[0].Stage != "decode" || res[0].Input != "openai-chat" || res[1].Run != 2 {
		t.Fatalf("parsed %+v", res)
	}
	if res[0].NsPerOp != 37e6 || res[0].AllocsPerOp != 134000 || res[0].EventsPerSec != 1e9/18500 {
		t.Errorf("values %+v", res[0])
	}
	if _, err := ParseBenchOutput(strings.NewReader("BenchmarkPeers/onlytwo/parts-2 1 1 ns/op\n")); err == nil {
		t.Error("malformed peer name accepted")
	}
}

func TestMemPerOpLeavesOutBackgroundWork(t *testing.T) {
	// Batches of 1, 10, 200 and 1,000 operations: the scenario allocates once
	// every 4 operations; other goroutines allocated 5,000 objects during the
	// 1,000-operation batch and 30 during the small ones.
	batches := []batchMem{
		{n: 1, mallocs: 30, bytes: 30 * 16},
		{n: 10, mallocs: 2 + 30, bytes: (2 + 30) * 16},
		{n: 200, mallocs: 50, bytes: 50 * 16},
		{n: 1000, mallocs: 250 + 5000, bytes: (250 + 5000) * 16},
	}
	allocs, bytes := memPerOp(batches, 1211)
	if allocs != 0.25 || bytes != 4 {
		t.Errorf("memPerOp = %v allocs, %v B; want the 200-op batch's 0.25 and 4", allocs, bytes)
	}
	// With only one large batch its count stands, background work included:
	// a small batch that happened to allocate nothing does not hide it.
	batches = []batchMem{{n: 1, mallocs: 0}, {n: 1000, mallocs: 1000, bytes: 64000}}
	if allocs, _ := memPerOp(batches, 1001); allocs != 1 {
		t.Errorf("memPerOp = %v allocs, want 1: a 1-op batch is too small to count", allocs)
	}
	// Eleven batches of one operation: none holds a tenth of the run, so the
	// whole average stands (one allocation per operation), not zero.
	batches = nil
	for range 11 {
		batches = append(batches, batchMem{n: 1, mallocs: 1, bytes: 16})
	}
	if allocs, bytes := memPerOp(batches, 11); allocs != 1 || bytes != 16 {
		t.Errorf("memPerOp of equal small batches = %v allocs, %v B; want the average 1 and 16", allocs, bytes)
	}
}
