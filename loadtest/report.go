package loadtest

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/ocbench/ocbench/internal/svgchart"
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
	if r.FreshSessions > 0 {
		fmt.Fprintf(tw, "fresh sessions\t%d (runs that found every --sessions session in flight)\n", r.FreshSessions)
	}
	if r.InBandFailures >= 0 {
		fmt.Fprintf(tw, "failed after 200\t%d (the gateway's count of streams and runs that failed in-band)\n", r.InBandFailures)
	}
	if r.GatewayCPUUsPerReq > 0 || r.LoadgenCPUUsPerReq > 0 {
		fmt.Fprintf(tw, "CPU per request\tgateway process %.0fµs  load generator %.0fµs\n", r.GatewayCPUUsPerReq, r.LoadgenCPUUsPerReq)
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

// rateOf is the request rate of second p: its requests over the part of
// that second the run lasted, so that a run of 2.5 s does not show its
// rate halving in its last half second. A second past the run's end (a
// request sent a moment late) has no rate of its own; its requests still
// count in the latency plot.
func (r *Report) rateOf(p Point) (float64, bool) {
	covered := min(1, r.DurationS-float64(p.Second))
	if r.DurationS <= 0 {
		covered = 1
	}
	if covered < 0.1 {
		return 0, false
	}
	return float64(p.Requests) / covered, true
}

// WriteHTML writes a self-contained page with the run's numbers and two
// plots over the run's seconds, as vegeta's plot shows them: the latency
// percentiles of each second (p50, p99, with the seconds that had errors
// marked) and the rate of requests sent each second.
func (r *Report) WriteHTML(w io.Writer) error {
	var sec, p50, p99, rateX, rate, errX, errY []float64
	for _, p := range r.Timeline {
		x := float64(p.Second)
		sec = append(sec, x)
		p50 = append(p50, p.P50Ms)
		p99 = append(p99, p.P99Ms)
		if v, ok := r.rateOf(p); ok {
			rateX, rate = append(rateX, x), append(rate, v)
		}
		if p.Errors > 0 {
			errX = append(errX, x)
			errY = append(errY, p.P99Ms)
		}
	}
	var lat, rt strings.Builder
	noData := len(r.Timeline) == 0
	if !noData {
		lines := []svgchart.Line{
			{Series: svgchart.Series{Name: "p50 latency", Color: "#2b7bb9"}, X: sec, Y: p50},
			{Series: svgchart.Series{Name: "p99 latency", Color: "#c0504d"}, X: sec, Y: p99},
		}
		if len(errX) > 0 {
			lines = append(lines, svgchart.Line{Series: svgchart.Series{Name: "second with errors", Color: "#000"}, X: errX, Y: errY, Dots: true})
		}
		svgchart.LineChart{Title: "latency per second", XUnit: "seconds since the start", YUnit: "latency (ms)", Log: true, Lines: lines}.Write(&lat)
		svgchart.LineChart{Title: "request rate per second", XUnit: "seconds since the start", YUnit: "requests per second", Height: 140,
			Lines: []svgchart.Line{{Series: svgchart.Series{Name: "requests sent", Color: "#2e7d32"}, X: rateX, Y: rate}}}.Write(&rt)
	}
	var table strings.Builder
	r.WriteTable(&table)
	return loadTmpl.Execute(w, map[string]any{
		"R": r, "NoData": noData, "Latency": template.HTML(lat.String()), "Rate": template.HTML(rt.String()), "Table": table.String(),
	})
}

var loadTmpl = template.Must(template.New("load").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"/><title>ocbench load test</title>
<style>body{font:14px/1.4 system-ui,sans-serif;margin:2em} pre{background:#f6f6f6;padding:1em} svg text{font-family:system-ui,sans-serif} .note{color:#666;font-size:12px}</style>
</head><body><h1>ocbench load test</h1>
{{if .NoData}}<p>No data: the run recorded no second of traffic.</p>{{else}}
<h2>Latency per second</h2>
<p class="note">Latency is the time from sending a request to reading its whole response (the last byte of the stream); p50 and p99 over the requests of each second.</p>
{{.Latency}}
<h2>Request rate</h2>
<p class="note">Requests sent in each second (the attack's rate; a ramp shows as a slope).</p>
{{.Rate}}{{end}}
<h2>Summary</h2>
<pre>{{.Table}}</pre>
</body></html>
`))
