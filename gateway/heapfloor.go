package gateway

import (
	"runtime"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"sync"
	"sync/atomic"
)

// SetHeapFloor lets the process's Go heap grow to floor bytes before the
// collector runs, however small the live heap: after every collection it
// sets the GC percentage so that the next goal is the larger of floor and
// what the percentage in effect when it was called (GOGC, 100 by default)
// gives. It is a process-wide setting, for a command that serves (ocbench
// serve), not for a library caller.
//
// A gateway's live heap is small (a few MiB: the streams in flight) and
// what it allocates per request dies with the request, so with GOGC=100
// the collector runs every few MiB allocated, tens of times a second at a
// few thousand streams per second, and each cycle also shrinks the
// handlers' stacks that the next requests grow again. With a floor the
// heap stays below floor plus the live heap, and collections become a few
// per second. A large live heap (the runs' session cache) keeps GOGC's
// own goal: the floor only matters below it.
//
// A GOGC of off (a negative percentage) is left alone. The returned stop
// restores the percentage and ends the adjustments. While a floor is set,
// a second call (another server in the same process) changes nothing.
func SetHeapFloor(floor uint64) (stop func()) {
	if floor == 0 || !heapFloorSet.CompareAndSwap(false, true) {
		return func() {}
	}
	base := debug.SetGCPercent(100)
	debug.SetGCPercent(base)
	if base < 0 {
		heapFloorSet.Store(false)
		return func() {}
	}
	t := &heapTuner{floor: floor, base: base, percent: base}
	t.sample[0].Name = "/gc/heap/live:bytes"
	t.sample[1].Name = "/gc/scan/stack:bytes"
	t.sample[2].Name = "/gc/scan/globals:bytes"
	t.tune()
	t.arm()
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		if !t.stopped {
			t.stopped = true
			debug.SetGCPercent(base)
			heapFloorSet.Store(false)
		}
	}
}

// heapFloorSet is whether a SetHeapFloor is in effect.
var heapFloorSet atomic.Bool

// runtimeHeapMinimum is the runtime's smallest heap goal at GOGC=100
// (defaultHeapMinimum): the goal is never below it times GOGC/100.
const runtimeHeapMinimum = 4 << 20

type heapTuner struct {
	floor   uint64
	base    int // the GC percentage SetHeapFloor found
	mu      sync.Mutex
	stopped bool
	percent int                 // the percentage last set
	sample  [3]rtmetrics.Sample // live heap, stacks and globals scanned
}

// heapSentinel is the object whose finalizer marks a collection; it holds
// a pointer so that it is never one of the tiny allocator's shared blocks
// (whose finalizers may not run).
type heapSentinel struct{ t *heapTuner }

// arm makes the next collection call tune: a finalizer on an object
// nothing refers to runs after the first cycle that finds it dead.
func (t *heapTuner) arm() {
	runtime.SetFinalizer(&heapSentinel{t}, func(s *heapSentinel) {
		if s.t.tune() {
			s.t.arm()
		}
	})
}

// tune sets the percentage for the live heap the last cycle measured, and
// reports whether to go on.
func (t *heapTuner) tune() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return false
	}
	rtmetrics.Read(t.sample[:])
	var v [3]uint64
	for i, s := range t.sample {
		if s.Value.Kind() == rtmetrics.KindUint64 {
			v[i] = s.Value.Uint64()
		}
	}
	// The runtime's goal: the live heap plus the percentage of what the
	// collector scans (the live heap, the stacks and the globals), and at
	// least its minimum heap, 4 MiB scaled by the percentage too.
	live, scan := v[0], max(v[0]+v[1]+v[2], 1)
	if live == 0 {
		return true // no cycle has measured the heap yet
	}
	p := t.base
	if goal := live + scan*uint64(t.base)/100; goal < t.floor {
		p = int(min((t.floor-live)*100/scan, t.floor*100/runtimeHeapMinimum))
	}
	// Small changes are not worth the runtime's heap lock.
	if p != t.percent && (p > t.percent+t.percent/8 || p < t.percent-t.percent/8 || p == t.base) {
		t.percent = p
		debug.SetGCPercent(p)
	}
	return true
}
