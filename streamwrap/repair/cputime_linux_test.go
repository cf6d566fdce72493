package repair

import (
	"runtime"
	"syscall"
	"time"
)

// threadClock returns a clock of the calling OS thread's CPU time, with
// the goroutine locked to that thread until release is called. On a
// loaded machine wall time measures the scheduler; the thread's own CPU
// time measures the code.
func threadClock() (now func() time.Duration, release func()) {
	runtime.LockOSThread()
	return func() time.Duration {
		var ru syscall.Rusage
		if syscall.Getrusage(syscall.RUSAGE_THREAD, &ru) != nil {
			return 0
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}, runtime.UnlockOSThread
}
