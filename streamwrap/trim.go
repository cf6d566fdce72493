package streamwrap

import (
	"bytes"
	"context"
	"encoding/hex"
	"math/rand/v2"
	"sync"

	"github.com/ocbench/ocbench/llm"
)

// DefaultUnknownToolThreshold is the unknown-tool loop guard threshold of
// OpenClaw 2026.9.6: ten identical unknown-tool turns pass, the eleventh is
// rewritten.
const DefaultUnknownToolThreshold = 10

// blankToolName is the name the guard reports for a final blank tool name.
const blankToolName = "blank tool name"

// TrimConfig configures TrimToolCallNames.
type TrimConfig struct {
	// Allowed is the live allowlist; nil or empty means none (names are
	// then only trimmed).
	Allowed *Allowlist
	// UnknownToolThreshold: with N > 0, N consecutive turns calling the
	// same unknown tool pass and turn N+1 is rewritten to plain text.
	// Zero or less turns the loop guard off (the blank-name rewrite stays).
	UnknownToolThreshold int
	// Guard holds the streak; nil gives the returned function its own. Share
	// one to keep the streak of a run across rebuilt chains, or to read it.
	Guard *UnknownToolGuard
}

// UnknownToolGuard is the state OpenClaw keeps per wrapper instance (one
// agent run): the name of the last unknown tool and how many consecutive
// turns called it. It is safe for concurrent use.
type UnknownToolGuard struct {
	mu    sync.Mutex
	last  []byte
	count int
}

// Count returns the current streak and the unknown tool it is about.
func (g *UnknownToolGuard) Count() (name string, n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return string(g.last), g.count
}

func (g *UnknownToolGuard) reset() {
	g.mu.Lock()
	g.last = g.last[:0]
	g.count = 0
	g.mu.Unlock()
}

// bump counts one turn that called the unknown tool name and returns the
// new streak.
func (g *UnknownToolGuard) bump(name string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if string(g.last) == name && g.count > 0 {
		g.count++
	} else {
		g.last = append(g.last[:0], name...)
		g.count = 1
	}
	return g.count
}

func (g *UnknownToolGuard) exceeds(name string, threshold int) bool {
	if threshold <= 0 {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.count > threshold && string(g.last) == name
}

// TrimToolCallNames is OpenClaw's wrapStreamFnTrimToolCallNames
// (streamwrap.md §4.2): on every event's live message and on the final
// message it resolves tool names against the allowlist (§4.1), trims ids
// and gives missing, blank or duplicate ids a fallback (call_ + 24 hex,
// stable per content index within one stream), and runs the unknown-tool
// loop guard, which rewrites a turn to one text block once the same unknown
// tool has been called more than the threshold times in a row, and always
// rewrites a final blank tool name.
//
// The guard's streak lives in the returned function: build one per agent
// run. The live partial is never rewritten mid-stream (decoders still
// index its blocks); the rewrite lands on the final message.
func TrimToolCallNames(next llm.StreamFunc, cfg TrimConfig) llm.StreamFunc {
	g := cfg.Guard
	if g == nil {
		g = &UnknownToolGuard{}
	}
	return trimWithGuard(next, cfg, g)
}

func trimWithGuard(next llm.StreamFunc, cfg TrimConfig, g *UnknownToolGuard) llm.StreamFunc {
	return func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		inner, err := next(ctx, req)
		if err != nil {
			return nil, err
		}
		s := trimPool.Get().(*trimStream)
		s.init(inner)
		s.cfg = cfg
		s.guard = g
		return s, nil
	}
}

var trimPool = sync.Pool{New: func() any { return new(trimStream) }}

// resolvedName remembers, per content index, the name and id a resolution
// last produced: resolution is idempotent, so a block still holding them
// needs no new resolution (the per-event fast path for unknown names).
type resolvedName struct {
	name, id []byte
	ok       bool
	fid      []byte // the id the id pass left (idsOK)
	idsOK    bool
	same     bool // ok, idsOK and id equal to fid: one comparison checks both
}

