package cacheprofile

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/ocbench/ocbench/prefixcache/cachesim"
	"github.com/ocbench/ocbench/prompt"
	"github.com/ocbench/ocbench/tokenize"
)

// WorkspaceOptions configure ProfileWorkspace.
type WorkspaceOptions struct {
	// Model whose cache is simulated (default claude-sonnet-4-5, with
	// OpenClaw's Anthropic layout: a breakpoint after the stable system
	// prefix and one on the last user message).
	Provider, Model string
	Retention       string
	// Config is the prompt configuration (default prompt.SampleConfig()).
	Config *prompt.Config
	// BeforeTurn, when set, runs before each turn's prompt is resolved (a
	// test edits a workspace file there, as a user would mid-session).
	BeforeTurn func(turn int, workspace string)
	// Start is the first turn's time (default 2026-09-01 09:00 UTC); turns
	// are a minute apart, tool calls a few seconds.
	Start time.Time
}

// WorkspaceTurn is one simulated turn of ocbench's own prompt assembly.
type WorkspaceTurn struct {
	Turn          int    `json:"turn"`
	StableBytes   int    `json:"stableBytes"`
	StableTokens  int    `json:"stableTokens"`
	StableHash    string `json:"stableHash"`
	DynamicBytes  int    `json:"dynamicBytes"`
	DynamicTokens int    `json:"dynamicTokens"`
	DynamicHash   string `json:"dynamicHash"`
	// DynamicChanged names the dynamic inputs changed for this turn;
	// StableChanged the stable inputs that changed since the previous turn
	// (each breaks the cache from the top of the system prompt).
	DynamicChanged []string `json:"dynamicChanged,omitempty"`
	StableChanged  []string `json:"stableChanged,omitempty"`
	// Calls are the model calls of the turn: the user's message, then the
	// call after a tool result.
	Calls []Predicted `json:"calls"`
}

// WorkspaceReport is the cache profile of ocbench's prompt assembly.
type WorkspaceReport struct {
	Workspace string          `json:"workspace"`
	Rules     string          `json:"rules"`
	Turns     []WorkspaceTurn `json:"turns"`
	// StableConstant: the stable prefix hash never changed.
	StableConstant bool `json:"stableConstant"`
	// Breakers lists every stable input that changed during the run.
	Breakers []string `json:"breakers,omitempty"`
	// Report holds the call-level summary (costs, hit rate, timeline).
	Report *Report `json:"summary"`
}

// stableInputs fingerprints the stable inputs of p by name, so that a
// change of the stable prefix can be traced to the input that caused it.
func stableInputs(p *prompt.Params) map[string]uint64 {
	h := func(parts ...string) uint64 {
		d := xxhash.New()
		for _, s := range parts {
			d.WriteString(s)
			d.Write([]byte{0})
		}
		return d.Sum64()
	}
	m := map[string]uint64{
		"tool list":              h(p.ToolNames...),
		"skills":                 h(p.SkillsPrompt),
		"provider stable prefix": h(p.Provider.StablePrefix, p.Provider.InteractionStyle, p.Provider.ToolCallStyle, p.Provider.ExecutionBias),
		"model aliases":          h(p.ModelAliasLines...),
		"user timezone":          h(p.UserTimezone),
		"workspace notes":        h(p.WorkspaceNotes...),
		"workspace dir":          h(p.WorkspaceDir, p.DocsPath, p.LocalSource),
		"owners":                 h(append(slices.Clone(p.OwnerNumbers), p.OwnerDisplay)...),
		"sandbox":                h(fmt.Sprint(p.Sandbox.Enabled, p.Sandbox.WorkspaceAccess, p.Sandbox.ContainerWorkspaceDir)),
		"bootstrap notice":       h(fmt.Sprint(p.BootstrapMode), p.BootstrapTruncationNotice),
		"memory":                 h(fmt.Sprint(p.MemoryEnabled, p.MemoryCitations)),
		"mode":                   h(p.Mode.String(), p.SystemPromptOverride),
	}
	for _, f := range p.ContextFiles {
		if strings.EqualFold(lastElem(f.Path), "heartbeat.md") {
			continue // below the boundary
		}
		m["file "+lastElem(f.Path)] = h(f.Path, f.Content)
	}
	return m
}

