package streamwrap

import (
	"context"
	"slices"
	"sync/atomic"

	"github.com/ocbench/ocbench/llm"
)

// MsgMissingToolResult is the text of the synthetic tool result that
// pairing repair inserts for a tool call without a result.
const MsgMissingToolResult = "[openclaw] missing tool result in session history; inserted synthetic error result for transcript repair."

// TranscriptPolicy is the part of OpenClaw's transcript policy the replay
// sanitizer reads.
type TranscriptPolicy struct {
	ValidateAnthropicTurns   bool
	ValidateGeminiTurns      bool
	PreserveSignatures       bool
	DropThinkingBlocks       bool
	DropReasoningFromHistory bool
}

// SanitizeConfig configures SanitizeReplayToolCalls.
type SanitizeConfig struct {
	// ReplayAllowed is the replay allowlist: the live tools plus tools
	// hidden behind tool search. Nil or empty means none.
	ReplayAllowed *Allowlist
	Policy        TranscriptPolicy
}

// isOpenAIResponsesAPI reports the OpenAI Responses family of apis.
func isOpenAIResponsesAPI(api llm.API) bool {
	switch api {
	case "openai-responses", "azure-openai-responses", "openai-chatgpt-responses", "openai-codex-responses":
		return true
	}
	return false
}

// SanitizeReplayToolCalls is OpenClaw's wrapStreamFnSanitizeMalformedToolCalls
// (streamwrap.md §3.2). It rewrites the request's history before the
// provider sees it and leaves the output stream alone: see
// SanitizeReplayMessages. When the call's context holds a *ReplayMemo
// under ReplayMemoKey, its Sanitize does the work. The inner function gets a shallow copy of the
// request with the new messages only when something changed; otherwise it
// gets the caller's request.
func SanitizeReplayToolCalls(next llm.StreamFunc, cfg SanitizeConfig) llm.StreamFunc {
	return func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		var out []llm.Message
		var changed bool
		if m, _ := ctx.Value(ReplayMemoKey{}).(*ReplayMemo); m != nil {
			out, changed = m.Sanitize(req.Messages, req.Model.API, cfg)
		} else {
			out, changed = SanitizeReplayMessages(req.Messages, req.Model.API, cfg)
		}
		if !changed {
			return next(ctx, req)
		}
		r := *req
		r.Messages = out
		return next(ctx, &r)
	}
}

// SanitizeReplayMessages returns msgs sanitized for replay and whether
// anything changed. msgs itself is never modified; when something changes
// the result is a new slice (messages that changed are new copies).
//
//  1. Tool calls without arguments or with a blank id, or whose name does
//     not resolve against the replay allowlist (§4.1, requireAllowed; at
//     most 128 characters in, a non-blank name of at most 64 characters
//     without whitespace out; calls already answered resolve without the
//     allowlist) are dropped; resolvable names are rewritten to their
//     canonical spelling; assistant messages left empty are dropped.
//  2. With provider-owned signed thinking (PreserveSignatures and not
//     DropThinkingBlocks), an assistant turn holding thinking and tool
//     calls is kept whole only if its ids are unique, its names already
//     canonical and every call has a later result; else it is dropped whole.
//  3. Result pairing (always for the OpenAI Responses apis, otherwise only
//     when 1 or 2 changed something): each call's result is moved right
//     after its assistant turn, a synthetic error result is inserted for a
//     call without one, and orphaned results are dropped.
//  4. With ValidateAnthropicTurns or ValidateGeminiTurns, trailing
//     assistant turns without a tool call are removed.
//  5. When something changed under ValidateAnthropicTurns, or for
//     bedrock-converse-stream, consecutive user turns are merged.
//
// OpenClaw's filtering of tool-result blocks embedded in user messages has
// no counterpart: llm's user messages cannot hold tool results.
func SanitizeReplayMessages(msgs []llm.Message, api llm.API, cfg SanitizeConfig) ([]llm.Message, bool) {
	x := replayIndex{msgs: msgs}
	signed := cfg.Policy.PreserveSignatures && !cfg.Policy.DropThinkingBlocks

	var out []llm.Message
	changed := false
	for i := range msgs {
		m := &msgs[i]
		if m.Role != llm.RoleAssistant {
			if out != nil {
				out = append(out, *m)
			}
			continue
		}
		content, keep, mchanged := replayTurn(m, i, &x, cfg.ReplayAllowed, signed)
		if !mchanged {
			if out != nil {
				out = append(out, *m)
			}
			continue
		}
		if out == nil {
			out = make([]llm.Message, 0, len(msgs))
			out = append(out, msgs[:i]...)
		}
		changed = true
		if keep {
			out = append(out, *m)
			out[len(out)-1].Content = content
		}
	}
	cur := msgs
	if changed {
		cur = out
	}
	if changed || isOpenAIResponsesAPI(api) {
		if p, ok := pairToolResults(cur); ok {
			cur, changed = p, true
		}
	}
	if validatesTurns(&cfg.Policy) {
		n := len(cur)
		for n > 0 && trailingPlainAssistant(&cur[n-1]) {
			n--
		}
		if n != len(cur) {
			cur = append([]llm.Message(nil), cur[:n]...)
			changed = true
		}
	}
	if changed && cfg.Policy.ValidateAnthropicTurns || api == "bedrock-converse-stream" {
		if mm, ok := mergeUserTurns(cur); ok {
			cur, changed = mm, true
		}
	}
	if !changed {
		return msgs, false
	}
	if cur == nil {
		cur = []llm.Message{}
	}
	return cur, true
}

