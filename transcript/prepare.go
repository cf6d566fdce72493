package transcript

import (
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
	rep := PrepareReport{In: len(msgs)}
	p := opts.Policy
	if isZeroPolicy(&p) {
		p = PolicyForAPI("")
	}
	msgs, rep.Pairing = sanitizeSessionHistory(msgs, p, opts.Now)
	if p.ValidateGeminiTurns {
		msgs = ValidateGeminiTurns(msgs)
	}
	if p.ValidateAnthropicTurns {
		msgs = ValidateAnthropicTurns(msgs)
	}
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
	n := len(msgs)
	msgs = FilterHeartbeatPairs(msgs, ack, prompt)
	rep.HeartbeatDropped = n - len(msgs)
	n = len(msgs)
	msgs = LimitHistoryTurns(msgs, opts.HistoryLimit)
	rep.LimitDropped = n - len(msgs)
	if p.RepairPairing {
		missing := ""
		if p.ResponsesAPI {
			missing = "aborted"
		}
		var pr PairingReport
		msgs, pr = RepairToolUseResultPairing(msgs, PairingOptions{DropErroredAssistants: true, MissingResultText: missing, Now: opts.Now})
		rep.Pairing.add(pr)
	}
	ctx := opts.ContextWindowTokens
	if ctx <= 0 {
		ctx = DefaultContextWindowTokens
	}
	msgs, rep.TruncatedToolResult = TruncateOversizedToolResults(msgs, LiveToolResultMaxChars(ctx, opts.ToolResultMaxChars))
	rep.Out = len(msgs)
	return msgs, rep
}

func isZeroPolicy(p *ReplayPolicy) bool {
	return p.API == "" && !p.StrictToolIDs && !p.DropThinkingBlocks && len(p.AllowedToolNames) == 0 &&
		!p.ValidateAnthropicTurns && !p.ValidateGeminiTurns && !p.RepairPairing && !p.ResponsesAPI
}
