package bench

import (
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/ocbench/ocbench/internal/svgchart"
)

// Colours of ocbench and of the peers in every chart.
var (
	seriesImpl  = []svgchart.Series{{Name: "ocbench", Color: "#2b7bb9"}, {Name: "peer", Color: "#c0504d"}}
	seriesRatio = []svgchart.Series{{Name: "ocbench faster", Color: "#2b7bb9"}, {Name: "ocbench slower", Color: "#c0504d"}}
)

// chart is one titled chart of the report.
type chart struct {
	Title string
	Note  string
	SVG   template.HTML
}

func svgOf(c svgchart.BarChart) template.HTML {
	var b strings.Builder
	c.Write(&b)
	return template.HTML(b.String()) // svgchart escapes every text it writes
}

// WriteHTML writes a self-contained HTML report (inline CSS and SVG, no
// scripts, nothing fetched): throughput per scenario, ocbench against each
// peer, allocations per operation, and the full table. Each chart has an
// axis with ticks and its unit (a log axis says so) and a legend.
func (rep *Report) WriteHTML(w io.Writer) error {
	var thr, allocs, speed []svgchart.Bar
	for _, s := range rep.Summaries {
		if s.Err != "" {
			continue
		}
		series := 1
		if s.Impl == Ours {
			series = 0
		}
		label := s.Name + " · " + s.Impl
		opsPerSec := 1e9 / s.NsPerOp
		v := fmtCount(opsPerSec) + " op/s"
		if s.MBPerSec > 0 {
			v += fmt.Sprintf(", %.1f MB/s", s.MBPerSec)
		}
		thr = append(thr, svgchart.Bar{Label: label, Value: opsPerSec, Text: v, Series: series})
		if s.MemNotMeasured {
			continue
		}
		allocs = append(allocs, svgchart.Bar{Label: label, Value: s.AllocsPerOp, Text: fmtAllocs(s.AllocsPerOp) + " allocs/op", Series: series})
	}
	for _, r := range rep.Ratios {
		series := 0
		if r.Speedup < 1 {
			series = 1
		}
		speed = append(speed, svgchart.Bar{Label: r.Stage + "/" + r.Input + " vs " + r.Peer, Value: r.Speedup,
			Text: fmt.Sprintf("%.1fx", r.Speedup), Series: series})
	}
	var charts []chart
	if len(thr) > 0 {
		charts = append(charts, chart{"Throughput per scenario", "higher is better; scenarios differ in size, compare rows of one scenario",
			svgOf(svgchart.BarChart{Title: "Throughput per scenario", Unit: "operations per second", Series: seriesImpl, Bars: thr, Log: true})})
	}
	if len(speed) > 0 {
		charts = append(charts, chart{"ocbench against each peer", "peer time / ocbench time on the same input; right of the dashed 1x line ocbench is faster",
			svgOf(svgchart.BarChart{Title: "ocbench against each peer", Unit: "speedup (peer time / ocbench time)", Series: seriesRatio, Bars: speed, Log: true, Mark: 1})})
	}
	if len(allocs) > 0 {
		charts = append(charts, chart{"Allocations per operation", "lower is better; 0 draws no bar",
			svgOf(svgchart.BarChart{Title: "Allocations per operation", Unit: "allocations per operation", Series: seriesImpl, Bars: allocs, Log: true})})
	}
	return htmlTmpl.Execute(w, struct {
		R      *Report
		Charts []chart
	}{rep, charts})
}

var htmlTmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"dur": fmtDur, "num": fmtNum, "count": fmtCount, "allocs": fmtAllocs, "bytes": fmtBytes,
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"/><title>ocbench report</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
h1{font-size:1.4em} h2{font-size:1.1em;margin-top:2em}
table{border-collapse:collapse} td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right}
td:first-child,th:first-child,td:nth-child(2){text-align:left}
svg text{font-family:system-ui,sans-serif}
.note{color:#666;font-size:12px}
</style></head><body>
<h1>ocbench benchmark report</h1>
<p class="note">{{.R.Started.Format "2006-01-02 15:04:05 MST"}} · {{.R.GoVersion}} {{.R.GOOS}}/{{.R.GOARCH}} · GOMAXPROCS {{.R.CPUs}} · {{.R.Duration}} per scenario × {{.R.Count}}</p>
{{range .Charts}}
<h2>{{.Title}}</h2><p class="note">{{.Note}}</p>
{{.SVG}}{{end}}
<h2>All scenarios (median of {{.R.Count}})</h2>
<table><tr><th>scenario</th><th>impl</th><th>time/op</th><th>MB/s</th><th>events/s</th><th>allocs/op</th><th>B/op</th><th>p50</th><th>p99</th><th>error</th></tr>
{{range .R.Summaries}}<tr><td>{{.Name}}</td><td>{{.Impl}}</td><td>{{dur .NsPerOp}}</td><td>{{num .MBPerSec}}</td><td>{{count .EventsPerSec}}</td>{{if .MemNotMeasured}}<td>-</td><td>-</td>{{else}}<td>{{allocs .AllocsPerOp}}</td><td>{{bytes .BytesPerOp}}</td>{{end}}<td>{{dur .P50Ns}}</td><td>{{dur .P99Ns}}</td><td>{{.Err}}</td></tr>
{{end}}</table>
{{with .R.Notes}}<h2>Notes</h2><ul>{{range .}}<li>{{.}}</li>{{end}}</ul>{{end}}
</body></html>
`))
