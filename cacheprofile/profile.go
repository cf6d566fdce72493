package cacheprofile

import (
	"container/heap"
	"fmt"
	"strings"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/prefixcache/cachesim"
	"github.com/ocbench/ocbench/transcript"
)

// Options configure a profile. The zero value profiles with the provider
// and model each call records.
type Options struct {
	// Provider and Model override what the session records (for "what if
	// this session ran on X" questions).
	Provider, Model string
	// Retention is the provider's cache retention: Anthropic "short"
	// (default) or "long" (1-hour breakpoints); OpenAI "in_memory" or "24h".
	Retention string
	// Unseen fixes the size of the tools and system prompt in tokens
	// instead of estimating it from the first call's usage.
	Unseen int
	// TopMisses is how many of the most expensive misses the report keeps
	// (default 10); MaxUnexplained bounds the unexplained list (default 200).
	TopMisses, MaxUnexplained int
	// TimelinePoints bounds the chart's points (default 2000); calls are
	// merged into buckets past it.
	TimelinePoints int
	// OnCall, when set, receives every call as it is profiled; the Call is
	// reused after OnCall returns. OnBegin and OnEnd bracket each session
	// (a SQLite store holds several).
	OnCall  func(*Call)
	OnBegin func(file, sessionID string)
	OnEnd   func(*Report)
}

// Recorded is what the provider reported for a call.
type Recorded struct {
	Input      int64 `json:"input"`
	CacheRead  int64 `json:"cacheRead"`
	CacheWrite int64 `json:"cacheWrite"`
}

// Prompt returns the exact prompt size: input + cacheRead + cacheWrite.
func (r *Recorded) Prompt() int64 { return r.Input + r.CacheRead + r.CacheWrite }

// Predicted is what the simulator says for a call.
type Predicted struct {
	Prompt     int    `json:"prompt"`
	CacheRead  int    `json:"cacheRead"`
	CacheWrite int    `json:"cacheWrite"`
	Uncached   int    `json:"uncached"`
	Reason     string `json:"reason"`
	// ChangedAtLine is the session line of the first message that differs
	// from the previous request (reason prefix-changed), 0 otherwise;
	// ChangedAt names the block ("message", "system+tools", "options",
	// "compaction summary").
	ChangedAtLine int64   `json:"changedAtLine,omitempty"`
	ChangedAt     string  `json:"changedAt,omitempty"`
	GapSeconds    float64 `json:"gapSeconds"`
	LostTokens    int     `json:"lostTokens,omitempty"`
}

// Call is one model call of a session.
type Call struct {
	Index      int       `json:"index"`
	Line       int64     `json:"line"`
	EntryID    string    `json:"entryId,omitempty"`
	Time       time.Time `json:"time"`
	Provider   string    `json:"provider"`
	Model      string    `json:"model"`
	StopReason string    `json:"stopReason"`
	Messages   int       `json:"messages"`
	// AfterToolResult: the last message sent is a tool result (the call is
	// inside a tool loop).
	AfterToolResult bool      `json:"afterToolResult"`
	Predicted       Predicted `json:"predicted"`
	Recorded        *Recorded `json:"recorded,omitempty"`
	// Agree: predicted and recorded agree on hit or miss (nil when the
	// call records no usage).
	Agree *bool `json:"agree,omitempty"`
	// Explanation classifies a recorded miss: the predicted reason when the
	// transcript explains it, "unexplained" otherwise. Evidence lists the
	// facts behind it.
	Explanation string   `json:"explanation,omitempty"`
	Evidence    []string `json:"evidence,omitempty"`
	// SizeMismatch is the recorded prompt size minus what the transcript
	// accounts for (unseen part + messages), where the difference could not
	// be given to new messages: nonzero means the unseen part or the
	// rendering of history changed.
	SizeMismatch int `json:"sizeMismatch,omitempty"`
	// Costs at list prices of the prompt (input side), with the cache as
	// predicted and without any cache; MissCost is what the miss cost above
	// a full hit of the lost prefix.
	Cost        float64 `json:"cost"`
	CostNoCache float64 `json:"costNoCache"`
	MissCost    float64 `json:"missCost,omitempty"`

	agree bool
}

