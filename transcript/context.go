package transcript

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/ocbench/ocbench/llm"
	"github.com/valyala/fastjson"
)

// The texts pi wraps summaries in when it converts them to LLM messages.
const (
	CompactionSummaryPrefix = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
	CompactionSummarySuffix = "\n</summary>"
	BranchSummaryPrefix     = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
	BranchSummarySuffix     = "</summary>"
)

// SessionContext is what a session file contributes to the next model
// call: the active branch's messages converted to LLM messages, and the
// thinking level and model in effect at its leaf (pi's buildSessionContext
// followed by convertToLlm).
type SessionContext struct {
	Messages      []llm.Message
	ThinkingLevel string // "off" unless a thinking_level_change is on the branch
	Provider      string // from the last model_change or assistant on the branch
	ModelID       string
	// Header and Stats are set by LoadContext.
	Header Header
	Stats  Stats
	// extendable: built by BuildSessionContextVersion for a version 1-3
	// session whose active path has no cycle (see Extend).
	extendable bool
	// used holds the IDHash of every id and parent id of the first usedN
	// entries sc was built or extended of, made by the first Extend and
	// kept up by the later ones (shared by copies of sc, as Messages is).
	used  map[uint64]struct{}
	usedN int
}

// BuildContext returns the LLM messages of the active branch of entries.
// See BuildSessionContext.
func BuildContext(entries []Entry) []llm.Message {
	return BuildSessionContext(entries).Messages
}

// entriesVersion guesses the session version of entries without a header:
// 4 when an entry only version 4 has (reset, leaf) is there, else 3.
func entriesVersion(entries []Entry) int {
	for i := range entries {
		if t := entries[i].Type; t == TypeReset || t == TypeLeaf {
			return 4
		}
	}
	return 3
}

// BuildSessionContext is BuildSessionContextVersion with the version
// guessed from the entries (4 when a reset or leaf entry is among them).
func BuildSessionContext(entries []Entry) SessionContext {
	return BuildSessionContextVersion(entries, entriesVersion(entries))
}

// BuildSessionContextVersion follows buildSessionContext (pi's, and
// OpenClaw 2026.9.6's for version 4): it resolves the tree with a
// Navigator (see there for the rules of each version), walks from the
// active leaf to the root, and takes the thinking level and model from the
// last thinking_level_change and model_change/assistant on that path. The
// latest boundary on the path, a compaction or a reset, cuts the context:
// after a compaction the messages are its summary, then the path entries
// from its firstKeptEntryId up to it, then everything after it; after a
// reset there is no summary, and of the entries from its firstKeptEntryId
// only user and assistant messages and the tool results of kept calls
// stay. Message entries (unless excludeFromContext), custom_message
// entries and non-empty branch summaries become messages, converted as
// convertToLlm does.
//
// A parent that is missing ends the walk; a cycle cannot hang it.
func BuildSessionContextVersion(entries []Entry, version int) SessionContext {
	sc := SessionContext{ThinkingLevel: "off", extendable: version < 4}
	if len(entries) == 0 {
		return sc
	}
	nav := NewNavigator(version)
	byID := make(map[uint64]int, len(entries))
	for i := range entries {
		if st := nav.Step(&entries[i]); st.InTree {
			byID[st.ID] = i
		}
	}
	ids, acyclic := nav.path()
	path := make([]*Entry, 0, len(ids))
	for _, h := range ids {
		path = append(path, &entries[byID[h]])
	}
	sc = buildFromPath(path)
	sc.extendable = acyclic && version < 4
	return sc
}

