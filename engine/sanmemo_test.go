package engine

import (
	"context"
	"strconv"
	"testing"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider/scripted"
)

// sanitizerExamined is the number of messages the replay sanitizer's
// memos of the cached live sessions have worked through.
func sanitizerExamined() int64 {
	c := liveSessions
	c.mu.Lock()
	defer c.mu.Unlock()
	var n int64
	for _, e := range c.m {
		if e.prep != nil {
			n += e.prep.san.Examined()
		}
	}
	return n
}

// TestRunSanitizerWorkFlatInHistory: over many runs of live sessions
// (what /v1/runs makes: a tool call, its result, an answer), the replay
// sanitizer works through what each run appends, not the session's whole
// history, whether the session holds a dozen messages or a thousand. A
// sanitizer without its memo (or a memo the runs drop) works through
// every message of the history on every model call.
func TestRunSanitizerWorkFlatInHistory(t *testing.T) {
	for _, api := range []llm.API{"openai-responses", "anthropic-messages", "openai-completions"} {
		t.Run(string(api), func(t *testing.T) {
			measure := func(n int) float64 {
				p, st := sampleRun(t, true)
				p.Model.API = api
				p.Prompt = "read AGENTS.md"
				prov, err := scripted.New(scripted.Options{})
				if err != nil {
					t.Fatal(err)
				}
				p.StreamFunc = prov.StreamFunc()
				const sessions = 4
				seedSessions(t, st, sessions, n)
				i := 0
				run := func() {
					i++
					p.SessionID = "live" + strconv.Itoa(i%sessions)
					res, err := Run(context.Background(), p)
					if err != nil {
						t.Fatal(err)
					}
					if res.Turns < 2 {
						t.Fatalf("a run of %d turns: the test needs a tool turn", res.Turns)
					}
				}
				for range 2 * sessions {
					run()
				}
				before := sanitizerExamined()
				const runs = 40
				for range runs {
					run()
				}
				return float64(sanitizerExamined()-before) / runs
			}
			few, many := measure(12), measure(1000)
			t.Logf("messages the sanitizer worked through per run: %.1f in sessions of 12 messages, %.1f of 1,000", few, many)
			if few == 0 || many > few+2 || many > 16 {
				t.Fatalf("per run the sanitizer worked through %.1f messages in sessions of 12 messages, %.1f in sessions of 1,000", few, many)
			}
		})
	}
}
