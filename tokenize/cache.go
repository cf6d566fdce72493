package tokenize

import (
	"sync"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"
)

const cacheShards = 16

// Cache remembers exact token counts keyed by an xxhash of the content (and
// its length), so that text seen before is never tokenized again. It is
// bounded: each of its shards holds at most maxEntries/16 counts and is
// emptied when full (reset on overflow, which costs nothing per hit and
// never lets the map grow). It is safe for concurrent use; a hit takes one
// read lock and allocates nothing.
type Cache struct {
	c          *Counter
	perShard   int
	shards     [cacheShards]countShard
	hits, miss atomic.Uint64
	resets     atomic.Uint64
}

type countKey struct {
	h uint64
	n int
}

type countShard struct {
	mu sync.RWMutex
	m  map[countKey]int
}

// NewCache returns a cache over c that keeps at most maxEntries counts
// (at least 16).
func NewCache(c *Counter, maxEntries int) *Cache {
	per := maxEntries / cacheShards
	if per < 1 {
		per = 1
	}
	cc := &Cache{c: c, perShard: per}
	for i := range cc.shards {
		cc.shards[i].m = make(map[countKey]int, min(per, 1024))
	}
	return cc
}

// Counter returns the counter behind the cache.
func (cc *Cache) Counter() *Counter { return cc.c }

// Count returns the token count of s, from the cache when s was counted
// before.
func (cc *Cache) Count(s string) (int, error) {
	k := countKey{h: xxhash.Sum64String(s), n: len(s)}
	return cc.lookup(k, s)
}

// CountHashed is Count for a caller that already knows h =
// xxhash.Sum64String(s): a hit then costs no hashing at all.
func (cc *Cache) CountHashed(h uint64, s string) (int, error) {
	return cc.lookup(countKey{h: h, n: len(s)}, s)
}

func (cc *Cache) lookup(k countKey, s string) (int, error) {
	sh := &cc.shards[k.h%cacheShards]
	sh.mu.RLock()
	n, ok := sh.m[k]
	sh.mu.RUnlock()
	if ok {
		// Fast path: counted before.
		cc.hits.Add(1)
		return n, nil
	}
	// Slow path: count outside the lock, then publish.
	cc.miss.Add(1)
	n, err := cc.c.CountParallel(s, 0)
	if err != nil {
		return 0, err
	}
	sh.mu.Lock()
	if len(sh.m) >= cc.perShard {
		clear(sh.m)
		cc.resets.Add(1)
	}
	sh.m[k] = n
	sh.mu.Unlock()
	return n, nil
}

// CacheStats are a cache's counters since it was made.
type CacheStats struct {
	Hits, Misses, Resets uint64
	Entries              int
}

// Stats returns the cache's counters.
func (cc *Cache) Stats() CacheStats {
	st := CacheStats{Hits: cc.hits.Load(), Misses: cc.miss.Load(), Resets: cc.resets.Load()}
	for i := range cc.shards {
		sh := &cc.shards[i]
		sh.mu.RLock()
		st.Entries += len(sh.m)
		sh.mu.RUnlock()
	}
	return st
}
