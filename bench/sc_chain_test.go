package bench

import (
	"testing"

	"github.com/ocbench/ocbench/bench/peerdata"
)

// BenchmarkChainScenario runs the harness's decode+chain scenarios (the
// chain the Node peer is paired with), one stream per op, for callgrind
// and benchstat.
func BenchmarkChainScenario(b *testing.B) {
	for _, ws := range peerdata.WireStreams() {
		b.Run(ws.Name, func(b *testing.B) {
			op := chainOp(ws)
			if err := op(); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(ws.Stream.Body)))
			b.ReportAllocs()
			for b.Loop() {
				if err := op(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