type trimStream struct {
	base
	cfg      TrimConfig
	guard    *UnknownToolGuard
	fallback [][]byte // fallback id per content index, for this stream
	resolved []resolvedName
	calls    int  // tool calls the last id pass saw
	counted  bool // streamAttemptAlreadyCounted
	finished bool
	pt       passThrough
	// steadyMsg, steadyLen and steadyCalls: the last normalize was of
	// steadyMsg, then of steadyLen blocks, with tool calls (at the indexes
	// below 64 of steadyCalls' bits, and maybe beyond), and found every
	// one as the pass before left it (it changed nothing); nil otherwise.
	steadyMsg   *llm.Message
	steadyLen   int
	steadyCalls uint64
}

func (s *trimStream) Next() bool {
	_, _, ok := s.Step()
	return ok
}

// Step is Next, then Event and Message (llm.Stepper; see base.next).
func (s *trimStream) Step() (*llm.Event, *llm.Message, bool) {
	ev, msg, ok := s.next.Step()
	return s.settle(ev, msg, ok)
}

// passThrough skips the stage on text and thinking events and on argument
// deltas marked ArgsOnly, which change no tool call's name or id, over a
// stream without views (passer).
func (s *trimStream) passThrough() *passThrough {
	if s.views != nil {
		return nil
	}
	const text = 1<<llm.EventTextStart | 1<<llm.EventTextDelta | 1<<llm.EventTextEnd |
		1<<llm.EventThinkingStart | 1<<llm.EventThinkingDelta | 1<<llm.EventThinkingEnd
	return s.pt.fuse(s.next, text|argsOnlyBit, s)
}

// settle is Step after the pull (passer).
func (s *trimStream) settle(ev *llm.Event, msg *llm.Message, ok bool) (*llm.Event, *llm.Message, bool) {
	if !s.took(ev, msg, ok) {
		s.finish()
		return nil, s.Message(), false
	}
	e := s.curEvent()
	switch e.Type {
	case llm.EventTextStart, llm.EventTextDelta, llm.EventTextEnd,
		llm.EventThinkingStart, llm.EventThinkingDelta, llm.EventThinkingEnd:
		// Fast path: these events change no tool call's name or id.
		if s.views == nil {
			return s.Event(), s.Message(), true
		}
	case llm.EventToolCallDelta:
		// Fast path: an argument delta changes only its own block, so a
		// live message the last normalize left as it was, whose block at
		// the delta is still as that pass found it, needs nothing.
		if s.views == nil && s.steady(s.curMessage(), e.ContentIndex) {
			return s.Event(), s.Message(), true
		}
	}
	partial, message := s.eventMessages(e)
	if partial != nil {
		s.normalize(partial)
	}
	if message != nil {
		s.normalize(message)
		s.guardMessage(message, false)
	}
	if e.Type.IsTerminal() {
		s.finish()
	}
	return s.Event(), s.Message(), true
}

func (s *trimStream) finish() {
	if s.finished {
		return
	}
	s.finished = true
	m := s.curMessage()
	s.normalize(m)
	s.guardMessage(m, true)
}

func (s *trimStream) Close() error {
	err := s.closeInner()
	for i := range s.fallback {
		s.fallback[i] = s.fallback[i][:0]
	}
	*s = trimStream{fallback: s.fallback[:0], resolved: s.resolved[:0]}
	trimPool.Put(s)
	return err
}