// validatesTurns reports whether rule 4 (trailing assistant turns) applies.
func validatesTurns(p *TranscriptPolicy) bool {
	return p.ValidateAnthropicTurns || p.ValidateGeminiTurns
}

// trailingPlainAssistant reports an assistant turn without a tool call,
// which rule 4 removes from the end of the history.
func trailingPlainAssistant(m *llm.Message) bool {
	return m.Role == llm.RoleAssistant && !hasToolCall(m)
}

// replayIndex answers whether a tool call of msgs has a result.
type replayIndex struct {
	msgs []llm.Message
	// memo, when set, counts by id the results of the messages before the
	// one asked about (which answered then need not scan), and notes which
	// later result a decision relied on.
	memo *ReplayMemo
	// The last answeredAfter that found a result: the message asked
	// about, the id (its memory) and the result's index. The memo asks
	// again of each call it decided (notePending after replayTurn).
	lastAt, lastResult int
	lastID             []byte
}

// answeredAfter reports whether a message after msgs[at] is a result for id.
func (x *replayIndex) answeredAfter(at int, id []byte) bool {
	if at == x.lastAt && len(id) == len(x.lastID) && len(id) > 0 && &id[0] == &x.lastID[0] && x.lastResult > at {
		return true // relied on already
	}
	for i := at + 1; i < len(x.msgs); i++ {
		if x.msgs[i].Role == llm.RoleToolResult && x.msgs[i].ToolCallID == b2s(id) {
			if x.memo != nil {
				x.memo.relied(at, i)
			}
			x.lastAt, x.lastResult, x.lastID = at, i, id
			return true
		}
	}
	return false
}

// answered reports whether any message holds a result for the id of a
// call of msgs[at]. A call's result usually follows its turn: the
// messages after it are searched first, so that a history of answered
// calls costs a look at the next few messages per call, not a scan of
// the whole history (which made the sanitizer quadratic).
func (x *replayIndex) answered(at int, id []byte) bool {
	if x.answeredAfter(at, id) {
		return true
	}
	if x.memo != nil {
		return x.memo.hasResult(id)
	}
	for i := 0; i <= at; i++ {
		if x.msgs[i].Role == llm.RoleToolResult && x.msgs[i].ToolCallID == b2s(id) {
			return true
		}
	}
	return false
}

