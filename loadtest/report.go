package loadtest

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"
)

// WriteJSON writes r as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes r for people.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	rate := fmt.Sprintf("%.0f/s", r.Rate)
	if r.RampTo > r.Rate {
		rate = fmt.Sprintf("%.0f/s -> %.0f/s", r.Rate, r.RampTo)
	}
	fmt.Fprintf(tw, "target\t%s%s\n", r.Target, r.Path)
	fmt.Fprintf(tw, "rate\t%s for %.0fs\n", rate, r.DurationS)
	fmt.Fprintf(tw, "requests\t%d (%.1f/s), success %.2f%%\n", r.Requests, r.Throughput, 100*r.SuccessRate)
	fmt.Fprintf(tw, "latency\tp50 %.2fms  p90 %.2fms  p99 %.2fms  max %.2fms\n", r.LatencyP50Ms, r.LatencyP90Ms, r.LatencyP99Ms, r.LatencyMaxMs)
	fmt.Fprintf(tw, "first event\tp50 %.2fms  p99 %.2fms  (%d sampled streams, %d failed, %.1f events each)\n",
		r.TTFEP50Ms, r.TTFEP99Ms, r.Streams, r.StreamErrors, r.EventsPerSteam)
	fmt.Fprintf(tw, "event gaps\tp50 %.3fms  p99 %.3fms  max %.3fms\n", r.GapP50Ms, r.GapP99Ms, r.GapMaxMs)
	if r.InBandFailures >= 0 {
		fmt.Fprintf(tw, "failed after 200\t%d (the gateway's count of streams and runs that failed in-band)\n", r.InBandFailures)
	}
	if r.PeakRSSBytes > 0 {
		fmt.Fprintf(tw, "gateway memory\tpeak RSS %.1f MiB\n", float64(r.PeakRSSBytes)/(1<<20))
	}
	codes := make([]string, 0, len(r.StatusCodes))
	for c, n := range r.StatusCodes {
		codes = append(codes, fmt.Sprintf("%s×%d", c, n))
	}
	sort.Strings(codes)
	fmt.Fprintf(tw, "status codes\t%s\n", strings.Join(codes, " "))
	for i, e := range r.Errors {
		if i == 5 {
			fmt.Fprintf(tw, "\t... %d more\n", len(r.Errors)-5)
			break
		}
		fmt.Fprintf(tw, "error\t%s\n", e)
	}
	return tw.Flush()
}

// WriteHTML writes a self-contained page with the run's numbers and a plot
// of latency (p50, p99) and errors per second.
func (r *Report) WriteHTML(w io.Writer) error {
	const W, H, pad = 760.0, 260.0, 40.0
	maxMs := 1.0
	for _, p := range r.Timeline {
		maxMs = math.Max(maxMs, p.P99Ms)
	}
	n := math.Max(float64(len(r.Timeline)-1), 1)
	pts := func(f func(Point) float64) string {
		var b strings.Builder
		for i, p := range r.Timeline {
			x := pad + (W-2*pad)*float64(i)/n
			y := H - pad - (H-2*pad)*f(p)/maxMs
			fmt.Fprintf(&b, "%.1f,%.1f ", x, y)
		}
		return b.String()
	}
	var errMarks []struct{ X, Y float64 }
	for i, p := range r.Timeline {
		if p.Errors > 0 {
			errMarks = append(errMarks, struct{ X, Y float64 }{pad + (W-2*pad)*float64(i)/n, H - pad})
		}
	}
	var table strings.Builder
	r.WriteTable(&table)
	return loadTmpl.Execute(w, map[string]any{
		"R": r, "W": W, "H": H, "Pad": pad, "MaxMs": fmt.Sprintf("%.1f", maxMs),
		"P50": pts(func(p Point) float64 { return p.P50Ms }), "P99": pts(func(p Point) float64 { return p.P99Ms }),
		"Errs": errMarks, "Table": table.String(), "Bottom": H - pad, "Right": W - pad,
	})
}

var loadTmpl = template.Must(template.New("load").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"/><title>ocbench load test</title>
<style>body{font:14px/1.4 system-ui,sans-serif;margin:2em} pre{background:#f6f6f6;padding:1em}
.p50{stroke:#2b7bb9;fill:none;stroke-width:2} .p99{stroke:#c0504d;fill:none;stroke-width:2} .ax{stroke:#999} .err{fill:#c00}</style>
</head><body><h1>ocbench load test</h1>
<svg xmlns="http://www.w3.org/2000/svg" width="{{.W}}" height="{{.H}}" role="img" aria-label="latency per second">
<line class="ax" x1="{{.Pad}}" y1="{{.Bottom}}" x2="{{.Right}}" y2="{{.Bottom}}"/>
<line class="ax" x1="{{.Pad}}" y1="{{.Pad}}" x2="{{.Pad}}" y2="{{.Bottom}}"/>
<text x="4" y="{{.Pad}}" font-size="11">{{.MaxMs}} ms</text><text x="4" y="{{.Bottom}}" font-size="11">0</text>
<polyline class="p50" points="{{.P50}}"/><polyline class="p99" points="{{.P99}}"/>
{{range .Errs}}<circle class="err" cx="{{.X}}" cy="{{.Y}}" r="3"/>{{end}}
<text x="{{.Right}}" y="{{.Pad}}" font-size="11" text-anchor="end" fill="#2b7bb9">p50</text>
<text x="{{.Right}}" y="{{printf "%.0f" .Pad}}" dy="14" font-size="11" text-anchor="end" fill="#c0504d">p99</text>
</svg>
<p>Latency per second of the run (blue p50, red p99; red dots: seconds with errors).</p>
<pre>{{.Table}}</pre>
</body></html>
`))
