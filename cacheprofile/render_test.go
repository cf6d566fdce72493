package cacheprofile

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/internal/svgchart"
)

// TestHTMLChartReadable renders the report of a real session and checks
// its timeline has axes with ticks and units and a legend, and that a
// session without recorded usage says "no data" instead of a 0.0% rate.
func TestHTMLChartReadable(t *testing.T) {
	reps, err := ProfileFile("../testdata/sessions/openclaw-v3-2026-03-qwen-1f979e30.jsonl", Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteHTML(&b, reps); err != nil {
		t.Fatal(err)
	}
	if n, err := svgchart.CheckCharts(b.Bytes()); n != 1 || err != nil {
		t.Fatalf("checked %d charts: %v", n, err)
	}
	if !strings.Contains(b.String(), "<td>no data</td>") {
		t.Error("recorded hit rate of a session without usage is not \"no data\"")
	}
	// Nothing recorded: no recorded zeros, and the legend names no
	// recorded series the chart does not draw.
	if !regexp.MustCompile(`<tr><td>prompt tokens</td><td>[^<]+</td><td>no data</td>`).Match(b.Bytes()) {
		t.Error("recorded prompt tokens of a session without usage are not \"no data\"")
	}
	for _, bad := range []string{">recorded read</text>", ">recorded miss</text>"} {
		if strings.Contains(b.String(), bad) {
			t.Errorf("a session without recorded usage shows %q in its legend", bad)
		}
	}
	var txt strings.Builder
	if err := WriteText(&txt, reps); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(txt.String(), "no data") {
		t.Errorf("text report shows a rate without data:\n%s", txt.String())
	}
}
