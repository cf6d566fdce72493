package engine

import (
	"context"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// BenchmarkLiveSessionMemory measures what a live session of 1,000
// messages keeps in the heap once its run has ended (the live-session
// cache's entry: its parsed entries, context and memo), and what that
// costs the collector: bytes and objects per session, and the time of a
// full collection over 32 such sessions. The collector's mark work grows
// with what the cache holds, and on a gateway running thousands of runs a
// second its cycles are what the latency tail feels.
func BenchmarkLiveSessionMemory(b *testing.B) {
	const sessions, history = 32, 1000
	p, st := sampleRun(b, true)
	seedSessions(b, st, sessions, history)
	b.Cleanup(func() { SetLiveSessionCacheLimits(liveCacheMax, liveCacheBytes) })
	var before, after runtime.MemStats
	var gc time.Duration
	for b.Loop() {
		SetLiveSessionCacheLimits(0, 0)
		SetLiveSessionCacheLimits(liveCacheMax, liveCacheBytes)
		runtime.GC()
		runtime.ReadMemStats(&before)
		for i := range sessions {
			p.SessionID = "live" + strconv.Itoa(i)
			if _, err := Run(context.Background(), p); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		t := time.Now()
		runtime.GC()
		gc += time.Since(t)
		runtime.ReadMemStats(&after)
	}
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/sessions, "B/session")
	b.ReportMetric(float64(after.HeapObjects-before.HeapObjects)/sessions, "objects/session")
	b.ReportMetric(float64(gc.Nanoseconds())/float64(b.N), "gc-ns")
}