// Extend makes sc, the context BuildSessionContextVersion built of
// entries, the context of entries followed by tail, when that is sc's
// messages followed by tail's: a version 1-3 session whose active path
// had no cycle, and tail message entries with their message (parsed), each
// hanging from the entry before it, the first from the last entry of
// entries with an id (the active leaf of such a session; with none, the
// first is a root), none with an id already used in entries as an id or a
// parent. It appends to sc.Messages in place. It reports false, changing
// nothing, otherwise (a branch, another entry type, a repeated id): build
// the context in full. A run continuing a live session uses it to turn
// what it parsed of the file's new lines into the context without walking
// the whole tree again.
func (sc *SessionContext) Extend(entries, tail []Entry) bool {
	if !sc.extendable {
		return false
	}
	var parent []byte
	for i := len(entries) - 1; i >= 0 && parent == nil; i-- {
		if len(entries[i].ID) > 0 {
			parent = entries[i].ID
		}
	}
	// The ids and parents used so far: counted once, then kept up as the
	// entries grow by the tails (a live session's every run).
	if sc.used == nil || sc.usedN > len(entries) {
		sc.used, sc.usedN = make(map[uint64]struct{}, 2*(len(entries)+len(tail))), 0
	}
	for i := sc.usedN; i < len(entries); i++ {
		sc.used[IDHash(entries[i].ID)] = struct{}{}
		sc.used[IDHash(entries[i].ParentID)] = struct{}{}
	}
	sc.usedN = len(entries)
	var hb [8]uint64
	hs := hb[:0]
	for i := range tail {
		e := &tail[i]
		if e.Type != TypeMessage || e.Message == nil || len(e.ID) == 0 || string(e.ParentID) != string(parent) {
			return false
		}
		h := IDHash(e.ID)
		if _, dup := sc.used[h]; dup || slices.Contains(hs, h) {
			return false
		}
		hs = append(hs, h)
		parent = e.ID
	}
	for i := range tail {
		m := tail[i].Message
		if m.Role == llm.RoleAssistant {
			sc.Provider, sc.ModelID = m.Provider, m.Model
		}
		if !tail[i].ExcludeFromContext {
			sc.Messages = append(sc.Messages, *m)
		}
		sc.used[hs[i]] = struct{}{} // a tail entry's parent is an id counted before it
	}
	sc.usedN += len(tail)
	return true
}

// buildSessionContextAt is pi's buildSessionContext(entries, leafId): the
// branch from the entry leafID back to the root (version 3 rules).
func buildSessionContextAt(entries []Entry, leafID string) SessionContext {
	byID := make(map[string]int, len(entries))
	for i := range entries {
		byID[string(entries[i].ID)] = i
	}
	var path []*Entry
	cur, ok := byID[leafID]
	for steps := 0; ok && steps <= len(entries); steps++ {
		path = append(path, &entries[cur])
		if len(entries[cur].ParentID) == 0 {
			break
		}
		cur, ok = byID[string(entries[cur].ParentID)]
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	return buildFromPath(path)
}

func buildFromPath(path []*Entry) SessionContext {
	sc := SessionContext{ThinkingLevel: "off"}
	boundary := -1
	for i, e := range path {
		switch e.Type {
		case TypeThinkingLevelChange:
			sc.ThinkingLevel = string(e.ThinkingLevel)
		case TypeModelChange:
			sc.Provider, sc.ModelID = string(e.Provider), string(e.ModelID)
		case TypeMessage:
			if e.Message != nil && e.Message.Role == llm.RoleAssistant {
				sc.Provider, sc.ModelID = e.Message.Provider, e.Message.Model
			}
		case TypeCompaction, TypeReset:
			boundary = i
		}
	}
	var p fastjson.Parser
	add := func(e *Entry, force bool) {
		if e.ExcludeFromContext && !force {
			return
		}
		if m, ok := entryMessage(&p, e); ok {
			sc.Messages = append(sc.Messages, m)
		}
	}
	if boundary < 0 {
		for _, e := range path {
			add(e, false)
		}
		return sc
	}
	c := path[boundary]
	firstKept := boundary
	if len(c.FirstKeptEntryID) > 0 {
		for i, e := range path[:boundary] {
			if string(e.ID) == string(c.FirstKeptEntryID) {
				firstKept = i
				break
			}
		}
	}
	if c.Type == TypeCompaction {
		sc.Messages = append(sc.Messages, summaryMessage(CompactionSummaryPrefix, c.Summary, CompactionSummarySuffix, c.Timestamp))
		for _, e := range path[firstKept:boundary] {
			add(e, false)
		}
	} else {
		for _, e := range ResetKept(path[firstKept:boundary]) {
			add(e, true)
		}
	}
	for _, e := range path[boundary+1:] {
		add(e, false)
	}
	return sc
}

// ResetKept returns what a reset keeps of the entries from its
// firstKeptEntryId up to it (OpenClaw's selectResetKeptEntries): user and
// assistant messages, and tool results whose call is in a kept assistant
// message before them.
func ResetKept(entries []*Entry) []*Entry {
	var kept []*Entry
	calls := make(map[string]struct{})
	for _, e := range entries {
		if e.Type != TypeMessage || e.Message == nil {
			continue
		}
		switch e.Message.Role {
		case llm.RoleUser:
			kept = append(kept, e)
		case llm.RoleAssistant:
			kept = append(kept, e)
			for i := range e.Message.Content {
				if b := &e.Message.Content[i]; b.Type == llm.BlockToolCall {
					calls[string(b.ID)] = struct{}{}
				}
			}
		case llm.RoleToolResult:
			if _, ok := calls[e.Message.ToolCallID]; ok {
				delete(calls, e.Message.ToolCallID)
				kept = append(kept, e)
			}
		}
	}
	return kept
}

func summaryMessage(prefix string, summary []byte, suffix string, ts int64) llm.Message {
	text := make([]byte, 0, len(prefix)+len(summary)+len(suffix))
	text = append(append(append(text, prefix...), summary...), suffix...)
	return llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: text}}, Timestamp: ts}
}