// replayTurn applies rules 1 and 2 to the assistant message m, which is
// msgs[at]: changed says whether it is replayed otherwise than as it is,
// then keep whether it is replayed at all, as m with content (the message
// is not returned: most are not changed, and it is large to zero).
func replayTurn(m *llm.Message, at int, x *replayIndex, allowed *Allowlist, signed bool) (content []llm.Block, keep, changed bool) {
	hasThinking, calls := false, 0
	for j := range m.Content {
		switch m.Content[j].Type {
		case llm.BlockThinking:
			hasThinking = true
		case llm.BlockToolCall:
			calls++
		}
	}
	if signed && hasThinking && calls > 0 {
		if keepSignedTurn(m, at, allowed, x) {
			return nil, true, false
		}
		return nil, false, true
	}
	for j := range m.Content {
		b := &m.Content[j]
		if b.Type != llm.BlockToolCall {
			if changed {
				content = append(content, *b)
			}
			continue
		}
		keep, name := replayKeep(b, allowed, x.answered(at, trimSpace(b.ID)))
		if keep && name == b2s(b.Name) {
			if changed {
				content = append(content, *b)
			}
			continue
		}
		if !changed {
			changed = true
			content = append(make([]llm.Block, 0, len(m.Content)), m.Content[:j]...)
		}
		if keep {
			nb := *b
			nb.Name = []byte(name)
			content = append(content, nb)
		}
	}
	if !changed {
		return nil, true, false
	}
	if len(content) == 0 {
		return nil, false, true // droppedAssistantMessages++
	}
	return content, true, true
}

func hasToolCall(m *llm.Message) bool {
	for j := range m.Content {
		if m.Content[j].Type == llm.BlockToolCall {
			return true
		}
	}
	return false
}

// replayKeep decides one replayed tool call: whether it is kept and under
// which name.
func replayKeep(b *llm.Block, allowed *Allowlist, completed bool) (bool, string) {
	if len(trimSpace(b.Arguments)) == 0 || len(trimSpace(b.ID)) == 0 {
		return false, ""
	}
	n, ok := resolveReplayToolName(b2s(b.Name), b2s(b.ID), allowed, completed)
	return ok, n
}

// keepSignedTurn is the whole-or-nothing test for a signed thinking turn.
func keepSignedTurn(m *llm.Message, at int, allowed *Allowlist, x *replayIndex) bool {
	for j := range m.Content {
		b := &m.Content[j]
		if b.Type != llm.BlockToolCall {
			continue
		}
		if len(trimSpace(b.ID)) == 0 || len(trimSpace(b.Arguments)) == 0 {
			return false
		}
		for k := j + 1; k < len(m.Content); k++ {
			if m.Content[k].Type == llm.BlockToolCall && string(m.Content[k].ID) == string(b.ID) {
				return false
			}
		}
		n, ok := resolveReplayToolName(b2s(b.Name), b2s(b.ID), allowed, x.answered(at, trimSpace(b.ID)))
		if !ok || n != b2s(b.Name) {
			return false
		}
		if !x.answeredAfter(at, b.ID) {
			return false
		}
	}
	return true
}

// pairToolResults moves each tool call's first result right after its
// assistant turn, inserts a synthetic error result for a call without one,
// and drops results no call asked for. ok is false when nothing changed.
func pairToolResults(msgs []llm.Message) ([]llm.Message, bool) {
	if pairedAlready(msgs) {
		return msgs, false // fast path: nothing to move, insert or drop
	}
	used := make([]bool, len(msgs))
	out := make([]llm.Message, 0, len(msgs))
	changed := false
	for i := range msgs {
		m := &msgs[i]
		if m.Role == llm.RoleToolResult {
			if !used[i] {
				changed = true // orphan
			}
			continue
		}
		out = append(out, *m)
		if m.Role != llm.RoleAssistant {
			continue
		}
		next := i + 1
		for j := range m.Content {
			b := &m.Content[j]
			if b.Type != llm.BlockToolCall {
				continue
			}
			found := -1
			for k := i + 1; k < len(msgs); k++ {
				if msgs[k].Role == llm.RoleToolResult && !used[k] && msgs[k].ToolCallID == string(b.ID) {
					found = k
					break
				}
				if msgs[k].Role == llm.RoleAssistant {
					break
				}
			}
			if found >= 0 {
				used[found] = true
				if found != next {
					changed = true
				}
				next = found + 1
				out = append(out, msgs[found])
				continue
			}
			changed = true
			r := llm.TextMessage(llm.RoleToolResult, MsgMissingToolResult)
			r.ToolCallID = string(b.ID)
			r.ToolName = string(b.Name)
			r.IsError = true
			out = append(out, r)
		}
	}
	if !changed {
		return msgs, false
	}
	return out, true
}

