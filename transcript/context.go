package transcript

import (
	"fmt"
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
}

// BuildContext returns the LLM messages of the active branch of entries:
// the path from the last entry to the root, walking ParentID. See
// BuildSessionContext.
func BuildContext(entries []Entry) []llm.Message {
	return BuildSessionContext(entries).Messages
}

// BuildSessionContext follows pi's buildSessionContext: it walks ParentID
// from the last entry (the leaf) to the root; the thinking level and model
// come from the last thinking_level_change and model_change/assistant on
// that path. If a compaction is on the path (the latest wins) the messages
// are its summary, then the path entries from its firstKeptEntryId up to
// it, then everything after it. Message entries, custom_message entries and
// non-empty branch summaries become messages, converted as convertToLlm does
// (summaries and custom messages become user messages; bashExecution a
// user text unless excluded from context).
//
// A parent that is missing ends the walk; a cycle cannot hang it.
func BuildSessionContext(entries []Entry) SessionContext {
	sc := SessionContext{ThinkingLevel: "off"}
	if len(entries) == 0 {
		return sc
	}
	byID := make(map[string]int, len(entries))
	for i := range entries {
		byID[string(entries[i].ID)] = i
	}
	var path []int
	cur := len(entries) - 1
	for steps := 0; steps <= len(entries); steps++ {
		path = append(path, cur)
		p := entries[cur].ParentID
		if len(p) == 0 {
			break
		}
		next, ok := byID[string(p)]
		if !ok {
			break
		}
		cur = next
	}
	// path is leaf -> root; reverse it.
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	pathEntries := make([]*Entry, len(path))
	for i, ix := range path {
		pathEntries[i] = &entries[ix]
	}
	return buildFromPath(pathEntries)
}

func buildFromPath(path []*Entry) SessionContext {
	sc := SessionContext{ThinkingLevel: "off"}
	compaction := -1
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
		case TypeCompaction:
			compaction = i
		}
	}
	var p fastjson.Parser
	add := func(e *Entry) {
		if m, ok := entryMessage(&p, e); ok {
			sc.Messages = append(sc.Messages, m)
		}
	}
	if compaction < 0 {
		for _, e := range path {
			add(e)
		}
		return sc
	}
	c := path[compaction]
	sc.Messages = append(sc.Messages, summaryMessage(CompactionSummaryPrefix, c.Summary, CompactionSummarySuffix, c.Timestamp))
	found := false
	for _, e := range path[:compaction] {
		if len(c.FirstKeptEntryID) > 0 && string(e.ID) == string(c.FirstKeptEntryID) {
			found = true
		}
		if found {
			add(e)
		}
	}
	for _, e := range path[compaction+1:] {
		add(e)
	}
	return sc
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
			raw = c.MarshalTo(nil)
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
	opts := Options{KeepUnknown: true, SkipContent: true}
	r, err := OpenFile(path, opts)
	if err != nil {
		return SessionContext{}, err
	}
	byID := make(map[string]int32)
	var parentIDs []string // by ordinal; resolved once all ids are known, as pi's byId map is
	for r.Next() {
		e := r.Entry()
		byID[string(e.ID)] = int32(len(parentIDs))
		parentIDs = append(parentIDs, string(e.ParentID))
	}
	err = r.Err()
	hdr, st := r.Header(), r.Stats()
	r.Close()
	if err != nil {
		return SessionContext{}, err
	}
	parents := make([]int32, len(parentIDs))
	for i, p := range parentIDs {
		parents[i] = -1
		if p != "" {
			if q, ok := byID[p]; ok {
				parents[i] = q
			}
		}
	}
	parentIDs = nil
	onPath := make(map[int32]int, 64) // ordinal -> position on the path
	var order []int32
	if n := len(parents); n > 0 {
		cur := int32(n - 1)
		for steps := 0; steps <= n && cur >= 0; steps++ {
			if _, seen := onPath[cur]; seen {
				break
			}
			onPath[cur] = 0
			order = append(order, cur)
			cur = parents[cur]
		}
	}
	for i, j := 0, len(order)-1; i < j; i, j = i+1, j-1 {
		order[i], order[j] = order[j], order[i]
	}
	for pos, ord := range order {
		onPath[ord] = pos
	}
	branch := make([]*Entry, len(order))
	r, err = OpenFile(path, Options{KeepUnknown: true})
	if err != nil {
		return SessionContext{}, err
	}
	defer r.Close()
	ord := int32(0)
	total := int32(len(parents))
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
			return SessionContext{}, fmt.Errorf("transcript: %s changed while being read", path)
		}
	}
	sc := buildFromPath(branch)
	sc.Header, sc.Stats = hdr, st
	return sc, nil
}
