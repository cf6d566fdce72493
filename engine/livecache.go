package engine

import (
	"container/list"
	"path/filepath"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/streamwrap"
	"github.com/ocbench/ocbench/transcript"
)

// The live-session cache keeps what a run parsed of its session file (the
// entries, as a full read would give them) after the run closes the
// writer, so that the next run of that session does not read and parse
// the whole file again. It is keyed by the session file's absolute path
// (a DirStore's session id names one file) and validated by the file's
// state (device, inode, size, modification and change times, as fstat
// sees it through the writer's descriptor, recorded under the session lock
// after the run's last write) and the writer's leaf: any change by another
// writer (an append, a rotation, a rewrite, a compaction elsewhere) gives
// another state, and the run reads the file in full. A run takes its
// session's entry out of the cache (a session is run by one writer at a
// time: its lock), and puts its view back when it closes: the entries it
// loaded at open, with the file's state after its last write, and the
// entries of the lines it wrote as a read of them would give them
// (transcript.ReadBackMessage of the messages it appended, copied before
// the run returns: events only lend them to the caller), when the file's
// size is the one its appends left; when one of its messages would read
// back otherwise, or it wrote another entry, the next run that finds the
// state unchanged parses those lines from the file. Either way the cached
// view is the view a full read gives, and a session that is never run
// again costs one fstat. The context the run built of its loaded entries
// is kept with them: when the entries after them only continue its
// branch, the next run extends it by their messages
// (transcript.SessionContext.Extend) instead of walking the whole tree
// again.
//
// Bounded (least recently used first out): at most liveCacheMax sessions
// and liveCacheBytes of memory in all, as estimated by liveEntry.cost (a
// session kept costs about its file's size again and 1.5 KB per entry); a
// session file larger than liveCacheFileMax is not cached. A service sizes
// the cache to its live sessions with SetLiveSessionCacheLimits: a working
// set larger than the bound is read again on every run (a round of more
// sessions than fit evicts each just before its next run). The default
// bound holds 256 sessions of about 1,700 messages (2.4 KB a message,
// measured): 512 MiB held 256 of 1,000 messages no more, and a /v1/runs
// load of 256 such sessions at 800 runs/s re-read whole files on most runs
// (gateway CPU 770 µs a run, p99 400 ms, against 600 µs and 108 ms with
// every session cached).
const (
	liveCacheMax     = 1024
	liveCacheBytes   = 1 << 30
	liveCacheFileMax = 4 << 20
	// liveEntryOverhead is what a cached entry keeps besides its line's
	// bytes: the transcript.Entry, its parsed message and blocks, and the
	// context's copy of the message (measured: 1,450 bytes per entry for
	// short messages, beside 3 MB of session files holding 15 MB).
	liveEntryOverhead = 1536
)

// SetLiveSessionCacheLimits bounds the live-session cache, which keeps
// what runs parsed of their session files (see the package's Run of a
// SessionFile or DirStore session): at most sessions sessions and about
// bytes of memory (entries are counted by their file's size plus 1.5 KB
// each). A value <= 0 turns the cache off. Entries over the new bounds are
// evicted at once. The defaults are 1,024 sessions and 1 GiB.
func SetLiveSessionCacheLimits(sessions int, bytes int64) {
	c := liveSessions
	c.mu.Lock()
	defer c.mu.Unlock()
	c.max, c.limit = max(sessions, 0), max(bytes, 0)
	c.evict()
}

// LiveSessionCacheStats is the state of the live-session cache.
type LiveSessionCacheStats struct {
	Sessions int   // cached now
	Bytes    int64 // their estimated memory
	// Hits counts runs that found their session in the cache (no read of
	// the whole file), Misses runs of a file or DirStore session that did
	// not, Evictions entries dropped for the bounds.
	Hits, Misses, Evictions int64
}

// LiveSessionCache returns the live-session cache's state.
func LiveSessionCache() LiveSessionCacheStats {
	c := liveSessions
	c.mu.Lock()
	defer c.mu.Unlock()
	return LiveSessionCacheStats{Sessions: len(c.m), Bytes: c.bytes, Hits: c.hits.Load(), Misses: c.misses.Load(), Evictions: c.evictions}
}