// normalize is normalizeToolCallsInMessage: names, then ids. A block whose
// name and id are still what the previous pass left is skipped (resolution
// is idempotent), and the id pass is skipped when every id is as it left
// them, so a steady stream costs one comparison per tool call per event.
func (s *trimStream) normalize(m *llm.Message) {
	calls, stable, same := 0, true, true
	var mask uint64
	s.steadyMsg = nil
	for i := range m.Content {
		b := &m.Content[i]
		if !isToolCall(b) {
			continue
		}
		calls++
		if i < 64 {
			mask |= 1 << i
		}
		var r *resolvedName
		if i < len(s.resolved) {
			r = &s.resolved[i]
		} else {
			r = s.slot(i)
		}
		if r.same && bytes.Equal(r.fid, b.ID) && bytes.Equal(r.name, b.Name) {
			continue // the steady state: both checks below pass
		}
		same = false
		if !r.idsOK || !bytes.Equal(r.fid, b.ID) {
			stable = false
		}
		if r.ok && bytes.Equal(r.name, b.Name) && bytes.Equal(r.id, b.ID) {
			continue
		}
		n, _ := ResolveToolName(b2s(b.Name), b2s(b.ID), s.cfg.Allowed, false)
		if n != b2s(b.Name) {
			b.Name = setString(b.Name, n)
		}
		r.name = append(r.name[:0], b.Name...)
		r.id = append(r.id[:0], b.ID...)
		r.ok = true
		r.same = r.idsOK && bytes.Equal(r.id, r.fid)
	}
	if calls == 0 || stable && calls == s.calls {
		if same && calls > 0 {
			s.steadyMsg, s.steadyLen, s.steadyCalls = m, len(m.Content), mask
		}
		return
	}
	s.calls = calls
	for i := range m.Content {
		b := &m.Content[i]
		if !isToolCall(b) {
			continue
		}
		t := trimSpace(b.ID)
		if len(t) > 0 && !idAssignedBefore(m, i, t) {
			if len(t) != len(b.ID) {
				b.ID = setBytes(b.ID, t)
			}
		} else {
			b.ID = setBytes(b.ID, s.fallbackID(m, i))
		}
		r := &s.resolved[i]
		r.fid = append(r.fid[:0], b.ID...)
		r.idsOK = true
		r.same = r.ok && bytes.Equal(r.id, r.fid)
	}
}

// steady reports whether normalize(m) would find m as its last pass left
// it, on an argument delta of block i (which only that block can have
// changed): that pass was of m, found it steady, m has as many blocks,
// and block i was and is a tool call whose name and id are as that pass
// found.
func (s *trimStream) steady(m *llm.Message, i int) bool {
	if m != s.steadyMsg || len(m.Content) != s.steadyLen || uint(i) >= 64 || s.steadyCalls&(1<<i) == 0 ||
		i >= len(m.Content) || i >= len(s.resolved) {
		return false
	}
	b, r := &m.Content[i], &s.resolved[i]
	return isToolCall(b) && r.same && bytes.Equal(r.fid, b.ID) && bytes.Equal(r.name, b.Name)
}

// slot returns the resolution cache of content index i, growing the
// cache to it (normalize looks an existing one up itself).
func (s *trimStream) slot(i int) *resolvedName {
	for len(s.resolved) <= i {
		if len(s.resolved) < cap(s.resolved) {
			s.resolved = s.resolved[:len(s.resolved)+1]
			r := &s.resolved[len(s.resolved)-1]
			r.name, r.id, r.fid = r.name[:0], r.id[:0], r.fid[:0]
			r.ok, r.idsOK, r.same = false, false, false
		} else {
			s.resolved = append(s.resolved, resolvedName{})
		}
	}
	return &s.resolved[i]
}

// idAssignedBefore reports whether a tool call before index i already holds
// id.
func idAssignedBefore(m *llm.Message, i int, id []byte) bool {
	for j := 0; j < i; j++ {
		b := &m.Content[j]
		if isToolCall(b) && string(b.ID) == string(id) {
			return true
		}
	}
	return false
}

// idUsedElsewhere reports whether a tool call other than index i holds id
// (trimmed).
func idUsedElsewhere(m *llm.Message, i int, id []byte) bool {
	for j := range m.Content {
		b := &m.Content[j]
		if j != i && isToolCall(b) && string(trimSpace(b.ID)) == string(id) {
			return true
		}
	}
	return false
}

