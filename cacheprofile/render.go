package cacheprofile

import (
	"bufio"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"sort"
	"strings"
	"time"
)

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
		p("  %-14s %14s %7.1f%% %14s %7.1f%%\n", name, group(a), pct(a, den1), group(b), pct(b, den2))
	}
	p("  %-14s %14s %8s %14s\n", "prompt tokens", group(r.Predicted.Prompt), "", group(r.Recorded.Prompt))
	row("cache read", r.Predicted.CacheRead, r.Recorded.CacheRead, r.Predicted.Prompt, r.Recorded.Prompt)
	row("cache write", r.Predicted.CacheWrite, r.Recorded.CacheWrite, r.Predicted.Prompt, r.Recorded.Prompt)
	row("uncached", r.Predicted.Uncached, r.Recorded.Uncached, r.Predicted.Prompt, r.Recorded.Prompt)
	p("  hit rate       %.1f%% predicted, %.1f%% recorded (cache reads / prompt tokens)\n", 100*r.HitRate, 100*r.RecordedHitRate)
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
table{border-collapse:collapse}td,th{padding:2px 10px;text-align:right;border-bottom:1px solid #eee}
td:first-child,th:first-child{text-align:left}.ev{color:#555;font-size:12px;text-align:left}
.k span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;vertical-align:middle}
pre{white-space:pre-wrap}</style></head><body><h1>Prompt-cache profile</h1>
`)
	for _, r := range reps {
		fmt.Fprintf(bw, "<h2>%s</h2><p>%s, session %s; provider %s, model %s; %d calls</p>\n",
			e(r.File), e(r.Source), e(r.SessionID), e(strings.Join(r.Providers, ",")), e(strings.Join(r.Models, ",")), r.Calls)
		var sb strings.Builder
		r.writeText(&sb)
		fmt.Fprintf(bw, "<details><summary>Text summary</summary><pre>%s</pre></details>\n", e(sb.String()))
		bw.WriteString(`<table><tr><th></th><th>predicted</th><th>recorded</th></tr>`)
		fmt.Fprintf(bw, "<tr><td>prompt tokens</td><td>%s</td><td>%s</td></tr>", group(r.Predicted.Prompt), group(r.Recorded.Prompt))
		fmt.Fprintf(bw, "<tr><td>cache read</td><td>%s</td><td>%s</td></tr>", group(r.Predicted.CacheRead), group(r.Recorded.CacheRead))
		fmt.Fprintf(bw, "<tr><td>cache write</td><td>%s</td><td>%s</td></tr>", group(r.Predicted.CacheWrite), group(r.Recorded.CacheWrite))
		fmt.Fprintf(bw, "<tr><td>uncached</td><td>%s</td><td>%s</td></tr>", group(r.Predicted.Uncached), group(r.Recorded.Uncached))
		fmt.Fprintf(bw, "<tr><td>hit rate</td><td>%.1f%%</td><td>%.1f%%</td></tr>", 100*r.HitRate, 100*r.RecordedHitRate)
		fmt.Fprintf(bw, "<tr><td>input cost</td><td>%s</td><td>%s</td></tr>", e(r.money(r.Cost)), e(r.money(r.RecordedCost)))
		fmt.Fprintf(bw, "<tr><td>without cache</td><td>%s</td><td></td></tr></table>\n", e(r.money(r.CostNoCache)))
		writeSVG(bw, r)
		if len(r.TopMisses) > 0 {
			bw.WriteString("<h3>Most expensive misses</h3><table><tr><th>line</th><th>time</th><th>cost</th><th>cause</th><th>evidence</th></tr>")
			for _, c := range r.TopMisses {
				fmt.Fprintf(bw, "<tr><td>%d</td><td>%s</td><td>%s</td><td>%s</td><td class=ev>%s</td></tr>", c.Line,
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

// writeSVG draws stacked bars per timeline point: cache read, cache write,
// uncached; recorded reads as a line; predicted misses as red ticks.
func writeSVG(w *bufio.Writer, r *Report) {
	pts := r.Timeline
	if len(pts) == 0 {
		return
	}
	const W, H, padL, padB = 1000.0, 330.0, 60.0, 34.0
	top := 1.0
	for _, p := range pts {
		top = max(top, p.Read+p.Write+p.Uncached, p.RecRead)
	}
	bw := (W - padL) / float64(len(pts))
	y := func(v float64) float64 { return (H - padB) - v/top*(H-padB-10) }
	fmt.Fprintf(w, `<p class=k><span style="background:#2e7d32"></span>cache read<span style="background:#f9a825"></span>cache write<span style="background:#9e9e9e"></span>uncached<span style="background:#1565c0;height:3px"></span>recorded read<span style="background:#c62828"></span>predicted miss<span style="background:#6a1b9a"></span>recorded miss</p>`)
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" role="img">`, W, H, W, H)
	fmt.Fprintf(w, `<text x="4" y="14" font-size="11">%s</text><text x="4" y="%.0f" font-size="11">0</text>`, group(int64(top)), H-padB)
	for i, p := range pts {
		x := padL + float64(i)*bw
		y0 := H - padB
		for _, seg := range []struct {
			v     float64
			color string
		}{{p.Read, "#2e7d32"}, {p.Write, "#f9a825"}, {p.Uncached, "#9e9e9e"}} {
			if seg.v <= 0 {
				continue
			}
			h := (H - padB) - y(seg.v)
			fmt.Fprintf(w, `<rect x="%.2f" y="%.2f" width="%.2f" height="%.2f" fill="%s"><title>calls %d–%d</title></rect>`,
				x, y0-h, max(bw-0.3, 0.3), h, seg.color, p.First, p.First+p.Calls-1)
			y0 -= h
		}
		if p.Miss {
			fmt.Fprintf(w, `<rect x="%.2f" y="%.0f" width="%.2f" height="6" fill="#c62828"/>`, x, H-padB+3, max(bw-0.3, 0.6))
		}
		if p.RecMiss {
			fmt.Fprintf(w, `<rect x="%.2f" y="%.0f" width="%.2f" height="6" fill="#6a1b9a"/>`, x, H-padB+11, max(bw-0.3, 0.6))
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
		fmt.Fprintf(w, `<path d="%s" fill="none" stroke="#1565c0" stroke-width="1.2"/>`, path.String())
	}
	fmt.Fprintf(w, `<text x="%.0f" y="%.0f" font-size="11">call %d</text><text x="%.0f" y="%.0f" font-size="11" text-anchor="end">call %d</text></svg>`+"\n",
		padL, H-2, pts[0].First, W, H-2, pts[len(pts)-1].First+pts[len(pts)-1].Calls-1)
}