// pairedAlready reports whether every assistant turn's tool calls are
// followed, in order, by exactly their results and no result is orphaned.
// It allocates nothing.
func pairedAlready(msgs []llm.Message) bool {
	for i := 0; i < len(msgs); {
		m := &msgs[i]
		i++
		switch m.Role {
		case llm.RoleToolResult:
			return false // not right after its call: orphaned or displaced
		case llm.RoleAssistant:
			for j := range m.Content {
				b := &m.Content[j]
				if b.Type != llm.BlockToolCall {
					continue
				}
				if i >= len(msgs) || msgs[i].Role != llm.RoleToolResult || msgs[i].ToolCallID != b2s(b.ID) {
					return false
				}
				i++
			}
		}
	}
	return true
}

// mergeUserTurns merges consecutive user messages into one.
func mergeUserTurns(msgs []llm.Message) ([]llm.Message, bool) {
	merged := false
	out := make([]llm.Message, 0, len(msgs))
	for i := range msgs {
		m := msgs[i]
		if n := len(out); n > 0 && m.Role == llm.RoleUser && out[n-1].Role == llm.RoleUser {
			prev := &out[n-1]
			prev.Content = append(append([]llm.Block(nil), prev.Content...), m.Content...)
			merged = true
			continue
		}
		out = append(out, m)
	}
	if !merged {
		return msgs, false
	}
	return out, true
}

// ReplayMemoKey is the context key under which SanitizeReplayToolCalls
// finds the caller's *ReplayMemo.
type ReplayMemoKey struct{}

// ReplayMemo is SanitizeReplayMessages for a history that grows at its
// end, as an agent session's does from one model call to the next: it
// keeps what the messages it has seen decide, so that a call works
// through the messages appended since the last one only, whatever the
// length of the history. It gives what SanitizeReplayMessages gives,
// message for message.
//
// Its owner keeps one promise: the messages it passes are those of the
// last call, unchanged (the same values, in the same order; the array may
// be another), followed by new ones, except where it says otherwise with
// Keep before the call.
//
// Where the memo cannot show that a history sanitizes to itself (a call
// rules 1-2 rewrite, an unpaired result on a Responses api, a trailing
// plain assistant turn under turn validation, consecutive user turns on
// bedrock), it returns SanitizeReplayMessages of the whole history: a
// history the sanitizer changes costs a full pass per call, one it keeps
// as it is costs its new messages. A result that answers a call of an
// earlier message that was unanswered (which can change how that call is
// replayed) makes the memo start again from the first message.
//
// A ReplayMemo is used by one caller at a time; a call that finds it in
// use (a context shared by mistake) sanitizes without it.
type ReplayMemo struct {
	busy atomic.Bool
	// The configuration what is kept was decided under.
	api     llm.API
	allowed *Allowlist
	policy  TranscriptPolicy
	set     bool
	// n messages are accounted for.
	n int
	// resLog are the tool results of the first n messages in message
	// order, results counts the first resCounted of them by id (the rest
	// when asked: most histories never ask). pending holds the ids
	// (trimmed and as they are) of their calls that had no result, or
	// none after them, when decided; pendLog is the same in message
	// order. The logs are for Keep.
	results, pending map[string]int32
	resLog, pendLog  []memoID
	resCounted       int
	// asst are the indices of the assistant messages: the last opens the
	// segment of the history a later result may still pair into.
	asst []int32
	// deps are the results that decisions relied on, in the order of the
	// messages decided, and depMax[i] the last result of deps[:i+1]: a
	// Keep that drops a result drops the decisions that relied on it.
	deps   []memoDep
	depMax []int32
	// The first message rules 1-2 change (changedAt), the end of the first
	// closed segment that is not paired (unpairedEnd), the first user turn
	// after a user turn (usersAt); -1: none.
	changedAt, unpairedEnd, usersAt int
	// examined counts the messages worked through (tests).
	examined int64
}

