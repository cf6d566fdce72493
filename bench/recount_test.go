package bench

import (
	"context"
	"testing"
)

var recountSink []byte

// TestRecountAllocsLowersOnlyWhatItCanShow: a result charged allocations that
// its operation does not make (the peer planner's, on another goroutine)
// is recounted to what the operation makes; a figure is never raised, and
// failed results and the peers' (same names, other Impl) are left alone.
func TestRecountAllocsLowersOnlyWhatItCanShow(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	none := Scenario{Name: "none", Impl: "ocbench", Setup: func() (func() error, func(), error) {
		return func() error { return nil }, nil, nil
	}}
	one := Scenario{Name: "one", Impl: "ocbench", Setup: func() (func() error, func(), error) {
		return func() error { recountSink = make([]byte, 64); return nil }, nil, nil
	}}
	scs := []Scenario{none, one}
	results := []Result{
		{Name: "none", Impl: "ocbench", AllocsPerOp: 180, BytesPerOp: 28 << 10, Iterations: 200, NsPerOp: 500e3, Run: 1},
		{Name: "none", Impl: "ocbench", AllocsPerOp: 3, BytesPerOp: 100, Iterations: 200, NsPerOp: 500e3, Run: 2},
		{Name: "one", Impl: "ocbench", AllocsPerOp: 40, BytesPerOp: 4000, Iterations: 1000, NsPerOp: 100},
		{Name: "one", Impl: "ocbench", AllocsPerOp: 0.5, BytesPerOp: 32, Iterations: 1000, NsPerOp: 100},
		{Name: "none", Impl: "ocbench", AllocsPerOp: 7, Err: "boom"},
		{Name: "none", Impl: "openclaw-node", AllocsPerOp: 9, MemNotMeasured: true},
		// A peer's row of the same scenario: measured in its own process.
		{Name: "none", Impl: "fastjson", AllocsPerOp: 24848, BytesPerOp: 1 << 20, Iterations: 200, NsPerOp: 500e3},
	}
	Recount(context.Background(), scs, results)
	want := []float64{0, 0, 1, 0.5, 7, 9, 24848}
	for i, r := range results {
		if r.AllocsPerOp != want[i] {
			t.Errorf("result %d (%s): %v allocs/op, want %v", i, r.Name, r.AllocsPerOp, want[i])
		}
	}
	if results[0].BytesPerOp != 0 || results[2].BytesPerOp != 64 {
		t.Errorf("bytes/op %v and %v, want 0 and 64", results[0].BytesPerOp, results[2].BytesPerOp)
	}
}

// TestRecountKeepsTheLeastOfItsCounts: allocations that land inside one
// count only (another goroutine's, in a real run; here the operation's own
// first calls) are not charged when a later count of as many operations
// shows fewer.
func TestRecountKeepsTheLeastOfItsCountsAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	const n = 20
	calls := 0
	burst := Scenario{Name: "burst", Impl: "ocbench", Setup: func() (func() error, func(), error) {
		return func() error {
			calls++
			if calls <= 1+n { // the warm-up and the whole first count
				recountSink = make([]byte, 64)
			}
			return nil
		}, nil, nil
	}}
	results := []Result{{Name: "burst", Impl: "ocbench", AllocsPerOp: 1, BytesPerOp: 64, Iterations: n, NsPerOp: 1}}
	Recount(context.Background(), []Scenario{burst}, results)
	if results[0].AllocsPerOp != 0 || results[0].BytesPerOp != 0 {
		t.Errorf("recounted %v allocs/op, %v B/op; want the second count's 0 and 0", results[0].AllocsPerOp, results[0].BytesPerOp)
	}
	if calls != 1+2*n {
		t.Errorf("%d operations ran, want the warm-up and two counts of %d (the second showed 0)", calls, n)
	}
}
