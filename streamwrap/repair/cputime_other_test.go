//go:build !linux

package repair

import "time"

// threadClock falls back to wall time where no per-thread CPU clock is
// read (see cputime_linux_test.go).
func threadClock() (now func() time.Duration, release func()) {
	start := time.Now()
	return func() time.Duration { return time.Since(start) }, func() {}
}
