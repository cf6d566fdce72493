package svgchart

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// CheckCharts finds every chart (<svg class="chart">) in an HTML
// document, parses it as XML and fails unless each has an axis line, at
// least two labelled ticks, a unit label on each axis and a legend
// naming its colours. It returns how many charts it checked. Reports'
// tests call it; no browser is needed.
func CheckCharts(doc []byte) (int, error) {
	n := 0
	for {
		i := bytes.Index(doc, []byte("<svg"))
		if i < 0 {
			return n, nil
		}
		j := bytes.Index(doc[i:], []byte("</svg>"))
		if j < 0 {
			return n, fmt.Errorf("svgchart: unterminated <svg>")
		}
		svg := doc[i : i+j+len("</svg>")]
		doc = doc[i+j:]
		if !bytes.Contains(svg[:bytes.IndexByte(svg, '>')], []byte(`class="chart"`)) {
			continue
		}
		n++
		if err := checkChart(svg); err != nil {
			return n, fmt.Errorf("svgchart: chart %d: %w", n, err)
		}
	}
}

func checkChart(svg []byte) error {
	dec := xml.NewDecoder(bytes.NewReader(svg))
	dec.Strict = true
	counts := map[string]int{}
	var textClass []string // class of the open <text>, "" when none
	var axisLabels, tickLabels, legendNames int
	legendPending := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("not well-formed: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			class := ""
			for _, a := range t.Attr {
				if a.Name.Local == "class" {
					class = a.Value
				}
			}
			counts[class]++
			if t.Name.Local == "text" {
				if legendPending {
					class = "legend-name"
					legendPending = false
				}
				textClass = append(textClass, class)
			}
			if class == "legend" {
				legendPending = true
			}
		case xml.CharData:
			if len(textClass) > 0 && strings.TrimSpace(string(t)) != "" {
				switch textClass[len(textClass)-1] {
				case "axis-label":
					axisLabels++
				case "tick-label":
					tickLabels++
				case "legend-name":
					legendNames++
				}
			}
		case xml.EndElement:
			if t.Name.Local == "text" && len(textClass) > 0 {
				textClass = textClass[:len(textClass)-1]
			}
		}
	}
	switch {
	case counts["axis-line"] == 0:
		return fmt.Errorf("no axis line")
	case counts["tick"] < 2 || tickLabels < 2:
		return fmt.Errorf("%d ticks, %d tick labels: want at least 2 each", counts["tick"], tickLabels)
	case axisLabels < counts["axis-line"]:
		return fmt.Errorf("%d axes but %d axis labels (units)", counts["axis-line"], axisLabels)
	case counts["legend"] == 0 || legendNames < counts["legend"]:
		return fmt.Errorf("no legend naming the colours (%d swatches, %d names)", counts["legend"], legendNames)
	}
	return nil
}
