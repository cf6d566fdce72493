package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ocbench/ocbench/internal/redact"
	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/streamwrap"
	"github.com/ocbench/ocbench/transcript"
)

// Errors of a run. Setup failures are returned before anything is written;
// failures during the loop are also recorded in the transcript (an
// assistant message with stopReason error or aborted); Run returns the
// error, and the Result holds everything done up to it.
var (
	// ErrNoPrompt means Params.Prompt was empty.
	ErrNoPrompt = errors.New("engine: empty prompt")
	// ErrNoProvider means neither Params.StreamFunc nor a usable
	// Params.Model.BaseURL/API was given.
	ErrNoProvider = errors.New("engine: no provider")
	// ErrTurnLimit means the run stopped after Params.MaxTurns model calls
	// while the model still asked for tools.
	ErrTurnLimit = errors.New("engine: turn limit reached")
	// ErrProvider wraps a model call that failed: refused before streaming
	// (HTTP error, rate limit after the allowed retries) or ended with an
	// error stop reason.
	ErrProvider = errors.New("engine: model call failed")
	// ErrMessageTooLarge means one assistant message streamed more than
	// Params.MaxMessageBytes (an endless stream); the call was cut there.
	ErrMessageTooLarge = errors.New("engine: assistant message too large")
	// ErrContextOverflow means the prompt did not fit the model's context
	// even after the allowed compactions.
	ErrContextOverflow = errors.New("engine: context overflow")
	// ErrParams means Params asked for two things that exclude each other
	// (SystemPrompt and OpenClawPrompt, BuiltinTools without a Workspace,
	// History with a session file or store); nothing was run.
	ErrParams = errors.New("engine: conflicting parameters")
)

// turnLimitError is ErrTurnLimit with the limit that was reached.
type turnLimitError int

func (e turnLimitError) Error() string {
	return ErrTurnLimit.Error() + ": " + strconv.Itoa(int(e)) + " model calls"
}

func (e turnLimitError) Unwrap() error { return ErrTurnLimit }

// Defaults of Params.
const (
	DefaultMaxTurns          = 50
	DefaultMaxMessageBytes   = 8 << 20
	DefaultRateLimitRetries  = 2
	DefaultMaxRetryWait      = 30 * time.Second
	DefaultTurnTimeout       = 10 * time.Minute
	MaxOverflowCompactions   = 3 // OpenClaw's MAX_OVERFLOW_COMPACTION_ATTEMPTS
	abortedToolResultText    = "Tool call was not completed: the run was aborted."
	interruptedToolText      = "Tool call was not completed: interrupted by a queued user message."
	skippedForSteerText      = "Skipped due to queued user message."
	assistantFailedPlacehold = "[assistant turn failed before producing content]"
)

