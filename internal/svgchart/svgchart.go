// Package svgchart draws the charts of ocbench's HTML reports as inline
// SVG: horizontal bar charts and line charts over time, each with labelled
// axes (ticks and units, a linear axis or a log axis that says so), a
// legend for its colours and room for its longest label. It owns layout
// only; what is plotted is the caller's. Output is well-formed XML with
// every text escaped, and nothing is loaded from elsewhere.
package svgchart

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
)

// Series is one colour of a chart, named in the legend.
type Series struct {
	Name  string
	Color string
}

// Bar is one row of a bar chart.
type Bar struct {
	Label  string  // left of the bar
	Value  float64 // length, in the axis' unit
	Text   string  // printed after the bar (the formatted value)
	Series int     // index into the chart's series
}

// BarChart is a horizontal bar chart.
type BarChart struct {
	Title  string
	Unit   string // axis unit, e.g. "operations per second"
	Series []Series
	Bars   []Bar
	// Log asks for a log axis when the values span more than two
	// orders of magnitude; the axis label then says "log scale".
	Log bool
	// Mark draws a vertical reference line at this value (e.g. 1x), when
	// positive.
	Mark float64
}

const (
	charW   = 6.6 // average width of a 12px sans-serif character
	rowH    = 22
	barH    = 15
	valueW  = 150 // room for the value text after the longest bar
	plotW   = 520
	topPad  = 8
	axisPad = 44 // tick labels and the axis unit under the plot
)

func esc(s string) string { return html.EscapeString(s) }

// textWidth estimates the rendered width of s at 12px.
func textWidth(s string) float64 { return float64(len([]rune(s))) * charW }

// axis maps values to [0, plotW] and gives its ticks.
type axis struct {
	log      bool
	lo, hi   float64
	ticks    []float64
	tickText func(float64) string
}

func newAxis(maxV, minPos float64, allowLog bool, format func(float64) string) axis {
	if maxV <= 0 {
		maxV = 1
	}
	if allowLog && minPos > 0 && maxV/minPos > 100 {
		lo := math.Pow(10, math.Floor(math.Log10(minPos)))
		hi := math.Pow(10, math.Ceil(math.Log10(maxV)))
		a := axis{log: true, lo: lo, hi: hi, tickText: format}
		for t := lo; t <= hi*1.0001; t *= 10 {
			a.ticks = append(a.ticks, t)
		}
		return a
	}
	step := niceStep(maxV / 5)
	hi := math.Ceil(maxV/step) * step
	a := axis{lo: 0, hi: hi, tickText: format}
	for t := 0.0; t <= hi*1.0001; t += step {
		a.ticks = append(a.ticks, t)
	}
	return a
}

// niceStep rounds x up to 1, 2 or 5 times a power of ten.
func niceStep(x float64) float64 {
	if x <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}

// pos maps v to a fraction of the axis length.
func (a axis) pos(v float64) float64 {
	if a.log {
		if v <= a.lo {
			return 0
		}
		return math.Log10(v/a.lo) / math.Log10(a.hi/a.lo)
	}
	return (v - a.lo) / (a.hi - a.lo)
}

