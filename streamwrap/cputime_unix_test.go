//go:build unix

package streamwrap

import (
	"syscall"
	"time"
)

// processCPU returns the user+system CPU time of the test process. On a
// loaded machine wall-clock benchmarks measure the scheduler; the CPU
// metrics the benchmarks add from this measure the code.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