// Params configure one run.
type Params struct {
	// Prompt is the user message that starts the run.
	Prompt string

	// Model is the model to call; its ContextWindow drives compaction.
	Model llm.Model
	// StreamFunc is the provider. When nil, Run uses the HTTP transport of
	// package provider for Model.API at Model.BaseURL with APIKey.
	StreamFunc llm.StreamFunc
	APIKey     string
	// Secrets are further values (other keys, tokens) redacted wherever
	// they would appear in what the run produces. APIKey and the values of
	// the environment's secret variables (redact.IsSecretEnvName) always
	// are: errors, notes, events, the Result and every transcript entry
	// carry [REDACTED] in their place, also where an upstream echoes a key
	// in an error. Values shorter than 8 bytes are not redacted literally.
	Secrets []string
	// MaxTokens, Temperature and Reasoning are passed to every model call
	// (zero values: the provider's defaults).
	MaxTokens   int
	Temperature *float64
	Reasoning   string
	// RequestOptions (tool choice, parallel tool calls, response format,
	// stop sequences, top_p, extra headers and body fields) are sent with
	// every model call of the run, encoded per wire by package provider,
	// which refuses an option the wire cannot express
	// (provider.ErrUnsupportedOption) before anything is sent. Mind that a
	// ToolChoiceRequired or ToolChoiceTool makes every call ask for a tool,
	// so such a run only ends at MaxTurns. Compaction's summary call
	// carries only the Headers and ExtraBody (transport concerns, such as
	// a gateway's routing header); the others would shape the summary.
	RequestOptions llm.RequestOptions

	// Workspace is the directory the built-in tools are confined to and
	// whose bootstrap files and skills OpenClaw's prompt injects; a
	// session's header records it as the working directory. On its own it
	// adds nothing to what the model sees: OpenClawPrompt and
	// BuiltinTools choose that.
	Workspace string
	// BuiltinTools offers the built-in tools (read, write, edit, ls, and
	// exec when Builtins.Exec is set), confined to Workspace, which must
	// then be set. The zero value offers only Tools.
	BuiltinTools bool
	// Builtins configures the built-in tools.
	Builtins BuiltinOptions
	// Tools are extra tools offered besides the built-ins.
	Tools []*Tool
	// ParallelTools, above 1, lets the tool calls of one assistant message
	// run concurrently, at most ParallelTools at a time: consecutive calls
	// of tools not marked Exclusive (the built-in write, edit and exec
	// are) run together, an exclusive call runs alone after the calls
	// before it. Results are still appended in the model's order. 0 or 1
	// runs every call after the one before it, in order, as OpenClaw does.
	ParallelTools int

	// The conversation lives in one of three places:
	//   - SessionFile: a JSONL session transcript (created when missing),
	//     held under its lock for the run.
	//   - SessionStore: a session of a store (see below).
	//   - memory: neither set. History is then the conversation so far
	//     (typically the previous run's Result.Conversation, or nil for a
	//     new one); nothing is written anywhere.
	// History preparation (sanitizing, pairing repair, HistoryLimit,
	// tool-result caps) and compaction work the same on all three; with
	// a file or a store the new messages are in it after the run, in
	// memory they are in Result.Conversation.
	SessionFile string
	// History is the prior conversation of an in-memory session, oldest
	// first. The run does not modify it. It cannot be combined with
	// SessionFile or SessionStore (ErrParams).
	History []llm.Message
	// SessionID names the session in the header of a new file and in
	// requests (prompt-cache key); empty derives one.
	SessionID string
	// HistoryLimit keeps only the last N user turns of the history (0:
	// unlimited; OpenClaw's per-channel historyLimit).
	HistoryLimit int
	// Session options for file sessions (durability etc.).
	Session SessionOptions

	// SessionStore, when set, keeps the session in a store instead of
	// SessionFile (transcript.DirStore, SQLiteStore or PGStore): the
	// session is SessionID in it (a new id when empty), opened under the
	// store's single-writer lock for the run. SessionFile is then ignored.
	SessionStore transcript.Store

	// The system prompt is an explicit choice, one of:
	//   - SystemPrompt as given (CacheBoundary: the byte offset where its
	//     cacheable prefix ends, 0 for none). With neither SystemPrompt nor
	//     OpenClawPrompt the zero value sends no system prompt at all.
	//   - OpenClawPrompt: OpenClaw's assembled agent prompt (package
	//     prompt): identity, tool list and tool-call style, safety, skills,
	//     the workspace's bootstrap files (AGENTS.md, SOUL.md, ...) when
	//     Workspace is set, the runtime line, configured by PromptOptions.
	//     It is some 7.5 KB before any workspace file; ocbench run and the
	//     gateway's /v1/runs choose it. SystemPrompt must then be empty.
	SystemPrompt   string
	CacheBoundary  int
	OpenClawPrompt bool
	// Prompt options passed to package prompt (OpenClawPrompt only).
	PromptOptions PromptOptions

	// ToolTimeout bounds one tool call, built-in or not (default
	// DefaultToolTimeout; negative: none). The handler's context ends at
	// the deadline; a handler that does not return within
	// ToolAbandonGrace after that (blocked where it cannot see its
	// context) is left behind and the call gets an error result wrapping
	// ErrToolTimeout, so the run goes on.
	ToolTimeout time.Duration

	// MaxTurns bounds the model calls of the run (default 50).
	MaxTurns int
	// MaxMessageBytes bounds one streamed assistant message (default 8 MiB).
	MaxMessageBytes int
	// TurnTimeout bounds one model call, stream included (default 10 min).
	TurnTimeout time.Duration
	// RateLimitRetries is how often a refused request that the provider
	// says is temporary (429, 5xx) is retried (default 2; negative: never);
	// MaxRetryWait caps the wait between tries (default 30s); a provider's
	// Retry-After longer than that is not waited for.
	RateLimitRetries int
	MaxRetryWait     time.Duration

	// Stream configures the decorator chain (idle timeout, repair profile,
	// unknown-tool threshold).
	Stream StreamOptions

	// Compaction configures the preemptive check and compaction.
	Compaction CompactionOptions

	// Harness policy and plugin harnesses registered by embedding code.
	Harness   HarnessPolicy
	Harnesses []Harness

	// Queue receives messages sent while the run is active (steering).
	Queue *Queue

	// OnEvent, when set, receives the run's events (see Event).
	OnEvent func(*Event)

	// Now returns the current time (default time.Now); tests pin it.
	Now func() time.Time
}

// check refuses parameters that exclude each other.
func (p *Params) check() error {
	switch {
	case p.OpenClawPrompt && p.SystemPrompt != "":
		return fmt.Errorf("%w: SystemPrompt and OpenClawPrompt are two choices of system prompt; set one", ErrParams)
	case p.BuiltinTools && p.Workspace == "":
		return fmt.Errorf("%w: BuiltinTools needs a Workspace to confine them to", ErrParams)
	case len(p.History) > 0 && (p.SessionFile != "" || p.SessionStore != nil):
		return fmt.Errorf("%w: History is an in-memory conversation; a SessionFile or SessionStore holds its own", ErrParams)
	}
	// A typo in the model's api, provider, base URL or compat profile is
	// refused here, with the closest known id, before anything is opened
	// or sent (an *llm.ModelError under ErrParams). A StreamFunc of the
	// caller's may speak an api this module does not (pi-ai has more):
	// the api is then the caller's to check.
	m := p.Model
	if p.StreamFunc != nil && !m.API.Known() {
		m.API = ""
	}
	if err := m.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrParams, err)
	}
	return nil
}

