// Package tiktoken holds the token-counting peer, pkoukk/tiktoken-go with
// its offline vocabularies, and the differential test that ocbench's
// tokenize package counts exactly as it does.
package tiktoken

import (
	"testing"

	"github.com/ocbench/ocbench/bench/peerdata"
	"github.com/ocbench/ocbench/peers/peerkit"
	"github.com/ocbench/ocbench/tokenize"
)

// The token-counting peer: pkoukk/tiktoken-go (offline vocabularies)
// counting peerdata.MixedText, the input of ocbench's tokenize scenarios.

// TestAgree checks that the peer tokenizes the benchmark input exactly as
// ocbench does (the same ids; Count and CountParallel agree), so the two
// rows measure the same result. The bench harness runs it before the
// peer's benchmarks; the differential tests leave this input to it.
func TestAgree(t *testing.T) {
	text := peerdata.MixedText()
	for _, enc := range peerdata.PeerTokenizeEncodings {
		ours := tokenize.MustGet(enc)
		want := pkoukk(t, enc.String()).EncodeOrdinary(text)
		got, err := ours.Encode(text)
		if err != nil {
			t.Fatal(err)
		}
		if !sameIDs(got, want) {
			t.Errorf("%v: pkoukk %d tokens, ocbench %d; first ids ocbench %v, pkoukk %v", enc, len(want), len(got), clipIDs(got), clipIDs(want))
		}
		if n, err := ours.Count(text); err != nil || n != len(want) {
			t.Errorf("%v: Count %d %v, pkoukk %d", enc, n, err, len(want))
		}
		if n, err := ours.CountParallel(text, 4); err != nil || n != len(want) {
			t.Errorf("%v: CountParallel %d %v, pkoukk %d", enc, n, err, len(want))
		}
	}
}

func BenchmarkPeers(b *testing.B) {
	text := peerdata.MixedText()
	peerkit.RunPeers(b, "tiktoken", func(b *testing.B, pb peerdata.PeerBench) {
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