// entryMessage converts one path entry to an LLM message (pi's
// appendMessage then convertToLlm); ok is false for entries that give none.
func entryMessage(p *fastjson.Parser, e *Entry) (llm.Message, bool) {
	switch e.Type {
	case TypeMessage:
		if e.Message != nil {
			return *e.Message, true
		}
		return agentMessage(p, e)
	case TypeCustomMessage:
		return userContent(p, e.Content, e.Timestamp)
	case TypeBranchSummary:
		if len(e.Summary) == 0 {
			return llm.Message{}, false
		}
		return summaryMessage(BranchSummaryPrefix, e.Summary, BranchSummarySuffix, e.Timestamp), true
	}
	return llm.Message{}, false
}

// userContent makes a user message from raw JSON content (a string or an
// array of blocks).
func userContent(p *fastjson.Parser, content []byte, ts int64) (llm.Message, bool) {
	buf := make([]byte, 0, len(content)+32)
	buf = append(buf, `{"role":"user","content":`...)
	if len(content) == 0 {
		buf = append(buf, `[]`...)
	} else {
		buf = append(buf, content...)
	}
	buf = append(buf, '}')
	v, err := p.ParseBytes(buf)
	if err != nil {
		return llm.Message{}, false
	}
	m, err := llm.ParseMessage(v)
	if err != nil {
		return llm.Message{}, false
	}
	m.Timestamp = ts
	return m, true
}

// agentMessage converts the agent-only message roles of a message entry.
func agentMessage(p *fastjson.Parser, e *Entry) (llm.Message, bool) {
	v, err := p.ParseBytes(e.MessageJSON)
	if err != nil {
		return llm.Message{}, false
	}
	ts := v.GetInt64("timestamp")
	switch string(e.MessageRole) {
	case "custom", "hookMessage":
		var raw []byte
		if c := v.Get("content"); c != nil {
			raw = llm.AppendJSONValue(nil, c)
		}
		return userContent(p, raw, ts)
	case "branchSummary":
		s := v.GetStringBytes("summary")
		if len(s) == 0 {
			return llm.Message{}, false
		}
		return summaryMessage(BranchSummaryPrefix, s, BranchSummarySuffix, ts), true
	case "compactionSummary":
		return summaryMessage(CompactionSummaryPrefix, v.GetStringBytes("summary"), CompactionSummarySuffix, ts), true
	case "bashExecution":
		if v.GetBool("excludeFromContext") {
			return llm.Message{}, false
		}
		text := BashExecutionText(string(v.GetStringBytes("command")), string(v.GetStringBytes("output")),
			exitCode(v), v.GetBool("cancelled"), v.GetBool("truncated"), string(v.GetStringBytes("fullOutputPath")))
		return llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: []byte(text)}}, Timestamp: ts}, true
	}
	return llm.Message{}, false
}