// liveWriter is what the cache needs of a session writer (the JSONL
// transcript.Writer of a file or a DirStore; other stores are not cached).
type liveWriter interface {
	State() (transcript.WriterState, bool)
	ReadTail(reuse *transcript.Reader, off, lines int64, opts transcript.Options) (*transcript.Reader, error)
	Path() string
	Leaf() string
	Size() int64
}

type liveEntry struct {
	key     string
	state   transcript.WriterState // after the last run's last write
	leaf    string
	version int
	parsed  int64 // entries holds the file's entries up to this offset,
	lines   int64 // which is after this many lines (the header included)
	entries []transcript.Entry
	// sc is the context of entries[:scN], when the run built it before
	// appending (scOK): the next run extends it by the entries after them
	// (which the last run appended, read back from memory) and the lines
	// it parses.
	sc   transcript.SessionContext
	scN  int
	scOK bool
	// prep is what the last run prepared of sc's messages (nil: nothing).
	prep *livePrep
	elem *list.Element
	cost int64 // estimated memory, counted in liveCache.bytes
}

// tailReaders are the Readers of the lines a run appended.
var tailReaders sync.Pool

type liveCache struct {
	mu     sync.Mutex
	m      map[string]*liveEntry
	lru    list.List
	bytes  int64
	max    int
	limit  int64
	hits   atomic.Int64 // runs that did not read their session
	misses atomic.Int64 // runs that did
	// extends counts runs that extended the cached context, prepExtends
	// those that extended its prepared history (tests).
	extends, prepExtends atomic.Int64
	// readBacks counts runs whose entries of the last run's lines were
	// read back from memory, not from the file (tests).
	readBacks atomic.Int64
	evictions int64
}

var liveSessions = &liveCache{max: liveCacheMax, limit: liveCacheBytes}

// take removes key's entry from the cache.
func (c *liveCache) take(key string) *liveEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.m[key]
	if e != nil {
		c.remove(e)
	}
	return e
}

func (c *liveCache) remove(e *liveEntry) {
	c.lru.Remove(e.elem)
	delete(c.m, e.key)
	c.bytes -= e.cost
}

// evict drops the least recently used entries past the bounds.
func (c *liveCache) evict() {
	for c.lru.Len() > 0 && (c.lru.Len() > c.max || c.bytes > c.limit) {
		c.remove(c.lru.Back().Value.(*liveEntry))
		c.evictions++
	}
}

// put adds e (replacing an entry of the same key), evicting the least
// recently used entries past the bounds.
func (c *liveCache) put(e *liveEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[string]*liveEntry)
		c.lru.Init()
	}
	if old := c.m[e.key]; old != nil {
		c.remove(old)
	}
	e.cost = e.state.Size() + int64(len(e.entries))*liveEntryOverhead + e.prep.cost()
	e.elem = c.lru.PushFront(e)
	c.m[e.key] = e
	c.bytes += e.cost
	c.evict()
}

