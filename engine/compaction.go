package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/tokenize"
)

// Compaction defaults (OpenClaw 2026.5.7 with pi-coding-agent 0.73).
const (
	DefaultContextTokenBudget = 200000 // context window when the model's is unknown
	PiReserveTokens           = 16384  // pi's compaction reserve
	DefaultReserveTokensFloor = 20000  // agents.defaults.compaction.reserveTokensFloor
	DefaultKeepRecentTokens   = 20000  // pi's keepRecentTokens
	DefaultToolResultMaxChars = 16000  // contextLimits.toolResultMaxChars
	DefaultCompactionTimeout  = 900 * time.Second
	MaxSummaryChars           = 16000            // merged summary cap
	DefaultAggregateTimeout   = 60 * time.Second // COMPACTION_RETRY_AGGREGATE_TIMEOUT_MS
)

// Compaction triggers.
const (
	TriggerPreemptive = "preemptive"
	TriggerOverflow   = "overflow"
	TriggerManual     = "manual"
	TriggerThreshold  = "threshold"
)

// ErrCompactionTimeout is the error of a compaction that did not finish
// within CompactionOptions.Timeout; the run proceeds on the
// pre-compaction state.
var ErrCompactionTimeout = errors.New("engine: compaction timed out")

// ErrNothingToCompact means the history has no conversation before the
// kept recent part, so there is nothing to summarise.
var ErrNothingToCompact = errors.New("engine: nothing to compact")

// CompactionOptions configure the preemptive check and compaction.
type CompactionOptions struct {
	// Disabled turns compaction off: the run proceeds as if it timed out.
	Disabled bool
	// ReserveTokens is compaction.reserveTokens (used when larger than the
	// floor); ReserveTokensFloor defaults to 20000.
	ReserveTokens      int
	ReserveTokensFloor int
	// KeepRecentTokens is how much recent conversation compaction keeps
	// verbatim (default 20000, estimated).
	KeepRecentTokens int
	// ToolResultMaxChars caps one tool result (default 16000).
	ToolResultMaxChars int
	// Timeout is the safety timeout of one compaction (default 15 min, as
	// compaction.timeoutSeconds). When it fires, the run goes on with the
	// pre-compaction state and says so in Result.
	Timeout time.Duration
	// AggregateTimeout bounds how long a run waits, after its last turn,
	// for the threshold compaction (OpenClaw's compaction-retry aggregate
	// timeout, default 60s); the run then ends on the pre-compaction state.
	AggregateTimeout time.Duration
	// Instructions are appended to the summary request.
	Instructions string
}

func (o *CompactionOptions) setDefaults() {
	if o.ReserveTokensFloor <= 0 {
		o.ReserveTokensFloor = DefaultReserveTokensFloor
	}
	if o.KeepRecentTokens <= 0 {
		o.KeepRecentTokens = DefaultKeepRecentTokens
	}
	if o.ToolResultMaxChars <= 0 {
		o.ToolResultMaxChars = DefaultToolResultMaxChars
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultCompactionTimeout
	}
	if o.AggregateTimeout <= 0 {
		o.AggregateTimeout = DefaultAggregateTimeout
	}
}

// CompactionOutcome says what a compaction attempt did.
type CompactionOutcome struct {
	Attempted bool
	Compacted bool
	TimedOut  bool
	Trigger   string // preemptive, overflow, manual
	Route     PreemptiveRoute
	// Reason explains an attempt that did not compact, in OpenClaw's words
	// where it has them.
	Reason           string
	Summary          string
	FirstKeptEntryID string
	TokensBefore     int
	TokensAfter      int
	Attempts         int
	Duration         time.Duration
	Err              error
}

// PreemptiveRoute is the outcome of the pre-prompt budget check.
type PreemptiveRoute uint8

const (
	RouteFits PreemptiveRoute = iota
	RouteTruncateToolResultsOnly
	RouteCompactThenTruncate
	RouteCompactOnly
)

var routeNames = [...]string{"fits", "truncate_tool_results_only", "compact_then_truncate", "compact_only"}

func (r PreemptiveRoute) String() string {
	if int(r) < len(routeNames) {
		return routeNames[r]
	}
	return "unknown"
}

