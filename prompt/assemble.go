package prompt

import (
	"bytes"
	"encoding/binary"
	"path"
	"strings"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"

	"github.com/ocbench/ocbench/prefixcache"
	"github.com/ocbench/ocbench/tokenize"
)

// Layout tells where the parts of a rendered prompt lie in the output
// (offsets relative to the start of what AppendPrompt appended).
type Layout struct {
	// StableLen is the length of the stable prefix: the bytes before the
	// boundary marker, trailing whitespace excluded (OpenClaw's split).
	StableLen int
	// Marker is the offset of the boundary marker (CacheBoundary), or -1 in
	// mode none, which has no boundary.
	Marker int
	// DynamicStart is the offset of the first dynamic byte.
	DynamicStart int
	// Len is the total length appended.
	Len int
	// Key is the xxhash of the stable inputs (the prefix-cache key).
	Key uint64
	// PrefixHash is the xxhash of the stable prefix bytes.
	PrefixHash uint64
	// StableTokens is the exact token count of the stable prefix, or -1 if
	// the renderer has no counter.
	StableTokens int
	// Cached reports that the stable prefix came from the cache.
	Cached bool
}

// Renderer renders prompts, with an optional prefix cache and token
// counter. A Renderer is safe for concurrent use; the zero value renders
// without caching or counting.
type Renderer struct {
	// Cache, if set, holds rendered stable prefixes.
	Cache *prefixcache.Cache
	// Counter, if set, counts the tokens of each newly rendered stable
	// prefix (once per prefix when Cache is set).
	Counter *tokenize.Counter

	stableRenders atomic.Uint64
	tokenizations atomic.Uint64
}

// RendererStats count the expensive steps a Renderer took.
type RendererStats struct {
	// StableRenders is how often the stable part was rendered.
	StableRenders uint64
	// Tokenizations is how often a stable prefix was tokenized.
	Tokenizations uint64
}

// Stats returns the renderer's counters.
func (r *Renderer) Stats() RendererStats {
	return RendererStats{StableRenders: r.stableRenders.Load(), Tokenizations: r.tokenizations.Load()}
}

// AppendPrompt renders p with a zero Renderer (no cache, no counting).
func AppendPrompt(dst []byte, p *Params) ([]byte, Layout, error) {
	var r Renderer
	return r.AppendPrompt(dst, p)
}

// AppendPrompt appends the system prompt for p to dst and returns the
// extended buffer and the layout. With a cache, a warm call (same stable
// inputs) copies the cached stable prefix and renders only the dynamic part:
// it allocates nothing when dst has room.
func (r *Renderer) AppendPrompt(dst []byte, p *Params) ([]byte, Layout, error) {
	return r.appendPrompt(dst, p, nil)
}

func (r *Renderer) appendPrompt(dst []byte, p *Params, spans *[]Span) ([]byte, Layout, error) {
	if p == nil {
		return dst, Layout{}, ErrNilParams
	}
	if p.Mode > ModeNone {
		return dst, Layout{}, ErrMode
	}
	base := len(dst)
	if p.Mode == ModeNone {
		dst = append(dst, IdentityLine...)
		h := xxhash.Sum64String(IdentityLine)
		if spans != nil {
			*spans = append(*spans, Span{Name: "identity", Start: 0, End: len(IdentityLine)})
		}
		return dst, Layout{StableLen: len(IdentityLine), Marker: -1, DynamicStart: len(IdentityLine),
			Len: len(IdentityLine), Key: h, PrefixHash: h, StableTokens: -1}, nil
	}

	if o := strings.TrimSpace(p.SystemPromptOverride); o != "" {
		dst = appendOverride(dst, p, o, spans)
		return dst, overrideLayout(dst[base:]), nil
	}
	key := StableKey(p)
	var lay Layout
	lay.Key = key
	lay.StableTokens = -1
	var entry *prefixcache.Entry
	if r.Cache != nil && spans == nil {
		if e, ok := r.Cache.Get(key); ok {
			// Fast path: copy the cached stable prefix.
			entry = e
			dst = append(dst, e.Prefix...)
			lay.Cached = true
		}
	}
	if entry == nil {
		// Slow path: render the stable part.
		r.stableRenders.Add(1)
		w := lineWriter{b: dst, spans: spans, secIdx: -1}
		if spans != nil {
			w.b = dst[:base] // spans are relative to base; base is 0 for reports
		}
		renderStable(&w, p)
		dst = w.b
		stable := dst[base:]
		trimmed := bytes.TrimRight(stable, " \t\r\n")
		e := &prefixcache.Entry{Key: key, Tokens: -1, PrefixHash: xxhash.Sum64(trimmed)}
		if r.Counter != nil {
			r.tokenizations.Add(1)
			if n, err := r.Counter.CountBytes(trimmed); err == nil {
				e.Tokens = n
			}
		}
		if r.Cache != nil && spans == nil {
			e.Prefix = append([]byte(nil), stable...)
			_ = r.Cache.Put(e) // too large: simply not cached
		} else {
			e.Prefix = stable
		}
		entry = e
	}
	stableEnd := len(dst)
	lay.StableLen = len(bytes.TrimRight(dst[base:stableEnd], " \t\r\n"))
	lay.PrefixHash = entry.PrefixHash
	lay.StableTokens = entry.Tokens

	dst = append(dst, '\n')
	lay.Marker = len(dst) - base
	dst = append(dst, CacheBoundary...)
	w := lineWriter{b: dst, n: 1, spans: spans, secIdx: -1}
	renderDynamic(&w, p)
	dst = w.b
	// The dynamic part starts after the marker and the join separator.
	lay.DynamicStart = lay.Marker + len(CacheBoundary) + 1
	if lay.DynamicStart > len(dst)-base {
		lay.DynamicStart = len(dst) - base
	}
	lay.Len = len(dst) - base
	return dst, lay, nil
}

