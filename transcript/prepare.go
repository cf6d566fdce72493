package transcript

import (
	"slices"

	"github.com/ocbench/ocbench/llm"
)

// PrepareOptions configure Prepare. The zero value gives OpenClaw's
// defaults for an unknown API (pairing repair, no strict ids).
type PrepareOptions struct {
	// Policy is the replay policy; a zero Policy means PolicyForAPI("").
	Policy ReplayPolicy
	// HeartbeatPrompt is the configured heartbeat prompt; empty means
	// DefaultHeartbeatPrompt.
	HeartbeatPrompt string
	// HeartbeatAckMaxChars bounds a heartbeat ack; 0 means the default
	// (300), negative means 0.
	HeartbeatAckMaxChars int
	// HistoryLimit keeps only the last N user turns (0: unlimited); see
	// HistoryLimitFromSessionKey.
	HistoryLimit int
	// ContextWindowTokens is the model's window (0: 200000) and
	// ToolResultMaxChars the configured cap (0: 16000); together they give
	// the live tool-result cap (LiveToolResultMaxChars).
	ContextWindowTokens int
	ToolResultMaxChars  int
	// Now stamps synthetic tool results (Unix ms); nil means the clock.
	Now func() int64
}

// PrepareReport counts what Prepare changed.
type PrepareReport struct {
	In, Out             int           // messages before and after
	HeartbeatDropped    int           // messages removed as heartbeat pairs
	LimitDropped        int           // messages removed by the history limit
	Pairing             PairingReport // both pairing repairs (sanitize and step 5) summed
	TruncatedToolResult int
}

// Prepare runs OpenClaw's history preparation before a model call (spec
// §3.1 steps 2-6, then the live tool-result cap of §3.6), each step a
// function of this package:
//
//  1. SanitizeSessionHistory (policy);
//  2. turn validation: ValidateGeminiTurns then ValidateAnthropicTurns
//     [policy];
//  3. FilterHeartbeatPairs;
//  4. LimitHistoryTurns;
//  5. RepairToolUseResultPairing with errored assistants dropped and
//     "aborted" as the missing-result text for the Responses APIs
//     [policy.RepairPairing];
//  6. TruncateOversizedToolResults at LiveToolResultMaxChars.
//
// msgs is typically BuildContext's result; it is not modified.
func Prepare(msgs []llm.Message, opts PrepareOptions) ([]llm.Message, PrepareReport) {
	var st prepState
	out, rep, _ := st.stages(msgs, opts, false)
	return out, rep
}

// Preparer is Prepare for a conversation that grows at its end: after
// Prepare of a history, Extend of the messages appended to it gives what
// Prepare of the whole would, working on the new messages only, as long
// as no step of the preparation joins them to the messages before (a
// result after its call's next assistant turn, merged turns, a heartbeat
// pair, a new compaction summary) and no history limit applies; it
// reports false otherwise, and the caller prepares the whole again. The
// prepared history it returns is its own: valid until its next call,
// which may write after its last message (an append by the caller is
// allowed and overwritten), never before it.
type Preparer struct {
	opts PrepareOptions
	st   prepState
	raw  int // raw messages prepared
	out  []llm.Message
	rep  PrepareReport
	ok   bool // Extend may continue
}

// Prepare prepares msgs afresh (Prepare), keeping what Extend needs.
func (pr *Preparer) Prepare(msgs []llm.Message, opts PrepareOptions) ([]llm.Message, PrepareReport) {
	pr.st = prepState{seenSan: make(map[string]bool), seenRun: make(map[string]bool)}
	out, rep, _ := pr.st.stages(msgs, opts, false)
	if cap(pr.out) < len(out) {
		pr.out = make([]llm.Message, 0, len(out)+max(16, len(out)/4)) // room for Extend and the caller's appends
	}
	pr.out = append(pr.out[:0], out...)
	// The options are kept for Extend to compare, without the clock (a
	// caller's closure, which Extend is given anew).
	opts.Now = nil
	pr.opts, pr.raw, pr.rep, pr.ok = opts, len(msgs), rep, opts.HistoryLimit <= 0
	return pr.out, pr.rep
}

