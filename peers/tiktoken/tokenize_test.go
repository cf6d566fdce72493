// Package tiktoken holds the token-counting peer, pkoukk/tiktoken-go with
// its offline vocabularies, and the differential test that ocbench's
// tokenize package counts exactly as it does.
package tiktoken

import (
	"testing"

	"github.com/ocbench/ocbench/bench"
	"github.com/ocbench/ocbench/peers/peerkit"
	"github.com/ocbench/ocbench/tokenize"
)

// The token-counting peer: pkoukk/tiktoken-go (offline vocabularies)
// counting bench.MixedText, the input of ocbench's tokenize scenarios.

// TestAgree checks that the peer counts the benchmark
// input exactly as ocbench does, so the two rows measure the same result.
func TestAgree(t *testing.T) {
	text := bench.MixedText()
	for _, enc := range bench.PeerTokenizeEncodings {
		want, err := tokenize.MustGet(enc).Count(text)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(pkoukk(t, enc.String()).EncodeOrdinary(text)); got != want {
			t.Errorf("%v: pkoukk counts %d tokens, ocbench %d", enc, got, want)
		}
	}
}

func BenchmarkPeers(b *testing.B) {
	text := bench.MixedText()
	peerkit.RunPeers(b, "tiktoken", func(b *testing.B, pb bench.PeerBench) {
		enc, err := tokenize.ParseEncoding(pb.Input)
		if err != nil {
			b.Fatal(err)
		}
		e := pkoukk(b, pb.Input)
		want, err := tokenize.MustGet(enc).Count(text)
		if err != nil {
			b.Fatal(err)
		}
		if got := len(e.EncodeOrdinary(text)); got != want {
			// No ratio on different results; TestAgree fails on this.
			b.Skipf("%v: counts differ on the benchmark input (pkoukk %d, ocbench %d)", enc, got, want)
		}
		b.SetBytes(int64(len(text)))
		b.ReportAllocs()
		for b.Loop() {
			_ = e.EncodeOrdinary(text)
		}
	})
}
