package cacheprofile

import (
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"
	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/tokenize"
	"github.com/ocbench/ocbench/transcript"
)

// kind is what a node contributes to a request.
type kind uint8

const (
	kindHidden     kind = iota // on the tree, not in the LLM context
	kindUser                   // user, custom, bashExecution, summaries
	kindAssistant              // an assistant message replayed as context
	kindToolResult             // a tool result
	kindRuntimeCtx             // openclaw.runtime-context: only the one after the last user message is sent
	kindCompaction             // a compaction: its summary leads the context
)

// node is one entry of the active branch, reduced to what the cache sees.
type node struct {
	id, parent uint64
	hash       uint64
	est        int // chars/4 estimate
	tokens     int // size in the prompt; est until sized from usage
	parts      int // API content blocks
	kind       kind
	sized      bool
	line       int64
}

// branch is the active path of a session tree, root first. Nodes cut off by
// a branch switch are kept in side (bounded) so that a later switch back
// can rebuild the path; nodes before a compaction's first kept entry are
// dropped, which bounds memory on long sessions.
type branch struct {
	path  []node
	index map[uint64]int // id -> position in path
	side  map[uint64]node
	// orphans counts entries whose parent was not found (the path then
	// restarts at them, as pi's walk stops at a missing parent).
	orphans int64
	sideMax int
}

func newBranch() *branch {
	return &branch{index: make(map[uint64]int), side: make(map[uint64]node), sideMax: 1 << 18}
}

// idHash is the id hash of the transcript Navigator, so that the parents
// it resolves match the nodes' ids.
func idHash(b []byte) uint64 { return transcript.IDHash(b) }

func (b *branch) last() uint64 {
	if len(b.path) == 0 {
		return 0
	}
	return b.path[len(b.path)-1].id
}

// cut moves path[i:] to the side map.
func (b *branch) cut(i int) {
	for j := i; j < len(b.path); j++ {
		n := b.path[j]
		delete(b.index, n.id)
		if len(b.side) >= b.sideMax {
			clear(b.side)
		}
		b.side[n.id] = n
	}
	b.path = b.path[:i]
}

// attach makes parent the last node of the path, rebuilding the path from
// the side map when parent is on an abandoned branch.
func (b *branch) attach(parent uint64) {
	if parent == b.last() {
		return
	}
	if parent == 0 {
		b.cut(0)
		return
	}
	if i, ok := b.index[parent]; ok {
		b.cut(i + 1)
		return
	}
	// Walk up the side map to a node on the path.
	var chain []node
	cur := parent
	for steps := 0; steps < len(b.side)+1; steps++ {
		n, ok := b.side[cur]
		if !ok {
			break
		}
		chain = append(chain, n)
		if i, on := b.index[n.parent]; on {
			b.cut(i + 1)
			for k := len(chain) - 1; k >= 0; k-- {
				b.push(chain[k])
				delete(b.side, chain[k].id)
			}
			return
		}
		cur = n.parent
	}
	// The parent is unknown (or its chain reaches the root off the path).
	if len(chain) > 0 && chain[len(chain)-1].parent == 0 {
		b.cut(0)
		for k := len(chain) - 1; k >= 0; k-- {
			b.push(chain[k])
			delete(b.side, chain[k].id)
		}
		return
	}
	b.orphans++
	b.cut(0)
}

func (b *branch) push(n node) {
	if n.id != 0 {
		b.index[n.id] = len(b.path)
	}
	b.path = append(b.path, n)
}

// compact applies a compaction or reset entry (already pushed as the last
// node): nodes before the first kept entry leave the path for good. A
// reset keeps, of the nodes from its first kept entry, only messages (user,
// assistant, tool results): earlier summaries and runtime context do not
// reappear.
func (b *branch) compact(firstKept uint64, reset bool) {
	k, ok := b.index[firstKept]
	c := len(b.path) - 1
	if !ok || k > c {
		k = c // nothing kept: the summary alone
	}
	for j := 0; j < k; j++ {
		delete(b.index, b.path[j].id)
	}
	if reset {
		for j := k; j < c; j++ {
			if n := &b.path[j]; n.kind == kindCompaction || n.kind == kindRuntimeCtx {
				n.kind = kindHidden
			}
		}
	}
	b.path = append(b.path[:0], b.path[k:]...)
	for j := range b.path {
		if b.path[j].id != 0 {
			b.index[b.path[j].id] = j
		}
	}
}

