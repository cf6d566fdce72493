package transcript

import (
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/ocbench/ocbench/llm"
)

// OpenClaw's limits for tool results (spec §3.6).
const (
	// DefaultMaxLiveToolResultChars caps one tool result's text when no
	// agents.*.contextLimits.toolResultMaxChars is configured.
	DefaultMaxLiveToolResultChars = 16000
	// MaxToolResultContextShare is the share of the context window (in
	// tokens, at 4 chars per token) one tool result may take.
	MaxToolResultContextShare = 0.3
	// ToolResultMinKeepChars is the least text a truncation keeps.
	ToolResultMinKeepChars = 2000
	// DefaultContextWindowTokens is the budget assumed for unknown models.
	DefaultContextWindowTokens = 200000
)

// MiddleOmissionMarker joins head and tail when a truncation keeps both.
const MiddleOmissionMarker = "\n\n⚠️ [... middle content omitted — showing head and tail ...]\n\n"

// ContextLimitTruncationNotice is the suffix OpenClaw appends to truncated
// text: "[... N more characters truncated]".
func ContextLimitTruncationNotice(truncatedChars int) string {
	return "[... " + strconv.Itoa(truncatedChars) + " more characters truncated]"
}

// LiveToolResultMaxChars is OpenClaw's live cap on one tool result:
// min(floor(contextWindowTokens × 0.3) × 4, capChars), where capChars is
// the configured toolResultMaxChars (0 means DefaultMaxLiveToolResultChars).
// e.g. 200k tokens -> 16000, 8k -> 9600.
func LiveToolResultMaxChars(contextWindowTokens, capChars int) int {
	if capChars == 0 {
		capChars = DefaultMaxLiveToolResultChars
	}
	maxChars := int(float64(contextWindowTokens)*MaxToolResultContextShare) * 4
	return min(maxChars, max(1, capChars))
}

var (
	importantWordsRE = regexp.MustCompile(`\b(error|exception|failed|fatal|traceback|panic|stack trace|errno|exit code)\b`)
	summaryWordsRE   = regexp.MustCompile(`\b(total|summary|result|complete|finished|done)\b`)
)

// hasImportantTail reports whether the last 2000 chars of text look like
// diagnostics or a result worth keeping (OpenClaw's heuristic).
func hasImportantTail(t jsText) bool {
	tail := strings.ToLower(jsTrim(t.slice(t.len()-2000, t.len())))
	return importantWordsRE.MatchString(tail) || strings.HasSuffix(jsTrim(tail), "}") || summaryWordsRE.MatchString(tail)
}

// boundedSuffix appends the truncation notice to kept, shrinking kept until
// the result fits maxChars (appendBoundedTruncationSuffix).
func boundedSuffix(kept string, originalLen, maxChars int) string {
	keptLen := u16len(kept)
	for {
		suffix := ContextLimitTruncationNotice(max(1, originalLen-keptLen))
		total := keptLen + len(suffix)
		if total <= maxChars {
			return kept + suffix
		}
		if keptLen == 0 {
			return newJSText(kept+suffix).slice(0, maxChars)
		}
		overflow := total - maxChars
		kt := newJSText(kept)
		next := max(0, keptLen-overflow)
		if next >= keptLen {
			next = keptLen - 1
		}
		kept = kt.slice(0, next)
		keptLen = u16len(kept)
	}
}

