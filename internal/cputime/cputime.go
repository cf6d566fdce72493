// Package cputime measures the CPU time of the calling thread, for
// benchmarks on shared machines: wall time includes waiting for a CPU,
// thread CPU time does not. It is for tests and benchmarks.
package cputime

import (
	"runtime"
	"testing"
	"time"
)

// Thread returns the CPU time the calling OS thread has used (0 where the
// system cannot tell).
func Thread() time.Duration { return threadCPU() }

// Loop runs f b.N times on a locked thread and reports the thread's CPU
// time per operation as "cpu-ns/op", besides the wall time.
func Loop(b *testing.B, f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := Thread()
	n := 0
	for b.Loop() {
		f()
		n++
	}
	if d := Thread() - start; n > 0 && d > 0 {
		b.ReportMetric(float64(d)/float64(n), "cpu-ns/op")
	}
}