type memoID struct {
	at int32
	id string
}

// memoDep says that what was decided of message at relied on the result
// in message result.
type memoDep struct{ at, result int32 }

// relied notes that a decision about msgs[at] relied on the result
// msgs[result].
func (m *ReplayMemo) relied(at, result int) {
	if k := len(m.deps); k > 0 && m.deps[k-1] == (memoDep{int32(at), int32(result)}) {
		return
	}
	hi := int32(result)
	if k := len(m.depMax); k > 0 {
		hi = max(hi, m.depMax[k-1])
	}
	m.deps = append(m.deps, memoDep{int32(at), int32(result)})
	m.depMax = append(m.depMax, hi)
}

// Keep tells the memo that only the first n messages of the next call's
// history are those of the last call; it forgets what it kept of the
// messages after them.
func (m *ReplayMemo) Keep(n int) {
	if m == nil {
		return
	}
	if n < 0 {
		n = 0
	}
	if n >= m.n {
		return
	}
	for {
		for len(m.deps) > 0 && int(m.deps[len(m.deps)-1].at) >= n {
			m.deps, m.depMax = m.deps[:len(m.deps)-1], m.depMax[:len(m.depMax)-1]
		}
		// The first message kept whose decision relied on a result that
		// is not: it is decided again, and all after it.
		i, _ := slices.BinarySearch(m.depMax, int32(n))
		if i == len(m.deps) {
			break
		}
		n = int(m.deps[i].at)
	}
	m.n = n
	if n == 0 {
		// All of it (a new history, a pooled memo given back): at once,
		// and maps a long history grew are dropped (clear would walk them).
		if len(m.results)+len(m.pending) > 512 {
			m.results, m.pending = nil, nil
		}
		clear(m.results)
		clear(m.pending)
		clear(m.resLog)
		clear(m.pendLog)
		m.resLog, m.pendLog, m.asst = m.resLog[:0], m.pendLog[:0], m.asst[:0]
		m.resCounted = 0
	}
	m.countResults()
	m.resLog = forget(m.results, m.resLog, n)
	m.resCounted = len(m.resLog)
	m.pendLog = forget(m.pending, m.pendLog, n)
	for len(m.asst) > 0 && int(m.asst[len(m.asst)-1]) >= n {
		m.asst = m.asst[:len(m.asst)-1]
	}
	// Each of these is the first of its kind: one at or after n leaves
	// none before n.
	if m.changedAt >= n {
		m.changedAt = -1
	}
	if m.unpairedEnd >= n {
		m.unpairedEnd = -1
	}
	if m.usersAt >= n {
		m.usersAt = -1
	}
}

// countResults counts the results logged since the last count.
func (m *ReplayMemo) countResults() {
	for _, e := range m.resLog[m.resCounted:] {
		m.results[e.id]++
	}
	m.resCounted = len(m.resLog)
}

// hasResult reports whether a result of the messages added so far is for
// id.
func (m *ReplayMemo) hasResult(id []byte) bool {
	m.countResults()
	return m.results[b2s(id)] > 0
}

// forget removes from set the ids that log holds of messages at or after
// n, and returns log without them.
func forget(set map[string]int32, log []memoID, n int) []memoID {
	for len(log) > 0 && int(log[len(log)-1].at) >= n {
		e := &log[len(log)-1]
		if set[e.id]--; set[e.id] <= 0 {
			delete(set, e.id)
		}
		*e = memoID{}
		log = log[:len(log)-1]
	}
	return log
}

// Examined is the number of messages the memo has worked through, a full
// pass counting the whole history.
func (m *ReplayMemo) Examined() int64 { return m.examined }

