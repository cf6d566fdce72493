package tokenize

import (
	"runtime"
	"syscall"
	"testing"
	"time"
)

// threadCPU returns the CPU time consumed by the calling OS thread.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuLoop runs f b.N times on a locked thread and reports, besides the
// wall time, the thread's CPU time per operation ("cpu-ns/op"): on a
// shared, loaded machine the wall time includes waiting for a CPU, the CPU
// time does not.
func cpuLoop(b *testing.B, f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := threadCPU()
	n := 0
	for b.Loop() {
		f()
		n++
	}
	if n > 0 {
		b.ReportMetric(float64(threadCPU()-start)/float64(n), "cpu-ns/op")
	}
}
