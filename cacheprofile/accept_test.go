package cacheprofile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"
)

const largeSession = "../testdata/sessions/pi-v1-anthropic-large-session.jsonl"

// TestAcceptanceLargeSession is the acceptance check of the profiler on a
// real pi session with Anthropic's recorded cache reads and writes.
func TestAcceptanceLargeSession(t *testing.T) {
	reps, err := ProfileFile(largeSession, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := reps[0]
	tl := r.ToolLoop
	t.Logf("calls %d (skipped %d), unseen %d (%s), tail %d", r.Calls, r.SkippedCalls, r.Unseen, r.UnseenFrom, r.Tail)
	t.Logf("all: %d/%d agree (%.2f%%); tool loop: %d/%d agree (%.2f%%)", r.All.Agree, r.All.Calls, 100*r.All.Rate(), tl.Agree, tl.Calls, 100*tl.Rate())
	t.Logf("tool-loop predicted hits %d: predicted read %d, recorded %d (error %.3f%%)", tl.PredictedHits, tl.PredictedHitRead, tl.RecordedOnHitRead, 100*tl.ReadError())
	t.Logf("recorded misses %d: explained %v, unexplained %d", r.RecordedMisses, r.Explained, r.UnexplainedN)
	if r.Calls != 439 {
		t.Errorf("calls = %d, want the 439 calls with usage", r.Calls)
	}
	if tl.Rate() < 0.98 {
		t.Errorf("tool-loop agreement %.4f < 0.98", tl.Rate())
	}
	if tl.ReadError() > 0.02 {
		t.Errorf("tool-loop read error %.4f > 0.02", tl.ReadError())
	}
	for _, c := range r.Unexplained {
		if len(c.Evidence) == 0 {
			t.Errorf("unexplained miss at line %d without evidence", c.Line)
		}
	}
	if got := r.RecordedMisses; got != r.UnexplainedN+sum(r.Explained) {
		t.Errorf("misses %d != explained %d + unexplained %d", got, sum(r.Explained), r.UnexplainedN)
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// TestZstdSessionFile profiles a zstd-compressed copy of the large session:
// the numbers must be those of the plain file.
func TestZstdSessionFile(t *testing.T) {
	src, err := os.ReadFile(largeSession)
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := zstd.NewWriter(nil)
	p := filepath.Join(t.TempDir(), "s.jsonl.zst")
	if err := os.WriteFile(p, enc.EncodeAll(src, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	plain, err := ProfileFile(largeSession, Options{})
	if err != nil {
		t.Fatal(err)
	}
	z, err := ProfileFile(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if z[0].Predicted != plain[0].Predicted || z[0].All != plain[0].All || z[0].UnexplainedN != plain[0].UnexplainedN {
		t.Errorf("zstd profile differs from plain")
	}
}
