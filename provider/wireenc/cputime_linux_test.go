//go:build linux

package wireenc_test

import (
	"syscall"
	"time"
)

// threadCPU returns the CPU time of the calling OS thread (lock it first):
// on a loaded shared machine it measures the work, wall time does not.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