func exitCode(v *fastjson.Value) *int {
	c := v.Get("exitCode")
	if c == nil || c.Type() != fastjson.TypeNumber {
		return nil
	}
	n := c.GetInt()
	return &n
}

// BashExecutionText renders a pi bashExecution message (a user's `!cmd`)
// as the user text the model sees. exitCode is nil when unknown.
func BashExecutionText(command, output string, exitCode *int, cancelled, truncated bool, fullOutputPath string) string {
	text := "Ran `" + command + "`\n"
	if output != "" {
		text += "```\n" + output + "\n```"
	} else {
		text += "(no output)"
	}
	if cancelled {
		text += "\n\n(command cancelled)"
	} else if exitCode != nil && *exitCode != 0 {
		text += "\n\nCommand exited with code " + strconv.Itoa(*exitCode)
	}
	if truncated && fullOutputPath != "" {
		text += "\n\n[Output truncated. Full output: " + fullOutputPath + "]"
	}
	return text
}

// LoadContext reads the session file at path (plain or zstd) and returns
// the context of its active branch. It reads the file twice so that memory
// stays proportional to the branch, not to the file: the first pass records
// only ids and parents, the second keeps the entries on the path from the
// last entry to the root. Malformed lines are skipped and a torn last line
// is ignored, both counted in the returned Stats.
func LoadContext(path string) (SessionContext, error) {
	return loadContext(func(o Options) (*Reader, error) { return OpenFile(path, o) }, path)
}

// loadContext is LoadContext over any source that can be read twice.
func loadContext(open func(Options) (*Reader, error), name string) (SessionContext, error) {
	r, err := open(Options{KeepUnknown: true, SkipContent: true})
	if err != nil {
		return SessionContext{}, err
	}
	// The header comes with the first entry; the navigator needs its
	// version, so entries are buffered as hashes until it is known.
	var nav *Navigator
	ordOf := make(map[uint64]int32)
	var ord int32
	for r.Next() {
		if nav == nil {
			nav = NewNavigator(r.Header().Version)
		}
		if st := nav.Step(r.Entry()); st.InTree {
			ordOf[st.ID] = ord
		}
		ord++
	}
	err = r.Err()
	hdr, st := r.Header(), r.Stats()
	r.Close()
	if err != nil {
		return SessionContext{}, err
	}
	total := ord
	onPath := make(map[int32]int, 64) // ordinal -> position on the path
	var order []int32
	if nav != nil {
		for _, h := range nav.Path() {
			order = append(order, ordOf[h])
		}
	}
	for pos, o := range order {
		onPath[o] = pos
	}
	branch := make([]*Entry, len(order))
	r, err = open(Options{KeepUnknown: true})
	if err != nil {
		return SessionContext{}, err
	}
	defer r.Close()
	ord = 0
	for ord < total && r.Next() {
		if pos, ok := onPath[ord]; ok {
			c := r.Entry().Clone()
			branch[pos] = &c
		}
		ord++
	}
	if err := r.Err(); err != nil {
		return SessionContext{}, err
	}
	for _, e := range branch {
		if e == nil {
			return SessionContext{}, fmt.Errorf("transcript: %s changed while being read", name)
		}
	}
	sc := buildFromPath(branch)
	sc.Header, sc.Stats = hdr, st
	return sc, nil
}
