package cachesim

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/cespare/xxhash/v2"
)

// Block is a run of tokens that is rendered, and changes, as one unit: the
// tools and system prompt, one message, a request option. Hash identifies
// its content (two blocks with equal Hash are taken to be byte-identical).
type Block struct {
	Hash   uint64
	Tokens int
	// Parts is how many API content blocks this block stands for (an
	// assistant message with three tool calls is four content blocks), for
	// Anthropic's lookback window. 0 counts as 1.
	Parts int
	// Breakpoint marks a cache_control breakpoint at the end of the block
	// (ModeBreakpoints; in ModeRequestEnds an extra storage point).
	// LongTTL asks for the 1-hour lifetime.
	Breakpoint bool
	LongTTL    bool
	// Label is the caller's name for the block, reported back when the
	// prefix changes at it (for example the message's index; -1 for the
	// system prompt).
	Label int
}

// Request is one model call as the cache sees it.
type Request struct {
	Time time.Time
	// Namespace separates caches that never share entries: the model (a
	// model switch rebuilds everything), the account. Equal content under
	// different namespaces never hits.
	Namespace uint64
	Blocks    []Block
}

// Reason says why a request read what it read.
type Reason uint8

const (
	// ReasonHit: the request read everything an earlier request cached up
	// to where it extends the previous request.
	ReasonHit Reason = iota
	// ReasonCold: nothing was ever cached for this prefix (the first call,
	// or the first under a namespace).
	ReasonCold
	// ReasonExpired: an entry for a longer prefix existed but its lifetime
	// ended; Result.Gap is the idle time since its last use.
	ReasonExpired
	// ReasonPrefixChanged: the request differs from the previous one at
	// block Result.ChangedAt; what follows it could not be read.
	ReasonPrefixChanged
	// ReasonModelChanged: the namespace differs from the previous request's.
	ReasonModelChanged
	// ReasonBelowMinimum: no breakpoint (or the prompt) reaches the
	// minimum cacheable length, so nothing is read or written.
	ReasonBelowMinimum
	// ReasonNoBreakpoint: ModeBreakpoints and the request marks none.
	ReasonNoBreakpoint
	// ReasonBreakpointLimit: more breakpoints than Rules.MaxBreakpoints;
	// the provider rejects the request (Anthropic: "A maximum of 4 blocks
	// with cache_control may be provided"), so it caches nothing.
	ReasonBreakpointLimit
	// ReasonTTLOrder: a 1-hour breakpoint follows a 5-minute one; Anthropic
	// requires 1-hour entries first and rejects the request.
	ReasonTTLOrder
	numReasons
)

var reasonNames = [numReasons]string{
	"hit", "cold", "expired", "prefix-changed", "model-changed", "below-minimum",
	"no-breakpoint", "breakpoint-limit", "ttl-order",
}

func (r Reason) String() string {
	if r < numReasons {
		return reasonNames[r]
	}
	return "unknown"
}

// Result is what the provider would report for one request.
type Result struct {
	Total    int // prompt tokens
	Read     int // served from the cache
	Write    int // written to the cache (Write1h of them with the 1-hour TTL)
	Write1h  int
	Uncached int // billed as ordinary input: Total - Read - Write
	Reason   Reason
	// ChangedAt is the index of the first block that differs from the
	// previous request (ReasonPrefixChanged), else -1; ChangedLabel is that
	// block's Label.
	ChangedAt    int
	ChangedLabel int
	// Gap is the idle time of the expired entry (ReasonExpired), or the time
	// since the previous request otherwise.
	Gap time.Duration
	// Lost is how many tokens a longer entry would have served had it not
	// expired or had the prefix not changed (an upper bound of the miss).
	Lost int
}

// Hit reports whether anything was read from the cache.
func (r *Result) Hit() bool { return r.Read > 0 }

// ErrBadRequest is returned by Check for a request the simulator cannot
// interpret: negative token counts. Typically a bug in the caller's block
// builder.
var ErrBadRequest = errors.New("cachesim: bad request")

// Options tune a Sim. The zero value is ready to use.
type Options struct {
	// MaxEntries bounds the entry map; past it, expired entries are purged
	// and, if that is not enough, the map is dropped whole. 0 means 1<<20.
	MaxEntries int
	// Forget is how long an expired entry is kept to explain a later miss
	// as an expiry. 0 means 48 hours.
	Forget time.Duration
}

// entry is one cached prefix; times are Unix nanoseconds (cheaper to
// compare than time.Time on the hot path).
type entry struct {
	created  int64
	lastUsed int64
	ttl      time.Duration
}