// PreemptiveInput are the budget inputs of the decision.
type PreemptiveInput struct {
	// ContextTokenBudget is the model's context window (default 200000).
	ContextTokenBudget int
	// ReserveTokens is the resolved reserve (see ResolveReserveTokens).
	ReserveTokens int
	// ToolResultMaxChars caps one tool result (default 16000).
	ToolResultMaxChars int
}

// PreemptiveDecision is shouldPreemptivelyCompactBeforePrompt's answer.
type PreemptiveDecision struct {
	Route                     PreemptiveRoute
	ShouldCompact             bool
	EstimatedPromptTokens     int
	PromptBudgetBeforeReserve int
	OverflowTokens            int
	ToolResultReducibleChars  int
	EffectiveReserveTokens    int
}

func minPromptBudget(budget int) int { return min(8000, max(1, budget/2)) }

// ResolveReserveTokens returns the reserve OpenClaw uses for a budget:
// pi's 16384 raised to the floor (itself capped at budget − min prompt
// budget), or the configured reserve when that is larger.
func ResolveReserveTokens(budget int, o CompactionOptions) int {
	o.setDefaults()
	if budget <= 0 {
		budget = DefaultContextTokenBudget
	}
	floor := min(o.ReserveTokensFloor, max(0, budget-minPromptBudget(budget)))
	reserve := max(PiReserveTokens, floor)
	if o.ReserveTokens > reserve {
		reserve = o.ReserveTokens
	}
	return reserve
}

// EstimateTokens returns pi's chars/4 estimate of m: what package
// tokenize's estimator gives for the message's transcript JSON
// (tokenize.EstimateMessageJSON of m.AppendJSON), counted on the message
// itself. Only a tool call's arguments are parsed (pi counts them
// re-serialized); arguments that are not one strict JSON value, or hold
// line breaks or tabs (which the transcript encoding compacts), take the
// JSON path. buf is scratch space; the grown buffer is returned for reuse.
func EstimateTokens(m *llm.Message, buf []byte) (int, []byte) {
	tokens, _, buf := measureMessage(m, buf, false)
	return tokens, buf
}

// measureMessage is EstimateTokens(m) and, with guard, guardChars(m) too,
// each text measured once for both.
func measureMessage(m *llm.Message, buf []byte, withGuard bool) (tokens, guard int, _ []byte) {
	switch m.Role {
	case llm.RoleUser, llm.RoleAssistant, llm.RoleToolResult:
	default:
		return 0, 256, buf
	}
	assistant := m.Role == llm.RoleAssistant
	chars := 0
	for i := range m.Content {
		b := &m.Content[i]
		switch b.Type {
		case llm.BlockText:
			u := tokenize.UTF16LenBytes(b.Text)
			chars += u
			guard += u
		case llm.BlockThinking:
			if assistant {
				u := tokenize.UTF16LenBytes(b.Text)
				chars += u
				guard += u
			}
		case llm.BlockImage:
			switch m.Role {
			case llm.RoleToolResult:
				chars += tokenize.ImageChars
			case llm.RoleUser:
				guard += 8000
			}
		case llm.BlockToolCall:
			// Arguments that are not JSON spoil the message in any role;
			// those holding line breaks or tabs are compacted by the
			// transcript encoding first. Both take the JSON path.
			n := len("{}")
			if len(b.Arguments) > 0 {
				ok := bytes.IndexAny(b.Arguments, "\n\r\t") < 0
				if ok {
					n, buf, ok = tokenize.JSONValueChars(b.Arguments, buf)
				}
				if !ok {
					tokens, buf = estimateTokensJSON(m, buf)
					if withGuard {
						guard = guardChars(m)
					}
					return tokens, guard, buf
				}
			}
			if assistant {
				chars += tokenize.UTF16LenBytes(b.Name) + n
				if withGuard {
					if len(b.Arguments) == 0 {
						guard += 2
					} else {
						guard += tokenize.UTF16LenBytes(b.Arguments)
					}
				}
			}
		}
	}
	if m.Role == llm.RoleToolResult {
		guard *= 2 // tool results count twice their text
	}
	return tokenize.Estimate(chars), guard, buf
}

// estimateTokensJSON is EstimateTokens through the transcript JSON.
func estimateTokensJSON(m *llm.Message, buf []byte) (int, []byte) {
	buf = m.AppendJSON(buf[:0])
	n, err := tokenize.EstimateMessageJSON(buf)
	if err != nil {
		return 0, buf
	}
	return n, buf
}

