package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

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
				next := liveRuns(t, &p, sessions)
				run := func() {
					if res := next(); res.Turns < 2 {
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

// TestRunSanitizerMemoSendsWhatAFullPassSends runs the same sequence of
// runs on live sessions twice, with the replay sanitizer's memo and
// without it (a full pass per call), and fails unless every model call
// sent the same history: tool turns, plain answers, refused calls (an
// error answer in the history), on the Responses api (pairing on every
// call) and Anthropic's, and with a window small enough for the context
// guard to cut results and the runs to compact.
func TestRunSanitizerMemoSendsWhatAFullPassSends(t *testing.T) {
	for _, c := range []struct {
		api    llm.API
		window int
	}{{"openai-responses", 0}, {"anthropic-messages", 0}, {"openai-responses", 2500}} {
		t.Run(string(c.api)+"/window="+strconv.Itoa(c.window), func(t *testing.T) {
			record := func(memo bool) []string {
				noReplayMemo = !memo
				defer func() { noReplayMemo = false }()
				p, _ := sampleRun(t, true)
				p.Model.API = c.api
				// A small window: the context guard cuts tool results on
				// a copy, refuses calls, and the runs compact.
				p.Model.ContextWindow = c.window
				clock := time.Unix(1700000000, 0)
				p.Now = func() time.Time { clock = clock.Add(time.Millisecond); return clock }
				prov, err := scripted.New(scripted.Options{})
				if err != nil {
					t.Fatal(err)
				}
				var sent []string
				fail := false
				errs, compactions := 0, 0
				p.StreamFunc = func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
					// Without the times the provider stamps (the wall clock's).
					ms := append([]llm.Message(nil), req.Messages...)
					for j := range ms {
						ms[j].Timestamp = 0
					}
					sent = append(sent, fmt.Sprint(ms))
					if fail {
						return nil, errors.New("refused")
					}
					return prov.Stream(ctx, req)
				}
				prompts := []string{"read AGENTS.md", "hello", "read SOUL.md", "what now"}
				for i := range 120 {
					p.SessionID = "s" + strconv.Itoa(i%3)
					p.Prompt = prompts[i%len(prompts)]
					fail = i%17 == 5
					res, err := Run(context.Background(), p)
					if err != nil {
						errs++
					}
					compactions += len(res.Compactions)
				}
				t.Logf("memo %v: %d calls, %d runs ended in an error, %d compactions", memo, len(sent), errs, compactions)
				return sent
			}
			with, without := record(true), record(false)
			if len(with) != len(without) {
				t.Fatalf("%d model calls with the memo, %d without", len(with), len(without))
			}
			for i := range with {
				if a, b := with[i], without[i]; a != b {
					k := 0
					for k < min(len(a), len(b)) && a[k] == b[k] {
						k++
					}
					lo := max(k-300, 0)
					t.Fatalf("call %d: with the memo it sent ...%s\nwithout ...%s", i, a[lo:min(k+200, len(a))], b[lo:min(k+200, len(b))])
				}
			}
		})
	}
}
