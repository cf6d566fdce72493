package streamwrap

import (
	"context"
	"time"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/streamwrap/repair"
)

// Options configure Chain. The zero value gives OpenClaw 2026.9.6's
// always-on chain with the extended repair profile, no allowlist, the
// unknown-tool threshold 10, no idle timeout and no diagnostics sink.
type Options struct {
	// Profile decides undecided tool-call arguments (ArgumentStage).
	Profile repair.Profile
	// LiveTools is the live tool allowlist (promotion, name trimming).
	LiveTools *Allowlist
	// ReplayTools is the replay allowlist of the sanitizer; nil means
	// LiveTools.
	ReplayTools *Allowlist
	// Policy is the transcript policy the replay sanitizer reads.
	Policy TranscriptPolicy
	// UnknownToolThreshold: 0 means DefaultUnknownToolThreshold (10);
	// negative turns the unknown-tool loop guard off.
	UnknownToolThreshold int
	// UnknownToolGuard holds the unknown-tool streak; nil gives the chain
	// its own (one chain per run).
	UnknownToolGuard *UnknownToolGuard
	// YieldDetected reports the run lifecycle's yieldDetected; nil turns
	// the yield-abort gate into a pass-through.
	YieldDetected func() bool
	// RepairLogf receives the argument repair's one-time warnings.
	RepairLogf func(format string, args ...any)
	// OutputText, when set, transforms visible output text (step 12).
	OutputText TextTransform
	// PayloadLog, when set, logs each request (step 13).
	PayloadLog *PayloadLog
	// IdleTimeout polices gaps between events; when zero and
	// FirstEventTimeout is positive, only stream creation is policed, with
	// FirstEventTimeout (OpenClaw's creation-only scope).
	IdleTimeout       time.Duration
	FirstEventTimeout time.Duration
	OnIdleTimeout     func(error)
	LastToolActivity  func() time.Time
	// IdleReuseContext is IdleConfig.ReuseContext.
	IdleReuseContext bool
	// IdleCallContext is IdleConfig.CallContext.
	IdleCallContext func(context.Context) context.CancelCauseFunc
	// Diagnostics receives model-call events; nil disables them.
	Diagnostics DiagnosticSink
	RunID       string
	PromptStats bool
}

// Chain wraps base in OpenClaw 2026.9.6's decorator chain
// (installEmbeddedAttemptStreamGuards, streamwrap.md §2), innermost first:
//
//	 0  ArgumentStage (the provider's own argument decision, by profile)
//	 6  YieldAbortGate
//	 7  SanitizeReplayToolCalls (replay allowlist)
//	 8  PromoteStandaloneTextToolCalls (live allowlist; nothing without one)
//	 9  TrimToolCallNames (live allowlist, unknown-tool threshold)
//	10  RepairMalformedToolCallArguments, when
//	    ShouldRepairMalformedToolCallArguments(provider, api) holds and the
//	    profile is not repair.ProfileOff (off means no repair at all)
//	11  DecodeHTMLEntityArguments, when the model has HTMLEntityArgs
//	12  TransformOutputText, when OutputText is set
//	13  PayloadLog, when set
//	14  HandleSensitiveStopReason; with the extended profile it first
//	    applies DropUnrepairedToolCalls at done: the per-call drop
//	    ArgumentStage defers to here, above every decorator that keeps
//	    per-content-index state (ocbench's, not OpenClaw's)
//	15  IdleTimeout (full), or creation-only with FirstEventTimeout
//	17  DiagnosticModelCallEvents
//
// Steps 10 and 11 are decided per call from the request's model. The
// returned function carries the unknown-tool streak of one agent run:
// build one chain per run.
//
// Per event, the layers that pass an event through untouched are fused into
// the layer above: the argument stage (0) and the stop-reason stage (14)
// are skipped on every event they do not act on (passer), and diagnostics
// (17) hand the idle timeout (15) only the events it records (over a
// provider that reports its reads, one per read) and the terminal ones.
func Chain(base llm.StreamFunc, o Options) llm.StreamFunc {
	extended := o.Profile == repair.ProfileExtended
	f := argumentStage(base, o.Profile, extended)
	f = YieldAbortGate(f, o.YieldDetected)
	replay := o.ReplayTools
	if replay == nil {
		replay = o.LiveTools
	}
	f = SanitizeReplayToolCalls(f, SanitizeConfig{ReplayAllowed: replay, Policy: o.Policy})
	f = PromoteStandaloneTextToolCalls(f, o.LiveTools)
	threshold := o.UnknownToolThreshold
	if threshold == 0 {
		threshold = DefaultUnknownToolThreshold
	}
	f = TrimToolCallNames(f, TrimConfig{Allowed: o.LiveTools, UnknownToolThreshold: threshold, Guard: o.UnknownToolGuard})
	if o.Profile != repair.ProfileOff {
		f = when(f, func(next llm.StreamFunc) llm.StreamFunc {
			return RepairMalformedToolCallArguments(next, RepairConfig{Logf: o.RepairLogf})
		}, func(req *llm.Request) bool {
			return RepairsToolCallArgs(&req.Model)
		})
	}
	f = when(f, DecodeHTMLEntityArguments, func(req *llm.Request) bool { return req.Model.HTMLEntityArgs })
	f = TransformOutputText(f, o.OutputText)
	if o.PayloadLog != nil {
		f = o.PayloadLog.Wrap(f)
	}
	f = handleSensitiveStopReason(f, extended)
	switch {
	case o.IdleTimeout > 0:
		f = IdleTimeout(f, IdleConfig{Timeout: o.IdleTimeout, Scope: IdleFull, OnIdleTimeout: o.OnIdleTimeout, LastToolActivity: o.LastToolActivity, ReuseContext: o.IdleReuseContext, CallContext: o.IdleCallContext})
	case o.FirstEventTimeout > 0:
		f = IdleTimeout(f, IdleConfig{Timeout: o.FirstEventTimeout, Scope: IdleCreationOnly, OnIdleTimeout: o.OnIdleTimeout, LastToolActivity: o.LastToolActivity, ReuseContext: o.IdleReuseContext, CallContext: o.IdleCallContext})
	}
	return DiagnosticModelCallEvents(f, DiagnosticsConfig{Sink: o.Diagnostics, RunID: o.RunID, PromptStats: o.PromptStats})
}

// when applies wrap to next for the calls cond accepts.
func when(next llm.StreamFunc, wrap func(llm.StreamFunc) llm.StreamFunc, cond func(*llm.Request) bool) llm.StreamFunc {
	w := wrap(next)
	return func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		if cond(req) {
			return w(ctx, req)
		}
		return next(ctx, req)
	}
}
