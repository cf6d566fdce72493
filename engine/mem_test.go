package engine

import (
	"runtime"
	"syscall"
	"time"
)

// runtimeMem samples the process's allocation count and CPU time, so that
// benchmarks can report per-turn figures that do not depend on how busy a
// shared machine is (wall time does).
type runtimeMem struct {
	mallocs uint64
	cpu     time.Duration
}

func (m *runtimeMem) read() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m.mallocs = ms.Mallocs
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		m.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
}