// utf16Len counts UTF-16 code units of b, the unit of OpenClaw's chars/4.
func utf16Len(b []byte) int {
	n := 0
	for len(b) > 0 {
		if b[0] < utf8.RuneSelf {
			// Fast path: ASCII.
			n++
			b = b[1:]
			continue
		}
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// tags are one-byte separators for content hashes.
const tags = "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09"

func tag(i int) string {
	if i < 0 || i >= len(tags) {
		i = len(tags) - 1
	}
	return tags[i : i+1]
}

// messageNode reduces an LLM message to a node: a content hash over what
// is sent (role, block types, texts, tool ids, names and arguments; not
// timestamps, usage or tool-result details) and pi's chars/4 estimate.
func messageNode(m *llm.Message, d *xxhash.Digest) node {
	d.Reset()
	d.WriteString(tag(int(m.Role) + 1))
	chars := 0
	for i := range m.Content {
		b := &m.Content[i]
		d.WriteString(tag(int(b.Type) + 1))
		switch b.Type {
		case llm.BlockText:
			d.Write(b.Text)
			chars += utf16Len(b.Text)
		case llm.BlockThinking:
			d.Write(b.Text)
			d.Write(b.Signature)
			if m.Role == llm.RoleAssistant {
				chars += utf16Len(b.Text)
			}
		case llm.BlockToolCall:
			d.Write(b.ID)
			d.Write(b.Name)
			args := b.Arguments
			if len(args) == 0 {
				args = b.RawArgs
			}
			d.Write(args)
			chars += utf16Len(b.Name) + utf16Len(args)
		case llm.BlockImage:
			d.Write(b.Text)
			if m.Role == llm.RoleToolResult {
				chars += tokenize.ImageChars
			}
		}
		d.WriteString(tag(0))
	}
	if m.Role == llm.RoleToolResult {
		d.WriteString(m.ToolCallID)
	}
	n := node{hash: d.Sum64(), est: tokenize.Estimate(chars), parts: max(1, len(m.Content))}
	switch m.Role {
	case llm.RoleAssistant:
		n.kind = kindAssistant
	case llm.RoleToolResult:
		n.kind = kindToolResult
	default:
		n.kind = kindUser
	}
	return n
}

// rawNode reduces a message the llm package does not model (custom,
// bashExecution, summaries) or a custom_message's content.
func rawNode(raw []byte, est int, k kind) node {
	return node{hash: xxhash.Sum64(raw), est: est, parts: 1, kind: k}
}

// entryNode returns the node of a session entry.
func entryNode(e *transcript.Entry, d *xxhash.Digest) node {
	var n node
	switch e.Type {
	case transcript.TypeMessage:
		switch {
		case e.Message != nil:
			m := e.Message
			n = messageNode(m, d)
			if m.Role == llm.RoleAssistant && (m.StopReason == llm.StopError || m.StopReason == llm.StopAborted || m.Provider == "openclaw") {
				// Failed calls and OpenClaw's injected notices are dropped
				// from replay.
				n.kind = kindHidden
			}
		case len(e.MessageJSON) > 0:
			est, err := tokenize.EstimateMessageJSON(e.MessageJSON)
			if err != nil {
				est = 0
			}
			n = rawNode(e.MessageJSON, est, kindUser)
		}
	case transcript.TypeCustomMessage:
		k := kindUser
		if string(e.CustomType) == "openclaw.runtime-context" {
			k = kindRuntimeCtx
		}
		n = rawNode(e.Content, tokenize.Estimate(utf16Len(e.Content)), k)
	case transcript.TypeBranchSummary:
		n = rawNode(e.Summary, tokenize.Estimate(utf16Len(e.Summary)+90), kindUser)
	case transcript.TypeCompaction:
		n = rawNode(e.Summary, tokenize.Estimate(utf16Len(e.Summary)+100), kindCompaction)
	default:
		n.kind = kindHidden
	}
	n.tokens = n.est
	n.id = idHash(e.ID)
	n.parent = idHash(e.ParentID)
	n.line = e.Line
	return n
}
