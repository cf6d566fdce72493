package engine

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

// harnessCase is a selectAgentHarness case: every input of OpenClaw's
// policy resolution (env OPENCLAW_AGENT_RUNTIME, the session agent's
// agentRuntime, agents.defaults.agentRuntime, the pinned agentHarnessId)
// and of the decision (provider, modelId).
type harnessCase struct {
	Name  string `json:"name"`
	Input struct {
		Provider       string          `json:"provider"`
		ModelID        string          `json:"modelId"`
		Env            json.RawMessage `json:"env"` // the value, or an environment object
		AgentHarnessID string          `json:"agentHarnessId"`
		AgentID        string          `json:"agentId"`
		SessionKey     string          `json:"sessionKey"`
		Config         struct {
			Agents struct {
				Defaults struct {
					AgentRuntime struct {
						ID string `json:"id"`
					} `json:"agentRuntime"`
				} `json:"defaults"`
				List []struct {
					ID           string `json:"id"`
					Default      bool   `json:"default"`
					AgentRuntime struct {
						ID string `json:"id"`
					} `json:"agentRuntime"`
				} `json:"list"`
			} `json:"agents"`
		} `json:"config"`
	} `json:"input"`
	ExpectedHarnessID *string `json:"expectedHarnessId"`
	ExpectedReason    *string `json:"expectedReason"`
	ExpectedError     *string `json:"expectedError"`
}

