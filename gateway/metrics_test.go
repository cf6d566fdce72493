package gateway

import (
	"strconv"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Token counters: past maxModelLabels models new ones count as "other",
// nothing is lost, and the cached series stay bounded by the labels.
func TestTokenSeriesBounded(t *testing.T) {
	m := newMetrics(func() float64 { return 0 })
	const models = maxModelLabels + 20
	for round := 0; round < 2; round++ {
		for i := range models {
			m.addTokens("chat", "model-"+strconv.Itoa(i), [...]int64{2, 3, 0, 0})
		}
	}
	ch := make(chan prometheus.Metric, 4*models)
	m.tokens.Collect(ch)
	close(ch)
	labels := map[string]bool{}
	var sum float64
	for mt := range ch {
		var d dto.Metric
		if err := mt.Write(&d); err != nil {
			t.Fatal(err)
		}
		for _, l := range d.GetLabel() {
			if l.GetName() == "model" {
				labels[l.GetValue()] = true
			}
			if l.GetName() == "kind" && (l.GetValue() == "cache_read" || l.GetValue() == "cache_write") {
				t.Errorf("a zero kind has a series: %v", d.GetLabel())
			}
		}
		sum += d.GetCounter().GetValue()
	}
	if want := float64(2 * models * 5); sum != want {
		t.Errorf("tokens counted %v, want %v", sum, want)
	}
	if len(labels) != maxModelLabels+1 || !labels["other"] {
		t.Errorf("%d model labels (other: %v), want %d and other", len(labels), labels["other"], maxModelLabels+1)
	}
	cached := 0
	m.tokenSeries.Range(func(any, any) bool { cached++; return true })
	if cached > maxModelLabels {
		t.Errorf("%d cached token series, want at most %d", cached, maxModelLabels)
	}
}