// len is the number of cached sessions (tests).
func (c *liveCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// liveBase is what a session loaded at open, for the cache.
type liveBase struct {
	lw      liveWriter
	key     string
	open    transcript.WriterState
	entries int   // loaded entries: s.entries[:entries]
	lines   int64 // lines of the file at open
	// ends are the file's sizes after each message the run appended
	// (session.append), in order; endsBuf holds a few runs' worth.
	ends    []int64
	endsBuf [4]int64
	ok      bool // the loaded view is exactly the file at open
	// sc is the context of the loaded entries (scOK: built).
	sc   transcript.SessionContext
	scOK bool
	// prep is the run's preparation of sc's messages (prepareRun).
	prep *livePrep
}

// livePrep is what runs of a live session prepared of its context (the
// history a first model call sends, transcript.Preparer) and estimated of
// it, kept in the cache with the context: the next run extends both by
// the messages appended since instead of working through the whole
// conversation again.
type livePrep struct {
	pr transcript.Preparer
	// The first est messages of pr's history are estimated: guard holds
	// the context guard's chars of each and guardTotal their sum, tokens
	// the sums of their token estimates (tokens[i]: of the first i), and
	// lastUsage is the last of them that reports usage (-1: none).
	est        int
	guard      []int
	guardTotal int
	// guardResult is the largest of guard over the tool results.
	guardResult int
	tokens      []int
	lastUsage   int
	// san is the replay sanitizer's memo of the histories the session's
	// runs sent: they begin with pr's prepared messages.
	san streamwrap.ReplayMemo
}

// reset drops the estimates (the history was prepared afresh).
func (lp *livePrep) reset() {
	lp.est, lp.guard, lp.guardTotal, lp.tokens, lp.lastUsage = 0, lp.guard[:0], 0, lp.tokens[:0], -1
	lp.guardResult = 0
	lp.san.Keep(0)
}

// estimate brings the estimates up to h, the prepared history.
func (lp *livePrep) estimate(h []llm.Message, buf []byte) []byte {
	if len(lp.tokens) == 0 {
		lp.tokens = append(lp.tokens, 0)
	}
	for i := lp.est; i < len(h); i++ {
		t, g, b := estimateBoth(&h[i], buf)
		buf = b
		lp.guard = append(lp.guard, g)
		lp.guardTotal += g
		if h[i].Role == llm.RoleToolResult {
			lp.guardResult = max(lp.guardResult, g)
		}
		lp.tokens = append(lp.tokens, lp.tokens[i]+t)
		if usageTokens(&h[i]) > 0 {
			lp.lastUsage = i
		}
	}
	lp.est = len(h)
	return buf
}

// cost estimates lp's memory: its copy of the history (the messages'
// contents are the context's), the estimates, the preparer's id maps.
func (lp *livePrep) cost() int64 {
	if lp == nil {
		return 0
	}
	return int64(lp.pr.Raw())*(int64(unsafe.Sizeof(llm.Message{}))+96) + 16*int64(lp.est)
}

// livePrep returns the run's livePrep (made on first use), nil when the
// session's context is not one the live cache keeps.
func (s *session) livePrep() *livePrep {
	if s.live == nil || s.live.lw == nil || !s.live.scOK {
		return nil
	}
	if s.live.prep == nil {
		s.live.prep = &livePrep{lastUsage: -1}
	}
	return s.live.prep
}

// dropLivePrep forgets the run's livePrep: the run changed its history.
func (s *session) dropLivePrep() {
	if s.live != nil {
		s.live.prep = nil
	}
}

// fromCache sets s's entries from the cache when its writer's file is the
// very one a previous run left; it returns false (having noted what the
// load needs) otherwise.
func (s *session) fromCache() bool {
	lw, ok := s.w.(liveWriter)
	if !ok {
		return false
	}
	st, ok := lw.State()
	if !ok {
		return false
	}
	key := lw.Path()
	if !filepath.IsAbs(key) {
		abs, err := absPath(key)
		if err != nil {
			return false
		}
		key = abs
	}
	*s.live = liveBase{lw: lw, key: key, open: st}
	e := liveSessions.take(key)
	if e == nil || e.state != st || e.leaf != lw.Leaf() {
		liveSessions.misses.Add(1)
		return false
	}
	if !s.extendFrom(e, lw, st) {
		liveSessions.misses.Add(1)
		return false
	}
	liveSessions.hits.Add(1)
	return true
}

// extendFrom sets s's entries from e, the cached view of the file whose
// state is now st, and the lines written since: false if they cannot be
// read as a full read would.
func (s *session) extendFrom(e *liveEntry, lw liveWriter, st transcript.WriterState) bool {
	entries, lines := e.entries, e.lines
	if e.parsed != st.Size() {
		// What the last run wrote and could not read back from memory:
		// parsed from the file, as a full read would.
		reuse, _ := tailReaders.Get().(*transcript.Reader)
		rd, err := lw.ReadTail(reuse, e.parsed, e.lines, transcript.Options{KeepUnknown: true})
		if err != nil {
			return false
		}
		for rd.Next() {
			if en := rd.Entry(); len(en.ID) > 0 {
				entries = append(entries, en.Clone())
			}
		}
		rs := rd.Stats()
		rerr := rd.Err()
		rd.Close()
		tailReaders.Put(rd)
		if rerr != nil || rs.Bytes != st.Size() || rs.Torn {
			return false
		}
		lines = rs.Lines
	} else if e.scN < len(entries) {
		liveSessions.readBacks.Add(1)
	}
	s.entries = entries
	s.version = e.version
	s.leafID = []byte(e.leaf)
	s.dirty = true
	s.live.entries, s.live.lines, s.live.ok = len(entries), lines, true
	// The context of the last run's view, extended by the entries it
	// wrote when they only continue its branch.
	if sc := e.sc; e.scOK && sc.Extend(entries[:e.scN], entries[e.scN:]) {
		s.ctx, s.dirty = sc.Messages, false
		s.live.sc, s.live.scOK = sc, true
		liveSessions.extends.Add(1)
		if e.prep != nil && e.prep.pr.Raw() == len(e.sc.Messages) {
			// What the last run prepared of the context before the lines
			// it wrote.
			s.live.prep = e.prep
		}
	}
	return true
}

// loaded records what a full read gave (st: the reader's stats).
func (s *session) loaded(st transcript.Stats) {
	if s.live == nil || s.live.lw == nil {
		return
	}
	s.live.entries, s.live.lines = len(s.entries), st.Lines
	s.live.ok = st.Bytes == s.live.open.Size() && !st.Torn && s.version >= 3
}

// saveLive puts s's view of the file into the cache, before the writer
// is closed (under the session lock, after the run's last write).
func (s *session) saveLive() {
	b := s.live
	if b == nil || b.lw == nil || !b.ok {
		return
	}
	b.ok = false
	st, ok := b.lw.State()
	if !ok || !st.SameFile(b.open) || st.Size() < b.open.Size() || st.Size() > liveCacheFileMax {
		return
	}
	// The entries the run appended are read back from memory, as a read
	// of the lines it wrote would give them, when it can tell (see
	// readBack); else the next run reads those lines from the file.
	entries, n := s.readBack(st)
	s.entries = nil
	parsed, lines := b.open.Size(), b.lines
	if n > 0 {
		parsed, lines = st.Size(), b.lines+int64(n)
	}
	prep := b.prep
	if prep != nil && (!b.scOK || prep.pr.Raw() != len(b.sc.Messages)) {
		prep = nil
	}
	b.prep = nil
	liveSessions.put(&liveEntry{key: b.key, state: st, leaf: b.lw.Leaf(), version: s.version,
		parsed: parsed, lines: lines, entries: entries, sc: b.sc, scN: b.entries, scOK: b.scOK, prep: prep})
}

// readBack returns the loaded entries followed by those of the lines the
// run appended to the file, now in state st, as a read of those lines
// would give them (transcript.ReadBackMessage), in memory of their own,
// and how many those are; the loaded entries alone and 0 when it cannot
// tell (nothing appended, an entry other than a message, a branch moved,
// the file's size not what the appends left, a message whose line reads
// back otherwise, a session without loaded entries). It writes in
// s.entries' array after the loaded ones.
func (s *session) readBack(st transcript.WriterState) ([]transcript.Entry, int) {
	b := s.live
	loaded := s.entries[:b.entries]
	n := len(s.entries) - b.entries + len(s.added)
	// A session the run began (no entries loaded) is left to the file:
	// most such runs are one-offs (a fresh session file per run), whose
	// entries would be copied for nobody; its next run, if any, parses
	// the lines.
	ok := n > 0 && b.entries > 0 && !s.branched && len(b.ends) == n && b.ends[n-1] == st.Size()
	var tail []transcript.Entry
	if ok && len(s.entries) > b.entries {
		// Materialized entries (a rebuilt context) are read from where
		// the tail is written: a tail of its own.
		tail = make([]transcript.Entry, 0, n)
	} else {
		clear(s.entries[b.entries:])
		tail = loaded
	}
	if !ok {
		return loaded, 0
	}
	off, line := b.open.Size(), b.lines
	add := func(id, parent []byte, m *llm.Message) bool {
		line++
		e, ok := transcript.ReadBackMessage(id, parent, m.Timestamp, m, line, off)
		if !ok || m.Timestamp == 0 {
			return false
		}
		tail = append(tail, e)
		off = b.ends[line-b.lines-1]
		return true
	}
	for i := b.entries; i < len(s.entries) && ok; i++ {
		e := &s.entries[i]
		ok = e.Type == transcript.TypeMessage && e.Message != nil && add(e.ID, e.ParentID, e.Message)
	}
	for i := 0; i < len(s.added) && ok; i++ {
		a := &s.added[i]
		ok = add(a.id, s.addedParentOf(i), a.msg)
	}
	if len(s.entries) > b.entries {
		clear(s.entries[b.entries:])
		if ok {
			return append(loaded, tail...), n
		}
		return loaded, 0
	}
	if !ok {
		clear(tail[len(loaded):])
		return loaded, 0
	}
	return tail, n
}
