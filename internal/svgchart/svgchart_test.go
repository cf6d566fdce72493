package svgchart

import (
	"strings"
	"testing"
)

func TestBarChartAxes(t *testing.T) {
	var b strings.Builder
	BarChart{Title: "t <&>", Unit: "operations per second", Log: true,
		Series: []Series{{"ocbench", "#00f"}, {"peer <x>", "#f00"}},
		Bars:   []Bar{{Label: "a & b", Value: 3, Text: "3 op/s", Series: 0}, {Label: "c", Value: 120000, Text: "120k", Series: 1}, {Label: "zero", Value: 0}}}.Write(&b)
	svg := b.String()
	if n, err := CheckCharts([]byte(svg)); n != 1 || err != nil {
		t.Fatalf("checked %d charts: %v\n%s", n, err, svg)
	}
	for _, want := range []string{"(log scale)", ">1<", ">10<", ">1M<", "a &amp; b", "peer &lt;x&gt;"} {
		if !strings.Contains(svg, want) {
			t.Errorf("bar chart lacks %q", want)
		}
	}
	b.Reset()
	BarChart{Title: "lin", Unit: "x", Series: []Series{{"s", "#00f"}}, Bars: []Bar{{Label: "a", Value: 7}, {Label: "b", Value: 13}}}.Write(&b)
	if strings.Contains(b.String(), "log scale") || !strings.Contains(b.String(), ">15<") {
		t.Errorf("13 should get a linear axis up to 15:\n%s", b.String())
	}
}

func TestLineChartAxes(t *testing.T) {
	var b strings.Builder
	LineChart{Title: "lat", XUnit: "seconds", YUnit: "ms", Lines: []Line{
		{Series: Series{"p50", "#00f"}, X: []float64{0, 1, 2}, Y: []float64{1, 2, 1.5}},
		{Series: Series{"errors", "#000"}, X: []float64{1}, Y: []float64{2}, Dots: true},
	}}.Write(&b)
	if n, err := CheckCharts([]byte(b.String())); n != 1 || err != nil {
		t.Fatalf("checked %d charts: %v\n%s", n, err, b.String())
	}
}

// A log line chart keeps a 0.5 ms p50 readable under a 400 ms p99: the
// p50 line sits a third of the way up, not on the axis; a zero sits on
// the axis; a narrow range stays linear.
func TestLineChartLog(t *testing.T) {
	var b strings.Builder
	LineChart{Title: "lat", XUnit: "seconds", YUnit: "ms", Log: true, Height: 300, Lines: []Line{
		{Series: Series{"p50", "#00f"}, X: []float64{0, 1, 2}, Y: []float64{0.5, 0.5, 0}},
		{Series: Series{"p99", "#f00"}, X: []float64{0, 1, 2}, Y: []float64{400, 30, 0}},
	}}.Write(&b)
	svg := b.String()
	if n, err := CheckCharts([]byte(svg)); n != 1 || err != nil {
		t.Fatalf("checked %d charts: %v\n%s", n, err, svg)
	}
	for _, want := range []string{"ms (log scale)", ">0.1<", ">1<", ">1000<"} {
		if !strings.Contains(svg, want) {
			t.Errorf("log line chart lacks %q:\n%s", want, svg)
		}
	}
	// The y axis runs 0.1..1000 over 300 px from y=30: 0.5 is at
	// 30+300*(1-log10(5)/4) = 277.6, 0 on the axis at 330.
	if !strings.Contains(svg, ",277.6 ") || !strings.Contains(svg, ",330.0\"") {
		t.Errorf("p50 of 0.5 or a zero misplaced on the log axis:\n%s", svg)
	}
	b.Reset()
	LineChart{Title: "lat", XUnit: "s", YUnit: "ms", Log: true, Lines: []Line{
		{Series: Series{"p50", "#00f"}, X: []float64{0, 1}, Y: []float64{20, 90}}}}.Write(&b)
	if strings.Contains(b.String(), "log scale") {
		t.Errorf("20..90 should stay linear:\n%s", b.String())
	}
}

func TestCheckChartsRejects(t *testing.T) {
	bare := `<svg xmlns="http://www.w3.org/2000/svg" class="chart"><rect/></svg>`
	if _, err := CheckCharts([]byte(bare)); err == nil {
		t.Error("a chart without axes passed")
	}
	noLegend := `<svg class="chart"><line class="axis-line"/><line class="tick"/><line class="tick"/><text class="tick-label">0</text><text class="tick-label">5</text><text class="axis-label">ms</text></svg>`
	if _, err := CheckCharts([]byte(noLegend)); err == nil || !strings.Contains(err.Error(), "legend") {
		t.Errorf("a chart without a legend: %v", err)
	}
}

func TestNiceNumbers(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 0.5: "0.5", 20: "20", 1500: "1500", 15000: "15k", 2e6: "2M", 0.001: "0.001"} {
		if got := Number(v); got != want {
			t.Errorf("Number(%v) = %q, want %q", v, got, want)
		}
	}
	if got := LinearTicks(13); got[len(got)-1] != 15 {
		t.Errorf("LinearTicks(13) = %v", got)
	}
}