// callerRoom is the room Extend leaves after the prepared history for
// the caller's appends (a run's prompt and answer), which would otherwise
// copy the whole history when it ends at the array's end.
const callerRoom = 2

// Raw is the number of raw messages prepared so far: Extend takes those
// after them.
func (pr *Preparer) Raw() int { return pr.raw }

// Len is the number of prepared messages so far: those Extend keeps, in
// place, before what it adds.
func (pr *Preparer) Len() int { return len(pr.out) }

// Extend prepares more, the messages appended to the raw history since,
// with opts (those of the last Prepare but for Now, else Extend refuses),
// and returns the whole prepared history and its report (the report of a
// Prepare of the whole). On false nothing is returned and the Preparer
// must Prepare the whole history before it extends again.
func (pr *Preparer) Extend(more []llm.Message, opts PrepareOptions) ([]llm.Message, PrepareReport, bool) {
	if !pr.ok || !pr.sameOptions(&opts) {
		return nil, PrepareReport{}, false
	}
	seg, rep, ok := pr.st.stages(more, opts, true)
	if !ok {
		pr.ok = false
		return nil, PrepareReport{}, false
	}
	n := len(pr.out)
	if n+len(seg)+callerRoom > cap(pr.out) {
		// Room for runs more (and for what a caller appends), a quarter
		// more at least, so that a history growing by a few messages per
		// run is copied once in many runs.
		pr.out = append(make([]llm.Message, 0, n+len(seg)+max(16, n/4)), pr.out...)
	}
	pr.out = append(pr.out[:n], seg...)
	pr.raw += len(more)
	r := &pr.rep
	r.In += rep.In
	r.Out += rep.Out
	r.HeartbeatDropped += rep.HeartbeatDropped
	r.LimitDropped += rep.LimitDropped
	r.Pairing.add(rep.Pairing)
	r.TruncatedToolResult += rep.TruncatedToolResult
	return pr.out, pr.rep, true
}

// sameOptions reports whether o are the options of the last Prepare
// (Now aside).
func (pr *Preparer) sameOptions(o *PrepareOptions) bool {
	a, b := &pr.opts, o
	pa, pb := &a.Policy, &b.Policy
	return pa.API == pb.API && pa.StrictToolIDs == pb.StrictToolIDs && pa.DropThinkingBlocks == pb.DropThinkingBlocks &&
		slices.Equal(pa.AllowedToolNames, pb.AllowedToolNames) && pa.ValidateAnthropicTurns == pb.ValidateAnthropicTurns &&
		pa.ValidateGeminiTurns == pb.ValidateGeminiTurns && pa.RepairPairing == pb.RepairPairing && pa.ResponsesAPI == pb.ResponsesAPI &&
		a.HeartbeatPrompt == b.HeartbeatPrompt && a.HeartbeatAckMaxChars == b.HeartbeatAckMaxChars && a.HistoryLimit == b.HistoryLimit &&
		a.ContextWindowTokens == b.ContextWindowTokens && a.ToolResultMaxChars == b.ToolResultMaxChars
}

// prepState is what Prepare's steps carry from one part of a history to
// the next: the id rewrite's state, the ids of the results each pairing
// repair kept (nil maps: Prepare of one whole history), and what each
// step's output ended with (tails), by which a continuation checks that
// the steps do not join the parts.
type prepState struct {
	ids              idState
	seenSan, seenRun map[string]bool
	// allow is the set of allowed tool names (allowSet), once allowMade.
	allow     map[string]bool
	allowMade bool
	// changedSan and changedRun say those repairs changed the history so
	// far (see repairPairingAfter).
	changedSan, changedRun bool
	tails                  [nPrepTails]prepTail
}

