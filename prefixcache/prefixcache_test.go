package prefixcache

import (
	"errors"
	"sync"
	"testing"
)

func entry(key uint64, n int) *Entry {
	return &Entry{Key: key, Prefix: make([]byte, n), Tokens: n / 4}
}

func TestGetPut(t *testing.T) {
	c := New(1 << 20)
	if _, ok := c.Get(1); ok {
		t.Fatal("hit on empty cache")
	}
	if err := c.Put(entry(1, 100)); err != nil {
		t.Fatal(err)
	}
	e, ok := c.Get(1)
	if !ok || len(e.Prefix) != 100 || e.Tokens != 25 {
		t.Fatalf("got %v %v", e, ok)
	}
	st := c.Stats()
	if st.Hits != 1 || st.Misses != 1 || st.Puts != 1 || st.Entries != 1 || st.Bytes != 100+entryOverhead {
		t.Fatalf("stats %+v", st)
	}
	// Replacing keeps one entry and the right byte count.
	if err := c.Put(entry(1, 50)); err != nil {
		t.Fatal(err)
	}
	if st := c.Stats(); st.Entries != 1 || st.Bytes != 50+entryOverhead {
		t.Fatalf("after replace %+v", st)
	}
	c.Remove(1)
	if st := c.Stats(); st.Entries != 0 || st.Bytes != 0 {
		t.Fatalf("after remove %+v", st)
	}
}

func TestLRUEvictionByBytes(t *testing.T) {
	per := int64(1000 + entryOverhead)
	c := NewSharded(3*per, 1) // room for exactly three 1000-byte entries
	for k := uint64(1); k <= 3; k++ {
		if err := c.Put(entry(k, 1000)); err != nil {
			t.Fatal(err)
		}
	}
	c.Get(1) // 1 is now most recent; 2 is least recent
	if err := c.Put(entry(4, 1000)); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Get(2); ok {
		t.Fatal("least recently used entry survived")
	}
	for _, k := range []uint64{1, 3, 4} {
		if _, ok := c.Get(k); !ok {
			t.Fatalf("entry %d evicted", k)
		}
	}
	st := c.Stats()
	if st.Evictions != 1 || st.Bytes > st.MaxBytes {
		t.Fatalf("stats %+v", st)
	}
	// A big entry evicts as many as needed.
	if err := c.Put(entry(5, 2500)); err != nil {
		t.Fatal(err)
	}
	if st := c.Stats(); st.Bytes > st.MaxBytes || st.Entries != 1 {
		t.Fatalf("after big put %+v", st)
	}
}

func TestTooLarge(t *testing.T) {
	c := NewSharded(1000, 1)
	if err := c.Put(entry(1, 5000)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v", err)
	}
	if st := c.Stats(); st.Rejected != 1 || st.Entries != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestGetAllocatesNothing(t *testing.T) {
	c := New(1 << 20)
	_ = c.Put(entry(42, 10))
	if a := testing.AllocsPerRun(1000, func() { c.Get(42) }); a != 0 {
		t.Fatalf("Get allocates %v", a)
	}
}

func TestConcurrent(t *testing.T) {
	c := New(64 << 10)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				k := uint64((i*7 + g) % 300)
				if e, ok := c.Get(k); ok {
					if e.Key != k || len(e.Prefix) != int(k%50)*10 {
						t.Errorf("entry %d corrupt", k)
						return
					}
					continue
				}
				_ = c.Put(entry(k, int(k%50)*10))
			}
		}(g)
	}
	wg.Wait()
	st := c.Stats()
	if st.Bytes > st.MaxBytes {
		t.Fatalf("over budget: %+v", st)
	}
	if st.Evictions == 0 {
		t.Fatalf("expected evictions: %+v", st)
	}
}

func BenchmarkGetHit(b *testing.B) {
	c := New(0)
	for k := uint64(0); k < 1000; k++ {
		_ = c.Put(entry(k, 100))
	}
	b.ReportAllocs()
	i := uint64(0)
	for b.Loop() {
		c.Get(i % 1000)
		i++
	}
}

func BenchmarkGetHitParallel(b *testing.B) {
	c := New(0)
	for k := uint64(0); k < 1000; k++ {
		_ = c.Put(entry(k, 100))
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := uint64(0)
		for pb.Next() {
			c.Get(i % 1000)
			i++
		}
	})
}
