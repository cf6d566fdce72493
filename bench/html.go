package bench

import (
	"fmt"
	"html/template"
	"io"
	"math"
)

// bar is one horizontal bar of a chart, laid out in SVG units.
type bar struct {
	Label string
	Value string
	Y     int
	W     float64
	Ours  bool
}

// chart is one SVG bar chart.
type chart struct {
	Title  string
	Note   string
	Height int
	Bars   []bar
}

const (
	chartLabelW = 330
	chartBarW   = 520
	chartRowH   = 22
)

// newChart lays out bars for values v (all non-negative); log scale when the
// values span more than two orders of magnitude.
func newChart(title, note string, labels []string, v []float64, vals []string, ours []bool) chart {
	c := chart{Title: title, Note: note, Height: len(v)*chartRowH + 10}
	maxV, minV := 0.0, math.Inf(1)
	for _, x := range v {
		maxV = math.Max(maxV, x)
		if x > 0 {
			minV = math.Min(minV, x)
		}
	}
	logScale := maxV > 0 && minV > 0 && maxV/minV > 100
	if logScale {
		c.Note += " (log scale)"
	}
	for i, x := range v {
		w := 0.0
		switch {
		case maxV <= 0 || x <= 0:
		case logScale:
			lo := math.Log10(minV) - 0.3
			w = chartBarW * (math.Log10(x) - lo) / (math.Log10(maxV) - lo)
		default:
			w = chartBarW * x / maxV
		}
		c.Bars = append(c.Bars, bar{Label: labels[i], Value: vals[i], Y: i*chartRowH + 4, W: math.Max(w, 1), Ours: ours[i]})
	}
	return c
}

// WriteHTML writes a self-contained HTML report (inline CSS and SVG, no
// scripts, nothing fetched): throughput per scenario, ocbench against each
// peer, allocations per operation, and the full table.
func (rep *Report) WriteHTML(w io.Writer) error {
	var labels, vals []string
	var thr, allocs []float64
	var ours []bool
	var allocVals []string
	for _, s := range rep.Summaries {
		if s.Err != "" {
			continue
		}
		labels = append(labels, s.Name+" · "+s.Impl)
		ours = append(ours, s.Impl == Ours)
		opsPerSec := 1e9 / s.NsPerOp
		thr = append(thr, opsPerSec)
		v := fmtCount(opsPerSec) + " op/s"
		if s.MBPerSec > 0 {
			v += fmt.Sprintf(", %.1f MB/s", s.MBPerSec)
		}
		vals = append(vals, v)
		allocs = append(allocs, s.AllocsPerOp)
		allocVals = append(allocVals, fmtAllocs(s.AllocsPerOp)+" allocs/op")
	}
	var rl, rv []string
	var speed []float64
	var rOurs []bool
	for _, r := range rep.Ratios {
		rl = append(rl, r.Stage+" / "+r.Input+" vs "+r.Peer)
		speed = append(speed, r.Speedup)
		rv = append(rv, fmt.Sprintf("%.1fx", r.Speedup))
		rOurs = append(rOurs, r.Speedup >= 1)
	}
	charts := []chart{
		newChart("Throughput per scenario", "operations per second, higher is better", labels, thr, vals, ours),
		newChart("ocbench against each peer", "peer time / ocbench time on the same input; above 1x ocbench is faster", rl, speed, rv, rOurs),
		newChart("Allocations per operation", "lower is better", labels, allocs, allocVals, ours),
	}
	return htmlTmpl.Execute(w, struct {
		R      *Report
		Charts []chart
		LabelW int
		BarW   int
	}{rep, charts, chartLabelW, chartBarW})
}

var htmlTmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"dur": fmtDur, "num": fmtNum, "count": fmtCount, "allocs": fmtAllocs, "bytes": fmtBytes,
	"add":  func(a, b int) int { return a + b },
	"addf": func(a float64, b int) float64 { return a + float64(b) },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"/><title>ocbench report</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
h1{font-size:1.4em} h2{font-size:1.1em;margin-top:2em}
table{border-collapse:collapse} td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right}
td:first-child,th:first-child,td:nth-child(2){text-align:left}
.ours{fill:#2b7bb9} .peer{fill:#c0504d} .lbl{font-size:12px} .val{font-size:11px;fill:#333}
.note{color:#666;font-size:12px}
</style></head><body>
<h1>ocbench benchmark report</h1>
<p class="note">{{.R.Started.Format "2006-01-02 15:04:05 MST"}} · {{.R.GoVersion}} {{.R.GOOS}}/{{.R.GOARCH}} · GOMAXPROCS {{.R.CPUs}} · {{.R.Duration}} per scenario × {{.R.Count}}</p>
{{range .Charts}}{{if .Bars}}
<h2>{{.Title}}</h2><p class="note">{{.Note}}</p>
<svg xmlns="http://www.w3.org/2000/svg" width="{{add (add $.LabelW $.BarW) 200}}" height="{{.Height}}" role="img" aria-label="{{.Title}}">
{{range .Bars}}<text class="lbl" x="{{add $.LabelW -6}}" y="{{add .Y 13}}" text-anchor="end">{{.Label}}</text>
<rect class="{{if .Ours}}ours{{else}}peer{{end}}" x="{{$.LabelW}}" y="{{.Y}}" width="{{printf "%.1f" .W}}" height="16"/>
<text class="val" x="{{printf "%.1f" (addf .W (add $.LabelW 4))}}" y="{{add .Y 12}}">{{.Value}}</text>
{{end}}</svg>{{end}}{{end}}
<h2>All scenarios (median of {{.R.Count}})</h2>
<table><tr><th>scenario</th><th>impl</th><th>time/op</th><th>MB/s</th><th>events/s</th><th>allocs/op</th><th>B/op</th><th>p50</th><th>p99</th><th>error</th></tr>
{{range .R.Summaries}}<tr><td>{{.Name}}</td><td>{{.Impl}}</td><td>{{dur .NsPerOp}}</td><td>{{num .MBPerSec}}</td><td>{{count .EventsPerSec}}</td><td>{{allocs .AllocsPerOp}}</td><td>{{bytes .BytesPerOp}}</td><td>{{dur .P50Ns}}</td><td>{{dur .P99Ns}}</td><td>{{.Err}}</td></tr>
{{end}}</table>
{{with .R.Notes}}<h2>Notes</h2><ul>{{range .}}<li>{{.}}</li>{{end}}</ul>{{end}}
</body></html>
`))
