//go:build unix

package cacheprofile

import (
	"bytes"
	"io"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestSyntheticStreamBoundedMemory profiles synthetic sessions of growing
// size and checks that the heap does not grow with the input.
func TestSyntheticStreamBoundedMemory(t *testing.T) {
	var peaks []uint64
	for _, size := range []int64{4 << 20, 32 << 20} {
		var peak uint64
		var ms runtime.MemStats
		n := 0
		rep, err := Profile(newSynthSession(size, 1), Options{OnCall: func(*Call) {
			if n++; n%200 == 0 {
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse)
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Calls == 0 || rep.All.Calls != rep.Calls {
			t.Fatalf("%d bytes: %d calls, %d with usage", size, rep.Calls, rep.All.Calls)
		}
		if rep.UnknownSkipped == 0 {
			t.Errorf("%d bytes: the unknown entry types were not counted", size)
		}
		if len(rep.Timeline) > 2000 {
			t.Errorf("timeline has %d points, bound 2000", len(rep.Timeline))
		}
		peaks = append(peaks, peak)
		t.Logf("%d MB: %d calls, tool-loop agreement %.3f, peak heap in use %d KB", size>>20, rep.Calls, rep.ToolLoop.Rate(), peak>>10)
		// The generator follows the rules the simulator models, so every
		// call must agree and every recorded miss be explained.
		if rep.All.Rate() != 1 || rep.UnexplainedN != 0 || rep.ToolLoop.ReadError() > 0.001 {
			t.Errorf("synthetic: agreement %.4f, unexplained %d, read error %.4f; explained %v",
				rep.All.Rate(), rep.UnexplainedN, rep.ToolLoop.ReadError(), rep.Explained)
		}
		if rep.Explained["expired"] == 0 {
			t.Errorf("synthetic: no expiry explained: %v", rep.Explained)
		}
	}
	// Eight times the input may not need more than twice the memory (GC
	// timing makes peaks noisy; growth with the input would be 8×).
	if peaks[1] > 2*peaks[0]+(4<<20) {
		t.Errorf("peak heap grew from %d KB to %d KB with 8× the input", peaks[0]>>10, peaks[1]>>10)
	}
}

// TestProfileHugeSynthetic profiles a synthetic session of
// OCBENCH_SYNTH_BYTES bytes (e.g. 1073741824) and logs time and peak RSS.
// It is skipped unless the variable is set: run it by hand, never in CI.
func TestProfileHugeSynthetic(t *testing.T) {
	v := os.Getenv("OCBENCH_SYNTH_BYTES")
	if v == "" {
		t.Skip("set OCBENCH_SYNTH_BYTES to run")
	}
	size, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	// With OCBENCH_SYNTH_FILE, the session is first written to that file
	// and the file is profiled (the timing then excludes generation).
	var rep *Report
	var el time.Duration
	if path := os.Getenv("OCBENCH_SYNTH_FILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(f, newSynthSession(size, 7)); err != nil {
			t.Fatal(err)
		}
		f.Close()
		start := time.Now()
		reps, err := ProfileFile(path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		el = time.Since(start)
		rep = reps[0]
	} else {
		start := time.Now()
		var err error
		rep, err = Profile(newSynthSession(size, 7), Options{})
		if err != nil {
			t.Fatal(err)
		}
		el = time.Since(start)
	}
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	t.Logf("%d bytes, %d entries, %d calls in %v (%.0f MB/s); peak RSS %d MB; agreement %.4f (tool loops %.4f, read error %.4f); misses explained %v, unexplained %d",
		size, rep.Entries, rep.Calls, el.Round(time.Millisecond), float64(size)/el.Seconds()/1e6, ru.Maxrss>>10,
		rep.All.Rate(), rep.ToolLoop.Rate(), rep.ToolLoop.ReadError(), rep.Explained, rep.UnexplainedN)
}

// BenchmarkProfileSynthetic measures profiling throughput on a generated
// 8 MB session (generation included; see BenchmarkSynthGenerate).
func BenchmarkProfileSynthetic(b *testing.B) {
	const size = 8 << 20
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Profile(newSynthSession(size, 1), Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSynthGenerate measures the generator alone, to subtract.
func BenchmarkSynthGenerate(b *testing.B) {
	const size = 8 << 20
	b.SetBytes(size)
	b.ReportAllocs()
	buf := make([]byte, 64<<10)
	for b.Loop() {
		s := newSynthSession(size, 1)
		for {
			if _, err := s.Read(buf); err != nil {
				break
			}
		}
	}
}

// BenchmarkProfileLargeSession profiles the real 974 KB pi session.
func BenchmarkProfileLargeSession(b *testing.B) {
	data, err := os.ReadFile(largeSession)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Profile(bytes.NewReader(data), Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
