package prompt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/internal/cputime"
	"github.com/ocbench/ocbench/tokenize"
)

// benchParams is BenchmarkParams for tests: 8 bootstrap files totalling
// 60,000 characters and 50 skills, plus typical dynamic inputs.
func benchParams(tb testing.TB) *Params {
	tb.Helper()
	p, err := BenchmarkParams()
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// BenchmarkAssembleCold renders everything on every call (no cache).
func BenchmarkAssembleCold(b *testing.B) {
	p := benchParams(b)
	var r Renderer
	dst, _, _ := r.AppendPrompt(nil, p)
	b.SetBytes(int64(len(dst)))
	b.ReportAllocs()
	cputime.Loop(b, func() { dst, _, _ = r.AppendPrompt(dst[:0], p) })
}

// BenchmarkAssembleWarm copies the cached stable prefix and renders the
// dynamic part into a reused buffer.
func BenchmarkAssembleWarm(b *testing.B) {
	p := benchParams(b)
	r := NewCachedRenderer(64<<20, tokenize.MustGet(tokenize.O200kBase))
	dst, _, _ := r.AppendPrompt(nil, p)
	b.SetBytes(int64(len(dst)))
	b.ReportAllocs()
	cputime.Loop(b, func() { dst, _, _ = r.AppendPrompt(dst[:0], p) })
}

// BenchmarkAssembleWarmSplit is the warm path without copying the stable
// prefix: only the dynamic part is rendered into dst.
func BenchmarkAssembleWarmSplit(b *testing.B) {
	p := benchParams(b)
	r := NewCachedRenderer(64<<20, nil)
	_, dst, _, _ := r.AppendSplit(nil, p)
	b.ReportAllocs()
	cputime.Loop(b, func() { _, dst, _, _ = r.AppendSplit(dst[:0], p) })
}

// BenchmarkAssembleWarmParallel is the warm path from all CPUs.
func BenchmarkAssembleWarmParallel(b *testing.B) {
	p := benchParams(b)
	r := NewCachedRenderer(64<<20, nil)
	dst, _, _ := r.AppendPrompt(nil, p)
	b.SetBytes(int64(len(dst)))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		buf := make([]byte, 0, len(dst)+1024)
		for pb.Next() {
			buf, _, _ = r.AppendPrompt(buf[:0], p)
		}
	})
}

// BenchmarkStableKey is the hashing of the stable inputs alone.
func BenchmarkStableKey(b *testing.B) {
	p := benchParams(b)
	b.ReportAllocs()
	cputime.Loop(b, func() { _ = StableKey(p) })
}

// BenchmarkColdWithTokenize is a cold call that also counts the stable
// prefix's tokens (what a warm call saves).
func BenchmarkColdWithTokenize(b *testing.B) {
	p := benchParams(b)
	r := &Renderer{Counter: tokenize.MustGet(tokenize.O200kBase)}
	dst, _, _ := r.AppendPrompt(nil, p)
	b.SetBytes(int64(len(dst)))
	b.ReportAllocs()
	cputime.Loop(b, func() { dst, _, _ = r.AppendPrompt(dst[:0], p) })
}

func BenchmarkTrimContent(b *testing.B) {
	s := strings.Repeat("line 0000 abcdefghij\n", 10000)
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		TrimContent(s, "AGENTS.md", DefaultBootstrapMaxChars)
	}
}

// BenchmarkResolveSample resolves the sample workspace with a warm file
// cache (stat per file, no reads): the per-turn cost before rendering.
func BenchmarkResolveSample(b *testing.B) {
	dir := b.TempDir()
	if err := MaterializeSample(dir); err != nil {
		b.Fatal(err)
	}
	var r Resolver
	cfg := SampleConfig()
	if _, err := r.Resolve(cfg, dir); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Resolve(cfg, dir); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPromptIn is what a run's system prompt costs: the sample
// workspace resolved and rendered (cold, a new Resolver each time), or
// taken from the memo after a stat of each file it depends on (warm).
func BenchmarkPromptIn(b *testing.B) {
	dir := b.TempDir()
	if err := MaterializeSample(dir); err != nil {
		b.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		b.Fatal(err)
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		b.Fatal(err)
	}
	defer root.Close()
	open := func() (*os.Root, error) { return root, nil }
	cfg := SampleConfig()
	for _, warm := range []bool{false, true} {
		name := "cold"
		if warm {
			name = "warm"
		}
		b.Run(name, func(b *testing.B) {
			var r Resolver
			b.ReportAllocs()
			for b.Loop() {
				if !warm {
					r = Resolver{}
				}
				if _, _, err := r.PromptIn(cfg, real, open, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
