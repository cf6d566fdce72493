package provider

import (
	"math/rand/v2"
	"os"
	"testing"
	"time"
)

// TestMutationDifferential mutates the recorded streams at random (no
// coverage guidance, so it runs fast on a busy machine) and applies the
// fuzz checks, with a watchdog for hangs. Run with MUTATE=1.
func TestMutationDifferential(t *testing.T) {
	if os.Getenv("MUTATE") == "" {
		t.Skip()
	}
	seeds := [][]byte{}
	for _, c := range recordedCases {
		seeds = append(seeds, readStream(t, c.file))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 20000; n++ {
		s := seeds[rng.IntN(len(seeds))]
		b := append([]byte(nil), s...)
		for k := rng.IntN(4) + 1; k > 0; k-- {
			switch rng.IntN(4) {
			case 0:
				b[rng.IntN(len(b))] = byte(rng.IntN(256))
			case 1:
				i := rng.IntN(len(b))
				b = append(b[:i], b[min(len(b), i+rng.IntN(20)):]...)
			case 2:
				i := rng.IntN(len(b))
				j := rng.IntN(len(b))
				b = append(b[:i:i], append(append([]byte(nil), b[j:min(len(b), j+rng.IntN(30))]...), b[i:]...)...)
			case 3:
				b[rng.IntN(len(b))] = "{}[]\",:\\\n"[rng.IntN(9)]
			}
			if len(b) == 0 {
				b = []byte("x")
			}
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			for _, w := range []Wire{WireOpenAIChat, WireAnthropic, WireOpenAIResponses} {
				fuzzDecode(t, w, b)
			}
		}()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			os.WriteFile("/tmp/mutate-hang.sse", b, 0o644)
			t.Fatalf("hang on input %q", b)
		}
	}
}
