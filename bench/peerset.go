package bench

import (
	"regexp"
	"strings"

	"github.com/ocbench/ocbench/bench/peerdata"
)

// benchPattern is a -test.bench pattern that selects at least bs among
// BenchmarkPeers' sub-benchmarks (stage/input/impl): each level admits
// the values of bs, so the cross product may admit more, which the
// caller's name filter removes.
func benchPattern(bs []peerdata.PeerBench) string {
	level := func(f func(peerdata.PeerBench) string) string {
		seen := map[string]bool{}
		var alts []string
		for _, b := range bs {
			if v := f(b); !seen[v] {
				seen[v] = true
				alts = append(alts, regexp.QuoteMeta(v))
			}
		}
		return "^(" + strings.Join(alts, "|") + ")$"
	}
	return "^BenchmarkPeers$/" + level(func(b peerdata.PeerBench) string { return b.Stage }) + "/" +
		level(func(b peerdata.PeerBench) string { return b.Input }) + "/" + level(func(b peerdata.PeerBench) string { return b.Impl })
}
