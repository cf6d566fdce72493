package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/provider/scripted"
)

// The engine's steady-state cost of one turn (a model call through the
// chain and its tool call), measured as the difference between a 20-turn
// and a 10-turn run so that per-run setup cancels out: at most 2.5
// allocations, of which the scripted provider's stream is 1. What is left
// is the answer's bytes and the tool result's (one arena chunk per few
// turns) and the blocks of both (one slab per few turns): their structs
// are the history's own elements (histSlot), made by nobody else. The
// whole 10-turn run, setup included, is held to 50 allocations (44 since
// the tool-call records and the guard's estimates are made once at the
// run's size, 46 since the messages are built in the history, 50 before;
// 102 since its new messages are stored once and the environment's
// redactor is remembered; 157 at ef767d9: 15.7 per turn).
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
	if per > 2.5 {
		t.Fatalf("%.2f allocations per turn, want at most 2.5", per)
	}
	if a10 > 50 {
		t.Fatalf("a 10-turn run allocates %.0f times, want at most 50", a10)
	}
}
