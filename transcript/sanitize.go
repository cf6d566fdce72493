package transcript

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/ocbench/ocbench/llm"
)

// FailedTurnText replaces the empty content of an assistant turn that
// failed before producing any.
const FailedTurnText = "[assistant turn failed before producing content]"

// ReplayPolicy says which history repairs a provider API needs (OpenClaw's
// fallback buildReplayPolicy by API; a provider plugin may differ).
type ReplayPolicy struct {
	API llm.API
	// StrictToolIDs rewrites tool-call ids to [A-Za-z0-9] (unique, results
	// kept paired).
	StrictToolIDs bool
	// DropThinkingBlocks removes thinking blocks from assistant messages.
	DropThinkingBlocks bool
	// AllowedToolNames, when not empty, drops tool calls to other tools.
	AllowedToolNames []string
	// ValidateAnthropicTurns / ValidateGeminiTurns run the turn validation
	// of those APIs (step 3 of the pipeline).
	ValidateAnthropicTurns bool
	ValidateGeminiTurns    bool
	// RepairPairing runs the tool-call/result pairing repair (default on).
	RepairPairing bool
	// ResponsesAPI marks the OpenAI Responses APIs: pairing repair runs
	// before the id rewrite, and missing results read "aborted".
	ResponsesAPI bool
}

// PolicyForAPI returns OpenClaw's fallback replay policy for a pi-ai API id.
func PolicyForAPI(api llm.API) ReplayPolicy {
	p := ReplayPolicy{API: api, RepairPairing: true}
	switch {
	case api == "anthropic-messages" || strings.HasPrefix(string(api), "bedrock-converse"):
		p.StrictToolIDs = true
		p.ValidateAnthropicTurns = true
	case strings.HasPrefix(string(api), "google"):
		p.ValidateGeminiTurns = true
	case api == "openai-completions":
		p.StrictToolIDs = true
		p.ValidateGeminiTurns = true
		p.ValidateAnthropicTurns = true
	case api == "openai-responses" || api == "openai-codex-responses" || api == "azure-openai-responses":
		p.StrictToolIDs = true
		p.ResponsesAPI = true
	}
	return p
}

func isBlankText(b []byte) bool {
	return !(len(b) > 0 && asciiNonSpace(b[0])) && len(bytes.TrimFunc(b, llm.IsJSSpace)) == 0
}

// NormalizeAssistantReplayContent is step 2 of sanitizeSessionHistory:
// blank text blocks of user messages are removed and user messages left
// with no content dropped; transcript-only OpenClaw notices (provider
// "openclaw", model "delivery-mirror" or "gateway-injected") are dropped;
// an assistant turn with no content that ended in error (or an empty stop
// with zero usage) gets FailedTurnText. msgs is not modified.
func NormalizeAssistantReplayContent(msgs []llm.Message) []llm.Message {
	c := cow{in: msgs}
	for i := range msgs {
		m := &msgs[i]
		switch m.Role {
		case llm.RoleUser:
			blank := 0
			for j := range m.Content {
				if m.Content[j].Type == llm.BlockText && isBlankText(m.Content[j].Text) {
					blank++
				}
			}
			switch {
			case len(m.Content) == 0 || blank == len(m.Content):
				c.drop(i)
			case blank > 0:
				kept := make([]llm.Block, 0, len(m.Content)-blank)
				for j := range m.Content {
					if !(m.Content[j].Type == llm.BlockText && isBlankText(m.Content[j].Text)) {
						kept = append(kept, m.Content[j])
					}
				}
				r := *m
				r.Content = kept
				c.replace(i, r)
			default:
				c.keep(i)
			}
		case llm.RoleAssistant:
			switch {
			case m.Provider == "openclaw" && (m.Model == "delivery-mirror" || m.Model == "gateway-injected"):
				c.drop(i)
			case len(m.Content) == 0 && (m.StopReason == llm.StopError ||
				(m.StopReason == llm.StopStop && m.Usage.Input == 0 && m.Usage.Output == 0 &&
					m.Usage.CacheRead == 0 && m.Usage.CacheWrite == 0 && m.Usage.TotalTokens == 0)):
				r := *m
				r.Content = []llm.Block{{Type: llm.BlockText, Text: []byte(FailedTurnText)}}
				c.replace(i, r)
			default:
				c.keep(i)
			}
		default:
			c.keep(i)
		}
	}
	return c.result()
}