// EstimatePromptTokens is the preemptive estimate:
// ceil(1.2 × (Σ estimate(history) + estimate(prompt))). The system prompt
// counts 0 tokens, as in OpenClaw (pi's estimator ignores role "system").
func EstimatePromptTokens(history []llm.Message, prompt *llm.Message) int {
	var buf []byte
	sum := 0
	for i := range history {
		var n int
		n, buf = EstimateTokens(&history[i], buf)
		sum += n
	}
	if prompt != nil {
		n, _ := EstimateTokens(prompt, buf)
		sum += n
	}
	return tokenize.WithSafety(sum)
}

// DecidePreemptive routes a prompt before it is sent (spec §3.5): fits,
// truncate tool results only, compact then truncate, or compact only.
func DecidePreemptive(history []llm.Message, prompt *llm.Message, in PreemptiveInput) PreemptiveDecision {
	return decidePreemptive(EstimatePromptTokens(history, prompt), history, in)
}

// decidePreemptive is DecidePreemptive with the estimate made.
func decidePreemptive(est int, history []llm.Message, in PreemptiveInput) PreemptiveDecision {
	budget := in.ContextTokenBudget
	if budget <= 0 {
		budget = DefaultContextTokenBudget
	}
	maxChars := in.ToolResultMaxChars
	if maxChars <= 0 {
		maxChars = DefaultToolResultMaxChars
	}
	reserve := min(max(in.ReserveTokens, 0), max(0, budget-minPromptBudget(budget)))
	promptBudget := max(1, budget-reserve)
	d := PreemptiveDecision{
		EstimatedPromptTokens:     est,
		PromptBudgetBeforeReserve: promptBudget,
		OverflowTokens:            max(0, est-promptBudget),
		EffectiveReserveTokens:    reserve,
	}
	if d.OverflowTokens == 0 {
		return d
	}
	d.ToolResultReducibleChars = toolResultReducibleChars(history, maxChars)
	if d.ToolResultReducibleChars <= 0 {
		d.Route, d.ShouldCompact = RouteCompactOnly, true
		return d
	}
	overflowChars := d.OverflowTokens * tokenize.CharsPerToken
	threshold := max(overflowChars+2048, (overflowChars*3+1)/2)
	if d.ToolResultReducibleChars >= threshold {
		d.Route = RouteTruncateToolResultsOnly
		return d
	}
	d.Route, d.ShouldCompact = RouteCompactThenTruncate, true
	return d
}

// preemptive runs the decision before the prompt and acts on it.
func (r *runner) preemptive(ctx context.Context, prompt *llm.Message) error {
	p := r.p
	budget := p.Model.ContextWindow
	if budget <= 0 {
		budget = DefaultContextTokenBudget
	}
	in := PreemptiveInput{
		ContextTokenBudget: budget,
		ReserveTokens:      ResolveReserveTokens(budget, p.Compaction),
		ToolResultMaxChars: liveToolResultMaxChars(budget, p.Compaction.ToolResultMaxChars),
	}
	d := decidePreemptive(r.estimatePrompt(prompt), r.hist, in)
	r.res.Preemptive = d
	switch d.Route {
	case RouteFits:
		return nil
	case RouteTruncateToolResultsOnly:
		n := r.truncateToolResults(in.ToolResultMaxChars)
		r.note("preemptive check: %d tokens over budget; truncated %d tool results", d.OverflowTokens, n)
		return nil
	}
	out := r.compact(ctx, TriggerPreemptive, d.Route)
	if d.Route == RouteCompactThenTruncate {
		if n := r.truncateToolResults(in.ToolResultMaxChars); n > 0 {
			r.note("truncated %d tool results after compaction", n)
		}
	}
	if err := ctx.Err(); err != nil && !out.Compacted {
		r.res.Aborted = true
		return err
	}
	return nil
}

// compact summarises the older part of the session through the model. It
// runs the summary request in the background and waits at most the safety
// timeout; on timeout it cancels the request and the run proceeds on the
// pre-compaction state, which the outcome says.
func (r *runner) compact(ctx context.Context, trigger string, route PreemptiveRoute) CompactionOutcome {
	return r.compactWithin(ctx, trigger, route, r.p.Compaction.Timeout)
}

