package tokenize

import (
	"testing"

	"github.com/ocbench/ocbench/internal/cputime"
)

func benchCount(b *testing.B, enc Encoding) {
	text := mixedCorpus(b, 1<<20)
	c := MustGet(enc)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	b.ResetTimer()
	cputime.Loop(b, func() {
		if _, err := c.Count(text); err != nil {
			b.Fatal(err)
		}
	})
}

func benchCountParallel(b *testing.B, enc Encoding) {
	text := mixedCorpus(b, 1<<20)
	c := MustGet(enc)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.CountParallel(text, 0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCountParallel1MiB_cl100k(b *testing.B) { benchCountParallel(b, Cl100kBase) }
func BenchmarkCountParallel1MiB_o200k(b *testing.B)  { benchCountParallel(b, O200kBase) }

func BenchmarkCount1MiB_cl100k(b *testing.B) { benchCount(b, Cl100kBase) }
func BenchmarkCount1MiB_o200k(b *testing.B)  { benchCount(b, O200kBase) }

// BenchmarkCachedCount1MiB is the warm path: the count of an unchanged
// 1 MiB text comes from the cache (hash + map lookup).
func BenchmarkCachedCount1MiB(b *testing.B) {
	text := mixedCorpus(b, 1<<20)
	c := NewCache(MustGet(O200kBase), 1024)
	if _, err := c.Count(text); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	b.ResetTimer()
	cputime.Loop(b, func() {
		if _, err := c.Count(text); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkCachedCountHashed is the warm path when the caller already holds
// the content hash (the prompt resolver does): a map lookup.
func BenchmarkCachedCountHashed(b *testing.B) {
	text := mixedCorpus(b, 1<<20)
	c := NewCache(MustGet(O200kBase), 1024)
	h := hashString(text)
	if _, err := c.CountHashed(h, text); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cputime.Loop(b, func() {
		if _, err := c.CountHashed(h, text); err != nil {
			b.Fatal(err)
		}
	})
}

func BenchmarkEstimate1MiB(b *testing.B) {
	text := mixedCorpus(b, 1<<20)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		_ = EstimateString(text)
	}
}
