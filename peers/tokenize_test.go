package peers

import (
	"testing"

	"github.com/ocbench/ocbench/bench"
	"github.com/ocbench/ocbench/tokenize"
)

// The token-counting peer: pkoukk/tiktoken-go (offline vocabularies)
// counting bench.MixedText, the input of ocbench's tokenize scenarios.

const pkoukkImpl = "pkoukk-tiktoken-go"

var tokenizeEncodings = []tokenize.Encoding{tokenize.Cl100kBase, tokenize.O200kBase}

// TestTokenizeBenchInputAgrees checks that the peer counts the benchmark
// input exactly as ocbench does, so the two rows measure the same result.
func TestTokenizeBenchInputAgrees(t *testing.T) {
	text := bench.MixedText()
	for _, enc := range tokenizeEncodings {
		want, err := tokenize.MustGet(enc).Count(text)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(pkoukk(t, enc.String()).EncodeOrdinary(text)); got != want {
			t.Errorf("%v: pkoukk counts %d tokens, ocbench %d", enc, got, want)
		}
	}
}

func benchTokenize(b *testing.B) {
	text := bench.MixedText()
	for _, enc := range tokenizeEncodings {
		b.Run("tokenize/"+enc.String()+"/"+pkoukkImpl, func(b *testing.B) {
			e := pkoukk(b, enc.String())
			want, err := tokenize.MustGet(enc).Count(text)
			if err != nil {
				b.Fatal(err)
			}
			if got := len(e.EncodeOrdinary(text)); got != want {
				// No ratio on different results; TestTokenizeBenchInputAgrees
				// fails on this.
				b.Skipf("%v: counts differ on the benchmark input (pkoukk %d, ocbench %d)", enc, got, want)
			}
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				_ = e.EncodeOrdinary(text)
			}
		})
	}
}