// pairingChanged records whether a pairing repair changed the history
// (*changed: so far): false when it changed only the continuation, whose
// repair would then have rewritten the history before it too.
func (st *prepState) pairingChanged(changed *bool, rep PairingReport, cont bool) bool {
	if rep.Changed() && cont && !*changed {
		return false
	}
	*changed = *changed || rep.Changed()
	return true
}

// The steps' outputs whose ends a continuation checks.
const (
	tailInputs    = iota // after the input repairs (Responses pairing's input)
	tailIDs              // after the id rewrite (the other pairing's input)
	tailSanitize         // after sanitizeSessionHistory (turn validation's input)
	tailGemini           // after the Gemini turn validation
	tailAnthropic        // after the Anthropic turn validation (heartbeat's input)
	tailLimited          // after the history limit (the last pairing's input)
	nPrepTails
)

// prepTail is the last message and the last assistant message of the
// output of a step so far.
type prepTail struct {
	last, asst       llm.Message
	hasLast, hasAsst bool
}

func (t *prepTail) add(seg []llm.Message) {
	if len(seg) == 0 {
		return
	}
	t.last, t.hasLast = seg[len(seg)-1], true
	for i := len(seg) - 1; i >= 0; i-- {
		if seg[i].Role == llm.RoleAssistant {
			t.asst, t.hasAsst = seg[i], true
			return
		}
	}
}

// lastIs reports whether the output so far ends with a message of role r.
func (t *prepTail) lastIs(r llm.Role) bool { return t.hasLast && t.last.Role == r }

// spanEnds reports whether a pairing repair of the output so far leaves
// no assistant turn waiting for results: its last assistant message has
// no tool call with an id, or failed (no results are looked for).
func (t *prepTail) spanEnds() bool {
	if !t.hasAsst || t.asst.StopReason == llm.StopError || t.asst.StopReason == llm.StopAborted {
		return true
	}
	return !hasCallWithID(&t.asst)
}

func hasCallWithID(m *llm.Message) bool {
	for i := range m.Content {
		if b := &m.Content[i]; b.Type == llm.BlockToolCall && len(b.ID) > 0 {
			return true
		}
	}
	return false
}

// sanitize is sanitizeSessionHistory as a step of stages.
func (st *prepState) sanitize(msgs []llm.Message, p ReplayPolicy, now func() int64, cont bool) (_ []llm.Message, rep PairingReport, ok bool) {
	t := &st.tails
	msgs = NormalizeAssistantReplayContent(msgs)
	if p.DropThinkingBlocks {
		msgs = DropThinkingBlocks(msgs)
	}
	if !st.allowMade {
		// The same names for every part: the set is made once.
		st.allow, st.allowMade = allowSet(p.AllowedToolNames), true
	}
	msgs, _, _ = repairToolCallInputs(msgs, st.allow)
	if p.ResponsesAPI && p.RepairPairing {
		if cont && !t[tailInputs].spanEnds() {
			return nil, rep, false
		}
		t[tailInputs].add(msgs)
		msgs, rep = repairPairingAfter(msgs, PairingOptions{MissingResultText: "aborted", Now: now}, st.seenSan, st.changedSan)
		if !st.pairingChanged(&st.changedSan, rep, cont) {
			return nil, rep, false
		}
	}
	if p.StrictToolIDs {
		msgs = st.ids.rewrite(msgs)
	}
	if !p.ResponsesAPI && p.RepairPairing {
		if cont && !t[tailIDs].spanEnds() {
			return nil, rep, false
		}
		t[tailIDs].add(msgs)
		msgs, rep = repairPairingAfter(msgs, PairingOptions{Now: now}, st.seenSan, st.changedSan)
		if !st.pairingChanged(&st.changedSan, rep, cont) {
			return nil, rep, false
		}
	}
	if !cont {
		return ZeroUsageBeforeCompaction(msgs), rep, true
	}
	// A new compaction summary would zero the usage of what came before.
	for i := range msgs {
		if IsCompactionSummary(&msgs[i]) {
			return nil, rep, false
		}
	}
	return msgs, rep, true
}