func (e *entry) alive(r *Rules, now int64) bool {
	if time.Duration(now-e.lastUsed) > e.ttl {
		return false
	}
	if r.MaxAge > 0 && time.Duration(now-e.created) > r.MaxAge {
		return false
	}
	return true
}

// Sim is a provider's prompt cache for one account.
type Sim struct {
	rules   Rules
	opts    Options
	entries map[uint64]*entry
	free    []*entry

	chain []uint64 // chain hash through each block of the current request
	cum   []int    // tokens through each block

	prev       []uint64 // chain of the previous request
	prevHashes []uint64 // its block hashes
	prevNS     uint64
	prevTime   time.Time
	prevCache  int // tokens the previous request left in the cache
	havePrev   bool
	sincePurg  int
}

// New returns an empty cache with the given rules.
func New(r Rules, opts Options) *Sim {
	if opts.MaxEntries <= 0 {
		opts.MaxEntries = 1 << 20
	}
	if opts.Forget <= 0 {
		opts.Forget = 48 * time.Hour
	}
	if r.TTL <= 0 {
		r.TTL = 5 * time.Minute
	}
	if r.LongTTL <= 0 {
		r.LongTTL = r.TTL
	}
	return &Sim{rules: r, opts: opts, entries: make(map[uint64]*entry)}
}

// Rules returns the rules s simulates.
func (s *Sim) Rules() Rules { return s.rules }

// SetRules changes the rules for the following requests, keeping the
// entries: a session that switches between models of one provider keeps
// one cache (the models' namespaces keep their entries apart) while each
// request follows its own model's minimum and lifetimes.
func (s *Sim) SetRules(r Rules) {
	if r.TTL <= 0 {
		r.TTL = 5 * time.Minute
	}
	if r.LongTTL <= 0 {
		r.LongTTL = r.TTL
	}
	s.rules = r
}

// Len returns the number of entries held (live or kept to explain expiry).
func (s *Sim) Len() int { return len(s.entries) }

// Reset empties the cache.
func (s *Sim) Reset() {
	clear(s.entries)
	s.prev = s.prev[:0]
	s.prevHashes = s.prevHashes[:0]
	s.havePrev = false
}

// Check validates req without simulating it.
func Check(req *Request) error {
	for i := range req.Blocks {
		if req.Blocks[i].Tokens < 0 || req.Blocks[i].Parts < 0 {
			return ErrBadRequest
		}
	}
	return nil
}

// roundDown applies the minimum and the unit to a matched prefix length.
func (s *Sim) roundDown(n int) int {
	r := &s.rules
	if n < r.MinTokens || n <= 0 {
		return 0
	}
	if r.Unit > 1 {
		base := r.MinTokens
		if r.Mode != ModePrefix || base <= 0 {
			base = 0
		}
		return base + (n-base)/r.Unit*r.Unit
	}
	return n
}

func (s *Sim) hashChain(req *Request) {
	s.chain = s.chain[:0]
	s.cum = s.cum[:0]
	// Fast path: the blocks shared with the previous request keep its
	// chain hashes.
	reuse := 0
	if s.havePrev && s.prevNS == req.Namespace {
		for reuse < len(req.Blocks) && reuse < len(s.prevHashes) && s.prevHashes[reuse] == req.Blocks[reuse].Hash {
			reuse++
		}
		s.chain = append(s.chain, s.prev[:reuse]...)
	}
	var buf [16]byte
	h := req.Namespace ^ 0x9e3779b97f4a7c15
	if reuse > 0 {
		h = s.chain[reuse-1]
	}
	tok := 0
	for i := range req.Blocks {
		b := &req.Blocks[i]
		tok += b.Tokens
		s.cum = append(s.cum, tok)
		if i < reuse {
			continue
		}
		binary.LittleEndian.PutUint64(buf[:8], h)
		binary.LittleEndian.PutUint64(buf[8:], b.Hash)
		h = xxhash.Sum64(buf[:])
		s.chain = append(s.chain, h)
	}
}

func (s *Sim) newEntry() *entry {
	if n := len(s.free); n > 0 {
		e := s.free[n-1]
		s.free = s.free[:n-1]
		return e
	}
	return new(entry)
}

