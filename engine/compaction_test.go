package engine

import (
	"encoding/json"
	"testing"

	"github.com/valyala/fastjson"

	"github.com/ocbench/ocbench/internal/specases"
	"github.com/ocbench/ocbench/llm"
)

func parseMessages(t testing.TB, raw []any) []llm.Message {
	t.Helper()
	var out []llm.Message
	for _, m := range raw {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		v, err := fastjson.ParseBytes(b)
		if err != nil {
			t.Fatal(err)
		}
		msg, err := llm.ParseMessage(v)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, msg)
	}
	return out
}

// TestPreemptiveSpecCases runs shouldPreemptivelyCompactBeforePrompt's
// cases with every input it takes (messages, systemPrompt, prompt,
// contextTokenBudget, reserveTokens, toolResultMaxChars); absent ones take
// the function's defaults. The system prompt counts 0 tokens (pi's
// estimator ignores role system), so it is read but does not change the
// estimate.
func TestPreemptiveSpecCases(t *testing.T) {
	var cases []struct {
		Name     string         `json:"name"`
		Input    map[string]any `json:"input"`
		Expected struct {
			Route                     string `json:"route"`
			ShouldCompact             bool   `json:"shouldCompact"`
			EstimatedPromptTokens     int    `json:"estimatedPromptTokens"`
			PromptBudgetBeforeReserve int    `json:"promptBudgetBeforeReserve"`
			OverflowTokens            int    `json:"overflowTokens"`
			ToolResultReducibleChars  int    `json:"toolResultReducibleChars"`
			EffectiveReserveTokens    int    `json:"effectiveReserveTokens"`
		} `json:"expected"`
	}
	loadCaseSection(t, "preemptive", &cases)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			in, _ := specases.Expand(c.Input).(map[string]any)
			num := func(k string) int {
				v, _ := in[k].(float64)
				return int(v)
			}
			msgs, _ := in["messages"].([]any)
			hist := parseMessages(t, msgs)
			var prompt *llm.Message
			switch v := in["prompt"].(type) {
			case string:
				m := llm.TextMessage(llm.RoleUser, v)
				prompt = &m
			case map[string]any:
				m := parseMessages(t, []any{v})[0]
				prompt = &m
			}
			_, _ = in["systemPrompt"].(string)
			pin := PreemptiveInput{ContextTokenBudget: num("contextTokenBudget"), ReserveTokens: num("reserveTokens"), ToolResultMaxChars: num("toolResultMaxChars")}
			d := DecidePreemptive(hist, prompt, pin)
			e := c.Expected
			if d.Route.String() != e.Route || d.ShouldCompact != e.ShouldCompact ||
				d.EstimatedPromptTokens != e.EstimatedPromptTokens ||
				d.PromptBudgetBeforeReserve != e.PromptBudgetBeforeReserve ||
				d.OverflowTokens != e.OverflowTokens ||
				d.ToolResultReducibleChars != e.ToolResultReducibleChars ||
				d.EffectiveReserveTokens != e.EffectiveReserveTokens {
				t.Fatalf("got  %+v (route %s)\nwant %+v", d, d.Route, e)
			}
		})
	}
}

func TestResolveReserveTokens(t *testing.T) {
	for _, c := range []struct {
		budget int
		o      CompactionOptions
		want   int
	}{
		{200000, CompactionOptions{}, 20000},                         // floor raises pi's 16384
		{16000, CompactionOptions{}, 16384},                          // floor capped at 8000; pi's default stays
		{200000, CompactionOptions{ReserveTokens: 50000}, 50000},     // configured larger wins
		{200000, CompactionOptions{ReserveTokensFloor: 1000}, 16384}, // a low floor leaves pi's default
		{0, CompactionOptions{}, 20000},                              // unknown window = 200000
	} {
		if got := ResolveReserveTokens(c.budget, c.o); got != c.want {
			t.Errorf("budget %d %+v: got %d want %d", c.budget, c.o, got, c.want)
		}
	}
}

func TestPreemptiveFits(t *testing.T) {
	hist := []llm.Message{llm.TextMessage(llm.RoleUser, "hello"), llm.TextMessage(llm.RoleAssistant, "hi")}
	prompt := llm.TextMessage(llm.RoleUser, "next")
	d := DecidePreemptive(hist, &prompt, PreemptiveInput{ContextTokenBudget: 1000, ReserveTokens: 100})
	if d.Route != RouteFits || d.ShouldCompact || d.OverflowTokens != 0 {
		t.Fatalf("%+v", d)
	}
	// est = ceil(1.2 * (2 + 1 + 1)) = 5
	if d.EstimatedPromptTokens != 5 {
		t.Fatalf("estimate %d", d.EstimatedPromptTokens)
	}
}