// loadCaseSection returns one section of the prompt case file. The
// harnesses run any case file of the spec's format: only an empty file
// fails; a section it lacks is skipped.
func loadCaseSection(t testing.TB, section string, dst any) {
	t.Helper()
	data, err := os.ReadFile("../testdata/spec/prompt-cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	n := 0
	for k, v := range doc {
		var list []json.RawMessage
		if k != "meta" && json.Unmarshal(v, &list) == nil {
			n += len(list)
		}
	}
	if n == 0 {
		t.Fatal("the case file holds no cases")
	}
	raw, ok := doc[section]
	if !ok {
		t.Skipf("the case file has no %s cases", section)
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		t.Fatal(err)
	}
}

// envRuntime reads OPENCLAW_AGENT_RUNTIME from a case's env: a string is
// the value itself, an object the environment.
func envRuntime(t testing.TB, raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var env map[string]string
	if err := json.Unmarshal(raw, &env); err != nil {
		t.Fatalf("env %s", raw)
	}
	return env["OPENCLAW_AGENT_RUNTIME"]
}

// sessionAgent is the agent a session runs: the explicit agentId, else
// the one its key names (agent:<id>:…), else the default agent (the entry
// marked default, else the first, else "main").
func (c *harnessCase) sessionAgent() string {
	in := &c.Input
	if in.AgentID != "" {
		return strings.ToLower(strings.TrimSpace(in.AgentID))
	}
	if rest, ok := strings.CutPrefix(strings.ToLower(strings.TrimSpace(in.SessionKey)), "agent:"); ok {
		if id, _, _ := strings.Cut(rest, ":"); id != "" {
			return id
		}
	}
	for _, a := range in.Config.Agents.List {
		if a.Default {
			return strings.ToLower(a.ID)
		}
	}
	if len(in.Config.Agents.List) > 0 {
		return strings.ToLower(in.Config.Agents.List[0].ID)
	}
	return "main"
}

func TestHarnessSpecCases(t *testing.T) {
	var cases []harnessCase
	loadCaseSection(t, "harness", &cases)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			in := c.Input
			pol := HarnessPolicy{Env: envRuntime(t, in.Env), DefaultRuntime: in.Config.Agents.Defaults.AgentRuntime.ID, Pinned: in.AgentHarnessID}
			agent := c.sessionAgent()
			for _, a := range in.Config.Agents.List {
				if strings.EqualFold(strings.TrimSpace(a.ID), agent) {
					pol.AgentRuntime = a.AgentRuntime.ID
				}
			}
			sel, err := SelectHarness(pol, HarnessQuery{Provider: in.Provider, ModelID: in.ModelID}, nil)
			if c.ExpectedError != nil {
				if err == nil || err.Error() != *c.ExpectedError {
					t.Fatalf("err = %v, want %q", err, *c.ExpectedError)
				}
				if !errors.Is(err, ErrHarnessNotRegistered) {
					t.Fatalf("err %v is not ErrHarnessNotRegistered", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.ExpectedHarnessID != nil && sel.ID != *c.ExpectedHarnessID {
				t.Fatalf("harness = %q, want %q", sel.ID, *c.ExpectedHarnessID)
			}
			if c.ExpectedReason != nil && sel.Reason != *c.ExpectedReason {
				t.Fatalf("reason = %q, want %q", sel.Reason, *c.ExpectedReason)
			}
			if c.ExpectedHarnessID == nil && c.ExpectedReason == nil {
				t.Fatal("the case expects nothing")
			}
		})
	}
}

type fakeHarness struct {
	id       string
	prio     int
	supports func(HarnessQuery) bool
	runs     int
}

func (h *fakeHarness) ID() string    { return h.id }
func (h *fakeHarness) Priority() int { return h.prio }
func (h *fakeHarness) Supports(q HarnessQuery) bool {
	return h.supports == nil || h.supports(q)
}
func (h *fakeHarness) Run(ctx context.Context, p *Params) (*Result, error) {
	h.runs++
	return &Result{Harness: HarnessSelection{ID: h.id}}, nil
}

func TestHarnessRules(t *testing.T) {
	codex := &fakeHarness{id: "codex", prio: 10, supports: func(q HarnessQuery) bool { return q.Provider == "openai" }}
	other := &fakeHarness{id: "alpha", prio: 10}
	low := &fakeHarness{id: "low", prio: 1}
	plugins := []Harness{low, codex, other}
	q := HarnessQuery{Provider: "openai", ModelID: "gpt-5.4"}
	tests := []struct {
		name       string
		pol        HarnessPolicy
		q          HarnessQuery
		id, reason string
		err        bool
	}{
		{"default is forced pi", HarnessPolicy{}, q, "pi", ReasonForcedPi, false},
		{"forced plugin", HarnessPolicy{DefaultRuntime: "codex"}, q, "codex", ReasonForcedPlugin, false},
		{"codex-app-server alias", HarnessPolicy{DefaultRuntime: "codex-app-server"}, q, "codex", ReasonForcedPlugin, false},
		{"env beats agent beats default", HarnessPolicy{Env: "pi", AgentRuntime: "codex", DefaultRuntime: "codex"}, q, "pi", ReasonForcedPi, false},
		{"agent beats default", HarnessPolicy{AgentRuntime: "codex", DefaultRuntime: "pi"}, q, "codex", ReasonForcedPlugin, false},
		{"pinned plugin", HarnessPolicy{Pinned: "codex", DefaultRuntime: "pi"}, q, "codex", ReasonPinned, false},
		{"pinned auto is ignored", HarnessPolicy{Pinned: "auto", DefaultRuntime: "pi"}, q, "pi", ReasonForcedPi, false},
		{"auto picks highest priority, ties by id", HarnessPolicy{DefaultRuntime: "auto"}, q, "alpha", ReasonAutoPlugin, false},
		{"forced unknown plugin fails", HarnessPolicy{DefaultRuntime: "gemini-harness"}, q, "", "", true},
		{"pinned unknown plugin fails", HarnessPolicy{Pinned: "ghost"}, q, "", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sel, err := SelectHarness(tc.pol, tc.q, plugins)
			if tc.err {
				var ne *HarnessNotRegisteredError
				if !errors.As(err, &ne) {
					t.Fatalf("err = %v, want HarnessNotRegisteredError", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if sel.ID != tc.id || sel.Reason != tc.reason {
				t.Fatalf("got %s/%s want %s/%s", sel.ID, sel.Reason, tc.id, tc.reason)
			}
		})
	}
	// auto with no supporting plugin -> auto_pi
	sel, err := SelectHarness(HarnessPolicy{DefaultRuntime: "auto"}, HarnessQuery{Provider: "anthropic"}, []Harness{codex})
	if err != nil || sel.ID != HarnessEmbedded || sel.Reason != ReasonAutoPi || sel.Plugin != nil {
		t.Fatalf("auto without support: %+v %v", sel, err)
	}
	// Plugin harness without compaction support.
	_, err = CompactHarness(context.Background(), HarnessSelection{ID: "codex", Plugin: codex}, &Params{})
	if !errors.Is(err, ErrHarnessNoCompaction) || err == nil {
		t.Fatalf("compaction on plugin without support: %v", err)
	}
}