// DropThinkingBlocks removes thinking blocks from assistant messages; an
// assistant left empty keeps an empty text block so the turn survives.
func DropThinkingBlocks(msgs []llm.Message) []llm.Message {
	out := make([]llm.Message, len(msgs))
	copy(out, msgs)
	for i := range out {
		m := &out[i]
		if m.Role != llm.RoleAssistant {
			continue
		}
		n := 0
		for j := range m.Content {
			if m.Content[j].Type == llm.BlockThinking {
				n++
			}
		}
		if n == 0 {
			continue
		}
		kept := make([]llm.Block, 0, len(m.Content)-n)
		for j := range m.Content {
			if m.Content[j].Type != llm.BlockThinking {
				kept = append(kept, m.Content[j])
			}
		}
		if len(kept) == 0 {
			kept = append(kept, llm.Block{Type: llm.BlockText})
		}
		m.Content = kept
	}
	return out
}

var toolNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// RepairToolCallInputs drops malformed tool calls from assistant messages:
// no arguments (neither Arguments nor RawArgs, or null), no id, or a name that is empty, longer than 64 chars, not
// [A-Za-z0-9_-], or (when allowed is not empty) not an allowed tool
// (compared case-insensitively). Names are trimmed. An assistant left with
// no content is dropped. It returns the messages and the numbers of calls
// and assistant messages dropped.
func RepairToolCallInputs(msgs []llm.Message, allowed []string) ([]llm.Message, int, int) {
	return repairToolCallInputs(msgs, allowSet(allowed))
}

// allowSet is the set of allowed tool names, lower case (nil: no list),
// read only: the last list's set while the lists are the same (a service
// runs every session with the same tools).
func allowSet(allowed []string) map[string]bool {
	if m := lastAllowSet.Load(); m != nil && slices.Equal(m.names, allowed) {
		return m.set
	}
	set := makeAllowSet(allowed)
	lastAllowSet.Store(&allowMemo{names: slices.Clone(allowed), set: set})
	return set
}

// lastAllowSet is allowSet's last list and set.
var lastAllowSet atomic.Pointer[allowMemo]

type allowMemo struct {
	names []string
	set   map[string]bool
}

func makeAllowSet(allowed []string) map[string]bool {
	var allow map[string]bool
	for _, n := range allowed {
		if t := strings.ToLower(strings.TrimSpace(n)); t != "" {
			if allow == nil {
				allow = make(map[string]bool)
			}
			allow[t] = true
		}
	}
	return allow
}

// repairToolCallInputs is RepairToolCallInputs with the allowed names as
// a set (allowSet).
func repairToolCallInputs(msgs []llm.Message, allow map[string]bool) ([]llm.Message, int, int) {
	droppedCalls, droppedMsgs := 0, 0
	c := cow{in: msgs}
	for i := range msgs {
		m := msgs[i]
		if m.Role != llm.RoleAssistant {
			c.keep(i)
			continue
		}
		var content []llm.Block // built only once something changes
		changed := false
		for j := range m.Content {
			b := m.Content[j]
			if b.Type == llm.BlockToolCall {
				name := bytes.TrimFunc(b.Name, llm.IsJSSpace)
				bad := (len(b.Arguments) == 0 && len(b.RawArgs) == 0) || bytes.Equal(b.Arguments, []byte("null")) ||
					len(bytes.TrimFunc(b.ID, llm.IsJSSpace)) == 0 || len(name) == 0 || u16len(name) > 64 || !toolNameRE.Match(name) ||
					(allow != nil && !allow[strings.ToLower(string(name))])
				if (bad || len(name) != len(b.Name)) && !changed {
					content = append(make([]llm.Block, 0, len(m.Content)), m.Content[:j]...)
					changed = true
				}
				if bad {
					droppedCalls++
					continue
				}
				if len(name) != len(b.Name) {
					b.Name = append([]byte(nil), name...)
				}
			}
			if changed {
				content = append(content, b)
			}
		}
		if !changed {
			c.keep(i)
			continue
		}
		if len(content) == 0 {
			droppedMsgs++
			c.drop(i)
			continue
		}
		m.Content = content
		c.replace(i, m)
	}
	return c.result(), droppedCalls, droppedMsgs
}