// stages runs Prepare's steps on msgs: the whole history, or (cont) the
// messages after those st has seen, giving their part of the prepared
// whole; ok is false when a step would join them to the messages before.
func (st *prepState) stages(msgs []llm.Message, opts PrepareOptions, cont bool) (_ []llm.Message, rep PrepareReport, ok bool) {
	rep.In = len(msgs)
	p := opts.Policy
	if isZeroPolicy(&p) {
		p = PolicyForAPI("")
	}
	msgs, rep.Pairing, ok = st.sanitize(msgs, p, opts.Now, cont)
	if !ok {
		return nil, rep, false
	}
	t := &st.tails
	// Turn validation.
	if p.ValidateGeminiTurns {
		if cont && len(msgs) > 0 && msgs[0].Role == llm.RoleAssistant && t[tailSanitize].lastIs(llm.RoleAssistant) {
			return nil, rep, false
		}
		t[tailSanitize].add(msgs)
		msgs = ValidateGeminiTurns(msgs)
	}
	if p.ValidateAnthropicTurns {
		g := &t[tailGemini]
		if cont && (g.hasAsst && hasCallWithID(&g.asst) || len(msgs) > 0 && msgs[0].Role == llm.RoleUser && g.lastIs(llm.RoleUser)) {
			return nil, rep, false
		}
		g.add(msgs)
		msgs = ValidateAnthropicTurns(msgs)
	}
	// Heartbeat pairs.
	prompt := opts.HeartbeatPrompt
	if prompt == "" {
		prompt = DefaultHeartbeatPrompt
	}
	ack := opts.HeartbeatAckMaxChars
	switch {
	case ack == 0:
		ack = DefaultHeartbeatAckMaxChars
	case ack < 0:
		ack = 0
	}
	if a := &t[tailAnthropic]; cont && a.hasLast && IsHeartbeatUserMessage(&a.last, prompt) {
		return nil, rep, false
	}
	t[tailAnthropic].add(msgs)
	n := len(msgs)
	msgs = FilterHeartbeatPairs(msgs, ack, prompt)
	rep.HeartbeatDropped = n - len(msgs)
	n = len(msgs)
	if cont && opts.HistoryLimit > 0 {
		return nil, rep, false
	}
	msgs = LimitHistoryTurns(msgs, opts.HistoryLimit)
	rep.LimitDropped = n - len(msgs)
	if p.RepairPairing {
		if cont && !t[tailLimited].spanEnds() {
			return nil, rep, false
		}
		t[tailLimited].add(msgs)
		missing := ""
		if p.ResponsesAPI {
			missing = "aborted"
		}
		var pr PairingReport
		msgs, pr = repairPairingAfter(msgs, PairingOptions{DropErroredAssistants: true, MissingResultText: missing, Now: opts.Now}, st.seenRun, st.changedRun)
		if !st.pairingChanged(&st.changedRun, pr, cont) {
			return nil, rep, false
		}
		rep.Pairing.add(pr)
	}
	ctx := opts.ContextWindowTokens
	if ctx <= 0 {
		ctx = DefaultContextWindowTokens
	}
	msgs, rep.TruncatedToolResult = TruncateOversizedToolResults(msgs, LiveToolResultMaxChars(ctx, opts.ToolResultMaxChars))
	rep.Out = len(msgs)
	return msgs, rep, true
}

func isZeroPolicy(p *ReplayPolicy) bool {
	return p.API == "" && !p.StrictToolIDs && !p.DropThinkingBlocks && len(p.AllowedToolNames) == 0 &&
		!p.ValidateAnthropicTurns && !p.ValidateGeminiTurns && !p.RepairPairing && !p.ResponsesAPI
}