// Agreement counts calls whose prediction matches the record.
type Agreement struct {
	Calls int `json:"calls"` // calls with recorded usage
	Agree int `json:"agree"` // same hit-or-miss verdict
	// Over the calls predicted as hits: predicted and recorded cache reads.
	PredictedHits     int   `json:"predictedHits"`
	PredictedHitRead  int64 `json:"predictedHitRead"`
	RecordedOnHitRead int64 `json:"recordedHitRead"`
	RecordedHits      int   `json:"recordedHits"`
}

// Rate returns Agree/Calls (1 when there are no calls).
func (a *Agreement) Rate() float64 {
	if a.Calls == 0 {
		return 1
	}
	return float64(a.Agree) / float64(a.Calls)
}

// ReadError returns |predicted − recorded| / recorded over predicted hits.
func (a *Agreement) ReadError() float64 {
	if a.RecordedOnHitRead == 0 {
		return 0
	}
	d := float64(a.PredictedHitRead - a.RecordedOnHitRead)
	if d < 0 {
		d = -d
	}
	return d / float64(a.RecordedOnHitRead)
}

func (a *Agreement) add(c *Call) {
	if c.Recorded == nil {
		return
	}
	a.Calls++
	if c.agree {
		a.Agree++
	}
	if c.Recorded.CacheRead > 0 {
		a.RecordedHits++
	}
	if c.Predicted.CacheRead > 0 {
		a.PredictedHits++
		a.PredictedHitRead += int64(c.Predicted.CacheRead)
		a.RecordedOnHitRead += c.Recorded.CacheRead
	}
}

// Tokens sums token counts.
type Tokens struct {
	Prompt     int64 `json:"prompt"`
	CacheRead  int64 `json:"cacheRead"`
	CacheWrite int64 `json:"cacheWrite"`
	Uncached   int64 `json:"uncached"`
}

// Point is one bar of the timeline: the mean over Calls consecutive calls.
type Point struct {
	First    int     `json:"first"` // index of the first call
	Calls    int     `json:"calls"`
	Read     float64 `json:"read"`
	Write    float64 `json:"write"`
	Uncached float64 `json:"uncached"`
	RecRead  float64 `json:"recordedRead"` // -1 when no call records usage
	Miss     bool    `json:"miss"`         // a predicted miss in the bucket
	RecMiss  bool    `json:"recordedMiss"` // a recorded miss in the bucket
}

// Report is the profile of one session.
type Report struct {
	File      string   `json:"file"`
	Source    string   `json:"source"` // "jsonl v1", "jsonl v3", "sqlite"
	SessionID string   `json:"sessionId"`
	Providers []string `json:"providers"`
	// Rules describes the cache rules simulated, per provider seen.
	Rules  []string `json:"rules"`
	Models []string `json:"models"`

	Calls        int    `json:"calls"`
	SkippedCalls int    `json:"skippedCalls"` // failed calls without usage, injected notices
	Unseen       int    `json:"unseenTokens"`
	UnseenFrom   string `json:"unseenFrom"`
	Tail         int    `json:"tailTokens"`

	Predicted       Tokens  `json:"predicted"`
	Recorded        Tokens  `json:"recorded"` // over calls with usage; Uncached = input
	HitRate         float64 `json:"hitRate"`  // predicted cache reads / prompt tokens
	RecordedHitRate float64 `json:"recordedHitRate"`

	Currency     string  `json:"currency"`
	PriceKnown   bool    `json:"priceKnown"`
	Cost         float64 `json:"cost"`
	CostNoCache  float64 `json:"costNoCache"`
	RecordedCost float64 `json:"recordedCost"`

	All      Agreement `json:"agreement"`
	ToolLoop Agreement `json:"toolLoopAgreement"`

	RecordedMisses int            `json:"recordedMisses"`
	Explained      map[string]int `json:"explainedMisses"`
	UnexplainedN   int            `json:"unexplainedMisses"`
	// UnexplainedNewTurn counts the unexplained misses that are the first
	// call after a user message.
	UnexplainedNewTurn int     `json:"unexplainedNewTurn"`
	Unexplained        []Call  `json:"unexplained"`
	TopMisses          []Call  `json:"topMisses"`
	Timeline           []Point `json:"timeline"`

	// Input: what the reader skipped.
	Entries        int64 `json:"entries"`
	UnknownSkipped int64 `json:"unknownEntriesSkipped"`
	BadLines       int64 `json:"badLines"`
	Torn           bool  `json:"tornLastLine"`
	TornOffset     int64 `json:"tornOffset,omitempty"`
	Orphans        int64 `json:"orphans,omitempty"`
	// UnknownTypes counts the entry types the reader did not know, by name.
	UnknownTypes map[string]int64 `json:"unknownTypes,omitempty"`
	// LongLines counts lines over the reader's limit that were skipped.
	LongLines int64 `json:"longLinesSkipped,omitempty"`
	Resets    int64 `json:"resets,omitempty"`
	LeafMoves int64 `json:"leafMoves,omitempty"`
	// Archived is set for a session whose transcript OpenClaw moved to its
	// cold archive.
	Archived *Archived `json:"archived,omitempty"`
}

