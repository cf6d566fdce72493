package cacheprofile

import (
	"bufio"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ocbench/ocbench/internal/svgchart"
)

// pctOrNoData is a/b as a percentage, or "no data" when b is 0.
func pctOrNoData(a, b int64) string {
	if b == 0 {
		return "no data"
	}
	return fmt.Sprintf("%.1f%%", pct(a, b))
}

func pct(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// group formats n with thousands separators.
func group(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func (r *Report) money(v float64) string {
	if !r.PriceKnown {
		return "n/a (price unknown)"
	}
	switch r.Currency {
	case "USD":
		return fmt.Sprintf("$%.2f", v)
	case "":
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.2f %s", v, r.Currency)
}

func explainedText(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// WriteText writes the human summary of the reports.
func WriteText(w io.Writer, reps []*Report) error {
	bw := bufio.NewWriter(w)
	for i, r := range reps {
		if i > 0 {
			fmt.Fprintln(bw)
		}
		r.writeText(bw)
	}
	if len(reps) > 1 {
		var calls, agree, withUsage, misses, unexplained int
		var prompt, read int64
		for _, r := range reps {
			calls += r.Calls
			agree += r.All.Agree
			withUsage += r.All.Calls
			misses += r.RecordedMisses
			unexplained += r.UnexplainedN
			prompt += r.Predicted.Prompt
			read += r.Predicted.CacheRead
		}
		fmt.Fprintf(bw, "\nall %d sessions: %d calls, predicted hit rate %.1f%%; %d of %d calls with usage agree; %d recorded misses, %d unexplained\n",
			len(reps), calls, pct(read, prompt), agree, withUsage, misses, unexplained)
	}
	return bw.Flush()
}

func (r *Report) writeText(w io.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	p("%s  (%s, session %s)\n", r.File, r.Source, r.SessionID)
	p("  provider %s, model %s\n", strings.Join(r.Providers, ","), strings.Join(r.Models, ","))
	for _, ru := range r.Rules {
		p("  cache rules    %s\n", ru)
	}
	p("  calls          %d (%d failed or injected calls skipped)\n", r.Calls, r.SkippedCalls)
	p("  unseen part    %s tokens of tools + system prompt (%s)\n", group(int64(r.Unseen)), r.UnseenFrom)
	p("                 %14s %8s %14s %8s\n", "predicted", "", "recorded", "")
	row := func(name string, a, b int64, den1, den2 int64) {
		p("  %-14s %14s %8s %14s %8s\n", name, group(a), pctOrNoData(a, den1), group(b), pctOrNoData(b, den2))
	}
	p("  %-14s %14s %8s %14s\n", "prompt tokens", group(r.Predicted.Prompt), "", group(r.Recorded.Prompt))
	row("cache read", r.Predicted.CacheRead, r.Recorded.CacheRead, r.Predicted.Prompt, r.Recorded.Prompt)
	row("cache write", r.Predicted.CacheWrite, r.Recorded.CacheWrite, r.Predicted.Prompt, r.Recorded.Prompt)
	row("uncached", r.Predicted.Uncached, r.Recorded.Uncached, r.Predicted.Prompt, r.Recorded.Prompt)
	p("  hit rate       %s predicted, %s recorded (cache reads / prompt tokens)\n", rateOrNoData(r.HitRate, r.Predicted.Prompt), rateOrNoData(r.RecordedHitRate, r.Recorded.Prompt))
	p("  input cost at list prices: %s with the cache as predicted, %s without any cache", r.money(r.Cost), r.money(r.CostNoCache))
	if r.All.Calls > 0 {
		p(", %s as recorded", r.money(r.RecordedCost))
	}
	p("\n")
	if r.All.Calls > 0 {
		p("  agreement on hit/miss: %d of %d calls (%.1f%%); in tool loops %d of %d (%.1f%%), predicted reads %s vs recorded %s on predicted hits (%.2f%% off)\n",
			r.All.Agree, r.All.Calls, 100*r.All.Rate(), r.ToolLoop.Agree, r.ToolLoop.Calls, 100*r.ToolLoop.Rate(),
			group(r.ToolLoop.PredictedHitRead), group(r.ToolLoop.RecordedOnHitRead), 100*r.ToolLoop.ReadError())
		p("  recorded misses %d: explained %d (%s), UNEXPLAINED %d", r.RecordedMisses, r.RecordedMisses-r.UnexplainedN, explainedText(r.Explained), r.UnexplainedN)
		if r.UnexplainedN > 0 {
			p(" (%d of them the first call after a user message)", r.UnexplainedNewTurn)
		}
		p("\n")
	} else {
		p("  no call records cache usage: predictions only\n")
	}
	if len(r.TopMisses) > 0 {
		p("  most expensive misses:\n")
		for _, c := range r.TopMisses {
			first := ""
			if len(c.Evidence) > 0 {
				first = c.Evidence[0]
			}
			p("    line %-6d %s  %s  lost %s tokens, %s: %s\n", c.Line, c.Time.Format(time.RFC3339), r.money(c.MissCost),
				group(int64(max(c.Predicted.LostTokens, missTokens(&c)))), c.Explanation, first)
		}
	}
	if r.UnexplainedN > 0 {
		p("  UNEXPLAINED misses (no expiry and no prefix change in the transcript: something outside it changed):\n")
		for _, c := range r.Unexplained {
			p("    line %-6d %s  recorded read %d write %d; predicted read %d\n", c.Line, c.Time.Format(time.RFC3339),
				c.Recorded.CacheRead, c.Recorded.CacheWrite, c.Predicted.CacheRead)
			for _, e := range c.Evidence {
				p("      - %s\n", e)
			}
		}
		if r.UnexplainedN > len(r.Unexplained) {
			p("    ... %d more\n", r.UnexplainedN-len(r.Unexplained))
		}
	}
	p("  input: %d entries, %d of unknown type skipped, %d malformed lines skipped", r.Entries, r.UnknownSkipped, r.BadLines)
	if r.Torn {
		p(", torn last line at byte %d (ignored)", r.TornOffset)
	}
	if r.Orphans > 0 {
		p(", %d entries with a missing parent", r.Orphans)
	}
	p("\n")
	writeSessionFacts(p, r)
}

func missTokens(c *Call) int {
	if c.Recorded != nil {
		return int(c.Recorded.CacheWrite + c.Recorded.Input)
	}
	return c.Predicted.CacheWrite + c.Predicted.Uncached
}

// JSONStream writes reports as one JSON document while sessions are being
// profiled: {"sessions":[{"file":…,"sessionId":…,"calls":[…],"summary":{…}}]}.
// Calls are written as they come, so memory does not grow with the session.
type JSONStream struct {
	w      *bufio.Writer
	enc    *json.Encoder
	nSess  int
	nCalls int
	open   bool
}

// NewJSONStream starts the document on w.
func NewJSONStream(w io.Writer) *JSONStream {
	bw := bufio.NewWriter(w)
	bw.WriteString(`{"sessions":[`)
	return &JSONStream{w: bw, enc: json.NewEncoder(bw)}
}

// Hook sets the callbacks of opts that feed the stream.
func (j *JSONStream) Hook(opts *Options) {
	opts.OnBegin = j.begin
	opts.OnCall = j.call
	opts.OnEnd = j.end
}

func (j *JSONStream) begin(file, session string) {
	if j.nSess > 0 {
		j.w.WriteByte(',')
	}
	j.nSess++
	j.nCalls = 0
	j.open = true
	j.w.WriteString(`{"file":`)
	j.enc.Encode(file)
	j.w.WriteString(`,"calls":[`)
}

func (j *JSONStream) call(c *Call) {
	if j.nCalls > 0 {
		j.w.WriteByte(',')
	}
	j.nCalls++
	j.enc.Encode(c)
}

func (j *JSONStream) end(r *Report) {
	if !j.open {
		return
	}
	j.open = false
	j.w.WriteString(`],"summary":`)
	j.enc.Encode(r)
	j.w.WriteByte('}')
}

// Close ends the document and flushes it.
func (j *JSONStream) Close() error {
	if j.open {
		j.w.WriteString(`]}`)
		j.open = false
	}
	j.w.WriteString("]}\n")
	return j.w.Flush()
}

// WriteHTML writes a self-contained page (inline SVG and CSS, no scripts,
// nothing fetched) with each report's summary and a timeline of cached
// against uncached tokens per call.
func WriteHTML(w io.Writer, reps []*Report) error {
	bw := bufio.NewWriter(w)
	e := html.EscapeString
	bw.WriteString(`<!DOCTYPE html><html><head><meta charset="utf-8"><title>ocbench cache-profile</title><style>
body{font:14px system-ui,sans-serif;margin:24px;color:#222}h2{margin-top:32px}
table{border-collapse:collapse;margin-bottom:12px}td,th{padding:2px 10px;text-align:right;border-bottom:1px solid #eee}
td:first-child,th:first-child{text-align:left}.ev{color:#555;font-size:12px;text-align:left}
svg text{font-family:system-ui,sans-serif}
pre{white-space:pre-wrap}</style></head><body><h1>Prompt-cache profile</h1>
`)
	for _, r := range reps {
		session := ""
		if r.SessionID != "" {
			session = ", session " + r.SessionID
		}
		fmt.Fprintf(bw, "<h2>%s</h2><p>%s%s; provider %s, model %s; %d calls</p>\n",
			e(r.File), e(r.Source), e(session), e(strings.Join(r.Providers, ",")), e(strings.Join(r.Models, ",")), r.Calls)
		var sb strings.Builder
		r.writeText(&sb)
		fmt.Fprintf(bw, "<details><summary>Text summary</summary><pre>%s</pre></details>\n", e(sb.String()))
		// A simulation (--workspace) or a session without usage records
		// nothing: its recorded column says so instead of showing zeros.
		rec := func(v int64) string { return group(v) }
		recCost := r.money(r.RecordedCost)
		if r.Recorded.Prompt <= 0 {
			rec = func(int64) string { return "no data" }
			recCost = "no data"
		}
		bw.WriteString(`<table><tr><th></th><th>predicted</th><th>recorded</th></tr>`)
		fmt.Fprintf(bw, "<tr><td>prompt tokens</td><td>%s</td><td>%s</td></tr>", group(r.Predicted.Prompt), rec(r.Recorded.Prompt))
		fmt.Fprintf(bw, "<tr><td>cache read</td><td>%s</td><td>%s</td></tr>", group(r.Predicted.CacheRead), rec(r.Recorded.CacheRead))
		fmt.Fprintf(bw, "<tr><td>cache write</td><td>%s</td><td>%s</td></tr>", group(r.Predicted.CacheWrite), rec(r.Recorded.CacheWrite))
		fmt.Fprintf(bw, "<tr><td>uncached</td><td>%s</td><td>%s</td></tr>", group(r.Predicted.Uncached), rec(r.Recorded.Uncached))
		fmt.Fprintf(bw, "<tr><td>hit rate</td><td>%s</td><td>%s</td></tr>", rateOrNoData(r.HitRate, r.Predicted.Prompt), rateOrNoData(r.RecordedHitRate, r.Recorded.Prompt))
		fmt.Fprintf(bw, "<tr><td>input cost</td><td>%s</td><td>%s</td></tr>", e(r.money(r.Cost)), e(recCost))
		fmt.Fprintf(bw, "<tr><td>without cache</td><td>%s</td><td></td></tr></table>\n", e(r.money(r.CostNoCache)))
		writeSVG(bw, r)
		if len(r.TopMisses) > 0 {
			bw.WriteString("<h3>Most expensive misses</h3><table><tr><th>line</th><th>time</th><th>cost</th><th>cause</th><th>evidence</th></tr>")
			for _, c := range r.TopMisses {
				fmt.Fprintf(bw, "<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td class=ev>%s</td></tr>", lineText(c.Line),
					c.Time.Format(time.RFC3339), e(r.money(c.MissCost)), e(c.Explanation), e(strings.Join(c.Evidence, "; ")))
			}
			bw.WriteString("</table>\n")
		}
		if r.UnexplainedN > 0 {
			fmt.Fprintf(bw, "<h3>Unexplained misses: %d</h3><p>The transcript shows no expiry and no change of prefix: the system prompt, tools or request options changed outside it.</p><ul>", r.UnexplainedN)
			for _, c := range r.Unexplained {
				fmt.Fprintf(bw, "<li>line %d: %s</li>", c.Line, e(strings.Join(c.Evidence, "; ")))
			}
			bw.WriteString("</ul>\n")
		}
	}
	bw.WriteString("</body></html>\n")
	return bw.Flush()
}

// lineText is a call's line in its file, or "-" for a simulated call,
// which has none.
func lineText(line int64) string {
	if line <= 0 {
		return "-"
	}
	return strconv.FormatInt(line, 10)
}

// rateOrNoData prints a hit rate, or "no data" when there were no prompt
// tokens to rate (0.0% would claim every token missed the cache).
func rateOrNoData(rate float64, prompt int64) string {
	if prompt <= 0 {
		return "no data"
	}
	return fmt.Sprintf("%.1f%%", 100*rate)
}

// Colours of the timeline, named in its legend.
var timelineSeries = []svgchart.Series{
	{Name: "cache read", Color: "#2e7d32"}, {Name: "cache write", Color: "#f9a825"}, {Name: "uncached", Color: "#9e9e9e"},
	{Name: "recorded read", Color: "#1565c0"}, {Name: "predicted miss", Color: "#c62828"}, {Name: "recorded miss", Color: "#6a1b9a"},
}

// writeSVG draws stacked bars per timeline point: cache read, cache write,
// uncached prompt tokens; recorded reads as a line; predicted and recorded
// misses as red and purple marks under the axis. The y axis is in tokens,
// the x axis in calls, both with ticks; a legend names the colours.
func writeSVG(w *bufio.Writer, r *Report) {
	pts := r.Timeline
	if len(pts) == 0 {
		w.WriteString("<p>No data: no call with usage to chart.</p>\n")
		return
	}
	const W, H, padL, padT, padB = 1000.0, 380.0, 80.0, 34.0, 64.0
	top := 1.0
	var has [6]bool // which of timelineSeries the chart draws
	for _, p := range pts {
		top = max(top, p.Read+p.Write+p.Uncached, p.RecRead)
		has[0] = has[0] || p.Read > 0
		has[1] = has[1] || p.Write > 0
		has[2] = has[2] || p.Uncached > 0
		has[3] = has[3] || p.RecRead >= 0
		has[4] = has[4] || p.Miss
		has[5] = has[5] || p.RecMiss
	}
	// The legend names only the colours drawn: a simulation has no
	// recorded reads or misses to look for.
	var legend []svgchart.Series
	for k, s := range timelineSeries {
		if has[k] {
			legend = append(legend, s)
		}
	}
	ticks := svgchart.LinearTicks(top)
	top = ticks[len(ticks)-1]
	bw := (W - padL - 10) / float64(len(pts))
	base := H - padB
	y := func(v float64) float64 { return base - v/top*(base-padT) }
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" role="img" aria-label="prompt tokens per call">`, W, H, W, H)
	svgchart.Legend(w, legend, padL, 16)
	w.WriteString(`<g class="axis y-axis">`)
	for _, t := range ticks {
		fmt.Fprintf(w, `<line class="grid" x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#eee"/><line class="tick" x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#666"/><text class="tick-label" x="%.0f" y="%.1f" font-size="11" text-anchor="end">%s</text>`,
			padL, y(t), W-10, y(t), padL-4, y(t), padL, y(t), padL-6, y(t)+4, svgchart.Number(t))
	}
	fmt.Fprintf(w, `<line class="axis-line" x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#666"/>`, padL, padT, padL, base)
	fmt.Fprintf(w, `<text class="axis-label" x="14" y="%.0f" font-size="12" text-anchor="middle" transform="rotate(-90 14 %.0f)">prompt tokens per call</text></g>`, (base+padT)/2, (base+padT)/2)
	for i, p := range pts {
		x := padL + float64(i)*bw
		y0 := base
		for k, v := range []float64{p.Read, p.Write, p.Uncached} {
			if v <= 0 {
				continue
			}
			h := base - y(v)
			fmt.Fprintf(w, `<rect x="%.2f" y="%.2f" width="%.2f" height="%.2f" fill="%s"><title>calls %d–%d: %s %s tokens</title></rect>`,
				x, y0-h, max(bw-0.3, 0.3), h, timelineSeries[k].Color, p.First+1, p.First+p.Calls, timelineSeries[k].Name, group(int64(v)))
			y0 -= h
		}
		if p.Miss {
			fmt.Fprintf(w, `<rect x="%.2f" y="%.0f" width="%.2f" height="6" fill="%s"/>`, x, base+3, max(bw-0.3, 0.6), timelineSeries[4].Color)
		}
		if p.RecMiss {
			fmt.Fprintf(w, `<rect x="%.2f" y="%.0f" width="%.2f" height="6" fill="%s"/>`, x, base+11, max(bw-0.3, 0.6), timelineSeries[5].Color)
		}
	}
	var path strings.Builder
	for i, p := range pts {
		if p.RecRead < 0 {
			continue
		}
		cmd := "L"
		if path.Len() == 0 {
			cmd = "M"
		}
		fmt.Fprintf(&path, "%s%.2f %.2f ", cmd, padL+(float64(i)+0.5)*bw, y(p.RecRead))
	}
	if path.Len() > 0 {
		fmt.Fprintf(w, `<path d="%s" fill="none" stroke="%s" stroke-width="1.2"/>`, path.String(), timelineSeries[3].Color)
	}
	// The x axis: call numbers (from 1, as the text report counts them)
	// at up to ten evenly spaced points.
	w.WriteString(`<g class="axis x-axis">`)
	fmt.Fprintf(w, `<line class="axis-line" x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#666"/>`, padL, base, W-10, base)
	step := max(1, (len(pts)+9)/10)
	for i := 0; i < len(pts); i += step {
		x := padL + (float64(i)+0.5)*bw
		fmt.Fprintf(w, `<line class="tick" x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="#666"/><text class="tick-label" x="%.1f" y="%.0f" font-size="11" text-anchor="middle">%d</text>`,
			x, base+18, x, base+22, x, base+34, pts[i].First+1)
	}
	fmt.Fprintf(w, `<text class="axis-label" x="%.0f" y="%.0f" font-size="12" text-anchor="middle">call number (misses marked under the axis)</text></g></svg>`+"\n", (padL+W)/2, H-8)
}
