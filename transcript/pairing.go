package transcript

import (
	"time"
	"unsafe"

	"github.com/ocbench/ocbench/llm"
)

// MissingToolResultText is the text of the synthetic error result inserted
// for a tool call without a result.
const MissingToolResultText = "[openclaw] missing tool result in session history; inserted synthetic error result for transcript repair."

// PairingOptions configure RepairToolUseResultPairing.
type PairingOptions struct {
	// DropErroredAssistants removes assistant messages that ended with
	// stopReason error or aborted, and (as orphans) their results: the
	// policy OpenClaw's run attempt uses. Without it they are kept and get
	// no synthetic results.
	DropErroredAssistants bool
	// MissingResultText replaces MissingToolResultText (OpenClaw uses
	// "aborted" for the OpenAI Responses APIs).
	MissingResultText string
	// Now stamps synthetic results, Unix ms; nil means the clock.
	Now func() int64
}

// PairingReport says what RepairToolUseResultPairing changed.
type PairingReport struct {
	Added             int // synthetic error results inserted
	DroppedDuplicates int
	DroppedOrphans    int
	DroppedErrored    int // errored/aborted assistants removed
	Moved             bool
}

func (r *PairingReport) add(o PairingReport) {
	r.Added += o.Added
	r.DroppedDuplicates += o.DroppedDuplicates
	r.DroppedOrphans += o.DroppedOrphans
	r.DroppedErrored += o.DroppedErrored
	r.Moved = r.Moved || o.Moved
}

// Changed reports whether the repair changed anything.
func (r PairingReport) Changed() bool {
	return r.Added+r.DroppedDuplicates+r.DroppedOrphans+r.DroppedErrored > 0 || r.Moved
}

// callRef is a tool call of an assistant message (views of its id and
// name).
type callRef struct{ id, name []byte }

// toolCallsOf lists the tool calls of an assistant message that have an id.
func toolCallsOf(m *llm.Message, dst []callRef) []callRef {
	for i := range m.Content {
		b := &m.Content[i]
		if b.Type == llm.BlockToolCall && len(b.ID) > 0 {
			dst = append(dst, callRef{b.ID, b.Name})
		}
	}
	return dst
}

// MissingToolResult returns the synthetic error result for a call.
func MissingToolResult(callID, toolName, text string, ts int64) llm.Message {
	if toolName == "" {
		toolName = "unknown"
	}
	if text == "" {
		text = MissingToolResultText
	}
	m := llm.TextMessage(llm.RoleToolResult, text)
	m.ToolCallID, m.ToolName, m.IsError, m.Timestamp = callID, toolName, true, ts
	return m
}

// RepairToolUseResultPairing makes every assistant tool call be followed
// directly by exactly one matching result (OpenClaw's session transcript
// repair, spec §3.9): for each assistant with tool calls, the results up to
// the next assistant are collected; matching ones move right after the
// call in call order (duplicates dropped, a missing toolName filled from
// the call), results for other ids are dropped as orphans, missing results
// become synthetic error results. Tool results with no assistant before
// them are dropped. msgs is not modified; it is returned as it is when
// nothing is to change, which a first pass that copies nothing finds.
func RepairToolUseResultPairing(msgs []llm.Message, opts PairingOptions) ([]llm.Message, PairingReport) {
	return repairPairingAfter(msgs, opts, nil, false)
}

// repairPairingAfter is RepairToolUseResultPairing of messages that
// continue a history whose results had the ids in prior (a result for
// one of them is a duplicate); the ids of the results it keeps are added
// to prior (when not nil), views of msgs' call ids. changed says the
// repair of the history before changed it: the repair of the whole then
// rewrites these messages too (a missing toolName filled) even when
// nothing else is to change in them.
func repairPairingAfter(msgs []llm.Message, opts PairingOptions, prior map[string]bool, changed bool) ([]llm.Message, PairingReport) {
	seen := make(map[string]bool)
	out := msgs
	rep := repairPairing(msgs, opts, nil, prior, seen)
	if changed || rep.Changed() {
		clear(seen)
		out = make([]llm.Message, 0, len(msgs)+4)
		rep = repairPairing(msgs, opts, &out, prior, seen)
	}
	if prior != nil {
		for id := range seen {
			prior[id] = true
		}
	}
	return out, rep
}

