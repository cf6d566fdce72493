package provider

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/valyala/fastjson"
)

// TestCPUTimeRatios measures thread CPU time (not wall time) per stream of
// the fast decoder, the fastjson reference decoder and the bare fastjson
// floor, so ratios can be read on a machine shared with other work.
// Run with CPUTIME=1 go test -run TestCPUTimeRatios -v.
func TestCPUTimeRatios(t *testing.T) {
	if os.Getenv("CPUTIME") == "" {
		t.Skip("set CPUTIME=1")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	threadCPU := func() time.Duration {
		var ru syscall.Rusage
		_ = syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	const iters = 40
	for _, s := range synthStreams {
		st := s.gen(2000, 1)
		br := bytes.NewReader(st.Body)
		d := NewDecoder(s.wire, br, Options{})
		measure := func(ref bool) time.Duration {
			start := threadCPU()
			for i := 0; i < iters; i++ {
				br.Reset(st.Body)
				d.Reset(s.wire, br, Options{})
				d.ref = ref
				decodeStream(d)
			}
			return (threadCPU() - start) / iters
		}
		rd := bufio.NewReaderSize(br, 64<<10)
		var p fastjson.Parser
		floor := func() time.Duration {
			best := time.Duration(1 << 62)
			for round := 0; round < 1; round++ {
				start := threadCPU()
				for i := 0; i < iters; i++ {
					br.Reset(st.Body)
					rd.Reset(br)
					for {
						line, err := rd.ReadSlice('\n')
						if err != nil {
							break
						}
						if bytes.HasPrefix(line, []byte("data: {")) {
							v, _ := p.ParseBytes(line[6:])
							_ = v.GetStringBytes("type")
						}
					}
				}
				best = min(best, (threadCPU()-start)/iters)
			}
			return best
		}
		fast, ref, fl := time.Duration(1<<62), time.Duration(1<<62), time.Duration(1<<62)
		for round := 0; round < 10; round++ {
			fast = min(fast, measure(false))
			ref = min(ref, measure(true))
			fl = min(fl, floor())
		}
		mbps := func(d time.Duration) float64 { return float64(len(st.Body)) / d.Seconds() / 1e6 }
		fmt.Printf("%-11s fast %8v (%6.0f MB/s, %4.0f ns/event)  reference %8v (%6.0f MB/s)  fastjson floor %8v (%6.0f MB/s)  fast/floor speed %.2fx\n",
			s.name, fast, mbps(fast), float64(fast.Nanoseconds())/float64(st.Events), ref, mbps(ref), fl, mbps(fl), float64(fl)/float64(fast))
	}
}
