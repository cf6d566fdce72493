package engine

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ocbench/ocbench/prompt"
	"github.com/ocbench/ocbench/provider"

	"github.com/ocbench/ocbench/streamwrap"
	"github.com/ocbench/ocbench/streamwrap/repair"
	"github.com/ocbench/ocbench/transcript"

	"github.com/ocbench/ocbench/llm"
)

// StreamOptions configure the decorator chain the run wraps the provider
// in (streamwrap.Chain). LiveTools defaults to the run's tools and
// LastToolActivity to the end of the run's last tool call; a zero
// IdleTimeout is resolved as OpenClaw resolves it for the model's endpoint
// (streamwrap.ResolveIdleTimeout), a negative one turns it off.
type StreamOptions = streamwrap.Options

// PromptOptions are the prompt inputs a run does not derive itself.
type PromptOptions struct {
	// Config is the prompt resolver's configuration (session key, agent,
	// bootstrap and skills settings, runtime line). Nil means a plain
	// main-agent configuration. The run sets the tool names and the model.
	Config *prompt.Config
	// Renderer renders the prompt; share one with a prefix cache across
	// runs so the stable prefix is rendered once. Nil renders uncached.
	Renderer *prompt.Renderer
	// Resolver reads the workspace (bootstrap files, skills) and caches
	// what it read by (path, size, mtime, device, inode). Nil uses one
	// shared by every run in the process.
	Resolver *prompt.Resolver
}

// sharedResolver is the workspace cache of runs that bring none.
var sharedResolver prompt.Resolver

var defaultClient = sync.OnceValues(func() (*provider.Client, error) { return provider.NewClient() })

// resolveProvider returns package provider's HTTP transport for p.Model
// (API keys come from the environment unless p.APIKey is set).
func resolveProvider(p *Params) (llm.StreamFunc, error) {
	if p.Model.API == "" {
		return nil, fmt.Errorf("%w: Params.Model.API is empty and no StreamFunc was given", ErrNoProvider)
	}
	if _, ok := provider.WireOf(p.Model.API); !ok {
		return nil, fmt.Errorf("%w: api %q", ErrNoProvider, p.Model.API)
	}
	c, err := defaultClient()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoProvider, err)
	}
	return c.Stream, nil
}

// buildSystemPrompt returns the system prompt and the byte offset where
// its stable (cacheable) prefix ends: Params.SystemPrompt as given, or,
// when Params.OpenClawPrompt chose it, OpenClaw's prompt rendered by
// package prompt for the workspace (bootstrap files, skills), the run's
// tools and model.
func buildSystemPrompt(p *Params, ws *Workspace, tools []string) (string, int, error) {
	if !p.OpenClawPrompt {
		return p.SystemPrompt, min(max(p.CacheBoundary, 0), len(p.SystemPrompt)), nil
	}
	var cfg prompt.Config
	if p.PromptOptions.Config != nil {
		cfg = *p.PromptOptions.Config
	}
	cfg.Base.ToolNames = tools
	if p.Model.ID != "" {
		model := p.Model.ID
		if p.Model.Provider != "" {
			model = p.Model.Provider + "/" + p.Model.ID
		}
		cfg.Base.Runtime.Model = model
		if cfg.Base.Runtime.DefaultModel == "" {
			cfg.Base.Runtime.DefaultModel = model
		}
	}
	rd := p.PromptOptions.Renderer
	if ws != nil {
		rs := p.PromptOptions.Resolver
		if rs == nil {
			rs = &sharedResolver
		}
		// A warm run of an unchanged workspace gets the prompt the last
		// such run rendered, after a stat of each file it depends on.
		s, stable, err := rs.PromptIn(&cfg, ws.dir, ws.openRoot, rd)
		if err != nil {
			return "", 0, fmt.Errorf("engine: system prompt: %w", err)
		}
		return s, stable, nil
	}
	if rd == nil {
		rd = &prompt.Renderer{}
	}
	buf, lay, err := rd.AppendPrompt(nil, &cfg.Base)
	if err != nil {
		return "", 0, fmt.Errorf("engine: system prompt: %w", err)
	}
	return string(buf), lay.StableLen, nil
}

