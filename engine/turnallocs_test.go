package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/provider/scripted"
)

// The engine's steady-state cost of one turn (a model call through the
// chain and its tool call), measured as the difference between a 20-turn
// and a 10-turn run so that per-run setup cancels out: at most 8
// allocations, of which the scripted provider's stream is 1. What is left
// is the final message's copy (2), the tool result (2), its call id (1)
// and amortized slice growth.
func TestTurnAllocationsSteadyState(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts do not hold under -race")
	}
	prov := scripted.MustNew(scripted.Options{Script: toolLoopScript(16, strings.Repeat("word ", 40))})
	at := func(turns int) float64 {
		p := benchParams(prov.StreamFunc(), "openai-completions", turns)
		return testing.AllocsPerRun(50, func() { _, _ = Run(context.Background(), p) })
	}
	a10, a20 := at(10), at(20)
	per := (a20 - a10) / 10
	t.Logf("allocations: 10 turns %.0f, 20 turns %.0f, %.2f per turn", a10, a20, per)
	if per > 8 {
		t.Fatalf("%.2f allocations per turn, want at most 8", per)
	}
}