// appendOverride renders the override prompt and the bootstrap supplement.
func appendOverride(dst []byte, p *Params, override string, spans *[]Span) []byte {
	base := len(dst)
	dst = append(dst, override...)
	if spans != nil {
		*spans = append(*spans, Span{Name: "system_prompt_override", Start: 0, End: len(override)})
	}
	var w lineWriter
	w.secIdx = -1
	switch p.BootstrapMode {
	case BootstrapFull:
		w.add(bootstrapPendingFull)
	case BootstrapLimited:
		w.add(bootstrapPendingLimited)
	}
	if n := strings.TrimSpace(p.BootstrapTruncationNotice); n != "" {
		w.add("## Bootstrap Context Notice")
		w.add(n)
	}
	if p.BootstrapMode == BootstrapFull {
		for i := range p.ContextFiles {
			f := &p.ContextFiles[i]
			if strings.EqualFold(path.Base(f.Path), "bootstrap.md") {
				w.add(projectContextHead)
				w.add("## " + f.Path)
				appendFileContent(&w, f)
				break
			}
		}
	}
	if len(w.b) > 0 {
		start := len(dst) - base + 2
		dst = append(dst, "\n\n"...)
		dst = append(dst, w.b...)
		if spans != nil {
			*spans = append(*spans, Span{Name: "bootstrap_supplement", Start: start, End: len(dst) - base})
		}
	}
	return dst
}

func overrideLayout(out []byte) Layout {
	h := xxhash.Sum64(out)
	return Layout{StableLen: len(out), Marker: -1, DynamicStart: len(out), Len: len(out), Key: h, PrefixHash: h, StableTokens: -1}
}

// AppendSplit is the zero-copy form of AppendPrompt for payloads that send
// the stable and dynamic parts as separate blocks (Anthropic's two system
// blocks): it returns the stable prefix (trailing whitespace trimmed, as
// OpenClaw's split) without copying it, and appends only the dynamic suffix
// to dst. The returned stable slice is immutable and stays valid after
// eviction; never write to it. Mode none returns the identity line as
// stable and appends nothing.
func (r *Renderer) AppendSplit(dst []byte, p *Params) (stable, out []byte, lay Layout, err error) {
	if p == nil {
		return nil, dst, Layout{}, ErrNilParams
	}
	if p.Mode > ModeNone {
		return nil, dst, Layout{}, ErrMode
	}
	if strings.TrimSpace(p.SystemPromptOverride) != "" {
		out, lay, err := r.appendPrompt(nil, p, nil)
		return out, dst, lay, err
	}
	if p.Mode == ModeNone {
		h := xxhash.Sum64String(IdentityLine)
		return []byte(IdentityLine), dst, Layout{StableLen: len(IdentityLine), Marker: -1, DynamicStart: len(IdentityLine), Len: len(IdentityLine), Key: h, PrefixHash: h, StableTokens: -1}, nil
	}
	key := StableKey(p)
	var e *prefixcache.Entry
	if r.Cache != nil {
		e, _ = r.Cache.Get(key)
	}
	if e == nil {
		// Slow path: render the whole prompt once, caching the prefix.
		full, l, err := r.appendPrompt(nil, p, nil)
		if err != nil {
			return nil, dst, l, err
		}
		stable = full[:l.StableLen:l.StableLen]
		base := len(dst)
		dst = append(dst, full[l.DynamicStart:]...)
		l.Len = l.StableLen + len(dst) - base
		return stable, dst, l, nil
	}
	stable = bytes.TrimRight(e.Prefix, " \t\r\n")
	stable = stable[:len(stable):len(stable)]
	lay = Layout{Key: key, PrefixHash: e.PrefixHash, StableTokens: e.Tokens, Cached: true, StableLen: len(stable), Marker: len(e.Prefix) + 1}
	lay.DynamicStart = lay.Marker + len(CacheBoundary) + 1
	base := len(dst)
	w := lineWriter{b: dst, secIdx: -1}
	renderDynamic(&w, p)
	lay.Len = lay.DynamicStart + len(w.b) - base
	return stable, w.b, lay, nil
}

