package gateway

import (
	"runtime"
	"runtime/debug"
	"testing"
)

var heapSink []byte

// allocGarbage allocates n bytes in short-lived 4 KiB pieces and returns
// how many collections ran meanwhile.
func allocGarbage(n int) uint32 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.NumGC
	for i := 0; i < n/4096; i++ {
		heapSink = make([]byte, 4096)
	}
	runtime.ReadMemStats(&ms)
	return ms.NumGC - before
}

// TestHeapFloor checks that with a floor the collector runs far less often
// over a small live heap, and that stop restores the GC percentage.
func TestHeapFloor(t *testing.T) {
	const garbage = 1 << 30
	runtime.GC()
	without := allocGarbage(garbage)
	before := debug.SetGCPercent(100)
	debug.SetGCPercent(before)

	stop := SetHeapFloor(256 << 20)
	defer stop()
	SetHeapFloor(1 << 20)() // a second floor while one is set: nothing
	runtime.GC()            // the first adjustment after a measured cycle
	with := allocGarbage(garbage)
	stop()
	if after := debug.SetGCPercent(before); after != before {
		t.Errorf("stop left the GC percentage at %d, want %d", after, before)
	}
	t.Logf("collections over %d MiB of garbage: %d without a floor, %d with 256 MiB", garbage>>20, without, with)
	if with > 8 || with*4 > without {
		t.Errorf("%d collections with a 256 MiB floor (%d without): the floor did not hold", with, without)
	}
}

func TestHeapFloorLeavesGCOffAlone(t *testing.T) {
	before := debug.SetGCPercent(-1)
	defer debug.SetGCPercent(before)
	stop := SetHeapFloor(64 << 20)
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Errorf("GOGC=off became %d", p)
	}
	stop()
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Errorf("stop changed GOGC=off to %d", p)
	}
}