// compactWithin is compact with an explicit wait limit.
func (r *runner) compactWithin(ctx context.Context, trigger string, route PreemptiveRoute, timeout time.Duration) (out CompactionOutcome) {
	p := r.p
	start := time.Now()
	out = CompactionOutcome{Attempted: true, Trigger: trigger, Route: route, Attempts: r.res.Compaction.Attempts + 1}
	defer func() {
		out.Reason, out.Err = r.red.String(out.Reason), r.red.Error(out.Err)
		out.Duration = time.Since(start)
		r.res.Compaction = out
		r.res.Compactions = append(r.res.Compactions, out)
		r.emit(EventCompactionEnd, func(e *Event) { e.Compaction = &out })
	}()
	r.emit(EventCompactionStart, func(e *Event) { e.Compaction = &out })
	if p.Compaction.Disabled {
		out.Reason = "compaction disabled: proceeding with pre-compaction state"
		return out
	}
	older, firstKept, ok := r.sess.planCompaction(p.Compaction.KeepRecentTokens)
	if !ok || len(older) == 0 {
		out.Reason = "nothing to compact: no conversation before the kept recent messages"
		out.Err = ErrNothingToCompact
		return out
	}
	out.FirstKeptEntryID = firstKept
	out.TokensBefore = EstimatePromptTokens(r.sess.messages(), nil)
	type done struct {
		summary string
		err     error
	}
	cctx, cancel := context.WithCancel(ctx)
	ch := make(chan done, 1)
	req := r.req // copy: the summary call has its own messages
	go func() {
		s, err := summarize(cctx, r.base, &req, older, p.Compaction.Instructions)
		ch <- done{s, err}
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	var d done
	select {
	case d = <-ch:
		cancel()
	case <-t.C:
		cancel()
		out.TimedOut = true
		out.Err = ErrCompactionTimeout
		if trigger == TriggerThreshold {
			out.Reason = fmt.Sprintf("compaction retry aggregate timeout (%dms): proceeding with pre-compaction state", timeout.Milliseconds())
		} else {
			out.Reason = fmt.Sprintf("compaction timeout (%dms): proceeding with pre-compaction state", timeout.Milliseconds())
		}
		r.note("%s", out.Reason)
		return out
	case <-ctx.Done():
		cancel()
		out.Err = ctx.Err()
		out.Reason = "compaction aborted: proceeding with pre-compaction state"
		return out
	}
	if d.err != nil {
		out.Err = d.err
		out.Reason = "compaction failed: " + d.err.Error()
		r.note("%s", out.Reason)
		return out
	}
	d.summary = r.red.String(d.summary)
	msgs, err := r.sess.commitCompaction(d.summary, firstKept, out.TokensBefore)
	if err != nil {
		out.Err = err
		out.Reason = "compaction could not be written: " + err.Error()
		return out
	}
	r.takeNotes()
	out.Compacted = true
	out.Summary = d.summary
	r.setHist(r.prepareHistory(msgs))
	out.TokensAfter = EstimatePromptTokens(r.hist, nil)
	return out
}

const summarySystemPrompt = "You summarize conversations between a user and an AI agent so that the agent can continue the work from the summary alone. Do not continue the conversation and do not answer questions in it: output only the summary."

const summaryInstruction = `Summarize the conversation above for the agent that will continue it. Use these sections:

## Goal
## Constraints and preferences
## Progress (done, in progress, blocked)
## Key decisions
## Next steps
## Critical context (files, commands, errors, values)

Keep every identifier exactly as written (ids, hashes, paths, file names, URLs, hosts, ports, versions): never shorten or reconstruct them.`

// summarize asks the model for a summary of msgs and returns its text.
func summarize(ctx context.Context, fn llm.StreamFunc, base *llm.Request, msgs []llm.Message, extra string) (string, error) {
	instr := summaryInstruction
	if strings.TrimSpace(extra) != "" {
		instr += "\n\nAdditional instructions: " + strings.TrimSpace(extra)
	}
	req := llm.Request{
		Model:     base.Model,
		System:    summarySystemPrompt,
		Messages:  append(append(make([]llm.Message, 0, len(msgs)+1), msgs...), llm.TextMessage(llm.RoleUser, instr)),
		SessionID: base.SessionID,
		APIKey:    base.APIKey,
		// Transport options only: a tool choice or response format
		// would shape the summary.
		Options: llm.RequestOptions{Headers: base.Options.Headers, ExtraBody: base.Options.ExtraBody},
	}
	s, err := fn(ctx, &req)
	if err != nil {
		return "", fmt.Errorf("summary request: %w", err)
	}
	defer s.Close()
	m, err := llm.Drain(s)
	if err != nil {
		return "", fmt.Errorf("summary request: %w", err)
	}
	if m.StopReason == llm.StopError || m.StopReason == llm.StopAborted {
		return "", fmt.Errorf("summary request: %s", m.ErrorMessage)
	}
	text := strings.TrimSpace(m.TextContent())
	if text == "" {
		return "", errors.New("summary request: the model returned no text")
	}
	if len(text) > MaxSummaryChars {
		cut := MaxSummaryChars
		for cut > 0 && text[cut]&0xC0 == 0x80 {
			cut--
		}
		text = text[:cut]
	}
	return text, nil
}

// CompactSession compacts p's session through the model now (OpenClaw's
// manual /compact), without a prompt: it opens the session under its
// lock, summarises everything before the kept recent part, writes the
// compaction entry and closes the session.
func CompactSession(ctx context.Context, p *Params) (CompactionOutcome, error) {
	q := *p
	q.setDefaults()
	var res Result
	r := runner{p: &q, res: &res, red: runRedactor(&q)}
	defer r.close()
	if err := r.setup(); err != nil {
		return CompactionOutcome{Err: err, Reason: err.Error()}, err
	}
	out := r.compact(ctx, TriggerManual, RouteCompactOnly)
	return out, out.Err
}

// ContextTokens is pi's context size after a turn: the last assistant
// message's reported usage (totalTokens, else the sum of its parts) plus
// the estimates of the messages after it. ok is false when no assistant
// message reported usage.
func ContextTokens(msgs []llm.Message) (tokens int, ok bool) { return contextTokensAfter(msgs, nil) }

// contextTokensAfter is ContextTokens of msgs whose first lp.est messages
// are lp's estimated history (lp nil: none): those are not estimated
// again.
func contextTokensAfter(msgs []llm.Message, lp *livePrep) (tokens int, ok bool) {
	var buf []byte
	later, stop := 0, 0
	if lp != nil {
		stop = lp.est
	}
	for i := len(msgs) - 1; i >= stop; i-- {
		m := &msgs[i]
		if t := usageTokens(m); t > 0 {
			return t + later, true
		}
		var n int
		n, buf = EstimateTokens(m, buf)
		later += n
	}
	if lp == nil || lp.lastUsage < 0 {
		return 0, false
	}
	k := lp.lastUsage
	return usageTokens(&msgs[k]) + lp.tokens[lp.est] - lp.tokens[k+1] + later, true
}

// usageTokens is the context size an assistant message's usage reports
// (0 for other messages and failed turns).
func usageTokens(m *llm.Message) int {
	if m.Role != llm.RoleAssistant || m.StopReason == llm.StopError || m.StopReason == llm.StopAborted {
		return 0
	}
	u := &m.Usage
	t := u.TotalTokens
	if t == 0 {
		t = u.Input + u.Output + u.CacheRead + u.CacheWrite
	}
	return int(max(t, 0))
}

// thresholdCompaction is pi's auto-compaction after a run: when the
// context exceeds the window minus the reserve, the session is compacted
// for the next run. The run waits at most the aggregate timeout, then ends
// on the pre-compaction state and says so.
func (r *runner) thresholdCompaction(ctx context.Context) {
	p := r.p
	if p.Compaction.Disabled {
		return
	}
	window := p.Model.ContextWindow
	if window <= 0 {
		window = DefaultContextTokenBudget
	}
	// The reserve is clamped as in the preemptive check, so that a small
	// window keeps a usable prompt budget instead of compacting every run.
	reserve := min(ResolveReserveTokens(window, p.Compaction), max(0, window-minPromptBudget(window)))
	tokens, ok := contextTokensAfter(r.hist, r.live)
	if !ok || tokens <= window-reserve {
		return
	}
	r.compactWithin(ctx, TriggerThreshold, RouteCompactOnly, min(p.Compaction.Timeout, p.Compaction.AggregateTimeout))
}