// repairPairing is RepairToolUseResultPairing writing the repaired
// history to *dst, or, with dst nil, only finding the report. The ids of
// the results kept are recorded in seen; a result whose id is in seen or
// prior (nil: none) is a duplicate.
func repairPairing(msgs []llm.Message, opts PairingOptions, dst *[]llm.Message, prior, seen map[string]bool) PairingReport {
	var rep PairingReport
	now := opts.Now
	if now == nil {
		now = func() int64 { return time.Now().UnixMilli() }
	}
	var out []llm.Message
	if dst != nil {
		out = *dst
		defer func() { *dst = out }()
	}
	// seen is keyed by views of the call ids, which live as long as msgs.
	// pushResult adds the result for the call id (m: the result; nil when
	// only finding the report).
	pushResult := func(id string, m *llm.Message) {
		if seen[id] || prior[id] {
			rep.DroppedDuplicates++
			return
		}
		seen[id] = true
		if m != nil {
			out = append(out, *m)
		}
	}
	var calls []callRef
	var span, remainder []llm.Message
	var has []bool
	for i := 0; i < len(msgs); i++ {
		m := &msgs[i]
		if m.Role != llm.RoleAssistant {
			if m.Role == llm.RoleToolResult {
				rep.DroppedOrphans++
			} else if dst != nil {
				out = append(out, *m)
			}
			continue
		}
		if m.StopReason == llm.StopError || m.StopReason == llm.StopAborted {
			if opts.DropErroredAssistants {
				rep.DroppedErrored++
			} else if dst != nil {
				out = append(out, *m)
			}
			continue
		}
		calls = toolCallsOf(m, calls[:0])
		if len(calls) == 0 {
			if dst != nil {
				out = append(out, *m)
			}
			continue
		}
		// span[k] is the result found for calls[k] (has[k] says whether).
		if dst != nil {
			span = append(span[:0], make([]llm.Message, len(calls))...)
		}
		has = append(has[:0], make([]bool, len(calls))...)
		found := 0
		remainder = remainder[:0]
		remaining := 0
		j := i + 1
		for ; j < len(msgs); j++ {
			next := &msgs[j]
			if next.Role == llm.RoleAssistant {
				break
			}
			if next.Role != llm.RoleToolResult {
				if dst != nil {
					remainder = append(remainder, *next)
				}
				remaining++
				continue
			}
			k := -1
			if next.ToolCallID != "" {
				for c := range calls {
					if string(calls[c].id) == next.ToolCallID {
						k = c
						break
					}
				}
			}
			if k < 0 {
				rep.DroppedOrphans++
				continue
			}
			if seen[next.ToolCallID] || prior[next.ToolCallID] {
				rep.DroppedDuplicates++
				continue
			}
			if has[k] {
				continue // a second result in the span: the first one wins
			}
			has[k] = true
			found++
			if dst == nil {
				continue
			}
			r := *next
			if t := jsTrim(r.ToolName); t != r.ToolName || t == "" {
				switch name := jsTrim(string(calls[k].name)); {
				case t != "":
					r.ToolName = t
				case name != "":
					r.ToolName = name
				default:
					r.ToolName = "unknown"
				}
			}
			span[k] = r
		}
		if dst != nil {
			out = append(out, *m)
		}
		if found > 0 && remaining > 0 {
			rep.Moved = true
		}
		for k, c := range calls {
			// The result of calls[k], found or synthetic, has its id.
			id := unsafe.String(unsafe.SliceData(c.id), len(c.id))
			var r *llm.Message
			if has[k] {
				if dst != nil {
					r = &span[k]
				}
				pushResult(id, r)
				continue
			}
			rep.Added++
			if dst != nil {
				m := MissingToolResult(string(c.id), string(c.name), opts.MissingResultText, now())
				r = &m
			}
			pushResult(id, r)
		}
		if dst != nil {
			out = append(out, remainder...)
		}
		i = j - 1
	}
	return rep
}