// runChain is a run's decorator chain (streamwrap.Chain) and the state it
// keeps for the run: the provider it calls, when the last tool call
// ended (the idle timer's tool activity, read on the run's goroutine),
// the unknown-tool streak.
type runChain struct {
	fn       llm.StreamFunc
	base     llm.StreamFunc
	lastTool time.Time
	guard    streamwrap.UnknownToolGuard
	// pool, when set, takes the chain back at the end of the run.
	pool *sync.Pool
	// san is the replay sanitizer's memo of the run's history when the
	// session keeps none (see runner.san).
	san streamwrap.ReplayMemo
	// run is the runner the chain serves (nil while pooled).
	run *runner
}

// callCancel is the chain's IdleCallContext: the cancel function of ctx
// when it is the current call context of the chain's run, which the idle
// timer may then cancel instead of deriving a context of its own.
func (rc *runChain) callCancel(ctx context.Context) context.CancelCauseFunc {
	if r := rc.run; r != nil {
		if c := r.call.Load(); c != nil && c.ctx == ctx {
			return c.cancel
		}
	}
	return nil
}

// chainKey is what a pooled chain was built with besides its tool set.
type chainKey struct {
	profile          repair.Profile
	policy           streamwrap.TranscriptPolicy
	threshold        int
	idle, firstEvent time.Duration
}

// pooledChain reports whether a chain of o can be shared by runs one
// after another: o holds nothing of a caller's (functions, sinks,
// allowlists, a guard) that the key cannot compare.
func pooledChain(o *StreamOptions) bool {
	return o.LiveTools == nil && o.ReplayTools == nil && o.UnknownToolGuard == nil && o.YieldDetected == nil &&
		o.RepairLogf == nil && o.OutputText == nil && o.PayloadLog == nil && o.OnIdleTimeout == nil &&
		o.LastToolActivity == nil && o.Diagnostics == nil
}

// wrapStream wraps fn in the decorator chain. A chain carries the run's
// unknown-tool streak and its idle timer's state, so a run has one of
// its own: built for it or, when its options allow (pooledChain), taken
// from the chains earlier runs of the same tools and options left, with
// that state reset.
func (r *runner) wrapStream(fn llm.StreamFunc, ts *toolSet) llm.StreamFunc {
	o := r.p.Stream
	switch {
	case o.IdleTimeout < 0:
		o.IdleTimeout = 0
	case o.IdleTimeout == 0:
		// OpenClaw's defaults: 120s for cloud endpoints, 300s for
		// self-hosted ones, off for local ones (loopback included).
		idle, first := idleTimeoutsOf(r.p.Model)
		o.IdleTimeout = idle
		if o.FirstEventTimeout == 0 {
			o.FirstEventTimeout = first
		}
	}
	var rc *runChain
	if pooledChain(&o) {
		key := chainKey{profile: o.Profile, policy: o.Policy, threshold: o.UnknownToolThreshold, idle: o.IdleTimeout, firstEvent: o.FirstEventTimeout}
		pool := ts.chainPool(key)
		if rc, _ = pool.Get().(*runChain); rc == nil {
			rc = newRunChain(o, ts.allowlist())
			rc.pool = pool
		}
	} else {
		rc = newRunChain(o, nil)
	}
	rc.base, rc.lastTool, rc.guard, rc.run = fn, time.Time{}, streamwrap.UnknownToolGuard{}, r
	r.chain = rc
	return rc.fn
}

// idleMemo is the idle timeouts OpenClaw resolves for a model
// (streamwrap.ResolveIdleTimeout and ResolveFirstEventTimeout, pure
// functions of it that scan its strings), kept for the last model.
type idleMemo struct {
	model       llm.Model
	idle, first time.Duration
}

var lastIdle atomic.Pointer[idleMemo]

