package engine

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"
)

type specCases struct {
	Harness []struct {
		Name  string `json:"name"`
		Input struct {
			Provider       string `json:"provider"`
			ModelID        string `json:"modelId"`
			Env            string `json:"env"`
			AgentHarnessID string `json:"agentHarnessId"`
			AgentID        string `json:"agentId"`
			Config         struct {
				Agents struct {
					Defaults struct {
						AgentRuntime struct {
							ID string `json:"id"`
						} `json:"agentRuntime"`
					} `json:"defaults"`
					List []struct {
						ID           string `json:"id"`
						AgentRuntime struct {
							ID string `json:"id"`
						} `json:"agentRuntime"`
					} `json:"list"`
				} `json:"agents"`
			} `json:"config"`
		} `json:"input"`
		ExpectedHarnessID *string `json:"expectedHarnessId"`
		ExpectedError     *string `json:"expectedError"`
	} `json:"harness"`
}

func loadSpecCases(t testing.TB) *specCases {
	t.Helper()
	data, err := os.ReadFile("../testdata/spec/prompt-cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var c specCases
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	return &c
}

func TestHarnessSpecCases(t *testing.T) {
	cases := loadSpecCases(t).Harness
	if len(cases) == 0 {
		t.Fatal("no harness cases")
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			in := c.Input
			pol := HarnessPolicy{Env: in.Env, DefaultRuntime: in.Config.Agents.Defaults.AgentRuntime.ID, Pinned: in.AgentHarnessID}
			for _, a := range in.Config.Agents.List {
				if a.ID == in.AgentID || (in.AgentID == "" && len(in.Config.Agents.List) == 1) {
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
			if c.ExpectedHarnessID == nil || sel.ID != *c.ExpectedHarnessID {
				t.Fatalf("harness = %q, want %v", sel.ID, c.ExpectedHarnessID)
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