// store creates or refreshes the entry for the prefix through block i.
func (s *Sim) store(i int, now int64, ttl time.Duration) {
	if e, ok := s.entries[s.chain[i]]; ok {
		if !e.alive(&s.rules, now) {
			e.created = now
		}
		e.lastUsed = now
		if ttl > e.ttl || !e.alive(&s.rules, now) {
			e.ttl = ttl
		}
		return
	}
	if len(s.entries) >= s.opts.MaxEntries {
		s.purge(now)
		if len(s.entries) >= s.opts.MaxEntries {
			// Slow path: drop everything rather than keep an LRU.
			for _, e := range s.entries {
				s.free = append(s.free, e)
			}
			clear(s.entries)
		}
	}
	e := s.newEntry()
	*e = entry{created: now, lastUsed: now, ttl: ttl}
	s.entries[s.chain[i]] = e
}

// purge drops entries expired for longer than Options.Forget.
func (s *Sim) purge(now int64) {
	for k, e := range s.entries {
		if time.Duration(now-e.lastUsed) > e.ttl+s.opts.Forget {
			delete(s.entries, k)
			s.free = append(s.free, e)
		}
	}
	s.sincePurg = 0
}

// lookup returns the entry at block i: live, dead (expired), or nil.
func (s *Sim) lookup(i int, now int64) (e *entry, live bool) {
	e = s.entries[s.chain[i]]
	if e == nil {
		return nil, false
	}
	return e, e.alive(&s.rules, now)
}

// Simulate runs one request through the cache and returns what the provider
// would report. Requests must come in time order and pass Check (token
// counts are not validated again here). A request the provider would
// reject (ReasonBreakpointLimit, ReasonTTLOrder) leaves the cache as it was.
func (s *Sim) Simulate(req *Request) Result {
	r := &s.rules
	nowT := req.Time
	now := nowT.UnixNano()
	s.hashChain(req)
	n := len(req.Blocks)
	res := Result{ChangedAt: -1, ChangedLabel: -1}
	if n > 0 {
		res.Total = s.cum[n-1]
	}
	if s.havePrev {
		res.Gap = nowT.Sub(s.prevTime)
	}
	s.sincePurg++
	if s.sincePurg > 4096 {
		s.purge(now)
	}
	// lcp is the last block shared with the previous request (-1: none).
	lcp := -1
	if s.havePrev && s.prevNS == req.Namespace {
		for lcp+1 < len(s.prev) && lcp+1 < n && s.prev[lcp+1] == s.chain[lcp+1] {
			lcp++
		}
	}

	// Positions where entries are looked up and stored.
	read, readAt := 0, -1
	dead, deadGap := 0, time.Duration(0)
	consider := func(i int) {
		e, live := s.lookup(i, now)
		if e == nil {
			return
		}
		// Sizes come from this request: equal hashes mean equal content.
		if live {
			if s.cum[i] > read {
				read, readAt = s.cum[i], i
			}
		} else if s.cum[i] > dead {
			dead, deadGap = s.cum[i], time.Duration(now-e.lastUsed)
		}
	}

	switch r.Mode {
	case ModeBreakpoints:
		nbp := 0
		for i := range req.Blocks {
			if req.Blocks[i].Breakpoint {
				nbp++
			}
		}
		if nbp == 0 {
			res.Reason, res.Uncached = ReasonNoBreakpoint, res.Total
			s.remember(req, nowT)
			return res
		}
		if r.MaxBreakpoints > 0 && nbp > r.MaxBreakpoints {
			res.Reason, res.Uncached = ReasonBreakpointLimit, res.Total
			return res
		}
		if r.Provider == ProviderAnthropic {
			short := false
			for i := range req.Blocks {
				b := &req.Blocks[i]
				if !b.Breakpoint {
					continue
				}
				if b.LongTTL && short {
					res.Reason, res.Uncached = ReasonTTLOrder, res.Total
					return res
				}
				short = short || !b.LongTTL
			}
		}
		for i := range req.Blocks {
			if !req.Blocks[i].Breakpoint {
				continue
			}
			consider(i)
			parts := 0
			for j := i - 1; j >= 0; j-- {
				p := req.Blocks[j+1].Parts
				if p <= 0 {
					p = 1
				}
				parts += p
				if parts > r.Lookback {
					break
				}
				consider(j)
			}
		}
		writeTo, write1h := 0, 0
		for i := range req.Blocks {
			b := &req.Blocks[i]
			if !b.Breakpoint || s.cum[i] < r.MinTokens {
				continue
			}
			ttl := r.TTL
			long := b.LongTTL || (r.Provider == ProviderAnthropic && r.TTL >= time.Hour)
			if b.LongTTL {
				ttl = r.LongTTL
			}
			if s.cum[i] > read {
				if s.cum[i]-read > writeTo {
					if long {
						write1h = s.cum[i] - read
					}
					writeTo = s.cum[i] - read
				}
			}
			s.store(i, now, ttl)
		}
		if readAt >= 0 && r.RefreshOnHit {
			ttl := r.TTL
			if e := s.entries[s.chain[readAt]]; e != nil {
				ttl = e.ttl // (nil when the map was just dropped whole)
			}
			s.store(readAt, now, ttl)
		}
		res.Read, res.Write, res.Write1h = read, writeTo, min(write1h, writeTo)
		if read == 0 && writeTo == 0 {
			res.Reason = ReasonBelowMinimum
		}

	case ModePrefix:
		// Every prefix of every request is stored, so the live prefixes of
		// this request form an unbroken run from block 0.
		matched := 0
		for i := 0; i < n; i++ {
			e, live := s.lookup(i, now)
			if e == nil {
				break
			}
			if !live {
				if s.cum[i] > dead {
					dead, deadGap = s.cum[i], time.Duration(now-e.lastUsed)
				}
				continue
			}
			matched = s.cum[i]
			readAt = i
		}
		read = s.roundDown(matched)
		res.Read = read
		if res.Total >= r.MinTokens {
			if w := s.roundDown(res.Total) - read; w > 0 {
				res.Write = w
			}
			for i := 0; i < n; i++ {
				if i <= readAt && !r.RefreshOnHit {
					continue
				}
				s.store(i, now, r.TTL)
			}
		} else {
			res.Reason = ReasonBelowMinimum
		}
		dead = s.roundDown(dead)

	case ModeRequestEnds:
		for i := 0; i < n; i++ {
			consider(i)
		}
		read = s.roundDown(read)
		res.Read = read
		if s.roundDown(res.Total) > 0 {
			res.Write = max(0, s.roundDown(res.Total)-read)
			for i := 0; i < n; i++ {
				if req.Blocks[i].Breakpoint && s.cum[i] >= r.MinTokens {
					s.store(i, now, r.TTL)
				}
			}
			s.store(n-1, now, r.TTL)
			// A prefix common to two requests becomes a unit of its own.
			if lcp >= 0 && lcp < n-1 && s.cum[lcp] >= r.MinTokens {
				s.store(lcp, now, r.TTL)
			}
			if readAt >= 0 && r.RefreshOnHit {
				s.store(readAt, now, r.TTL)
			}
		} else {
			res.Reason = ReasonBelowMinimum
		}
		dead = s.roundDown(dead)
	}
	res.Uncached = res.Total - res.Read - res.Write

	if res.Reason != ReasonBelowMinimum {
		s.explain(req, &res, lcp, dead, deadGap)
	}
	s.remember(req, nowT)
	s.prevCache = res.Read + res.Write
	return res
}