// Archived describes a cold-archived session (OpenClaw's
// session_transcript_cold_archives row).
type Archived struct {
	Storage      string `json:"storage"` // "file" or "sqlite"
	Name         string `json:"name"`
	Path         string `json:"path,omitempty"`
	Events       int64  `json:"events"`
	RawBytes     int64  `json:"rawBytes"`
	ArchiveBytes int64  `json:"archiveBytes"`
	// Read says whether the archive's entries were profiled; Note says
	// why not.
	Read bool   `json:"read"`
	Note string `json:"note,omitempty"`
}

// missHeap keeps the most expensive misses (a min-heap on MissCost).
type missHeap []Call

func (h missHeap) Len() int           { return len(h) }
func (h missHeap) Less(i, j int) bool { return h[i].MissCost < h[j].MissCost }
func (h missHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *missHeap) Push(x any)        { *h = append(*h, x.(Call)) }
func (h *missHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Profiler profiles one session fed entry by entry.
type Profiler struct {
	opts Options
	rep  Report
	br   *branch
	dig  xxhash.Digest

	sims map[cachesim.Provider]*cachesim.Sim

	provider, model string // current, from model_change / header
	thinking        string // the session's current thinking level
	// runThinking is the level the current run was started with: a run's
	// request options are resolved when it starts (at the user's message),
	// so a thinking_level_change written during a run applies to the next.
	runThinking string

	calibrated bool
	unseen     int
	tail       int

	prevCall struct {
		ok        bool
		stop      string
		time      time.Time
		messages  int
		recPrompt int64
	}

	afterUser bool // the current call follows a user message

	version int                   // the header's session version
	nav     *transcript.Navigator // resolves parents (version 4 rules)
	// reset describes the latest reset until the first call after it.
	reset string

	blocks    []cachesim.Block
	ctxIdx    []int
	call      Call
	top       missHeap
	seenP     map[string]bool
	seenRules map[string]bool
	seenM     map[string]bool

	tl       []Point
	tlBucket int
	tlCur    Point
}

// NewProfiler returns a profiler for one session.
func NewProfiler(opts Options) *Profiler {
	if opts.TopMisses <= 0 {
		opts.TopMisses = 10
	}
	if opts.MaxUnexplained <= 0 {
		opts.MaxUnexplained = 200
	}
	if opts.TimelinePoints <= 0 {
		opts.TimelinePoints = 2000
	}
	p := &Profiler{opts: opts, br: newBranch(), sims: map[cachesim.Provider]*cachesim.Sim{},
		seenP: map[string]bool{}, seenM: map[string]bool{}, seenRules: map[string]bool{}, tlBucket: 1}
	p.rep.Explained = map[string]int{}
	p.tlCur.RecRead = -1
	return p
}

// Header records the session header.
func (p *Profiler) Header(h transcript.Header, source string) {
	p.rep.SessionID = h.ID
	p.rep.Source = source
	p.version = h.Version
	p.nav = nil
	if h.Provider != "" {
		p.provider, p.model = h.Provider, h.ModelID
	}
	p.thinking = h.ThinkingLevel
	p.runThinking = h.ThinkingLevel
}

// Entry feeds one entry (in file order).
func (p *Profiler) Entry(e *transcript.Entry) {
	p.rep.Entries++
	if p.nav == nil {
		p.nav = transcript.NewNavigator(p.version)
	}
	st := p.nav.Step(e)
	if !st.InTree {
		return
	}
	switch e.Type {
	case transcript.TypeModelChange:
		p.provider, p.model = string(e.Provider), string(e.ModelID)
	case transcript.TypeThinkingLevelChange:
		p.thinking = string(e.ThinkingLevel)
	case transcript.TypeLeaf:
		// The active branch moves to the target; the leaf entry itself is
		// on no path.
		if st.Control {
			p.rep.LeafMoves++
			p.br.attach(st.Leaf)
		}
		return
	}
	if e.AppendSide || (e.Type == transcript.TypeUnknown && !st.MovesLeaf) {
		// Beside the active branch (a side append, an unknown link): sent
		// in no request.
		return
	}
	n := entryNode(e, &p.dig)
	n.parent = st.Parent
	if e.Type == transcript.TypeMessage && e.Message != nil && e.Message.Role == llm.RoleUser {
		p.runThinking = p.thinking
	}
	if e.Type == transcript.TypeMessage && e.Message != nil && e.Message.Role == llm.RoleAssistant {
		p.br.attach(n.parent)
		p.maybeCall(e)
	}
	p.br.attach(n.parent)
	p.br.push(n)
	switch e.Type {
	case transcript.TypeCompaction:
		p.br.compact(idHash(e.FirstKeptEntryID), false)
	case transcript.TypeReset:
		p.rep.Resets++
		p.br.compact(idHash(e.FirstKeptEntryID), true)
		p.reset = fmt.Sprintf("session reset (%s) at line %d: a fresh history window, the earlier messages are no longer sent", orUnknown(e.Reason), e.Line)
	}
}

func orUnknown(b []byte) string {
	if len(b) == 0 {
		return "no reason given"
	}
	return string(b)
}

// sim returns the cache of a provider with the rules of model; assumed
// says the provider was inferred from the API name.
func (p *Profiler) sim(prov cachesim.Provider, model string, assumed bool) *cachesim.Sim {
	r := cachesim.RulesFor(prov, model)
	if p.opts.Retention != "" {
		r = r.WithRetention(p.opts.Retention)
	}
	s := p.sims[prov]
	if s == nil {
		s = cachesim.New(r, cachesim.Options{})
		p.sims[prov] = s
	} else if s.Rules() != r {
		s.SetRules(r)
	}
	key := prov.String() + "/" + model
	if !p.seenRules[key] && len(p.seenRules) < 32 {
		p.seenRules[key] = true
		d := describeRules(r, model)
		if assumed {
			d += " (provider inferred from the API name)"
		}
		p.rep.Rules = append(p.rep.Rules, d)
	}
	return s
}

// context lists the path indexes of the nodes sent, in request order.
func (p *Profiler) context() []int {
	path := p.br.path
	idx := p.ctxIdx[:0]
	comp := -1
	lastUser := -1
	for i := range path {
		switch path[i].kind {
		case kindCompaction:
			comp = i
		case kindUser:
			lastUser = i
		}
	}
	if comp >= 0 {
		idx = append(idx, comp)
	}
	for i := range path {
		switch path[i].kind {
		case kindHidden, kindCompaction:
			continue
		case kindRuntimeCtx:
			if i < lastUser {
				continue
			}
		}
		idx = append(idx, i)
	}
	p.ctxIdx = idx
	return idx
}

func (p *Profiler) maybeCall(e *transcript.Entry) {
	m := e.Message
	u := &m.Usage
	recP := u.Input + u.CacheRead + u.CacheWrite
	if u.Input < 0 || u.CacheRead < 0 || u.CacheWrite < 0 || recP > 1<<40 {
		recP = 0 // nonsense usage counts as none
	}
	if m.Provider == "openclaw" || ((m.StopReason == llm.StopError || m.StopReason == llm.StopAborted) && recP == 0 && u.Output == 0) {
		p.rep.SkippedCalls++
		return
	}
	provName, model := m.Provider, m.Model
	if provName == "" {
		provName, model = p.provider, p.model
	}
	if p.opts.Provider != "" {
		provName = p.opts.Provider
	}
	if p.opts.Model != "" {
		model = p.opts.Model
	}
	prov := cachesim.ParseProvider(provName)
	assumed := false
	if prov == cachesim.ProviderUnknown {
		prov = cachesim.ParseProvider(string(m.API))
		assumed = true
	}
	sim := p.sim(prov, model, assumed)
	rules := sim.Rules()
	anth := rules.Mode == cachesim.ModeBreakpoints

	ctx := p.context()
	path := p.br.path
	c := &p.call
	*c = Call{Index: p.rep.Calls, Line: e.Line, EntryID: string(e.ID), Provider: provName, Model: model,
		StopReason: m.StopReason.String(), Messages: len(ctx), Evidence: c.Evidence[:0]}
	ts := m.Timestamp
	if ts == 0 {
		ts = e.Timestamp
	}
	c.Time = time.UnixMilli(ts).UTC()
	p.afterUser = false
	if len(ctx) > 0 {
		switch path[ctx[len(ctx)-1]].kind {
		case kindToolResult:
			c.AfterToolResult = true
		case kindUser:
			p.afterUser = true
		}
	}
	if recP > 0 {
		c.Recorded = &Recorded{Input: u.Input, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite}
	}

	// Sizes.
	switch {
	case !p.calibrated && (recP > 0 || p.opts.Unseen > 0):
		sum := 0
		for _, i := range ctx {
			path[i].sized = true
			sum += path[i].tokens
		}
		if anth && recP > 0 {
			p.tail = int(u.Input)
		}
		if p.opts.Unseen > 0 {
			p.unseen = p.opts.Unseen
			p.rep.UnseenFrom = "option"
		} else {
			p.unseen = int(recP) - p.tail - sum
			p.rep.UnseenFrom = fmt.Sprintf("call at line %d: prompt %d − messages %d − tail %d", e.Line, recP, sum, p.tail)
			if p.unseen < 0 {
				c.SizeMismatch = p.unseen
				p.unseen = 0
			}
		}
		p.calibrated = true
	case recP > 0:
		sized, est := 0, 0
		var unsized int
		for _, i := range ctx {
			if path[i].sized {
				sized += path[i].tokens
			} else {
				unsized++
				est += path[i].est
			}
		}
		growth := int(recP) - p.tail - p.unseen - sized
		switch {
		case unsized == 0:
			c.SizeMismatch = growth
		case growth < 0:
			c.SizeMismatch = growth - est
			for _, i := range ctx {
				path[i].sized = true
			}
		default:
			// Share the growth in proportion to the estimates.
			left, k := growth, 0
			for _, i := range ctx {
				if path[i].sized {
					continue
				}
				k++
				var t int
				switch {
				case k == unsized:
					t = left
				case est > 0:
					t = int(int64(growth) * int64(path[i].est) / int64(est))
				default:
					t = growth / unsized
				}
				path[i].tokens, path[i].sized = t, true
				left -= t
			}
		}
	default:
		for _, i := range ctx {
			path[i].sized = true
		}
	}

	// Blocks: unseen tools+system, options, messages.
	bl := p.blocks[:0]
	bl = append(bl, cachesim.Block{Hash: xxhash.Sum64String("tools+system"), Tokens: p.unseen, Breakpoint: anth, Label: -1})
	if anth {
		bl = append(bl, cachesim.Block{Hash: xxhash.Sum64String(p.runThinking) ^ 0x7468696e6b696e67, Label: -2})
	}
	lastSent := -1
	for _, i := range ctx {
		n := &path[i]
		bl = append(bl, cachesim.Block{Hash: n.hash, Tokens: n.tokens, Parts: n.parts, Label: i})
		if n.kind != kindAssistant {
			lastSent = len(bl) - 1
		}
	}
	if anth && lastSent > 0 {
		bl[lastSent].Breakpoint = true
	}
	bl = append(bl, cachesim.Block{Hash: 0, Tokens: p.tail, Label: -3})
	p.blocks = bl
	res := sim.Simulate(&cachesim.Request{Time: c.Time, Namespace: xxhash.Sum64String(prov.String() + "/" + model), Blocks: bl})

	pr := &c.Predicted
	pr.Prompt, pr.CacheRead, pr.CacheWrite, pr.Uncached = res.Total, res.Read, res.Write, res.Uncached
	pr.Reason = res.Reason.String()
	pr.GapSeconds = res.Gap.Seconds()
	pr.LostTokens = res.Lost
	if res.Reason == cachesim.ReasonPrefixChanged && res.ChangedAt >= 0 {
		switch l := res.ChangedLabel; {
		case l == -1:
			pr.ChangedAt = "system+tools"
		case l == -2:
			pr.ChangedAt = "options (thinking level)"
		case l >= 0 && l < len(path):
			pr.ChangedAtLine = path[l].line
			pr.ChangedAt = "message"
			if path[l].kind == kindCompaction {
				pr.ChangedAt = "compaction summary"
			}
		}
	}

	// Cost at list prices.
	price := rules.Price
	c.CostNoCache = float64(res.Total) * price.Input / 1e6
	c.Cost = (float64(res.Uncached)*price.Input + float64(res.Read)*price.CacheRead +
		float64(res.Write-res.Write1h)*price.CacheWrite + float64(res.Write1h)*price.CacheWrite1h) / 1e6

	p.judge(c, &res, rules)
	if p.reset != "" {
		// The first call after a reset starts a fresh prompt: OpenClaw
		// builds it anew for the new history window, so a recorded miss
		// there is explained by the reset.
		if c.Explanation == "unexplained" {
			c.Explanation = "reset"
			c.Evidence = append(c.Evidence[:0], p.reset)
		}
		p.reset = ""
	}
	p.account(c, rules)
	if p.opts.OnCall != nil {
		p.opts.OnCall(c)
	}
	p.prevCall.ok = true
	p.prevCall.stop = c.StopReason
	p.prevCall.time = c.Time
	p.prevCall.messages = len(ctx)
	p.prevCall.recPrompt = recP
}

// judge compares prediction and record and explains recorded misses.
func (p *Profiler) judge(c *Call, res *cachesim.Result, rules cachesim.Rules) {
	missTokens := 0
	if c.Recorded != nil {
		rec := c.Recorded
		c.agree = (rec.CacheRead > 0) == (res.Read > 0)
		a := c.agree
		c.Agree = &a
		if rec.CacheRead == 0 {
			p.rep.RecordedMisses++
			missTokens = int(rec.CacheWrite + rec.Input)
			if res.Read == 0 && res.Reason != cachesim.ReasonHit {
				c.Explanation = res.Reason.String()
				if c.Predicted.ChangedAt != "" {
					c.Explanation += ": " + c.Predicted.ChangedAt
				}
				c.Evidence = append(c.Evidence, p.reasonText(c, res, rules))
			} else {
				// The transcript explains at most the loss after a change
				// it shows; the record lost the tokens before it too.
				c.Explanation = "unexplained"
				if res.Reason != cachesim.ReasonHit {
					c.Evidence = append(c.Evidence, p.reasonText(c, res, rules)+
						fmt.Sprintf(": that explains losing what follows it, not the %d tokens before it, which the record did not read either", res.Read))
				}
				p.evidence(c, res, rules)
			}
		} else if res.Read == 0 {
			c.Evidence = append(c.Evidence, fmt.Sprintf("the record read %d tokens where the simulation predicted a miss (%s)", rec.CacheRead, p.reasonText(c, res, rules)))
		}
	} else if res.Reason != cachesim.ReasonHit {
		missTokens = res.Write + res.Uncached
		c.Explanation = res.Reason.String()
		c.Evidence = append(c.Evidence, p.reasonText(c, res, rules))
	}
	if missTokens > 0 {
		lost := res.Lost
		if lost == 0 || c.Explanation == "unexplained" {
			lost = missTokens
		}
		c.MissCost = float64(lost) * (rules.Price.CacheWrite - rules.Price.CacheRead) / 1e6
		if rules.Price.CacheWrite <= rules.Price.CacheRead {
			c.MissCost = float64(lost) * (rules.Price.Input - rules.Price.CacheRead) / 1e6
		}
	}
}

func (p *Profiler) reasonText(c *Call, res *cachesim.Result, rules cachesim.Rules) string {
	switch res.Reason {
	case cachesim.ReasonCold:
		return "first call of the session on this cache"
	case cachesim.ReasonExpired:
		return fmt.Sprintf("expired: idle %s, longer than the %s lifetime", res.Gap.Round(time.Second), rules.TTL)
	case cachesim.ReasonModelChanged:
		return "model changed to " + c.Model
	case cachesim.ReasonPrefixChanged:
		if c.Predicted.ChangedAtLine > 0 {
			return fmt.Sprintf("prefix changed at the %s of line %d", c.Predicted.ChangedAt, c.Predicted.ChangedAtLine)
		}
		return "prefix changed at " + c.Predicted.ChangedAt
	case cachesim.ReasonBelowMinimum:
		return fmt.Sprintf("prompt below the %d-token minimum", rules.MinTokens)
	case cachesim.ReasonNoBreakpoint:
		return "no cache breakpoint"
	case cachesim.ReasonBreakpointLimit:
		return fmt.Sprintf("more than %d breakpoints: rejected", rules.MaxBreakpoints)
	case cachesim.ReasonTTLOrder:
		return "a 1-hour breakpoint after a 5-minute one: rejected"
	}
	return res.Reason.String()
}

// evidence lists what the transcript shows around a miss it cannot explain.
func (p *Profiler) evidence(c *Call, res *cachesim.Result, rules cachesim.Rules) {
	rec := c.Recorded
	ev := c.Evidence
	if res.Gap < 0 {
		ev = append(ev, fmt.Sprintf("started %s before the previous call ended: overlapping runs", (-res.Gap).Round(time.Second)))
	} else {
		ev = append(ev, fmt.Sprintf("gap %s since the previous call, within the %s lifetime", res.Gap.Round(time.Second), rules.TTL))
	}
	if res.Reason == cachesim.ReasonHit {
		ev = append(ev, fmt.Sprintf("the transcript's prefix is unchanged: all %d messages of the previous request are still sent first (predicted read %d tokens)", p.prevCall.messages, res.Read))
	}
	if rec.CacheRead == 0 {
		ev = append(ev, fmt.Sprintf("recorded read 0 and wrote %d of %d prompt tokens: nothing before the first breakpoint was reused, so the tools, system prompt or request options differed", rec.CacheWrite, rec.Prompt()))
	}
	if p.afterUser {
		ev = append(ev, fmt.Sprintf("first call after a user message (the previous call ended with %q)", p.prevCall.stop))
		p.rep.UnexplainedNewTurn++
	}
	if c.SizeMismatch != 0 {
		ev = append(ev, fmt.Sprintf("recorded prompt is %+d tokens off what the transcript accounts for: the unseen part or the rendering of history changed", c.SizeMismatch))
	}
	c.Evidence = ev
}

func (p *Profiler) account(c *Call, rules cachesim.Rules) {
	r := &p.rep
	r.Calls++
	if !p.seenP[c.Provider] && len(p.seenP) < 32 {
		p.seenP[c.Provider] = true
		r.Providers = append(r.Providers, c.Provider)
	}
	if !p.seenM[c.Model] && len(p.seenM) < 32 {
		p.seenM[c.Model] = true
		r.Models = append(r.Models, c.Model)
	}
	pr := &c.Predicted
	r.Predicted.Prompt += int64(pr.Prompt)
	r.Predicted.CacheRead += int64(pr.CacheRead)
	r.Predicted.CacheWrite += int64(pr.CacheWrite)
	r.Predicted.Uncached += int64(pr.Uncached)
	r.Cost += c.Cost
	r.CostNoCache += c.CostNoCache
	r.Currency = rules.Price.Currency
	r.PriceKnown = rules.Price.Known()
	if rec := c.Recorded; rec != nil {
		r.Recorded.Prompt += rec.Prompt()
		r.Recorded.CacheRead += rec.CacheRead
		r.Recorded.CacheWrite += rec.CacheWrite
		r.Recorded.Uncached += rec.Input
		pz := rules.Price
		r.RecordedCost += (float64(rec.Input)*pz.Input + float64(rec.CacheRead)*pz.CacheRead + float64(rec.CacheWrite)*pz.CacheWrite) / 1e6
	}
	r.All.add(c)
	if c.AfterToolResult {
		r.ToolLoop.add(c)
	}
	if c.Explanation != "" && c.Recorded != nil {
		if c.Explanation == "unexplained" {
			r.UnexplainedN++
			if len(r.Unexplained) < p.opts.MaxUnexplained {
				r.Unexplained = append(r.Unexplained, cloneCall(c))
			}
		} else {
			r.Explained[strings.SplitN(c.Explanation, ":", 2)[0]]++
		}
	}
	if c.MissCost > 0 {
		if len(p.top) < p.opts.TopMisses {
			heap.Push(&p.top, cloneCall(c))
		} else if c.MissCost > p.top[0].MissCost {
			p.top[0] = cloneCall(c)
			heap.Fix(&p.top, 0)
		}
	}
	p.timeline(c)
}

func cloneCall(c *Call) Call {
	d := *c
	d.Evidence = append([]string(nil), c.Evidence...)
	if c.Recorded != nil {
		r := *c.Recorded
		d.Recorded = &r
	}
	if c.Agree != nil {
		a := *c.Agree
		d.Agree = &a
	}
	return d
}

// timeline adds c to the chart, merging buckets pairwise when full.
func (p *Profiler) timeline(c *Call) {
	cur := &p.tlCur
	if cur.Calls == 0 {
		cur.First = c.Index
	}
	n := float64(cur.Calls)
	mix := func(old *float64, v float64) { *old = (*old*n + v) / (n + 1) }
	mix(&cur.Read, float64(c.Predicted.CacheRead))
	mix(&cur.Write, float64(c.Predicted.CacheWrite))
	mix(&cur.Uncached, float64(c.Predicted.Uncached))
	if c.Recorded != nil {
		if cur.RecRead < 0 {
			cur.RecRead = 0
		}
		mix(&cur.RecRead, float64(c.Recorded.CacheRead))
		if c.Recorded.CacheRead == 0 {
			cur.RecMiss = true
		}
	}
	if c.Predicted.Reason != "hit" {
		cur.Miss = true
	}
	cur.Calls++
	if cur.Calls < p.tlBucket {
		return
	}
	p.tl = append(p.tl, *cur)
	*cur = Point{RecRead: -1}
	if len(p.tl) >= p.opts.TimelinePoints {
		merged := p.tl[:0]
		for i := 0; i+1 < len(p.tl); i += 2 {
			a, b := p.tl[i], p.tl[i+1]
			w := float64(a.Calls + b.Calls)
			m := Point{First: a.First, Calls: a.Calls + b.Calls, Miss: a.Miss || b.Miss, RecMiss: a.RecMiss || b.RecMiss,
				Read:     (a.Read*float64(a.Calls) + b.Read*float64(b.Calls)) / w,
				Write:    (a.Write*float64(a.Calls) + b.Write*float64(b.Calls)) / w,
				Uncached: (a.Uncached*float64(a.Calls) + b.Uncached*float64(b.Calls)) / w,
				RecRead:  -1}
			if a.RecRead >= 0 || b.RecRead >= 0 {
				m.RecRead = (max(a.RecRead, 0)*float64(a.Calls) + max(b.RecRead, 0)*float64(b.Calls)) / w
			}
			merged = append(merged, m)
		}
		p.tl = merged
		p.tlBucket *= 2
	}
}

// Finish completes the report; stats are the reader's counts.
func (p *Profiler) Finish(st transcript.Stats) *Report {
	r := &p.rep
	if p.tlCur.Calls > 0 {
		p.tl = append(p.tl, p.tlCur)
		p.tlCur = Point{RecRead: -1}
	}
	r.Timeline = p.tl
	r.Unseen, r.Tail = p.unseen, p.tail
	if !p.calibrated {
		r.UnseenFrom = "unknown: no call reports usage; assumed 0"
	}
	if r.Predicted.Prompt > 0 {
		r.HitRate = float64(r.Predicted.CacheRead) / float64(r.Predicted.Prompt)
	}
	if r.Recorded.Prompt > 0 {
		r.RecordedHitRate = float64(r.Recorded.CacheRead) / float64(r.Recorded.Prompt)
	}
	top := append([]Call(nil), p.top...)
	// Most expensive first.
	for i := 1; i < len(top); i++ {
		for j := i; j > 0 && top[j].MissCost > top[j-1].MissCost; j-- {
			top[j], top[j-1] = top[j-1], top[j]
		}
	}
	r.TopMisses = top
	r.BadLines = st.BadLines
	r.Torn = st.Torn
	r.TornOffset = st.TornOffset
	r.UnknownSkipped = st.Unknown
	r.UnknownTypes = st.UnknownTypes
	r.LongLines = st.LongLines
	r.Orphans = p.br.orphans
	return r
}

func describeRules(r cachesim.Rules, model string) string {
	name := r.Model
	if name == "" {
		name = "defaults for " + model
	}
	s := fmt.Sprintf("%s %s: minimum %d tokens, lifetime %s", r.Provider, name, r.MinTokens, r.TTL)
	if r.Unit > 1 {
		s += fmt.Sprintf(", %d-token steps", r.Unit)
	}
	if r.MaxBreakpoints > 0 {
		s += fmt.Sprintf(", at most %d breakpoints, %d-block lookback", r.MaxBreakpoints, r.Lookback)
	}
	if r.MaxAge > 0 {
		s += fmt.Sprintf(", at most %s in all", r.MaxAge)
	}
	return s
}

// statsZero is the reader statistics of a report built without a reader.
func (r *Report) statsZero() transcript.Stats { return transcript.Stats{} }