func (p *Params) setDefaults() {
	if p.MaxTurns <= 0 {
		p.MaxTurns = DefaultMaxTurns
	}
	if p.ToolTimeout == 0 {
		p.ToolTimeout = DefaultToolTimeout
	}
	if p.MaxMessageBytes <= 0 {
		p.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if p.TurnTimeout <= 0 {
		p.TurnTimeout = DefaultTurnTimeout
	}
	if p.RateLimitRetries == 0 {
		p.RateLimitRetries = DefaultRateLimitRetries
	}
	if p.MaxRetryWait <= 0 {
		p.MaxRetryWait = DefaultMaxRetryWait
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	p.Compaction.setDefaults()
}

// ToolCallRecord is one tool call the run executed (or refused).
type ToolCallRecord struct {
	Turn     int
	ID       string
	Name     string
	IsError  bool
	Err      error
	Duration time.Duration
}

// Result is what a run did.
type Result struct {
	// Final is the last assistant message (nil if no model call finished).
	Final      *llm.Message
	StopReason llm.StopReason
	// Turns is the number of model calls; Usage their summed usage.
	Turns int
	Usage llm.Usage
	// ToolCalls lists every tool call, in order.
	ToolCalls []ToolCallRecord
	// Repairs counts tool calls whose arguments the stream chain repaired
	// (final arguments differ from the streamed text).
	Repairs int
	// Steered counts queued messages delivered during the run.
	Steered int
	// Retries counts refused requests retried (rate limits, 5xx).
	Retries int
	// Compaction is the outcome of the last compaction attempt, if any;
	// Compactions lists every attempt of the run in order.
	Compaction  CompactionOutcome
	Compactions []CompactionOutcome
	// Preemptive is the pre-prompt budget decision.
	Preemptive PreemptiveDecision
	// Harness is the harness that ran.
	Harness HarnessSelection
	// Aborted is set when the context ended the run; TurnLimit when
	// MaxTurns did.
	Aborted   bool
	TurnLimit bool
	// NewMessages are the messages the run added to the conversation, in
	// order: the prompt, each assistant message (failed ones included),
	// each tool result (also the error results that close the calls of a
	// failed message) and each delivered steering or follow-up message.
	NewMessages []llm.Message
	// Conversation is the whole conversation after the run, for an
	// in-memory session (neither SessionFile nor SessionStore): the
	// History with NewMessages appended or, after a compaction, the
	// compaction summary and the messages it kept. Pass it as the next
	// run's Params.History to continue the conversation. For a new
	// conversation it may share its elements with NewMessages.
	Conversation []llm.Message
	// Notes are human-readable remarks (compaction timeouts, torn session
	// lines set aside, repaired history).
	Notes    []string
	Duration time.Duration
}

// FinalText returns the text of the run's final assistant message (the
// model's answer), "" when no model call finished. The text of every
// message is in NewMessages.
func (r *Result) FinalText() string {
	if r.Final == nil {
		return ""
	}
	return r.Final.TextContent()
}

// Run runs one agent turn loop for p.Prompt and returns what happened.
// The error is nil when the run ended cleanly (the model stopped); it is
// the reason otherwise (setup failure, provider failure, abort, turn
// limit), and the Result still holds everything done up to then.
func Run(ctx context.Context, params Params) (Result, error) {
	// The run's Params and Result live in its runner: one allocation.
	r := &runner{pv: params}
	p, res := &r.pv, &r.resv
	systemClock := p.Now == nil
	p.setDefaults()
	start := p.Now()
	red := runRedactor(p)
	// The model never sees a configured key either.
	p.Prompt = red.String(p.Prompt)
	if p.Prompt == "" {
		return *res, ErrNoPrompt
	}
	if err := p.check(); err != nil {
		return *res, err
	}
	sel, err := SelectHarness(p.Harness, HarnessQuery{Provider: p.Model.Provider, ModelID: p.Model.ID}, p.Harnesses)
	if err != nil {
		return *res, err
	}
	res.Harness = sel
	if sel.Plugin != nil {
		// A plugin harness runs the whole attempt; its failure is not
		// retried on the embedded harness.
		pr, err := sel.Plugin.Run(ctx, p)
		if pr != nil {
			*res = *pr
		}
		res.Harness = sel
		err = red.Error(err)
		if res.Final != nil {
			res.Final = res.Final.Clone()
			redactMessage(red, res.Final)
		}
		for i, n := range res.Notes {
			res.Notes[i] = red.String(n)
		}
		res.Duration = p.Now().Sub(start)
		return *res, err
	}
	r.p, r.res, r.red, r.systemClock = p, res, red, systemClock
	err = r.run(ctx)
	if _, limit := err.(turnLimitError); !limit {
		// The turn limit's text is the engine's own, with a number:
		// nothing to redact, and not worth building to find that out.
		err = red.Error(err)
	}
	res.Duration = p.Now().Sub(start)
	r.emit(EventRunEnd, func(e *Event) { e.Err = err })
	return *res, err
}

// runner is the state of one embedded run.
type runner struct {
	p    *Params
	res  *Result
	pv   Params // what p points to
	resv Result // what res points to
	red  *redact.Redactor
	ev   Event
	sess *session
	ws   *Workspace
	reg  *Registry
	// names are reg's tool names, for the prompt, the chain and history
	// preparation (not to be modified).
	names []string
	tw    *toolWorker // runs tool calls; nil until the first one
	// toolCtx is the context of tool calls made under toolParent, reused
	// until a timeout or an abort spends it.
	toolCtx    context.Context
	toolCancel context.CancelCauseFunc
	toolParent context.Context
	// wsCtx is wsParent carrying the run's workspace (toolContext).
	wsCtx, wsParent context.Context
	fn              llm.StreamFunc
	base            llm.StreamFunc
	req             llm.Request
	hist            []llm.Message // prepared history sent to the model
	// histLent says hist's array is the session's live cache's (see
	// histSlot), until the history grows into an array of its own.
	histLent bool
	// The run's new messages (Result.NewMessages) are, until something
	// diverges, the last newN messages of hist, and pending, a message
	// recorded and not yet added to hist: they are not stored twice.
	// newOwn says Result.NewMessages holds them itself (see ownNew).
	newN    int
	pending *llm.Message
	newOwn  bool
	turn    int
	idx     []int
	take    []queued
	// liveCap is the live cap on one tool result (chars).
	liveCap int
	// The context guard's per-message estimates of hist (see contextGuard).
	guardEst   []int
	guardTotal int
	// guardResult is the largest of guardEst over the tool results.
	guardResult int
	// live, when set, is the livePrep whose prepared history hist begins
	// with (prepareRun): its estimates of it are kept across runs.
	live *livePrep
	// san is the replay sanitizer's memo of hist, which the run's call
	// contexts carry (sanCtx): live's while hist begins with its prepared
	// history, else the chain's. Whoever changes a message of hist that
	// was sent tells it (ReplayMemo.Keep). sanCut is 1 + the first message
	// of hist the last call sent otherwise (contextGuard's cuts), 0: none.
	san    *streamwrap.ReplayMemo
	sanCut int
	// systemClock says Params.Now is time.Now (the caller set none).
	systemClock bool
	// call is the run's current call context (see callScope), turn0 the
	// clock of Params.TurnTimeout, which ends it (nil until the first
	// call).
	call   atomic.Pointer[callScope]
	scope0 callScope // the first call scope (written before call points to it)
	turn0  *turnClock
	// mem holds the messages the run makes (model calls' clones, tool
	// results).
	mem msgArena
	// chain is the run's decorator chain, which also holds when the last
	// tool call ended (the idle timer's tool activity).
	chain *runChain
}

func (r *runner) emit(k EventKind, fill func(*Event)) {
	if r.p.OnEvent == nil {
		return // inlined: a run without OnEvent makes no call
	}
	r.emitTo(k, fill)
}

func (r *runner) emitTo(k EventKind, fill func(*Event)) {
	r.ev = Event{Kind: k, Turn: r.turn}
	if fill != nil {
		fill(&r.ev)
	}
	r.p.OnEvent(&r.ev)
}

func (r *runner) note(format string, args ...any) {
	r.res.Notes = append(r.res.Notes, r.red.String(fmt.Sprintf(format, args...)))
}

// takeNotes moves the session's notes into the result, redacted.
func (r *runner) takeNotes() {
	for _, n := range r.sess.takeNotes() {
		r.res.Notes = append(r.res.Notes, r.red.String(n))
	}
}

func (r *runner) run(ctx context.Context) (err error) {
	defer func() {
		r.finishNew()
		if r.sess != nil && r.sess.w == nil {
			r.res.Conversation = r.sess.conversation(r.res.NewMessages)
		}
		if cerr := r.close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	if err := r.setup(); err != nil {
		return err
	}
	r.emit(EventRunStart, func(e *Event) { e.Text = HarnessEmbedded })

	// Preemptive budget check before the prompt (§3.5).
	prompt := r.userMessage(r.p.Prompt)
	if err := r.preemptive(ctx, prompt); err != nil {
		return err
	}
	if err := r.appendMsg(prompt); err != nil {
		return err
	}
	if err := r.loop(ctx); err != nil {
		return err
	}
	r.thresholdCompaction(ctx)
	return nil
}

// close releases the session (and its lock) and the workspace.
func (r *runner) close() error {
	var err error
	if r.sanCut > 0 {
		// The session's memo saw a cut copy from there (contextGuard);
		// told before the session (and its memo) is given back.
		r.san.Keep(r.sanCut - 1)
		r.sanCut = 0
	}
	if r.sess != nil {
		err = r.sess.close()
		r.sess = nil
	}
	if r.ws != nil {
		r.ws.Close()
		r.ws = nil
	}
	if r.tw != nil {
		putToolWorker(r.tw) // idle: an abandoned worker is not kept in r.tw
		r.tw = nil
	}
	r.endCalls()
	if r.chain != nil {
		r.chain.release()
		r.chain = nil
	}
	if r.toolCancel != nil {
		r.toolCancel(nil)
		r.toolCtx, r.toolCancel, r.toolParent = nil, nil, nil
	}
	return err
}

// setup runs the phases before the first model call: model and provider,
// session (under its lock), tools, system prompt, stream chain, history.
func (r *runner) setup() (err error) {
	p := r.p
	// Phase 1: model and provider.
	r.fn = p.StreamFunc
	if r.fn == nil {
		fn, err := resolveProvider(p)
		if err != nil {
			return err
		}
		r.fn = fn
	}
	r.base = r.fn
	// Phase 2: the session, under its lock.
	r.sess, err = openSession(p)
	if err != nil {
		return err
	}
	r.takeNotes()
	// Phase 3: tools (the prompt lists them).
	if p.Workspace != "" {
		r.ws, err = resolveWorkspace(p.Workspace)
		if err != nil {
			return err
		}
	}
	var ts *toolSet
	if r.ws != nil && p.BuiltinTools {
		ts, err = sharedToolSet(runBuiltins(p.Builtins), p.Tools)
	} else {
		ts, err = sharedToolSet(nil, p.Tools)
	}
	if err != nil {
		return err
	}
	r.reg, r.names = ts.reg, ts.names
	// Phase 4: the system prompt.
	system, boundary, err := buildSystemPrompt(p, r.ws, r.names)
	if err != nil {
		return err
	}
	// Phase 5: the decorator chain.
	r.fn = r.wrapStream(r.fn, ts)
	// Phase 6: history.
	h, lp := r.prepareRun()
	r.setHist(h)
	r.live, r.histLent = lp, lp != nil
	if lp != nil {
		r.san = &lp.san
	}
	if n := len(r.hist); n > 0 && r.hist[n-1].Role == llm.RoleUser {
		// An orphaned user leaf (a run that died before the model
		// answered): the new prompt replaces it in the context, so the
		// model never sees two consecutive user turns. The prompt takes
		// its place in the array: the livePrep's history is not kept.
		r.hist = r.hist[:n-1]
		r.san.Keep(n - 1)
		r.live = nil
		r.sess.dropLivePrep()
		r.note("dropped an orphaned trailing user message from the context")
	}
	window := p.Model.ContextWindow
	if window <= 0 {
		window = DefaultContextTokenBudget
	}
	r.liveCap = liveToolResultMaxChars(window, p.Compaction.ToolResultMaxChars)
	r.req = llm.Request{
		Model:         p.Model,
		System:        system,
		CacheBoundary: boundary,
		Tools:         ts.defs,
		SessionID:     r.sess.id(),
		APIKey:        p.APIKey,
		MaxTokens:     p.MaxTokens,
		Temperature:   p.Temperature,
		Reasoning:     p.Reasoning,
		Options:       p.RequestOptions,
	}
	return nil
}

// appendMsg writes m to the transcript, then adds it to the history.
func (r *runner) appendMsg(m *llm.Message) error {
	if err := r.record(m); err != nil {
		return err
	}
	r.pushHist(m)
	return nil
}

// record writes m to the transcript as a new message of the run.
func (r *runner) record(m *llm.Message) error {
	if err := r.sess.append(m); err != nil {
		return err
	}
	if !r.newOwn && r.pending == nil {
		r.pending = m // stored by the pushHist that follows
		return nil
	}
	r.ownNew(8)
	r.res.NewMessages = append(r.res.NewMessages, *m)
	return nil
}

// pushHist adds *m to the history of the next call: a message histSlot
// placed in the history's next element is added in place (stored once),
// any other is copied in.
func (r *runner) pushHist(m *llm.Message) {
	if !r.newOwn && r.pending != m {
		// Not the message just recorded (a failed turn's placeholder):
		// the history's tail is no longer the run's new messages.
		r.ownNew(8)
	}
	if n := len(r.hist); n < cap(r.hist) && m == &r.hist[:n+1][n] {
		r.hist = r.hist[:n+1]
	} else {
		r.growHist()
		r.hist = append(r.hist, *m)
	}
	if !r.newOwn {
		r.pending = nil
		r.newN++
	}
}

// growHist makes room for one more message in the history.
func (r *runner) growHist() {
	if len(r.hist) < cap(r.hist) {
		return
	}
	// Room for the messages the run's remaining turns may add (an answer
	// and a tool result each), up to 32 more (8 KiB), rather than
	// doubling from the two of a run without tool calls.
	room := min(max(2*(r.p.MaxTurns-r.turn)+2, 8), 32)
	r.hist = append(make([]llm.Message, 0, len(r.hist)+room), r.hist...)
	r.histLent = false
}

// histSlot returns the history's next element, zero, for a message the
// run makes and then adds to the history (pushHist, before any other
// message is added): a model call's answer, a tool result, a user
// message. Built there, the message is stored once: the history holds it,
// and the transcript's entry, the pending new message and Result.Final
// point to it. It is nil while the history's array is lent by the
// session's live cache (its next run writes over what this one appended
// there, which Result.Final must not see): the message is then made
// apart and copied in.
//
// Who owns what: the history's elements are never written after pushHist
// added them. Whoever replaces them (setHist, the context guard's cuts,
// compaction) makes a new array, so a pointer handed out (an entry of the
// session, Result.Final, an event) keeps what was added, also after the
// history grows into a new array (the old one stays as it was). A message
// placed in a slot that the history will not take (a failed call, which
// addToHistory replaces by a copy of another shape) is moved out first
// (unslot), so nothing is added over it.
func (r *runner) histSlot() *llm.Message {
	if r.histLent {
		return nil
	}
	r.growHist()
	n := len(r.hist)
	return &r.hist[:n+1][n]
}

// unslot returns m in memory of its own when histSlot placed it, leaving
// the slot empty; m otherwise.
func (r *runner) unslot(m *llm.Message) *llm.Message {
	if n := len(r.hist); n == cap(r.hist) || m != &r.hist[:n+1][n] {
		return m
	}
	c := new(llm.Message)
	*c = *m
	*m = llm.Message{}
	return c
}

// userMessage returns a user message of text, stamped now, placed for
// appendMsg (histSlot).
func (r *runner) userMessage(text string) *llm.Message {
	m := r.histSlot()
	if m == nil {
		m = new(llm.Message)
	}
	*m = llm.TextMessage(llm.RoleUser, text)
	m.Timestamp = r.p.Now().UnixMilli()
	return m
}

// ownNew gives Result.NewMessages the run's new messages in an array of
// its own (with room for spare more), when they are not already there.
func (r *runner) ownNew(spare int) {
	if r.newOwn {
		return
	}
	r.newOwn = true
	n := r.newN
	out := make([]llm.Message, n, n+1+spare)
	copy(out, r.hist[len(r.hist)-n:])
	if r.pending != nil {
		out = append(out, *r.pending)
		r.pending = nil
	}
	r.res.NewMessages = out
}

// finishNew sets Result.NewMessages at the end of the run: the history's
// own array when the run began without one (nothing else is kept alive),
// else a copy of its new messages.
func (r *runner) finishNew() {
	switch {
	case r.newOwn || r.newN == 0 && r.pending == nil:
	case r.pending == nil && len(r.hist) == r.newN:
		r.res.NewMessages = r.hist[:len(r.hist):len(r.hist)]
		r.newOwn = true
	default:
		r.ownNew(0)
	}
}

var overflowRe = regexp.MustCompile(`(?i)context[ _-]?(length|window|overflow)|prompt is too long|too many tokens|maximum context|request[ _]too[ _]large|exceeds? the (model's )?(context|maximum)`)

// isOverflow reports whether an assistant error message says the context
// was too large (OpenClaw's isContextOverflowError family).
func isOverflow(msg string) bool { return msg != "" && overflowRe.MatchString(msg) }

func (r *runner) loop(ctx context.Context) error {
	p := r.p
	overflowTries := 0
	for {
		if err := ctx.Err(); err != nil {
			r.res.Aborted = true
			return err
		}
		if r.turn >= p.MaxTurns {
			r.res.TurnLimit = true
			return turnLimitError(p.MaxTurns)
		}
		r.turn++
		r.res.Turns = r.turn
		msg, interrupted, err := r.callModel(ctx)
		if msg == nil {
			// Refused before streaming: recorded as an error message.
			return err
		}
		r.res.Final = msg
		r.res.StopReason = msg.StopReason
		r.emit(EventTurnEnd, func(e *Event) { e.Message = msg })
		addUsage(&r.res.Usage, &msg.Usage)
		if err := r.record(msg); err != nil {
			return err
		}
		switch msg.StopReason {
		case llm.StopAborted:
			r.closeDanglingCalls(msg, abortedToolResultText)
			if interrupted && ctx.Err() == nil {
				r.addToHistory(msg)
				if err := r.deliver(Steer, Interrupt); err != nil {
					return err
				}
				continue
			}
			r.res.Aborted = true
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("%w: %s", ErrProvider, msg.ErrorMessage)
		case llm.StopError:
			r.closeDanglingCalls(msg, "Tool call was not run: the model call failed.")
			if isOverflow(msg.ErrorMessage) && overflowTries < MaxOverflowCompactions {
				overflowTries++
				out := r.compact(ctx, TriggerOverflow, RouteCompactOnly)
				if out.Compacted {
					continue
				}
			}
			if err == nil {
				err = fmt.Errorf("%w: %s", ErrProvider, msg.ErrorMessage)
			}
			if isOverflow(msg.ErrorMessage) {
				err = fmt.Errorf("%w: %w", ErrContextOverflow, err)
			}
			return err
		}
		r.addToHistory(msg)
		r.idx = msg.ToolCalls(r.idx[:0])
		for _, i := range r.idx {
			b := &msg.Content[i]
			if len(b.Arguments) > 0 && len(b.RawArgs) > 0 && !bytes.Equal(trimArgs(b.RawArgs), b.Arguments) {
				r.res.Repairs++
			}
		}
		if msg.StopReason == llm.StopToolUse && len(r.idx) > 0 {
			if err := r.runTools(ctx, msg); err != nil {
				return err
			}
			if err := r.sess.endTurn(); err != nil {
				return err
			}
			if err := r.deliver(Steer, Interrupt); err != nil {
				return err
			}
			continue
		}
		// The model stopped: queued steering continues the run, then
		// follow-ups; otherwise the run is over.
		if r.p.Queue != nil && r.p.Queue.Len() > 0 {
			n := r.res.Steered
			if err := r.deliver(Steer, Interrupt); err != nil {
				return err
			}
			if r.res.Steered == n {
				if err := r.deliver(FollowUp); err != nil {
					return err
				}
			}
			if r.res.Steered > n {
				continue
			}
		}
		return nil
	}
}

// addToHistory adds an assistant message to the context of the next
// call. Failed turns without content get OpenClaw's placeholder text, and
// an interrupted message's tool calls are dropped (their synthetic results
// are in the transcript only), as pairing repair would drop them on replay.
func (r *runner) addToHistory(m *llm.Message) {
	if m.StopReason == llm.StopAborted || m.StopReason == llm.StopError {
		c := m.Clone()
		c.Content = c.Content[:0]
		for _, b := range m.Content {
			if b.Type != llm.BlockToolCall {
				c.Content = append(c.Content, b)
			}
		}
		if len(c.Content) == 0 {
			c.Content = append(c.Content, llm.Block{Type: llm.BlockText, Text: []byte(assistantFailedPlacehold)})
		}
		r.pushHist(c)
		return
	}
	r.pushHist(m)
}

// deliver moves queued messages of the given modes into the conversation.
func (r *runner) deliver(modes ...SteerMode) error {
	r.take = r.p.Queue.take(r.take[:0], modes...)
	for _, q := range r.take {
		q.text = r.red.String(q.text)
		if err := r.appendMsg(r.userMessage(q.text)); err != nil {
			return err
		}
		r.res.Steered++
		r.emit(EventSteer, func(e *Event) { e.Text = q.text; e.Mode = q.mode })
	}
	return nil
}

// closeDanglingCalls writes an error result for every tool call of a
// failed or aborted assistant message, so that no call in the transcript
// is left without a result.
func (r *runner) closeDanglingCalls(m *llm.Message, text string) {
	r.idx = m.ToolCalls(r.idx[:0])
	for _, i := range r.idx {
		b := &m.Content[i]
		_ = r.record(toolResultMessage(&r.mem, nil, b.ID, string(b.Name), text, true, r.p.Now()))
	}
}

// runTools runs the message's tool calls and appends each result, in the
// model's order: one after another (OpenClaw's order), or under
// Params.ParallelTools in batches of calls that may overlap. An interrupt
// or abort stops the remaining calls, which still get (error) results so
// the transcript stays paired.
func (r *runner) runTools(ctx context.Context, msg *llm.Message) error {
	ctx = r.toolContext(ctx)
	r.idx = msg.ToolCalls(r.idx[:0])
	if r.p.ParallelTools > 1 && len(r.idx) > 1 {
		return r.runToolsParallel(ctx, msg)
	}
	stopText := ""
	for _, i := range r.idx {
		b := &msg.Content[i]
		name := r.reg.internName(b.Name)
		if stopText != "" {
			if err := r.skipCall(b.ID, name, stopText); err != nil {
				return err
			}
			continue
		}
		// The call's id as a string is made once, by its result; an event
		// before that gets a copy of its own.
		r.emit(EventToolStart, func(e *Event) { e.ToolCallID = string(b.ID); e.ToolName = name; e.Args = b.Arguments })
		tctx, cancel := ctx, context.CancelCauseFunc(func(error) {})
		if r.p.Queue != nil {
			tctx, cancel = context.WithCancelCause(ctx)
		}
		waiting := r.p.Queue.setPhase(cancel)
		var cr CallResult
		var end time.Time
		if waiting {
			cr, end = CallResult{Text: interruptedToolText, IsError: true, Err: ErrInterrupted}, time.Now()
		} else {
			end = r.callTool(tctx, name, b.Arguments, &cr)
		}
		r.p.Queue.setPhase(nil)
		r.chain.lastTool = end
		cause := context.Cause(tctx)
		cancel(nil)
		var err error
		if stopText, err = r.finishCall(ctx, cause, b.ID, name, &cr, end); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		r.res.Aborted = true
		return ctx.Err()
	}
	return nil
}

// toolContext returns ctx carrying the run's workspace, in which the
// built-in tools of runBuiltins work: one context per run and parent.
func (r *runner) toolContext(ctx context.Context) context.Context {
	if r.ws == nil || !r.p.BuiltinTools {
		return ctx
	}
	if r.wsParent != ctx {
		r.wsCtx, r.wsParent = context.WithValue(ctx, workspaceKey{}, r.ws), ctx
	}
	return r.wsCtx
}

// skipCall records a call that was not run because the run was stopped.
func (r *runner) skipCall(id []byte, name, stopText string) error {
	res := toolResultMessage(&r.mem, r.histSlot(), id, name, stopText, true, r.p.Now())
	if err := r.appendMsg(res); err != nil {
		return err
	}
	r.addCallRecord(ToolCallRecord{Turn: r.turn, ID: res.ToolCallID, Name: name, IsError: true, Err: ErrInterrupted})
	return nil
}

// addCallRecord adds rec to the result's ToolCalls.
func (r *runner) addCallRecord(rec ToolCallRecord) {
	if r.res.ToolCalls == nil {
		// Room for this turn's calls and as many per turn left, up to 16.
		r.res.ToolCalls = make([]ToolCallRecord, 0, min(max(len(r.idx)*(r.p.MaxTurns-r.turn+1), 4), 16))
	}
	r.res.ToolCalls = append(r.res.ToolCalls, rec)
}

// finishCall turns a call's outcome into its tool result (redacted,
// capped), appends it and reports it. cause is the cause of the call's
// context. It returns the text the calls after it get when the run was
// aborted or interrupted meanwhile ("" to go on). end is when the call
// ended, the result's time under the system clock.
func (r *runner) finishCall(ctx context.Context, cause error, id []byte, name string, cr *CallResult, end time.Time) (string, error) {
	// Tool output (a file, a command's output) may hold a key: redact
	// it before the model, the transcript or an event sees it.
	cr.Text, cr.Err = r.red.String(cr.Text), r.red.Error(cr.Err)
	if cause != nil && cr.Err == nil {
		cr.Err = cause
	}
	stopText := ""
	switch {
	case ctx.Err() != nil:
		stopText = abortedToolResultText
	case cause != nil && errors.Is(cause, ErrInterrupted):
		stopText = interruptedToolText
	}
	if stopText != "" && !cr.IsError {
		// The tool finished anyway; keep its output but say so.
		cr.Text += "\n\n[" + stopText + "]"
	}
	if !r.systemClock {
		end = r.p.Now()
	}
	res := toolResultMessage(&r.mem, r.histSlot(), id, name, cr.Text, cr.IsError, end)
	for i := range cr.Content {
		b := &cr.Content[i]
		switch b.Type {
		case llm.BlockText:
			res.Content = append(res.Content, llm.Block{Type: llm.BlockText, Text: []byte(r.red.String(string(b.Text)))})
		case llm.BlockImage:
			res.Content = append(res.Content, llm.Block{Type: llm.BlockImage, Text: bytes.Clone(b.Text), MimeType: bytes.Clone(b.MimeType)})
		}
	}
	r.capToolResult(res)
	if err := r.appendMsg(res); err != nil {
		return "", err
	}
	r.addCallRecord(ToolCallRecord{Turn: r.turn, ID: res.ToolCallID, Name: name, IsError: cr.IsError, Err: cr.Err, Duration: cr.Duration})
	r.emit(EventToolEnd, func(e *Event) {
		e.ToolCallID, e.ToolName, e.Result, e.Duration = res.ToolCallID, name, &r.hist[len(r.hist)-1], cr.Duration
	})
	return stopText, nil
}

// exclusiveCall reports whether the call at msg.Content[i] must run alone
// under ParallelTools: a tool marked Exclusive, or a name that is not
// registered (its error result is cheap, and it keeps its place).
func (r *runner) exclusiveCall(b *llm.Block) bool {
	t, ok := r.reg.findBytes(b.Name)
	return !ok || t.exclusive
}

// runToolsParallel runs the calls of one assistant message in batches: a
// maximal run of consecutive calls that are not exclusive runs
// concurrently, at most Params.ParallelTools at a time; an exclusive call
// is a batch of its own, after every call before it has ended. Results
// are appended in the model's order once their batch has ended; events
// are emitted on the run's goroutine (a batch's starts, then its ends, in
// order). An interrupt or abort cancels the calls of the batch in
// progress; later calls are not run.
func (r *runner) runToolsParallel(ctx context.Context, msg *llm.Message) error {
	calls := append([]int(nil), r.idx...)
	stopText := ""
	var results []CallResult
	for start := 0; start < len(calls); {
		end := start + 1
		if !r.exclusiveCall(&msg.Content[calls[start]]) {
			for end < len(calls) && !r.exclusiveCall(&msg.Content[calls[end]]) {
				end++
			}
		}
		batch := calls[start:end]
		start = end
		if stopText != "" {
			for _, i := range batch {
				b := &msg.Content[i]
				if err := r.skipCall(b.ID, r.reg.internName(b.Name), stopText); err != nil {
					return err
				}
			}
			continue
		}
		for _, i := range batch {
			b := &msg.Content[i]
			r.emit(EventToolStart, func(e *Event) {
				e.ToolCallID = string(b.ID)
				e.ToolName = r.reg.internName(b.Name)
				e.Args = b.Arguments
			})
		}
		tctx, cancel := context.WithCancelCause(ctx)
		results = append(results[:0], make([]CallResult, len(batch))...)
		if r.p.Queue.setPhase(cancel) {
			for j := range results {
				results[j] = CallResult{Text: interruptedToolText, IsError: true, Err: ErrInterrupted}
			}
		} else {
			r.runBatch(tctx, msg, batch, results)
		}
		r.p.Queue.setPhase(nil)
		done := time.Now()
		r.chain.lastTool = done
		cause := context.Cause(tctx)
		cancel(nil)
		for j, i := range batch {
			b := &msg.Content[i]
			st, err := r.finishCall(ctx, cause, b.ID, r.reg.internName(b.Name), &results[j], done)
			if err != nil {
				return err
			}
			if st != "" {
				stopText = st
			}
		}
	}
	if ctx.Err() != nil {
		r.res.Aborted = true
		return ctx.Err()
	}
	return nil
}

// runBatch runs the calls concurrently, at most Params.ParallelTools at
// once, each bounded by Params.ToolTimeout, and waits for all of them.
func (r *runner) runBatch(ctx context.Context, msg *llm.Message, batch []int, results []CallResult) {
	if len(batch) == 1 {
		b := &msg.Content[batch[0]]
		r.callTool(ctx, r.reg.internName(b.Name), b.Arguments, &results[0])
		return
	}
	sem := make(chan struct{}, r.p.ParallelTools)
	var wg sync.WaitGroup
	for j, i := range batch {
		b := &msg.Content[i]
		name, args := r.reg.internName(b.Name), b.Arguments
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				results[j] = CallResult{Text: "Tool " + name + " was not run: the run was aborted.", IsError: true, Err: context.Cause(ctx)}
				return
			}
			defer func() { <-sem }()
			results[j] = callWithTimeout(ctx, r.reg, name, args, r.p.ToolTimeout)
		}()
	}
	wg.Wait()
}

func addUsage(dst, u *llm.Usage) {
	dst.Input += u.Input
	dst.Output += u.Output
	dst.CacheRead += u.CacheRead
	dst.CacheWrite += u.CacheWrite
	dst.TotalTokens += u.TotalTokens
	dst.Reasoning += u.Reasoning
	dst.Cost.Input += u.Cost.Input
	dst.Cost.Output += u.Cost.Output
	dst.Cost.CacheRead += u.Cost.CacheRead
	dst.Cost.CacheWrite += u.Cost.CacheWrite
	dst.Cost.Total += u.Cost.Total
}