func lastElem(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

// turnInputs sets the dynamic inputs of turn i as they vary live: the
// conversation context of the incoming message, the channel, the reasoning
// level, a heartbeat run now and then. It returns their names.
func turnInputs(p *prompt.Params, i int) []string {
	channels := []string{"telegram", "discord", "webchat"}
	p.ExtraSystemPrompt = fmt.Sprintf("Conversation info (untrusted metadata): message %d from user#%d at 2026-09-01T09:%02d:00Z", 1000+i, 7+i%3, i%60)
	p.Runtime.Channel = channels[i%len(channels)]
	p.ReasoningLevel = []string{"off", "low"}[i%2]
	changed := []string{"extra system prompt (conversation info)", "runtime channel", "reasoning level"}
	if i%4 == 3 {
		p.HeartbeatPrompt = "Read HEARTBEAT.md if it exists. If nothing needs attention, reply HEARTBEAT_OK."
		changed = append(changed, "heartbeat prompt")
	} else {
		p.HeartbeatPrompt = ""
	}
	if i%5 == 4 {
		p.Reactions = &prompt.ReactionGuidance{Level: "minimal", Channel: p.Runtime.Channel}
		changed = append(changed, "reactions")
	} else {
		p.Reactions = nil
	}
	return changed
}

// ProfileWorkspace simulates turns turns of ocbench's own prompt assembly
// for the workspace dir (re-resolved every turn, as a live run re-reads its
// bootstrap files), with the dynamic inputs changing each turn, and runs
// the resulting requests through the provider's cache.
func ProfileWorkspace(dir string, turns int, opts WorkspaceOptions) (*WorkspaceReport, error) {
	cfg := opts.Config
	if cfg == nil {
		cfg = prompt.SampleConfig()
	}
	if opts.Model == "" {
		opts.Model = "claude-sonnet-4-5"
	}
	prov := cachesim.ParseProvider(opts.Provider)
	if prov == cachesim.ProviderUnknown {
		prov = cachesim.RulesFor(cachesim.ProviderUnknown, opts.Model).Provider
	}
	rules := cachesim.RulesFor(prov, opts.Model)
	if opts.Retention != "" {
		rules = rules.WithRetention(opts.Retention)
	}
	sim := cachesim.New(rules, cachesim.Options{})
	anth := rules.Mode == cachesim.ModeBreakpoints
	counter, err := tokenize.Get(tokenize.O200kBase)
	if err != nil {
		return nil, err
	}
	start := opts.Start
	if start.IsZero() {
		start = time.Date(2026, 9, 1, 9, 0, 0, 0, time.UTC)
	}
	var resolver prompt.Resolver
	renderer := &prompt.Renderer{Counter: counter}
	wr := &WorkspaceReport{Workspace: dir, Rules: describeRules(rules, opts.Model), StableConstant: true}
	prof := NewProfiler(Options{})
	prof.rep.File = dir
	prof.rep.Source = "workspace"
	prof.rep.Rules = []string{wr.Rules}

	var prev map[string]uint64
	var prevStable string
	var history []cachesim.Block
	var buf []byte
	ns := xxhash.Sum64String(prov.String() + "/" + opts.Model)
	seenBreaker := map[string]bool{}
	callIdx := 0
	for t := 0; t < turns; t++ {
		if opts.BeforeTurn != nil {
			opts.BeforeTurn(t, dir)
		}
		res, err := resolver.Resolve(cfg, dir)
		if err != nil {
			return nil, err
		}
		p := res.Params
		turn := WorkspaceTurn{Turn: t + 1, DynamicChanged: turnInputs(&p, t)}
		var lay prompt.Layout
		buf, lay, err = renderer.AppendPrompt(buf[:0], &p)
		if err != nil {
			return nil, err
		}
		stable := buf[:lay.StableLen]
		dynamic := buf[min(lay.DynamicStart, len(buf)):]
		dynTokens, _ := counter.CountBytes(dynamic)
		turn.StableBytes, turn.StableTokens = lay.StableLen, lay.StableTokens
		if turn.StableTokens < 0 {
			turn.StableTokens, _ = counter.CountBytes(stable)
		}
		turn.StableHash = fmt.Sprintf("%016x", lay.PrefixHash)
		turn.DynamicBytes, turn.DynamicTokens = len(dynamic), dynTokens
		turn.DynamicHash = fmt.Sprintf("%016x", xxhash.Sum64(dynamic))

		cur := stableInputs(&p)
		if prev != nil {
			if turn.StableHash != prevStable {
				wr.StableConstant = false
			}
			for k, v := range cur {
				if pv, ok := prev[k]; !ok || pv != v {
					turn.StableChanged = append(turn.StableChanged, k)
				}
			}
			for k := range prev {
				if _, ok := cur[k]; !ok {
					turn.StableChanged = append(turn.StableChanged, k+" (removed)")
				}
			}
			sort.Strings(turn.StableChanged)
			if turn.StableHash != prevStable && len(turn.StableChanged) == 0 {
				turn.StableChanged = []string{"none of the stable inputs changed: a dynamic input reached the stable prefix"}
			}
			for _, k := range turn.StableChanged {
				if !seenBreaker[k] {
					seenBreaker[k] = true
					wr.Breakers = append(wr.Breakers, fmt.Sprintf("turn %d: %s", t+1, k))
				}
			}
		}
		prev, prevStable = cur, turn.StableHash

		// The turn's conversation: the user's message, a tool call and its
		// result, the final answer.
		at := start.Add(time.Duration(t) * time.Minute)
		userText := fmt.Sprintf("turn %d: please look at the build and fix what fails", t+1)
		history = append(history, cachesim.Block{Hash: xxhash.Sum64String(userText), Tokens: 12, Label: -10})
		for k, step := range []struct {
			dt    time.Duration
			added []cachesim.Block
		}{
			{0, nil},
			{4 * time.Second, []cachesim.Block{
				{Hash: xxhash.Sum64String(fmt.Sprintf("call %d", t)), Tokens: 40, Label: -10},
				{Hash: xxhash.Sum64String(fmt.Sprintf("result %d", t)), Tokens: 600 + 37*(t%7), Label: -10},
			}},
		} {
			history = append(history, step.added...)
			bl := make([]cachesim.Block, 0, len(history)+2)
			bl = append(bl, cachesim.Block{Hash: lay.PrefixHash, Tokens: turn.StableTokens, Breakpoint: anth, Label: -1})
			bl = append(bl, cachesim.Block{Hash: xxhash.Sum64(dynamic), Tokens: dynTokens, Label: -4})
			bl = append(bl, history...)
			if anth {
				bl[len(bl)-1].Breakpoint = true
			}
			r := sim.Simulate(&cachesim.Request{Time: at.Add(step.dt), Namespace: ns, Blocks: bl})
			pr := Predicted{Prompt: r.Total, CacheRead: r.Read, CacheWrite: r.Write, Uncached: r.Uncached,
				Reason: r.Reason.String(), GapSeconds: r.Gap.Seconds(), LostTokens: r.Lost}
			if r.Reason == cachesim.ReasonPrefixChanged {
				switch r.ChangedLabel {
				case -1:
					pr.ChangedAt = "stable system prefix"
				case -4:
					pr.ChangedAt = "dynamic system part"
				default:
					pr.ChangedAt = "message"
				}
			}
			turn.Calls = append(turn.Calls, pr)
			c := &Call{Index: callIdx, Time: at.Add(step.dt), Provider: prov.String(), Model: opts.Model,
				Messages: len(history), AfterToolResult: k == 1, Predicted: pr}
			c.CostNoCache = float64(r.Total) * rules.Price.Input / 1e6
			c.Cost = (float64(r.Uncached)*rules.Price.Input + float64(r.Read)*rules.Price.CacheRead +
				float64(r.Write-r.Write1h)*rules.Price.CacheWrite + float64(r.Write1h)*rules.Price.CacheWrite1h) / 1e6
			if r.Reason != cachesim.ReasonHit {
				c.Explanation = r.Reason.String()
				if pr.ChangedAt != "" {
					c.Explanation += ": " + pr.ChangedAt
				}
				c.MissCost = float64(r.Lost) * (rules.Price.CacheWrite - rules.Price.CacheRead) / 1e6
				c.Evidence = append(c.Evidence, fmt.Sprintf("turn %d", t+1))
			}
			prof.account(c, rules)
			callIdx++
		}
		history = append(history, cachesim.Block{Hash: xxhash.Sum64String(fmt.Sprintf("answer %d", t)), Tokens: 80, Label: -10})
		wr.Turns = append(wr.Turns, turn)
	}
	wr.Report = prof.Finish(prof.rep.statsZero())
	return wr, nil
}

// WriteWorkspaceText writes the workspace profile as a table per turn.
func WriteWorkspaceText(w io.Writer, wr *WorkspaceReport) error {
	bw := bufio.NewWriter(w)
	p := func(f string, a ...any) { fmt.Fprintf(bw, f, a...) }
	p("workspace %s, %d turns; cache rules %s\n", wr.Workspace, len(wr.Turns), wr.Rules)
	p("%4s %8s %8s %-16s %8s %-16s  %-28s %-28s\n", "turn", "stable B", "stable T", "stable hash", "dyn T", "dynamic hash", "call 1 read/write/uncached", "call 2 (after tool)")
	for _, t := range wr.Turns {
		cell := func(i int) string {
			if i >= len(t.Calls) {
				return ""
			}
			c := t.Calls[i]
			s := fmt.Sprintf("%d/%d/%d %s", c.CacheRead, c.CacheWrite, c.Uncached, c.Reason)
			if c.ChangedAt != "" {
				s += " (" + c.ChangedAt + ")"
			}
			return s
		}
		p("%4d %8d %8d %-16s %8d %-16s  %-28s %-28s\n", t.Turn, t.StableBytes, t.StableTokens, t.StableHash, t.DynamicTokens, t.DynamicHash, cell(0), cell(1))
		if len(t.StableChanged) > 0 {
			p("     STABLE INPUT CHANGED: %s\n", strings.Join(t.StableChanged, ", "))
		}
	}
	if wr.StableConstant {
		p("stable prefix: constant over all turns (hash %s)\n", wr.Turns[0].StableHash)
	} else {
		p("stable prefix BROKEN by: %s\n", strings.Join(wr.Breakers, "; "))
	}
	if len(wr.Turns) > 0 {
		p("dynamic inputs changed in the last turn: %s\n", strings.Join(wr.Turns[len(wr.Turns)-1].DynamicChanged, ", "))
	}
	r := wr.Report
	p("calls %d: read %s, written %s, uncached %s tokens; hit rate %.1f%%; input cost %s with cache, %s without\n",
		r.Calls, group(r.Predicted.CacheRead), group(r.Predicted.CacheWrite), group(r.Predicted.Uncached), 100*r.HitRate, r.money(r.Cost), r.money(r.CostNoCache))
	return bw.Flush()
}