// SanitizeToolCallIDStrict keeps only [A-Za-z0-9] of id ("sanitizedtoolid"
// when nothing is left; "defaulttoolid" for an empty id).
func SanitizeToolCallIDStrict(id string) string {
	if id == "" {
		return "defaulttoolid"
	}
	b := make([]byte, 0, len(id))
	for i := 0; i < len(id); i++ {
		c := id[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			b = append(b, c)
		}
	}
	if len(b) == 0 {
		return "sanitizedtoolid"
	}
	return string(b)
}

func shortHash(s string, n int) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])[:n]
}

// uniqueStrictID allocates a strict id for seed not in used (at most 40
// chars; collisions get a hash, then a counter).
func uniqueStrictID(seed string, used map[string]bool) string {
	const maxLen = 40
	base := SanitizeToolCallIDStrict(seed)
	if len(base) > maxLen {
		base = base[:maxLen]
	}
	if !used[base] {
		return base
	}
	hash := shortHash(seed, 8)
	clipped := base
	if len(clipped) > maxLen-len(hash) {
		clipped = clipped[:maxLen-len(hash)]
	}
	cand := clipped + hash
	if !used[cand] {
		return cand
	}
	for i := 2; i < 1000; i++ {
		suffix := "x" + strconv.Itoa(i)
		next := cand[:min(len(cand), maxLen-len(suffix))] + suffix
		if !used[next] {
			return next
		}
	}
	return cand + "x" + shortHash(seed+":overflow", 8)
}

// SanitizeToolCallIDs rewrites every tool-call id to the strict form
// ([A-Za-z0-9], unique). Repeated raw ids get distinct new ids in order;
// each tool result takes the next new id of its raw id, so pairs stay
// paired. msgs is not modified; it is returned as it is when every id is
// strict and unique already.
func SanitizeToolCallIDs(msgs []llm.Message) []llm.Message {
	var st idState
	return st.rewrite(msgs)
}

// idState is what SanitizeToolCallIDs knows after a run of messages: the
// strict ids given out, how often each raw call id and orphaned result id
// occurred, and the new ids of calls whose results are still to come. A
// history that grows is rewritten a part at a time by one idState.
type idState struct {
	used        map[string]bool
	occurrences map[string]int
	orphanOcc   map[string]int
	pending     map[string][]string
}

// hasToolIDs reports whether msgs hold a tool call or result with an id.
func hasToolIDs(msgs []llm.Message) bool {
	for i := range msgs {
		m := &msgs[i]
		if m.Role == llm.RoleToolResult && m.ToolCallID != "" || m.Role == llm.RoleAssistant && hasCallWithID(m) {
			return true
		}
	}
	return false
}