// fallbackID returns the fallback id of content index i, generating one
// (call_ + 24 lowercase hex) the first time or when it collides.
func (s *trimStream) fallbackID(m *llm.Message, i int) []byte {
	for len(s.fallback) <= i {
		if len(s.fallback) < cap(s.fallback) {
			s.fallback = s.fallback[:len(s.fallback)+1]
			s.fallback[len(s.fallback)-1] = s.fallback[len(s.fallback)-1][:0]
		} else {
			s.fallback = append(s.fallback, nil)
		}
	}
	fb := s.fallback[i]
	for len(fb) == 0 || idUsedElsewhere(m, i, fb) {
		fb = appendFallbackID(fb[:0])
	}
	s.fallback[i] = fb
	return fb
}

// appendFallbackID appends call_ and 24 random lowercase hex digits.
func appendFallbackID(dst []byte) []byte {
	var raw [12]byte
	a, b := rand.Uint64(), rand.Uint32()
	for i := 0; i < 8; i++ {
		raw[i] = byte(a >> (8 * i))
	}
	for i := 0; i < 4; i++ {
		raw[8+i] = byte(b >> (8 * i))
	}
	dst = append(dst, "call_"...)
	return hex.AppendEncode(dst, raw[:])
}

type guardKind uint8

const (
	guardNone guardKind = iota // no tool call
	guardAllowed
	guardMalformed
	guardIncomplete
	guardUnknown
)

// classify is the guard's view of m's tool calls (streamwrap.md §4.2).
// For guardUnknown, name is the policy-normalized name of the first unknown
// tool.
func classify(m *llm.Message, allowed *Allowlist) (kind guardKind, name string) {
	hasList := allowed.Len() > 0
	calls, blank, different := 0, false, false
	first := ""
	for i := range m.Content {
		b := &m.Content[i]
		if !isToolCall(b) {
			continue
		}
		calls++
		n := b2s(b.Name)
		if hasList && allowed.Has(n) {
			return guardAllowed, ""
		}
		if trimSpace(n) == "" {
			blank = true
			continue
		}
		if !hasList {
			continue
		}
		if first == "" {
			first = n
		} else if NormalizeToolPolicyName(n) != NormalizeToolPolicyName(first) {
			different = true
		}
	}
	switch {
	case calls == 0:
		return guardNone, ""
	case !hasList && blank:
		return guardMalformed, ""
	case blank && first == "":
		return guardMalformed, ""
	case different || !hasList:
		return guardIncomplete, ""
	case first == "":
		return guardIncomplete, ""
	}
	return guardUnknown, NormalizeToolPolicyName(first)
}

// guardMessage is guardUnknownToolLoopInMessage for an event message
// (final=false) or the result message (final=true).
func (s *trimStream) guardMessage(m *llm.Message, final bool) {
	kind, name := classify(m, s.cfg.Allowed)
	countAttempt := !s.counted
	switch kind {
	case guardAllowed:
		s.guard.reset()
		s.counted = true
	case guardUnknown:
		if countAttempt {
			s.guard.bump(name)
			s.counted = true
		}
		if s.guard.exceeds(name, s.cfg.UnknownToolThreshold) {
			rewriteUnavailableTool(m, name)
		}
	case guardMalformed:
		if final {
			rewriteUnavailableTool(m, blankToolName)
			if countAttempt {
				s.guard.reset()
			}
		}
	default:
		if final && countAttempt {
			s.guard.reset()
		}
	}
}

// rewriteUnavailableTool replaces m's content with the one text block of
// OpenClaw's loop guard. It is a cold path: the new content gets its own
// slice, so block objects handed out earlier keep their state.
func rewriteUnavailableTool(m *llm.Message, name string) {
	text := make([]byte, 0, 128+len(name))
	text = append(text, `I can't use the tool "`...)
	text = append(text, name...)
	text = append(text, `" here because it isn't available. I need to stop retrying it and answer without that tool.`...)
	m.Content = []llm.Block{{Type: llm.BlockText, Text: text}}
}
