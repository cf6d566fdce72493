package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// HarnessEmbedded is the id of the built-in harness: this package's own
// turn loop. OpenClaw 2026.5.7 calls it "pi".
const HarnessEmbedded = "pi"

// Harness selection reasons, as OpenClaw 2026.5.7 names them.
const (
	ReasonPinned       = "pinned"
	ReasonForcedPi     = "forced_pi"
	ReasonForcedPlugin = "forced_plugin"
	ReasonAutoPlugin   = "auto_plugin"
	ReasonAutoPi       = "auto_pi"
)

// ErrHarnessNotRegistered is the error when the runtime names a plugin
// harness that embedding code did not register. There is no fallback to
// the embedded harness.
var ErrHarnessNotRegistered = errors.New("engine: agent harness not registered")

// HarnessNotRegisteredError names the missing harness; its text is
// OpenClaw's. It wraps ErrHarnessNotRegistered.
type HarnessNotRegisteredError struct{ ID string }

func (e *HarnessNotRegisteredError) Error() string {
	return fmt.Sprintf("Requested agent harness %q is not registered.", e.ID)
}

// Unwrap makes errors.Is(err, ErrHarnessNotRegistered) true.
func (e *HarnessNotRegisteredError) Unwrap() error { return ErrHarnessNotRegistered }

// ErrHarnessNoCompaction is returned by Compact for a plugin harness that
// does not implement compaction.
var ErrHarnessNoCompaction = errors.New("engine: agent harness does not support compaction")

// HarnessQuery is what a plugin harness is asked in auto mode.
type HarnessQuery struct {
	Provider         string
	ModelID          string
	RequestedRuntime string
}

// Harness is an agent harness registered by embedding code (OpenClaw's
// plugin harness): it runs a whole attempt in place of the embedded loop.
// Its failures are returned as they are, never retried on the embedded
// harness.
type Harness interface {
	ID() string
	// Priority orders supporting harnesses in auto mode (higher wins).
	Priority() int
	// Supports reports whether the harness takes runs for q in auto mode.
	Supports(q HarnessQuery) bool
	// Run runs one attempt.
	Run(ctx context.Context, p *Params) (*Result, error)
}

// HarnessCompacter is implemented by plugin harnesses that can compact
// their own sessions.
type HarnessCompacter interface {
	Compact(ctx context.Context, p *Params) (CompactionOutcome, error)
}

// HarnessPolicy holds the inputs of OpenClaw's resolveAgentHarnessPolicy.
type HarnessPolicy struct {
	// Env is OPENCLAW_AGENT_RUNTIME's value (the embedding code reads the
	// environment, if it wants to; this package does not).
	Env string
	// AgentRuntime is agents.list[<agent>].agentRuntime.id and
	// DefaultRuntime agents.defaults.agentRuntime.id.
	AgentRuntime   string
	DefaultRuntime string
	// Pinned is the session's agentHarnessId; when set and not "auto" it
	// overrides everything else.
	Pinned string
}

// HarnessSelection is the harness chosen for a run.
type HarnessSelection struct {
	ID     string
	Reason string
	// Plugin is the chosen plugin harness; nil for the embedded one.
	Plugin Harness
}

// NormalizeRuntime applies OpenClaw's runtime id normalisation: empty
// becomes "pi", "codex-app-server" becomes "codex", the CLI runtime
// aliases (codex-cli, claude-cli, google-gemini-cli) become "pi", and
// other ids are kept (trimmed, lowercased).
func NormalizeRuntime(id string) string {
	id = strings.ToLower(strings.TrimSpace(id))
	switch id {
	case "", "pi":
		return HarnessEmbedded
	case "codex-app-server":
		return "codex"
	case "codex-cli", "claude-cli", "google-gemini-cli":
		return HarnessEmbedded
	}
	return id
}

// SelectHarness chooses the harness for a run among the embedded one and
// the registered plugins, following OpenClaw 2026.5.7's selectAgentHarness:
// a pinned harness wins; runtime "pi" forces the embedded harness; any other
// non-auto runtime names a plugin, which must be registered; "auto" asks
// every plugin and takes the supporting one with the highest priority
// (ties by id), else the embedded harness.
func SelectHarness(pol HarnessPolicy, q HarnessQuery, plugins []Harness) (HarnessSelection, error) {
	runtime := pol.Env
	if strings.TrimSpace(runtime) == "" {
		runtime = pol.AgentRuntime
	}
	if strings.TrimSpace(runtime) == "" {
		runtime = pol.DefaultRuntime
	}
	runtime = NormalizeRuntime(runtime)
	pinned := false
	if p := strings.TrimSpace(pol.Pinned); p != "" {
		if np := NormalizeRuntime(p); np != "auto" {
			runtime, pinned = np, true
		}
	}
	reason := func(pin, forced string) string {
		if pinned {
			return pin
		}
		return forced
	}
	switch runtime {
	case HarnessEmbedded:
		return HarnessSelection{ID: HarnessEmbedded, Reason: reason(ReasonPinned, ReasonForcedPi)}, nil
	case "auto":
		q.RequestedRuntime = runtime
		var best Harness
		for _, h := range plugins {
			if h == nil || !h.Supports(q) {
				continue
			}
			if best == nil || h.Priority() > best.Priority() ||
				h.Priority() == best.Priority() && h.ID() < best.ID() {
				best = h
			}
		}
		if best == nil {
			return HarnessSelection{ID: HarnessEmbedded, Reason: ReasonAutoPi}, nil
		}
		return HarnessSelection{ID: best.ID(), Reason: ReasonAutoPlugin, Plugin: best}, nil
	}
	for _, h := range plugins {
		if h != nil && NormalizeRuntime(h.ID()) == runtime {
			return HarnessSelection{ID: h.ID(), Reason: reason(ReasonPinned, ReasonForcedPlugin), Plugin: h}, nil
		}
	}
	return HarnessSelection{}, &HarnessNotRegisteredError{ID: runtime}
}

// CompactHarness asks the selected harness to compact: the embedded one
// compacts through the model (CompactSession); a plugin harness must
// implement HarnessCompacter, else the outcome says it does not support
// compaction, in OpenClaw's words.
func CompactHarness(ctx context.Context, sel HarnessSelection, p *Params) (CompactionOutcome, error) {
	if sel.Plugin == nil {
		return CompactSession(ctx, p)
	}
	if c, ok := sel.Plugin.(HarnessCompacter); ok {
		return c.Compact(ctx, p)
	}
	return CompactionOutcome{Reason: fmt.Sprintf("Agent harness %q does not support compaction.", sel.ID)},
		fmt.Errorf("%w: %q", ErrHarnessNoCompaction, sel.ID)
}