// StableKey returns the xxhash of the stable inputs of p: the prefix-cache
// key. Any change to an input rendered above the boundary changes it; no
// dynamic input enters it. File contents and the skills prompt enter by
// their hashes (computed here when the caller left them zero).
func StableKey(p *Params) uint64 {
	var d xxhash.Digest
	d.Reset()
	var kw keyWriter
	kw.d = &d
	// Small enums and flags in one word.
	var flags uint64
	bit := func(b bool, i uint) {
		if b {
			flags |= 1 << i
		}
	}
	s := &p.Sandbox
	bit(p.MemoryEnabled, 0)
	bit(p.MemoryCitations, 1)
	bit(s.Enabled, 2)
	bit(p.ReasoningTagHint, 3)
	if e := s.Elevated; e != nil {
		bit(true, 4)
		bit(e.Allowed, 5)
		bit(e.FullAccessAvailable, 6)
	}
	flags |= uint64(p.Mode)<<8 | uint64(p.ApprovalUI)<<16 | uint64(p.BootstrapMode)<<24
	kw.u64(0x6f63626e2d703032) // format version
	kw.u64(flags)
	kw.str(p.WorkspaceDir)
	kw.strs(p.ToolNames)
	var acc uint64
	for k, v := range p.ToolSummaries {
		// Map order is random: combine entries order-independently.
		acc ^= xxhash.Sum64String(k) ^ xxhash.Sum64String(v)*31
	}
	kw.u64(uint64(len(p.ToolSummaries)))
	kw.u64(acc)
	kw.strs(p.NativeCommandGuidance)
	kw.str(p.Provider.StablePrefix)
	kw.str(p.Provider.InteractionStyle)
	kw.str(p.Provider.ToolCallStyle)
	kw.str(p.Provider.ExecutionBias)
	sh := p.SkillsHash
	if sh == 0 {
		sh = xxhash.Sum64String(p.SkillsPrompt)
	}
	kw.u64(sh)
	kw.u64(uint64(len(p.SkillsPrompt)))
	kw.strs(p.ModelAliasLines)
	kw.str(p.UserTimezone)
	kw.strs(p.WorkspaceNotes)
	kw.str(p.DocsPath)
	kw.str(p.LocalSource)
	kw.str(s.ContainerWorkspaceDir)
	kw.str(s.WorkspaceDir)
	kw.str(s.WorkspaceAccess)
	if e := s.Elevated; e != nil {
		kw.str(e.DefaultLevel)
		kw.str(e.FullAccessBlockedReason)
	}
	kw.strs(p.OwnerNumbers)
	kw.str(p.OwnerDisplay)
	kw.str(p.OwnerDisplaySecret)
	kw.str(p.BootstrapTruncationNotice)
	kw.str(p.SourceReplyDeliveryMode)
	kw.str(p.SilentReplyPromptMode)
	kw.str(p.SystemPromptOverride)
	for i := range p.ContextFiles {
		f := &p.ContextFiles[i]
		if isDynamicFile(f.Path) {
			// Only whether stable files exist matters below the boundary.
			continue
		}
		h := f.Hash
		if h == 0 {
			h = xxhash.Sum64String(f.Content)
		}
		var clean uint64
		if f.Clean {
			clean = 1 << 63
		}
		kw.u64(h)
		kw.u64(uint64(len(f.Content)) | clean)
		kw.str(f.Path)
	}
	kw.flush()
	return d.Sum64()
}

// keyWriter feeds the digest through a local buffer, so that the many
// small fields cost a few large writes. Invariant: after every str, at
// least keyHeadroom bytes are free, so up to 8 u64 calls in a row need no
// check (u64 stays inlinable).
type keyWriter struct {
	d   *xxhash.Digest
	n   int
	buf [1024]byte
}

const keyHeadroom = 64

func (k *keyWriter) flush() {
	if k.n > 0 {
		_, _ = k.d.Write(k.buf[:k.n])
		k.n = 0
	}
}

func (k *keyWriter) u64(v uint64) {
	binary.LittleEndian.PutUint64(k.buf[k.n:], v)
	k.n += 8
}

func (k *keyWriter) str(s string) {
	k.u64(uint64(len(s)))
	if len(s) > len(k.buf)-keyHeadroom-k.n {
		k.large(s)
		return
	}
	k.n += copy(k.buf[k.n:], s)
	if k.n > len(k.buf)-keyHeadroom {
		k.flush()
	}
}

// large writes a string that does not fit the buffer.
//
//go:noinline
func (k *keyWriter) large(s string) {
	k.flush()
	_, _ = k.d.WriteString(s)
}

func (k *keyWriter) strs(ss []string) {
	k.u64(uint64(len(ss)))
	for _, s := range ss {
		k.str(s)
	}
}

// NewCachedRenderer returns a Renderer with a prefix cache of maxBytes and
// the given counter (nil: no token counting).
func NewCachedRenderer(maxBytes int64, counter *tokenize.Counter) *Renderer {
	return &Renderer{Cache: prefixcache.New(maxBytes), Counter: counter}
}