// rewrite is SanitizeToolCallIDs of msgs after the messages st has seen.
func (st *idState) rewrite(msgs []llm.Message) []llm.Message {
	if st.used == nil && hasToolIDs(msgs) {
		// Made only for a history with ids.
		st.used, st.occurrences, st.orphanOcc = make(map[string]bool), make(map[string]int), make(map[string]int)
		st.pending = make(map[string][]string)
	}
	used, occurrences, orphanOcc, pending := st.used, st.occurrences, st.orphanOcc, st.pending
	alloc := func(seed string) string {
		id := uniqueStrictID(seed, used)
		used[id] = true
		return id
	}
	// Copied on the first change: ids that are strict already change
	// nothing.
	var out []llm.Message
	set := func(i int) *llm.Message {
		if out == nil {
			out = append([]llm.Message(nil), msgs...)
		}
		return &out[i]
	}
	for i := range msgs {
		m := &msgs[i]
		switch m.Role {
		case llm.RoleAssistant:
			var content []llm.Block
			for j := range m.Content {
				b := &m.Content[j]
				if b.Type != llm.BlockToolCall || len(b.ID) == 0 {
					continue
				}
				raw := string(b.ID)
				occurrences[raw]++
				seed := raw
				if n := occurrences[raw]; n > 1 {
					seed = raw + ":" + strconv.Itoa(n)
				}
				id := alloc(seed)
				pending[raw] = append(pending[raw], id)
				if id != raw {
					if content == nil {
						content = append([]llm.Block(nil), m.Content...)
					}
					content[j].ID = []byte(id)
				}
			}
			if content != nil {
				set(i).Content = content
			}
		case llm.RoleToolResult:
			if m.ToolCallID == "" {
				continue
			}
			raw := m.ToolCallID
			if p := pending[raw]; len(p) > 0 {
				if p[0] != raw {
					set(i).ToolCallID = p[0]
				}
				pending[raw] = p[1:]
				continue
			}
			orphanOcc[raw]++
			if id := alloc(raw + ":tool_result:" + strconv.Itoa(orphanOcc[raw])); id != raw {
				set(i).ToolCallID = id
			}
		}
	}
	if out == nil {
		return msgs
	}
	return out
}

// IsCompactionSummary reports whether m is the user message pi makes of a
// compaction summary.
func IsCompactionSummary(m *llm.Message) bool {
	return m.Role == llm.RoleUser && len(m.Content) > 0 && m.Content[0].Type == llm.BlockText &&
		bytes.HasPrefix(m.Content[0].Text, []byte(CompactionSummaryPrefix))
}

// ZeroUsageBeforeCompaction zeroes the usage of assistant messages older
// than the latest compaction summary (in memory only, as OpenClaw does, so
// that stale usage does not drive token estimates).
func ZeroUsageBeforeCompaction(msgs []llm.Message) []llm.Message {
	last := -1
	for i := range msgs {
		if IsCompactionSummary(&msgs[i]) {
			last = i
		}
	}
	if last <= 0 {
		return msgs
	}
	out := make([]llm.Message, len(msgs))
	copy(out, msgs)
	for i := 0; i < last; i++ {
		if out[i].Role == llm.RoleAssistant {
			out[i].Usage = llm.Usage{}
		}
	}
	return out
}

// mergeTurns merges runs of consecutive messages of role r with merge.
func mergeTurns(msgs []llm.Message, r llm.Role, merge func(prev, cur llm.Message) llm.Message) []llm.Message {
	first := -1
	for i := 1; i < len(msgs); i++ {
		if msgs[i].Role == r && msgs[i-1].Role == r {
			first = i
			break
		}
	}
	if first < 0 {
		return msgs
	}
	out := append(make([]llm.Message, 0, len(msgs)), msgs[:first]...)
	for i := first; i < len(msgs); i++ {
		if len(out) > 0 && out[len(out)-1].Role == r && msgs[i].Role == r {
			out[len(out)-1] = merge(out[len(out)-1], msgs[i])
			continue
		}
		out = append(out, msgs[i])
	}
	return out
}

func concatBlocks(a, b []llm.Block) []llm.Block {
	c := make([]llm.Block, 0, len(a)+len(b))
	return append(append(c, a...), b...)
}

