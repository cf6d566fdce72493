// Package prefixcache holds rendered stable prompt prefixes, keyed by an
// xxhash of the inputs that produced them.
//
// A prompt's stable part (everything above OpenClaw's cache boundary)
// changes rarely: between two turns of a session it is usually identical.
// The prompt package hashes the stable inputs (not the rendered text, which
// would cost as much as rendering), looks the key up here, and on a hit
// copies the cached bytes instead of rendering and tokenizing again.
//
// The cache is sharded by key; each shard is an LRU list bounded in bytes.
// Entries are immutable once stored, so a returned *Entry may be read
// without locks for as long as the caller likes; eviction only drops the
// cache's reference. Hits, misses, insertions and evictions are counted
// atomically.
//
// This package owns the in-process prefix cache only. Rendering belongs to
// prompt, token counting to tokenize; the provider prompt-cache simulator
// lives in the cachesim subpackage.
package prefixcache

import (
	"errors"
	"sync"
	"sync/atomic"
)

// entryOverhead approximates the bytes an entry costs besides its prefix
// (the struct, list links and map slot).
const entryOverhead = 96

// DefaultMaxBytes is the byte bound New uses when given 0.
const DefaultMaxBytes = 64 << 20

// ErrTooLarge is returned by Put for an entry larger than one shard's
// budget. Typically this means the cache was configured far smaller than
// the prompts it is meant to hold; the entry is simply not cached.
var ErrTooLarge = errors.New("prefixcache: entry larger than a shard's byte budget")

// Entry is one cached stable prefix. Its fields must not be modified after
// Put.
type Entry struct {
	// Key is the hash of the stable inputs.
	Key uint64
	// Prefix is the rendered stable part, boundary marker excluded.
	Prefix []byte
	// Tokens is the exact token count of Prefix (or -1 when not counted).
	Tokens int
	// PrefixHash is the xxhash of Prefix, the value a report shows.
	PrefixHash uint64
	prev, next *Entry
	size       int64
}

// Size returns the bytes the entry is charged for.
func (e *Entry) Size() int64 { return int64(len(e.Prefix)) + entryOverhead }

type shard struct {
	mu         sync.Mutex
	m          map[uint64]*Entry
	head, tail *Entry // head = most recently used
	bytes, max int64
}

// Cache is a sharded, byte-bounded LRU of stable prefixes. It is safe for
// concurrent use. Get allocates nothing.
type Cache struct {
	shards []shard
	mask   uint64

	hits, misses, puts, evictions, rejects atomic.Uint64
}

// minShardBytes keeps shards big enough for large prompt prefixes.
const minShardBytes = 1 << 20

// New returns a cache bounded by maxBytes (DefaultMaxBytes if 0), with up to
// 16 shards, each allowed an equal share but at least 1 MiB (fewer shards
// for small caches), so that one large prefix always fits a shard of a
// cache sized for it.
func New(maxBytes int64) *Cache {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	n := 16
	for n > 1 && maxBytes/int64(n) < minShardBytes {
		n >>= 1
	}
	return NewSharded(maxBytes, n)
}

// NewSharded is New with a chosen number of shards, rounded up to a power
// of two (1 for a single LRU over all entries).
func NewSharded(maxBytes int64, shards int) *Cache {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	n := 1
	for n < shards {
		n <<= 1
	}
	c := &Cache{shards: make([]shard, n), mask: uint64(n - 1)}
	per := maxBytes / int64(n)
	for i := range c.shards {
		c.shards[i].m = make(map[uint64]*Entry)
		c.shards[i].max = per
	}
	return c
}

func (c *Cache) shard(key uint64) *shard {
	// The low bits of an xxhash are as good as any; mix in the high bits so
	// that keys built by XOR-ing hashes do not cluster.
	return &c.shards[(key^key>>32)&c.mask]
}

// Get returns the entry for key and marks it most recently used.
func (c *Cache) Get(key uint64) (*Entry, bool) {
	s := c.shard(key)
	s.mu.Lock()
	e, ok := s.m[key]
	if ok {
		s.moveToFront(e)
	}
	s.mu.Unlock()
	if ok {
		c.hits.Add(1)
	} else {
		c.misses.Add(1)
	}
	return e, ok
}

// Put stores e under e.Key, replacing any entry with that key, and evicts
// least recently used entries of the shard until it fits its budget. It
// returns ErrTooLarge (and stores nothing) when e alone exceeds the budget.
func (c *Cache) Put(e *Entry) error {
	e.size = e.Size()
	s := c.shard(e.Key)
	if e.size > s.max {
		c.rejects.Add(1)
		return ErrTooLarge
	}
	var evicted uint64
	s.mu.Lock()
	if old, ok := s.m[e.Key]; ok {
		s.unlink(old)
		delete(s.m, old.Key)
		s.bytes -= old.size
	}
	for s.bytes+e.size > s.max && s.tail != nil {
		v := s.tail
		s.unlink(v)
		delete(s.m, v.Key)
		s.bytes -= v.size
		evicted++
	}
	s.m[e.Key] = e
	s.pushFront(e)
	s.bytes += e.size
	s.mu.Unlock()
	c.puts.Add(1)
	if evicted > 0 {
		c.evictions.Add(evicted)
	}
	return nil
}

// Remove drops the entry for key, if any.
func (c *Cache) Remove(key uint64) {
	s := c.shard(key)
	s.mu.Lock()
	if e, ok := s.m[key]; ok {
		s.unlink(e)
		delete(s.m, key)
		s.bytes -= e.size
	}
	s.mu.Unlock()
}

// Stats are a cache's counters and current size.
type Stats struct {
	Hits, Misses, Puts, Evictions, Rejected uint64
	Entries                                 int
	Bytes, MaxBytes                         int64
}

// Stats returns the current counters.
func (c *Cache) Stats() Stats {
	st := Stats{
		Hits: c.hits.Load(), Misses: c.misses.Load(), Puts: c.puts.Load(),
		Evictions: c.evictions.Load(), Rejected: c.rejects.Load(),
	}
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		st.Entries += len(s.m)
		st.Bytes += s.bytes
		st.MaxBytes += s.max
		s.mu.Unlock()
	}
	return st
}

func (s *shard) pushFront(e *Entry) {
	e.prev = nil
	e.next = s.head
	if s.head != nil {
		s.head.prev = e
	}
	s.head = e
	if s.tail == nil {
		s.tail = e
	}
}

func (s *shard) unlink(e *Entry) {
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		s.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		s.tail = e.prev
	}
	e.prev, e.next = nil, nil
}

func (s *shard) moveToFront(e *Entry) {
	if s.head == e {
		return
	}
	s.unlink(e)
	s.pushFront(e)
}