// TruncateToolResultText cuts text to at most maxChars (UTF-16 units, as
// OpenClaw counts), keeping at least minKeep chars (clamped so that the
// notice fits; 0 is allowed, negative means ToolResultMinKeepChars). When
// the last 2000 chars look important (errors, exit codes, a closing brace,
// totals) and the budget allows, it keeps head and tail around
// MiddleOmissionMarker; otherwise the head, cut at a newline when one is in
// the last 20% of the budget. The notice ContextLimitTruncationNotice ends
// the result. Text within the limit is returned unchanged.
func TruncateToolResultText(text string, maxChars, minKeep int) string {
	if minKeep < 0 {
		minKeep = ToolResultMinKeepChars
	}
	minKeep = max(0, min(minKeep, max(0, maxChars-len(ContextLimitTruncationNotice(1)))))
	t := newJSText(text)
	n := t.len()
	if n <= maxChars {
		return text
	}
	defaultSuffix := ContextLimitTruncationNotice(max(1, n-maxChars))
	budget := max(minKeep, maxChars-len(defaultSuffix))
	if hasImportantTail(t) && budget > minKeep*2 {
		tailBudget := min(int(float64(budget)*0.3), 4000)
		headBudget := budget - tailBudget - u16len(MiddleOmissionMarker)
		if headBudget > minKeep {
			headCut := headBudget
			if nl := t.lastIndexNL(headBudget); float64(nl) > float64(headBudget)*0.8 {
				headCut = nl
			}
			tailStart := n - tailBudget
			if nl := t.indexNL(tailStart); nl != -1 && float64(nl) < float64(tailStart)+float64(tailBudget)*0.2 {
				tailStart = nl + 1
			}
			kept := t.slice(0, headCut) + MiddleOmissionMarker + t.slice(tailStart, n)
			return boundedSuffix(kept, n, maxChars)
		}
	}
	cut := budget
	if nl := t.lastIndexNL(budget); float64(nl) > float64(budget)*0.8 {
		cut = nl
	}
	return boundedSuffix(t.slice(0, cut), n, maxChars)
}

// ToolResultTextLength is the total length of m's text blocks in UTF-16
// units, 0 for messages that are not tool results.
func ToolResultTextLength(m *llm.Message) int {
	if m.Role != llm.RoleToolResult {
		return 0
	}
	n := 0
	for i := range m.Content {
		if m.Content[i].Type == llm.BlockText {
			n += u16len(m.Content[i].Text)
		}
	}
	return n
}

// TruncateToolResultMessage returns m with its text blocks cut to maxChars
// in total: each text block gets a share of the budget proportional to its
// length (at least minKeep plus the notice), then TruncateToolResultText.
// Other blocks are kept. m is not modified; a message within the limit is
// returned as is. minKeep < 0 means ToolResultMinKeepChars.
func TruncateToolResultMessage(m llm.Message, maxChars, minKeep int) llm.Message {
	if minKeep < 0 {
		minKeep = ToolResultMinKeepChars
	}
	minKeep = max(0, min(minKeep, max(0, maxChars-len(ContextLimitTruncationNotice(1)))))
	total := ToolResultTextLength(&m)
	if m.Role != llm.RoleToolResult || total <= maxChars {
		return m
	}
	out := m
	out.Content = make([]llm.Block, len(m.Content))
	copy(out.Content, m.Content)
	for i := range out.Content {
		b := &out.Content[i]
		if b.Type != llm.BlockText {
			continue
		}
		text := string(b.Text)
		l := u16len(text)
		share := float64(l) / float64(total)
		proportional := int(float64(maxChars) * share)
		suffix := ContextLimitTruncationNotice(max(1, l-proportional))
		budget := max(1, min(maxChars, max(minKeep+len(suffix), proportional)))
		b.Text = []byte(TruncateToolResultText(text, budget, minKeep))
	}
	return out
}

// TruncateOversizedToolResults returns msgs with every tool result longer
// than maxChars truncated to it (OpenClaw's in-memory guard before a
// call), and how many were truncated. msgs itself is not modified.
func TruncateOversizedToolResults(msgs []llm.Message, maxChars int) ([]llm.Message, int) {
	maxChars = max(1, maxChars)
	var out []llm.Message
	n := 0
	for i := range msgs {
		if msgs[i].Role != llm.RoleToolResult || textBytes(&msgs[i]) <= maxChars || ToolResultTextLength(&msgs[i]) <= maxChars {
			continue
		}
		if out == nil {
			out = append([]llm.Message(nil), msgs...)
		}
		out[i] = TruncateToolResultMessage(msgs[i], maxChars, ToolResultMinKeepChars)
		n++
	}
	if out == nil {
		return msgs, 0
	}
	return out, n
}