// Sanitize is SanitizeReplayMessages(msgs, api, cfg).
func (m *ReplayMemo) Sanitize(msgs []llm.Message, api llm.API, cfg SanitizeConfig) ([]llm.Message, bool) {
	if !m.busy.CompareAndSwap(false, true) {
		return SanitizeReplayMessages(msgs, api, cfg)
	}
	defer m.busy.Store(false)
	if !m.set || m.api != api || m.allowed != cfg.ReplayAllowed || m.policy != cfg.Policy {
		m.Keep(0)
		m.api, m.allowed, m.policy, m.set = api, cfg.ReplayAllowed, cfg.Policy, true
		m.changedAt, m.unpairedEnd, m.usersAt = -1, -1, -1
	}
	if len(msgs) < m.n {
		m.Keep(len(msgs))
	}
	for i := m.n; i < len(msgs) && len(m.pending) > 0; i++ {
		if msgs[i].Role == llm.RoleToolResult && m.pending[msgs[i].ToolCallID] > 0 {
			m.Keep(0) // it may change how its call is replayed
			break
		}
	}
	if m.results == nil {
		m.results, m.pending = make(map[string]int32), make(map[string]int32)
	}
	m.add(msgs, cfg.ReplayAllowed, cfg.Policy.PreserveSignatures && !cfg.Policy.DropThinkingBlocks)
	if m.keptAsIs(msgs, api, &cfg.Policy) {
		return msgs, false
	}
	m.examined += int64(len(msgs))
	return SanitizeReplayMessages(msgs, api, cfg)
}

// add works through the messages after the first m.n.
func (m *ReplayMemo) add(msgs []llm.Message, allowed *Allowlist, signed bool) {
	x := replayIndex{msgs: msgs, memo: m}
	for i := m.n; i < len(msgs); i++ {
		msg := &msgs[i]
		m.examined++
		switch msg.Role {
		case llm.RoleToolResult:
			m.resLog = append(m.resLog, memoID{int32(i), msg.ToolCallID})
		case llm.RoleUser:
			if m.usersAt < 0 && i > 0 && msgs[i-1].Role == llm.RoleUser {
				m.usersAt = i
			}
		case llm.RoleAssistant:
			start := 0
			if k := len(m.asst); k > 0 {
				start = int(m.asst[k-1])
			}
			if m.unpairedEnd < 0 && !pairedAlready(msgs[start:i]) {
				m.unpairedEnd = i
			}
			m.asst = append(m.asst, int32(i))
			if _, _, changed := replayTurn(msg, i, &x, allowed, signed); changed && m.changedAt < 0 {
				m.changedAt = i
			}
			m.notePending(msg, i, &x)
		}
	}
	m.n = len(msgs)
}

// notePending records the ids of msg's calls that a later result could
// still answer (msg is msgs[at]): that result would change what was
// decided of them.
func (m *ReplayMemo) notePending(msg *llm.Message, at int, x *replayIndex) {
	for j := range msg.Content {
		b := &msg.Content[j]
		if b.Type != llm.BlockToolCall {
			continue
		}
		id := trimSpace(b.ID)
		if x.answeredAfter(at, b.ID) && (len(id) == len(b.ID) || x.answered(at, id)) {
			continue // answered after it (by its id as it is, then also trimmed)
		}
		m.pending[string(id)]++
		m.pendLog = append(m.pendLog, memoID{int32(at), string(id)})
		if len(id) != len(b.ID) {
			m.pending[string(b.ID)]++
			m.pendLog = append(m.pendLog, memoID{int32(at), string(b.ID)})
		}
	}
}

// keptAsIs reports whether what the memo holds of msgs (all of them
// added) shows that SanitizeReplayMessages returns them unchanged.
func (m *ReplayMemo) keptAsIs(msgs []llm.Message, api llm.API, p *TranscriptPolicy) bool {
	if m.changedAt >= 0 {
		return false // rules 1-2 change a call
	}
	// Nothing changed: pairing only for the Responses apis.
	if isOpenAIResponsesAPI(api) {
		start := 0
		if k := len(m.asst); k > 0 {
			start = int(m.asst[k-1])
		}
		if m.unpairedEnd >= 0 || !pairedAlready(msgs[start:]) {
			return false
		}
	}
	if validatesTurns(p) && len(msgs) > 0 && trailingPlainAssistant(&msgs[len(msgs)-1]) {
		return false
	}
	// Merging: with nothing changed, only on bedrock.
	return api != "bedrock-converse-stream" || m.usersAt < 0
}
