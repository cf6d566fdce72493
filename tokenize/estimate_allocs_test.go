package tokenize

import (
	"strings"
	"testing"
)

// Estimating a stored message allocates nothing (the engine estimates every
// history message of every run).
func TestEstimateMessageJSONAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	long := strings.Repeat("word ", 40)
	msgs := []string{
		`{"role":"user","content":"` + long + `"}`,
		`{"role":"user","content":[{"type":"text","text":"` + long + `"}]}`,
		`{"role":"assistant","content":[{"type":"thinking","thinking":"` + long + `"},{"type":"text","text":"` + long + `"}]}`,
		`{"role":"toolResult","content":[{"type":"text","text":"` + long + `"}]}`,
		`{"role":"compactionSummary","summary":"` + long + `"}`,
	}
	for _, m := range msgs {
		b := []byte(m)
		want, err := EstimateMessageJSON(b)
		if err != nil || want < 40 {
			t.Fatalf("%s: %d %v", m, want, err)
		}
		if a := testing.AllocsPerRun(50, func() { EstimateMessageJSON(b) }); a != 0 {
			t.Fatalf("%.1f allocations estimating %s", a, m[:40])
		}
	}
}
