package streamwrap

import (
	"context"

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
// SanitizeReplayMessages. The inner function gets a shallow copy of the
// request with the new messages only when something changed; otherwise it
// gets the caller's request.
func SanitizeReplayToolCalls(next llm.StreamFunc, cfg SanitizeConfig) llm.StreamFunc {
	return func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		out, changed := SanitizeReplayMessages(req.Messages, req.Model.API, cfg)
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
	answeredAfter := func(at int, id []byte) bool {
		for i := at + 1; i < len(msgs); i++ {
			if msgs[i].Role == llm.RoleToolResult && msgs[i].ToolCallID == string(id) {
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
	answered := func(at int, id []byte) bool {
		if answeredAfter(at, id) {
			return true
		}
		for i := 0; i <= at; i++ {
			if msgs[i].Role == llm.RoleToolResult && msgs[i].ToolCallID == string(id) {
				return true
			}
		}
		return false
	}
	signed := cfg.Policy.PreserveSignatures && !cfg.Policy.DropThinkingBlocks

	var out []llm.Message
	changed := false
	ensure := func(upto int) {
		if out == nil {
			out = make([]llm.Message, 0, len(msgs))
			out = append(out, msgs[:upto]...)
		}
	}
	for i := range msgs {
		m := &msgs[i]
		if m.Role != llm.RoleAssistant {
			if out != nil {
				out = append(out, *m)
			}
			continue
		}
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
			if keepSignedTurn(m, i, cfg.ReplayAllowed, answeredAfter, answered) {
				if out != nil {
					out = append(out, *m)
				}
			} else {
				ensure(i)
				changed = true
			}
			continue
		}
		var content []llm.Block
		mchanged := false
		for j := range m.Content {
			b := &m.Content[j]
			if b.Type != llm.BlockToolCall {
				if mchanged {
					content = append(content, *b)
				}
				continue
			}
			keep, name := replayKeep(b, cfg.ReplayAllowed, answered(i, trimSpace(b.ID)))
			if keep && name == b2s(b.Name) {
				if mchanged {
					content = append(content, *b)
				}
				continue
			}
			if !mchanged {
				mchanged = true
				content = append(make([]llm.Block, 0, len(m.Content)), m.Content[:j]...)
			}
			if keep {
				nb := *b
				nb.Name = []byte(name)
				content = append(content, nb)
			}
		}
		if !mchanged {
			if out != nil {
				out = append(out, *m)
			}
			continue
		}
		ensure(i)
		changed = true
		if len(content) == 0 {
			continue // droppedAssistantMessages++
		}
		nm := *m
		nm.Content = content
		out = append(out, nm)
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
	if cfg.Policy.ValidateAnthropicTurns || cfg.Policy.ValidateGeminiTurns {
		n := len(cur)
		for n > 0 && cur[n-1].Role == llm.RoleAssistant && !hasToolCall(&cur[n-1]) {
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
func keepSignedTurn(m *llm.Message, at int, allowed *Allowlist, answeredAfter, answered func(int, []byte) bool) bool {
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
		n, ok := resolveReplayToolName(b2s(b.Name), b2s(b.ID), allowed, answered(at, trimSpace(b.ID)))
		if !ok || n != b2s(b.Name) {
			return false
		}
		if !answeredAfter(at, b.ID) {
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