// ValidateGeminiTurns merges consecutive assistant messages: content
// concatenated; usage, stop reason and error message from the later one.
func ValidateGeminiTurns(msgs []llm.Message) []llm.Message {
	return mergeTurns(msgs, llm.RoleAssistant, mergeAssistants)
}

func mergeAssistants(prev, cur llm.Message) llm.Message {
	m := prev
	m.Content = concatBlocks(prev.Content, cur.Content)
	m.Usage = cur.Usage
	if cur.StopReason != llm.StopNone {
		m.StopReason = cur.StopReason
	}
	if cur.ErrorMessage != "" {
		m.ErrorMessage = cur.ErrorMessage
	}
	return m
}

// ValidateAnthropicTurns strips dangling tool calls (calls with no result
// before the next assistant message; an assistant left empty gets the text
// "[tool calls omitted]", or no content when it errored or aborted), then
// merges consecutive user messages (content concatenated, the later
// timestamp unless zero).
func ValidateAnthropicTurns(msgs []llm.Message) []llm.Message {
	c := cow{in: msgs}
	var calls []callRef
	for i := range msgs {
		m := msgs[i]
		if m.Role != llm.RoleAssistant || len(m.Content) == 0 {
			c.keep(i)
			continue
		}
		if calls = toolCallsOf(&m, calls[:0]); len(calls) == 0 {
			c.keep(i)
			continue
		}
		answered := func(id []byte) bool {
			for j := i + 1; j < len(msgs) && msgs[j].Role != llm.RoleAssistant; j++ {
				if msgs[j].Role == llm.RoleToolResult && msgs[j].ToolCallID != "" && msgs[j].ToolCallID == string(id) {
					return true
				}
			}
			return false
		}
		dangling := 0
		for j := range m.Content {
			if b := &m.Content[j]; b.Type == llm.BlockToolCall && !(len(b.ID) > 0 && answered(b.ID)) {
				dangling++
			}
		}
		if dangling == 0 {
			c.keep(i)
			continue
		}
		kept := make([]llm.Block, 0, len(m.Content)-dangling)
		for j := range m.Content {
			b := &m.Content[j]
			if b.Type == llm.BlockToolCall && !(len(b.ID) > 0 && answered(b.ID)) {
				continue
			}
			kept = append(kept, *b)
		}
		if len(kept) == 0 {
			if m.StopReason == llm.StopError || m.StopReason == llm.StopAborted {
				kept = []llm.Block{}
			} else {
				kept = []llm.Block{{Type: llm.BlockText, Text: []byte("[tool calls omitted]")}}
			}
		}
		m.Content = kept
		c.replace(i, m)
	}
	return mergeTurns(c.result(), llm.RoleUser, func(prev, cur llm.Message) llm.Message {
		m := cur
		m.Content = concatBlocks(prev.Content, cur.Content)
		if m.Timestamp == 0 {
			m.Timestamp = prev.Timestamp
		}
		return m
	})
}

// SanitizeSessionHistory applies the steps of OpenClaw's
// sanitizeSessionHistory that concern LLM messages, in its order:
// NormalizeAssistantReplayContent; DropThinkingBlocks [policy];
// RepairToolCallInputs (allowed tools); for Responses APIs the pairing
// repair (missing results "aborted"); SanitizeToolCallIDs [policy]; for
// other APIs the pairing repair; ZeroUsageBeforeCompaction. toolResult
// details and usage shapes need no work here: llm.Message carries neither.
func SanitizeSessionHistory(msgs []llm.Message, p ReplayPolicy, now func() int64) []llm.Message {
	msgs, _ = sanitizeSessionHistory(msgs, p, now)
	return msgs
}

func sanitizeSessionHistory(msgs []llm.Message, p ReplayPolicy, now func() int64) ([]llm.Message, PairingReport) {
	var st prepState
	msgs, rep, _ := st.sanitize(msgs, p, now, false)
	return msgs, rep
}