// ToolResultReplacement is one tool result rewritten by a reduction plan:
// the index of the message in the branch and its replacement.
type ToolResultReplacement struct {
	Index   int
	Message llm.Message
}

// ToolResultPlan is OpenClaw's plan for shrinking the tool results of a
// branch (the session rewrite of §3.6, also the "reducible chars" of the
// preemptive compaction decision, §3.5).
type ToolResultPlan struct {
	Replacements       []ToolResultReplacement // oversized first, then aggregate
	Oversized          int
	Aggregate          int
	OversizedReducible int // chars removed by the oversized step
	AggregateReducible int // chars removed by the aggregate step
}

// Reducible is the total number of chars the plan removes.
func (p *ToolResultPlan) Reducible() int { return p.OversizedReducible + p.AggregateReducible }

// PlanToolResultReductions builds the plan: (a) every tool result over
// maxChars is truncated to it; (b) if at least two tool results remain and
// their total exceeds aggregateBudget, they are reduced newest first, each
// down to at most minKeep plus the notice, until the excess is gone.
// OpenClaw uses aggregateBudget = maxChars, and minKeep 0 for recovery.
func PlanToolResultReductions(msgs []llm.Message, maxChars, aggregateBudget, minKeep int) ToolResultPlan {
	maxChars = max(1, maxChars)
	var plan ToolResultPlan
	branch := msgs
	for i := range msgs {
		m := &msgs[i]
		if m.Role != llm.RoleToolResult || ToolResultTextLength(m) <= maxChars {
			continue
		}
		r := TruncateToolResultMessage(*m, maxChars, minKeep)
		plan.OversizedReducible += max(0, ToolResultTextLength(m)-ToolResultTextLength(&r))
		if len(plan.Replacements) == 0 {
			branch = append([]llm.Message(nil), msgs...)
		}
		branch[i] = r
		plan.Replacements = append(plan.Replacements, ToolResultReplacement{Index: i, Message: r})
		plan.Oversized++
	}
	type cand struct{ index, length int }
	var cands []cand
	total := 0
	for i := range branch {
		if branch[i].Role != llm.RoleToolResult {
			continue
		}
		if l := ToolResultTextLength(&branch[i]); l > 0 {
			cands = append(cands, cand{i, l})
			total += l
		}
	}
	if len(cands) < 2 || total <= aggregateBudget {
		return plan
	}
	minTruncated := minKeep + len(ContextLimitTruncationNotice(1))
	remaining := total - aggregateBudget
	sort.SliceStable(cands, func(a, b int) bool { return cands[a].index > cands[b].index })
	for _, c := range cands {
		if remaining <= 0 {
			break
		}
		reducible := max(0, c.length-minTruncated)
		if reducible <= 0 {
			continue
		}
		target := max(minTruncated, c.length-min(reducible, remaining))
		r := TruncateToolResultMessage(branch[c.index], target, minKeep)
		actual := max(0, c.length-ToolResultTextLength(&r))
		if actual <= 0 {
			continue
		}
		plan.Replacements = append(plan.Replacements, ToolResultReplacement{Index: c.index, Message: r})
		plan.Aggregate++
		plan.AggregateReducible += actual
		remaining -= actual
	}
	return plan
}

// ApplyToolResultPlan returns msgs with the plan's replacements applied
// (later replacements of the same index win). msgs is not modified.
func ApplyToolResultPlan(msgs []llm.Message, plan ToolResultPlan) []llm.Message {
	if len(plan.Replacements) == 0 {
		return msgs
	}
	out := append([]llm.Message(nil), msgs...)
	for _, r := range plan.Replacements {
		if r.Index >= 0 && r.Index < len(out) {
			out[r.Index] = r.Message
		}
	}
	return out
}

// textBytes is the UTF-8 size of m's text blocks, an upper bound of their
// UTF-16 length.
func textBytes(m *llm.Message) int {
	n := 0
	for i := range m.Content {
		if m.Content[i].Type == llm.BlockText {
			n += len(m.Content[i].Text)
		}
	}
	return n
}