func idleTimeoutsOf(m llm.Model) (idle, first time.Duration) {
	if c := lastIdle.Load(); c != nil && c.model == m {
		return c.idle, c.first
	}
	in := streamwrap.IdleTimeoutInput{Model: m}
	c := &idleMemo{model: m, idle: streamwrap.ResolveIdleTimeout(in), first: streamwrap.ResolveFirstEventTimeout(in)}
	lastIdle.Store(c)
	return c.idle, c.first
}

// chainPool returns the pool of the set's chains built with key.
func (ts *toolSet) chainPool(key chainKey) *sync.Pool {
	ts.chainMu.Lock()
	defer ts.chainMu.Unlock()
	for i := range ts.chains {
		if ts.chains[i].key == key {
			return ts.chains[i].pool
		}
	}
	p := new(sync.Pool)
	if len(ts.chains) < maxChainKeys {
		ts.chains = append(ts.chains, keyedPool{key, p})
	}
	return p
}

// maxChainKeys bounds the option sets whose chains a tool set keeps (past
// it, a run's chain is built for it and dropped after it).
const maxChainKeys = 16

type keyedPool struct {
	key  chainKey
	pool *sync.Pool
}

// newRunChain builds a chain of o (live tools: allow, unless o has its
// own) around the provider its runs set.
func newRunChain(o StreamOptions, allow *streamwrap.Allowlist) *runChain {
	rc := new(runChain)
	if o.LiveTools == nil {
		o.LiveTools = allow
	}
	if o.LastToolActivity == nil {
		o.LastToolActivity = func() time.Time { return rc.lastTool }
	}
	if o.UnknownToolGuard == nil {
		o.UnknownToolGuard = &rc.guard
	}
	// The run passes its call context (cancelled at the end of the run) to
	// every call, so the idle timer may keep what it derives from it.
	o.IdleReuseContext = true
	// Its call contexts are the run's own (callScope): the idle timer
	// cancels the current one rather than deriving one per run.
	o.IdleCallContext = rc.callCancel
	rc.fn = streamwrap.Chain(func(ctx context.Context, req *llm.Request) (llm.Stream, error) { return rc.base(ctx, req) }, o)
	return rc
}

// release gives a pooled chain back at the end of its run (every stream
// of it closed).
func (rc *runChain) release() {
	rc.run = nil
	if rc.pool != nil {
		rc.base = nil
		rc.san.Keep(0) // nothing of the run's messages is kept
		rc.pool.Put(rc)
	}
}

// prepareHistory runs OpenClaw's history preparation (transcript.Prepare:
// sanitize, validate turns, drop heartbeat pairs, limit turns, repair
// pairing, cap tool results) on the session context.
func (r *runner) prepareHistory(msgs []llm.Message) []llm.Message {
	if len(msgs) == 0 {
		// A new conversation: Prepare would give nothing and report
		// nothing, after setting up its stages and the policy's options.
		return make([]llm.Message, 0, 2)
	}
	out, rep := transcript.Prepare(msgs, r.prepareOptions())
	r.notePrepared(rep)
	// The run appends to the prepared slice: never share its array. Room
	// for the prompt and an answer; pushHist makes more for tool turns.
	return append(make([]llm.Message, 0, len(out)+2), out...)
}

// prepareRun prepares the session context for the run's first call. The
// context of a live session is what its last run prepared, extended by
// the messages appended since (transcript.Preparer), when the steps allow
// (else prepared afresh): the same history, without working through the
// whole conversation on every run. It returns the history and, when the
// history is the livePrep's, that livePrep.
func (r *runner) prepareRun() ([]llm.Message, *livePrep) {
	msgs := r.sess.messages()
	lp := r.sess.livePrep()
	if lp == nil {
		return r.prepareHistory(msgs), nil
	}
	opts := r.prepareOptions()
	var out []llm.Message
	var rep transcript.PrepareReport
	ok := false
	if n := lp.pr.Raw(); n <= len(msgs) {
		kept := lp.pr.Len()
		out, rep, ok = lp.pr.Extend(msgs[n:], opts)
		if ok {
			// The runs of the session sent histories that begin with the
			// prepared messages Extend kept; what they appended after
			// them is written over.
			lp.san.Keep(kept)
		}
	}
	if ok {
		liveSessions.prepExtends.Add(1)
	} else {
		out, rep = lp.pr.Prepare(msgs, opts)
		lp.reset()
	}
	r.notePrepared(rep)
	if len(out) == 0 {
		// Result.NewMessages may share the array of a history that starts
		// empty (finishNew): not the livePrep's.
		return make([]llm.Message, 0, 2), nil
	}
	// The run appends after the prepared messages, in the livePrep's
	// array (the next run's Extend writes over what it appended).
	return out, lp
}