// explain sets the Reason of a request that was not rejected. A request
// hits when it reads at least what the previous request left in the cache;
// it loses by expiry when a longer entry had expired, and otherwise by a
// change of prefix, located at the first block it no longer shares with the
// previous request.
func (s *Sim) explain(req *Request, res *Result, lcp, dead int, deadGap time.Duration) {
	switch {
	case dead > res.Read:
		res.Reason, res.Gap, res.Lost = ReasonExpired, deadGap, dead-res.Read
	case !s.havePrev:
		res.Reason = ReasonCold
		if res.Read > 0 {
			res.Reason = ReasonHit // entries from before a Reset of history
		}
	case s.prevNS != req.Namespace:
		res.Reason = ReasonModelChanged
		if res.Read > 0 {
			res.Reason = ReasonHit // back to a model whose entries live on
		}
	case res.Read >= s.prevCache:
		res.Reason = ReasonHit
		if res.Read == 0 {
			res.Reason = ReasonCold // the previous request cached nothing
		}
	default:
		res.Reason = ReasonPrefixChanged
		res.ChangedAt = lcp + 1
		if lcp+1 < len(req.Blocks) {
			res.ChangedLabel = req.Blocks[lcp+1].Label
		}
		res.Lost = s.prevCache - res.Read
	}
}

func (s *Sim) remember(req *Request, now time.Time) {
	s.prev = append(s.prev[:0], s.chain...)
	s.prevHashes = s.prevHashes[:0]
	for i := range req.Blocks {
		s.prevHashes = append(s.prevHashes, req.Blocks[i].Hash)
	}
	s.prevNS = req.Namespace
	s.prevTime = now
	s.havePrev = true
}