// Number formats a tick value compactly: 0, 0.5, 20, 1.5k, 2M, 0.001.
func Number(v float64) string {
	av := math.Abs(v)
	switch {
	case v == 0:
		return "0"
	case av >= 1e9:
		return trim(v/1e9) + "G"
	case av >= 1e6:
		return trim(v/1e6) + "M"
	case av >= 1e4:
		return trim(v/1e3) + "k"
	case av >= 1:
		return trim(v)
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.6f", v), "0"), ".")
}

func trim(v float64) string {
	return strings.TrimSuffix(strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", v), "0"), "."), ".")
}

func legend(w io.Writer, series []Series, x, y float64) {
	for _, s := range series {
		fmt.Fprintf(w, `<rect class="legend" x="%.1f" y="%.1f" width="12" height="12" fill="%s"/>`, x, y-10, esc(s.Color))
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f" font-size="12">%s</text>`, x+16, y, esc(s.Name))
		x += 16 + textWidth(s.Name) + 18
	}
}

// Write draws the chart as one <svg> element.
func (c BarChart) Write(w io.Writer) {
	labelW := 40.0
	maxV, minPos := 0.0, math.Inf(1)
	for _, b := range c.Bars {
		labelW = math.Max(labelW, textWidth(b.Label)+12)
		maxV = math.Max(maxV, b.Value)
		if b.Value > 0 {
			minPos = math.Min(minPos, b.Value)
		}
	}
	ax := newAxis(math.Max(maxV, c.Mark), minPos, c.Log, Number)
	legendH := 0.0
	if len(c.Series) > 0 {
		legendH = 22
	}
	x0, y0 := labelW, topPad+legendH
	plotH := float64(len(c.Bars) * rowH)
	W := labelW + plotW + valueW
	H := y0 + plotH + axisPad
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s">`+"\n", W, H, W, H, esc(c.Title))
	if len(c.Series) > 0 {
		legend(w, c.Series, x0, topPad+12)
	}
	fmt.Fprintf(w, `<g class="axis x-axis">`)
	for _, t := range ax.ticks {
		x := x0 + plotW*ax.pos(t)
		fmt.Fprintf(w, `<line class="grid" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e4e4e4"/>`, x, y0, x, y0+plotH)
		fmt.Fprintf(w, `<line class="tick" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#666"/>`, x, y0+plotH, x, y0+plotH+4)
		fmt.Fprintf(w, `<text class="tick-label" x="%.1f" y="%.1f" font-size="11" text-anchor="middle">%s</text>`, x, y0+plotH+16, esc(ax.tickText(t)))
	}
	fmt.Fprintf(w, `<line class="axis-line" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#666"/>`, x0, y0+plotH, x0+plotW, y0+plotH)
	unit := c.Unit
	if ax.log {
		unit += " (log scale)"
	}
	fmt.Fprintf(w, `<text class="axis-label" x="%.1f" y="%.1f" font-size="12" text-anchor="middle">%s</text></g>`+"\n", x0+plotW/2, y0+plotH+34, esc(unit))
	for i, b := range c.Bars {
		y := y0 + float64(i*rowH) + (rowH-barH)/2
		bw := math.Max(plotW*ax.pos(b.Value), 1)
		if b.Value <= 0 {
			bw = 0
		}
		color := "#888"
		if b.Series >= 0 && b.Series < len(c.Series) {
			color = c.Series[b.Series].Color
		}
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f" font-size="12" text-anchor="end">%s</text>`, x0-6, y+12, esc(b.Label))
		fmt.Fprintf(w, `<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%d" fill="%s"/>`, x0, y, bw, barH, esc(color))
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f" font-size="11" fill="#333">%s</text>`+"\n", x0+bw+4, y+11, esc(b.Text))
	}
	if c.Mark > 0 {
		x := x0 + plotW*ax.pos(c.Mark)
		fmt.Fprintf(w, `<line class="mark" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#222" stroke-dasharray="4 3"/>`, x, y0-2, x, y0+plotH)
	}
	fmt.Fprintln(w, `</svg>`)
}

// Line is one series of a line chart: Y[i] at X[i].
type Line struct {
	Series
	X, Y []float64
	// Dots draws markers instead of a line (events such as errors).
	Dots bool
}

// LineChart plots series over a shared x axis.
type LineChart struct {
	Title        string
	XUnit, YUnit string
	Lines        []Line
	Width        float64 // 0: 760
	Height       float64 // plot height; 0: 200
	YFormat      func(float64) string
	// Log asks for a log y axis when the positive values span more than
	// two orders of magnitude (a p50 of 0.5 ms under a p99 of 400 ms is
	// a flat line on a linear axis); the axis label then says "log
	// scale". Values at or below 0 sit on the axis.
	Log bool
}

// Write draws the chart as one <svg> element.
func (c LineChart) Write(w io.Writer) {
	if c.Width == 0 {
		c.Width = 760
	}
	if c.Height == 0 {
		c.Height = 200
	}
	yf := c.YFormat
	if yf == nil {
		yf = Number
	}
	maxX, maxY, minPos := 0.0, 0.0, math.Inf(1)
	for _, l := range c.Lines {
		for i := range l.X {
			maxX = math.Max(maxX, l.X[i])
			maxY = math.Max(maxY, l.Y[i])
			if l.Y[i] > 0 {
				minPos = math.Min(minPos, l.Y[i])
			}
		}
	}
	xa := newAxis(maxX, 0, false, Number)
	ya := newAxis(maxY, minPos, c.Log, yf)
	yUnit := c.YUnit
	if ya.log {
		yUnit += " (log scale)"
	}
	yLabelW := 0.0
	for _, t := range ya.ticks {
		yLabelW = math.Max(yLabelW, textWidth(yf(t)))
	}
	x0 := yLabelW + 34 // tick labels plus the rotated unit
	y0 := topPad + 22.0
	plotW := c.Width - x0 - 20
	W, H := c.Width, y0+c.Height+axisPad
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s">`+"\n", W, H, W, H, esc(c.Title))
	var series []Series
	for _, l := range c.Lines {
		series = append(series, l.Series)
	}
	legend(w, series, x0, topPad+12)
	px := func(v float64) float64 { return x0 + plotW*xa.pos(v) }
	py := func(v float64) float64 { return y0 + c.Height*(1-ya.pos(v)) }
	fmt.Fprint(w, `<g class="axis y-axis">`)
	for _, t := range ya.ticks {
		fmt.Fprintf(w, `<line class="grid" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e4e4e4"/>`, x0, py(t), x0+plotW, py(t))
		fmt.Fprintf(w, `<line class="tick" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#666"/>`, x0-4, py(t), x0, py(t))
		fmt.Fprintf(w, `<text class="tick-label" x="%.1f" y="%.1f" font-size="11" text-anchor="end">%s</text>`, x0-6, py(t)+4, esc(yf(t)))
	}
	fmt.Fprintf(w, `<line class="axis-line" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#666"/>`, x0, y0, x0, y0+c.Height)
	fmt.Fprintf(w, `<text class="axis-label" x="%.1f" y="%.1f" font-size="12" text-anchor="middle" transform="rotate(-90 %.1f %.1f)">%s</text></g>`+"\n",
		12.0, y0+c.Height/2, 12.0, y0+c.Height/2, esc(yUnit))
	fmt.Fprint(w, `<g class="axis x-axis">`)
	for _, t := range xa.ticks {
		fmt.Fprintf(w, `<line class="tick" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#666"/>`, px(t), y0+c.Height, px(t), y0+c.Height+4)
		fmt.Fprintf(w, `<text class="tick-label" x="%.1f" y="%.1f" font-size="11" text-anchor="middle">%s</text>`, px(t), y0+c.Height+16, esc(Number(t)))
	}
	fmt.Fprintf(w, `<line class="axis-line" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#666"/>`, x0, y0+c.Height, x0+plotW, y0+c.Height)
	fmt.Fprintf(w, `<text class="axis-label" x="%.1f" y="%.1f" font-size="12" text-anchor="middle">%s</text></g>`+"\n", x0+plotW/2, y0+c.Height+34, esc(c.XUnit))
	for _, l := range c.Lines {
		if l.Dots {
			for i := range l.X {
				fmt.Fprintf(w, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`, px(l.X[i]), py(l.Y[i]), esc(l.Color))
			}
			continue
		}
		var pts strings.Builder
		for i := range l.X {
			fmt.Fprintf(&pts, "%.1f,%.1f ", px(l.X[i]), py(l.Y[i]))
		}
		fmt.Fprintf(w, `<polyline class="series" points="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", strings.TrimSpace(pts.String()), esc(l.Color))
	}
	fmt.Fprintln(w, `</svg>`)
}

// LinearTicks returns tick values from 0 to at least maxV in 1-2-5 steps.
func LinearTicks(maxV float64) []float64 { return newAxis(maxV, 0, false, Number).ticks }

// Legend draws one coloured square and name per series, left to right
// from (x, y), y being the text's baseline.
func Legend(w io.Writer, series []Series, x, y float64) { legend(w, series, x, y) }
