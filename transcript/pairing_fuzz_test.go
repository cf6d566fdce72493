package transcript

import (
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/ocbench/ocbench/llm"
)

// pairingHistory builds a history from fuzz bytes, two per message: the
// kind (user, assistant with calls, errored assistant, tool result,
// assistant without calls) and an id drawn from a small alphabet, so that
// duplicates, orphans, moves and missing results all occur.
func pairingHistory(b []byte) []llm.Message {
	var msgs []llm.Message
	for i := 0; i+1 < len(b) && len(msgs) < 40; i += 2 {
		id := "c" + strconv.Itoa(int(b[i+1]%5))
		switch b[i] % 6 {
		case 0:
			msgs = append(msgs, llm.TextMessage(llm.RoleUser, "q"))
		case 1, 2:
			m := llm.Message{Role: llm.RoleAssistant, StopReason: llm.StopToolUse}
			for k := 0; k <= int(b[i+1]>>5); k++ {
				m.Content = append(m.Content, llm.Block{Type: llm.BlockToolCall, ID: []byte("c" + strconv.Itoa((int(b[i+1])+k)%5)), Name: []byte(" read ")})
			}
			if b[i]%6 == 2 && b[i+1]&16 != 0 {
				m.StopReason = llm.StopError
			}
			msgs = append(msgs, m)
		case 3, 4:
			r := llm.TextMessage(llm.RoleToolResult, "r")
			r.ToolCallID = id
			if b[i+1]&8 != 0 {
				r.ToolName = " read "
			}
			msgs = append(msgs, r)
		case 5:
			msgs = append(msgs, llm.TextMessage(llm.RoleAssistant, "a"))
		}
	}
	return msgs
}

// FuzzRepairPairing: the repair that first finds its report without
// copying gives what the single-pass repair gave (the function as it was
// before, kept below as the reference), for either option.
func FuzzRepairPairing(f *testing.F) {
	f.Add([]byte{0, 0, 1, 0, 3, 0, 5, 0})
	f.Add([]byte{1, 0x21, 0, 0, 3, 1, 3, 0, 3, 0, 4, 3})
	f.Add([]byte{3, 2, 2, 0x10, 3, 0, 1, 0x40, 5, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		msgs := pairingHistory(b)
		for _, drop := range []bool{false, true} {
			opts := PairingOptions{DropErroredAssistants: drop, Now: func() int64 { return 7 }}
			got, grep := RepairToolUseResultPairing(msgs, opts)
			want, wrep := repairPairingReference(msgs, opts)
			if grep != wrep || len(got) != len(want) || (len(got) > 0 && !reflect.DeepEqual(got, want)) {
				t.Fatalf("drop=%v: report %+v, reference %+v; %d messages, reference %d", drop, grep, wrep, len(got), len(want))
			}
			if !grep.Changed() && len(msgs) > 0 && &got[0] != &msgs[0] {
				t.Fatal("an unchanged history was copied")
			}
		}
	})
}

// repairPairingReference is RepairToolUseResultPairing as it was before
// it found its report first: one pass that always copies.
func repairPairingReference(msgs []llm.Message, opts PairingOptions) ([]llm.Message, PairingReport) {
	var rep PairingReport
	now := opts.Now
	if now == nil {
		now = func() int64 { return time.Now().UnixMilli() }
	}
	out := make([]llm.Message, 0, len(msgs)+4)
	seen := make(map[string]bool)
	pushResult := func(m llm.Message) {
		if m.ToolCallID != "" {
			if seen[m.ToolCallID] {
				rep.DroppedDuplicates++
				return
			}
			seen[m.ToolCallID] = true
		}
		out = append(out, m)
	}
	var calls []callRef
	var span, remainder []llm.Message
	var has []bool
	for i := 0; i < len(msgs); i++ {
		m := &msgs[i]
		if m.Role != llm.RoleAssistant {
			if m.Role == llm.RoleToolResult {
				rep.DroppedOrphans++
			} else {
				out = append(out, *m)
			}
			continue
		}
		if m.StopReason == llm.StopError || m.StopReason == llm.StopAborted {
			if opts.DropErroredAssistants {
				rep.DroppedErrored++
			} else {
				out = append(out, *m)
			}
			continue
		}
		calls = toolCallsOf(m, calls[:0])
		if len(calls) == 0 {
			out = append(out, *m)
			continue
		}
		// span[k] is the result found for calls[k] (has[k] says whether).
		span = append(span[:0], make([]llm.Message, len(calls))...)
		has = append(has[:0], make([]bool, len(calls))...)
		found := 0
		remainder = remainder[:0]
		j := i + 1
		for ; j < len(msgs); j++ {
			next := &msgs[j]
			if next.Role == llm.RoleAssistant {
				break
			}
			if next.Role != llm.RoleToolResult {
				remainder = append(remainder, *next)
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
			if seen[next.ToolCallID] {
				rep.DroppedDuplicates++
				continue
			}
			if has[k] {
				continue // a second result in the span: the first one wins
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
			span[k], has[k] = r, true
			found++
		}
		out = append(out, *m)
		if found > 0 && len(remainder) > 0 {
			rep.Moved = true
		}
		for k, c := range calls {
			if has[k] {
				pushResult(span[k])
				continue
			}
			rep.Added++
			pushResult(MissingToolResult(string(c.id), string(c.name), opts.MissingResultText, now()))
		}
		out = append(out, remainder...)
		i = j - 1
	}
	if !rep.Changed() {
		return msgs, rep
	}
	return out, rep
}