func (r *runner) prepareOptions() transcript.PrepareOptions {
	p := r.p
	pol := transcript.PolicyForAPI(p.Model.API)
	if r.reg != nil {
		pol.AllowedToolNames = r.names
	}
	opts := transcript.PrepareOptions{
		Policy:              pol,
		HistoryLimit:        p.HistoryLimit,
		ContextWindowTokens: p.Model.ContextWindow,
		ToolResultMaxChars:  p.Compaction.ToolResultMaxChars,
	}
	if !r.systemClock {
		// The caller's clock stamps synthetic results (nil: the system's,
		// without a closure to allocate).
		opts.Now = func() int64 { return p.Now().UnixMilli() }
	}
	return opts
}

// notePrepared notes what the history preparation repaired.
func (r *runner) notePrepared(rep transcript.PrepareReport) {
	if rep.Pairing != (transcript.PairingReport{}) {
		r.note("history: tool-call/result pairing repaired (%+v)", rep.Pairing)
	}
	if rep.TruncatedToolResult > 0 {
		r.note("history: %d oversized tool results truncated", rep.TruncatedToolResult)
	}
}

// liveToolResultMaxChars is OpenClaw's live cap on one tool result.
func liveToolResultMaxChars(ctxTokens, configured int) int {
	return transcript.LiveToolResultMaxChars(ctxTokens, configured)
}

// toolResultReducibleChars is what OpenClaw's tool-result reduction plan
// (minKeep 0, aggregate budget = the cap) would remove from msgs.
func toolResultReducibleChars(msgs []llm.Message, maxChars int) int {
	plan := transcript.PlanToolResultReductions(msgs, maxChars, maxChars, 0)
	return plan.Reducible()
}

// truncateToolResults applies OpenClaw's tool-result reduction plan to the
// session: the replaced results are written as a rewrite of the branch
// (the full results stay in the file on the dead branch), and the history
// of the next call is rebuilt from it. It returns how many results it
// rewrote. If the rewrite cannot be written, the plan is applied to the
// history in memory only, and a note says so.
func (r *runner) truncateToolResults(maxChars int) int {
	raw := r.sess.messages()
	plan := transcript.PlanToolResultReductions(raw, maxChars, maxChars, 0)
	if len(plan.Replacements) == 0 {
		// The raw branch may differ from the prepared history (ids
		// rewritten, results already capped); plan on what is sent.
		return r.truncateInMemory(maxChars)
	}
	repl := make(map[string]*llm.Message, len(plan.Replacements))
	for i := range plan.Replacements {
		rp := &plan.Replacements[i]
		m := rp.Message
		repl[m.ToolCallID] = &m
	}
	n, err := r.sess.rewriteToolResults(repl)
	if err != nil {
		r.note("tool-result rewrite could not be written (%v); truncating in memory", err)
		return r.truncateInMemory(maxChars)
	}
	r.setHist(r.prepareHistory(r.sess.messages()))
	return n
}

func (r *runner) truncateInMemory(maxChars int) int {
	plan := transcript.PlanToolResultReductions(r.hist, maxChars, maxChars, 0)
	if len(plan.Replacements) == 0 {
		return 0
	}
	r.setHist(append(r.hist[:0:0], transcript.ApplyToolResultPlan(r.hist, plan)...))
	return plan.Oversized + plan.Aggregate
}
