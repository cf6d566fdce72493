package repair

import (
	"runtime"
	"syscall"
	"time"
	"unsafe"
)

// clockThreadCPUTime is Linux's CLOCK_THREAD_CPUTIME_ID.
const clockThreadCPUTime = 3

// threadClock returns a clock of the calling OS thread's CPU time (in
// nanoseconds, clock_gettime's: getrusage's thread times are tick-coarse),
// with the goroutine locked to that thread until release is called. On a
// loaded machine wall time measures the scheduler; the thread's own CPU
// time measures the code.
func threadClock() (now func() time.Duration, release func()) {
	runtime.LockOSThread()
	return func() time.Duration {
		var ts syscall.Timespec
		if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
			return 0
		}
		return time.Duration(ts.Nano())
	}, runtime.UnlockOSThread
}
