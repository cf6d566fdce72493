package engine

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/prefixcache"
	"github.com/ocbench/ocbench/prompt"
	"github.com/ocbench/ocbench/provider"
	"github.com/ocbench/ocbench/provider/scripted"
	"github.com/ocbench/ocbench/transcript"
)

// echoTool is a tool with no I/O, so that benchmarks measure the engine,
// not the file system; it only computes, so it is Inline.
var echoTool = MustNewSchemaTool("echo", "echoes its text", []byte(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
	func(ctx context.Context, args []byte) (ToolOutput, error) { return ToolOutput{Text: "ok"}, nil }, Inline())

// workerEchoTool is echoTool without Inline: its handler runs on the
// run's tool worker, as every handler that may block does.
var workerEchoTool = MustNewSchemaTool("echo", "echoes its text", []byte(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
	func(ctx context.Context, args []byte) (ToolOutput, error) { return ToolOutput{Text: "ok"}, nil })

// toolLoopScript answers every request with a text and an echo call, in
// chunks of chunk bytes; the turn loop ends at MaxTurns.
func toolLoopScript(chunk int, text string) *scripted.Script {
	return &scripted.Script{Chunk: chunk, Turns: []scripted.Turn{{
		Steps: []scripted.Step{scripted.Text(text), scripted.ToolCall("", "echo", `{"text":"hello"}`)},
		Usage: llm.Usage{Input: 100, Output: 10, CacheRead: 1000},
	}}}
}

func benchParams(fn llm.StreamFunc, api llm.API, turns int) Params {
	return Params{
		Prompt:       "loop",
		Model:        llm.Model{ID: "scripted-1", API: api, Provider: "scripted"},
		StreamFunc:   fn,
		SystemPrompt: "You are a benchmark.",
		Tools:        []*Tool{echoTool},
		MaxTurns:     turns,
	}
}

// BenchmarkTurn measures the engine's overhead per turn (one model call
// and its tool call) with the in-process scripted provider and no
// scripted latency: request, decode, the decorator chain, tool dispatch
// with schema validation, transcript bookkeeping (ephemeral session).
// Each op is one run of 10 turns; ns/turn and allocs/turn are reported.
func BenchmarkTurn(b *testing.B) {
	for _, api := range wires {
		b.Run(string(api), func(b *testing.B) { benchTurns(b, api, echoTool) })
	}
}

// BenchmarkTurnWorkerTool is BenchmarkTurn (chat wire) with a tool that
// is not Inline: each call is handed to the run's tool worker and back.
func BenchmarkTurnWorkerTool(b *testing.B) { benchTurns(b, "openai-completions", workerEchoTool) }

func benchTurns(b *testing.B, api llm.API, tool *Tool) {
	prov := scripted.MustNew(scripted.Options{Script: toolLoopScript(16, strings.Repeat("word ", 40))})
	const turns = 10
	p := benchParams(prov.StreamFunc(), api, turns)
	p.Tools = []*Tool{tool}
	ctx := context.Background()
	b.ReportAllocs()
	var ms0, ms1 runtimeMem
	ms0.read()
	b.ResetTimer()
	for b.Loop() {
		res, err := Run(ctx, p)
		if !errors.Is(err, ErrTurnLimit) || res.Turns != turns {
			b.Fatalf("%v %d", err, res.Turns)
		}
	}
	b.StopTimer()
	ms1.read()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*turns), "ns/turn")
	b.ReportMetric(float64(ms1.mallocs-ms0.mallocs)/float64(b.N*turns), "allocs/turn")
	b.ReportMetric(float64((ms1.cpu-ms0.cpu).Nanoseconds())/float64(b.N*turns), "cpu-ns/turn")
}

// BenchmarkTurnStreamOnly is the provider-and-chain share of
// BenchmarkTurn: the same scripted turn decoded through the same decorator
// chain and drained, with no engine around it. BenchmarkTurn's ns/turn
// minus this is the engine's own overhead.
func BenchmarkTurnStreamOnly(b *testing.B) {
	for _, api := range wires {
		b.Run(string(api), func(b *testing.B) {
			prov := scripted.MustNew(scripted.Options{Script: toolLoopScript(16, strings.Repeat("word ", 40))})
			p := benchParams(prov.StreamFunc(), api, 1)
			r := runner{p: &p, res: &Result{}}
			ts, _ := newToolSet([]*Tool{echoTool})
			r.reg = ts.reg
			fn := r.wrapStream(p.StreamFunc, ts)
			req := llm.Request{Model: p.Model, System: p.SystemPrompt, Tools: ts.defs,
				Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "loop")}}
			ctx := context.Background()
			var ms0, ms1 runtimeMem
			b.ReportAllocs()
			ms0.read()
			for b.Loop() {
				s, err := fn(ctx, &req)
				if err != nil {
					b.Fatal(err)
				}
				m, err := llm.Drain(s)
				if err != nil || m.StopReason != llm.StopToolUse {
					b.Fatal(err, m.StopReason)
				}
				s.Close()
			}
			ms1.read()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/turn")
			b.ReportMetric(float64((ms1.cpu-ms0.cpu).Nanoseconds())/float64(b.N), "cpu-ns/turn")
		})
	}
}

// BenchmarkTurnFileSession is BenchmarkTurn with a session file on disk
// (no fsync), i.e. with the transcript writes.
func BenchmarkTurnFileSession(b *testing.B) {
	prov := scripted.MustNew(scripted.Options{Script: toolLoopScript(16, strings.Repeat("word ", 40))})
	const turns = 10
	p := benchParams(prov.StreamFunc(), "openai-completions", turns)
	p.Session.Durability = 2 // transcript.SyncNone
	dir := b.TempDir()
	ctx := context.Background()
	b.ReportAllocs()
	var ms0, ms1 runtimeMem
	ms0.read()
	i := 0
	for b.Loop() {
		i++
		p.SessionFile = filepath.Join(dir, strconv.Itoa(i)+".jsonl")
		if _, err := Run(ctx, p); !errors.Is(err, ErrTurnLimit) {
			b.Fatal(err)
		}
	}
	ms1.read()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*turns), "ns/turn")
	b.ReportMetric(float64((ms1.cpu-ms0.cpu).Nanoseconds())/float64(b.N*turns), "cpu-ns/turn")
}

// BenchmarkConcurrentSessions runs 1,000 sessions at once, each a run of
// 2 turns (a tool call, then an answer), and reports turns per second.
func BenchmarkConcurrentSessions(b *testing.B) {
	const sessions = 1000
	for _, mode := range []string{"inprocess", "loopback"} {
		b.Run(mode+"/sessions=1000", func(b *testing.B) {
			script := &scripted.Script{Chunk: 16, Turns: []scripted.Turn{
				{Steps: []scripted.Step{scripted.Text("let me check"), scripted.ToolCall("", "echo", `{"text":"x"}`)}},
				{Steps: []scripted.Step{scripted.Text(strings.Repeat("done ", 20))}},
			}}
			prov := scripted.MustNew(scripted.Options{Script: script})
			p := benchParams(prov.StreamFunc(), "openai-completions", 10)
			if mode == "loopback" {
				srv, err := prov.Start()
				if err != nil {
					b.Fatal(err)
				}
				defer srv.Close()
				// A client whose keep-alive pool holds a connection per
				// session, as a gateway serving them would size it.
				tr := &http.Transport{MaxIdleConns: sessions, MaxIdleConnsPerHost: sessions, IdleConnTimeout: time.Minute}
				defer tr.CloseIdleConnections()
				c, err := provider.NewClient(provider.WithHTTPClient(&http.Client{Transport: tr}))
				if err != nil {
					b.Fatal(err)
				}
				p.StreamFunc = c.Stream
				p.Model.BaseURL = srv.URL
				p.APIKey = "k"
			}
			var next, turns atomic.Int64
			var failed atomic.Value
			var ms0, ms1 runtimeMem
			b.ReportAllocs()
			ms0.read()
			b.ResetTimer()
			var wg sync.WaitGroup
			for range sessions {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for next.Add(1) <= int64(b.N) {
						res, err := Run(context.Background(), p)
						if err != nil {
							failed.Store(err)
							return
						}
						turns.Add(int64(res.Turns))
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			ms1.read()
			if err, _ := failed.Load().(error); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(turns.Load())/b.Elapsed().Seconds(), "turns/s")
			b.ReportMetric(float64((ms1.cpu-ms0.cpu).Nanoseconds())/float64(turns.Load()), "cpu-ns/turn")
		})
	}
}

// TestNoAllocationPerEvent pins the per-event cost of the run loop at
// zero: a run whose answer streams in 2,000 deltas allocates no more than
// the same run streaming it in 20 (the events pass through the decoder,
// the whole chain and OnEvent).
func TestNoAllocationPerEvent(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	text := strings.Repeat("abcdefgh", 500) // 4,000 bytes
	measure := func(chunk int) float64 {
		prov := scripted.MustNew(scripted.Options{Script: &scripted.Script{Chunk: chunk, Turns: []scripted.Turn{{Steps: []scripted.Step{scripted.Text(text)}}}}})
		p := benchParams(prov.StreamFunc(), "openai-completions", 1)
		n := 0
		p.OnEvent = func(e *Event) { n++ }
		ctx := context.Background()
		for range 20 { // warm the pools
			Run(ctx, p)
		}
		return testing.AllocsPerRun(200, func() {
			if _, err := Run(ctx, p); err != nil {
				t.Fatal(err)
			}
		})
	}
	few, many := measure(200), measure(2)
	if many > few {
		t.Fatalf("2,000 deltas allocate %.1f per run, 20 deltas %.1f: events allocate", many, few)
	}
	t.Logf("allocs per run: %.0f (20 deltas), %.0f (2,000 deltas)", few, many)
}

// BenchmarkRunSetup measures a whole one-turn run with everything a real
// run sets up: the sample workspace's prompt resolution and rendering,
// the built-in tools, a session file (no fsync), history preparation.
func BenchmarkRunSetup(b *testing.B) {
	base, _ := sampleRun(b, false)
	dir := b.TempDir()
	// One counter for every repetition: b.Run runs each sub-benchmark
	// several times (ramp-up, -count) in this one directory, and a counter
	// that restarts would append to the sessions of earlier repetitions,
	// whose growing histories then show as allocations growing per run.
	i := 0
	for _, cached := range []bool{false, true} {
		name := "renderer=plain"
		var rd *prompt.Renderer
		if cached {
			name = "renderer=prefixcache"
			rd = &prompt.Renderer{Cache: prefixcache.New(0)}
		}
		b.Run(name, func(b *testing.B) {
			p := base
			p.PromptOptions.Renderer = rd
			b.ReportAllocs()
			var ms0, ms1 runtimeMem
			ms0.read()
			for b.Loop() {
				i++
				p.SessionFile = filepath.Join(dir, "run"+strconv.Itoa(i)+".jsonl")
				if _, err := Run(context.Background(), p); err != nil {
					b.Fatal(err)
				}
			}
			ms1.read()
			// CPU time (user + system) per run: wall time on a shared
			// machine mostly measures other processes' disk traffic.
			b.ReportMetric(float64((ms1.cpu-ms0.cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkRunSetupLiveSession is BenchmarkRunSetup on live sessions of a
// DirStore (what /v1/runs does): 16 sessions of 40 messages each, run in
// turn, so that each run opens a session that the store and the engine
// saw last. Every run appends 2 messages: compare at a fixed -benchtime
// (e.g. 400x) so that both sides run on sessions of the same sizes. The
// first run of each session reads it in full (the store wrote it, the
// engine never ran it): 16 cold runs among the timed ones.
func BenchmarkRunSetupLiveSession(b *testing.B) { benchLiveSessions(b, false) }

// BenchmarkRunSetupLiveSessionWarm is BenchmarkRunSetupLiveSession with
// one untimed run of each session first, so that every timed run is warm:
// the engine has run the session before and nobody else changed it.
func BenchmarkRunSetupLiveSessionWarm(b *testing.B) { benchLiveSessions(b, true) }

func benchLiveSessions(b *testing.B, warm bool) {
	p, st := sampleRun(b, true)
	const sessions, seeded = 16, 40
	for s := 0; s < sessions; s++ {
		w, err := st.Open(context.Background(), "live"+strconv.Itoa(s), transcript.WriterOptions{Durability: transcript.SyncNone})
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < seeded; i++ {
			m := llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: []byte("earlier question " + strconv.Itoa(i) + " " + strings.Repeat("word ", 30))}}}
			if i%2 == 1 {
				m.Role = llm.RoleAssistant
				m.StopReason = llm.StopStop
			}
			if _, err := w.AppendMessage(&m); err != nil {
				b.Fatal(err)
			}
		}
		w.Close()
	}
	benchRuns(b, p, sessions, warm)
}

// benchRuns runs p on the sessions "live0", "live1"... in turn, b.N
// times, after one untimed run of each when warm, and reports the CPU
// time per run.
func benchRuns(b *testing.B, p Params, sessions int, warm bool) {
	i := 0
	if warm {
		for ; i < sessions; i++ {
			p.SessionID = "live" + strconv.Itoa(i%sessions)
			if _, err := Run(context.Background(), p); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportAllocs()
	var ms0, ms1 runtimeMem
	ms0.read()
	for b.Loop() {
		i++
		p.SessionID = "live" + strconv.Itoa(i%sessions)
		if _, err := Run(context.Background(), p); err != nil {
			b.Fatal(err)
		}
	}
	ms1.read()
	b.ReportMetric(float64((ms1.cpu-ms0.cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// BenchmarkRunHistory is BenchmarkRunSetupLiveSessionWarm at three
// lengths of the sessions' history: every run is a warm run of a live
// session of a DirStore whose branch holds about history messages
// (seedHistory's cycle of a question, a tool call, its result and an
// answer). What a run costs beyond the sessions' first lines is what
// grows with the conversation. Each run appends 2 messages to one of 32
// sessions: compare at a fixed -benchtime (e.g. 320x, 20 more messages
// per session).
func BenchmarkRunHistory(b *testing.B) {
	for _, n := range []int{12, 100, 1000} {
		b.Run("history="+strconv.Itoa(n), func(b *testing.B) {
			p, st := sampleRun(b, true)
			const sessions = 32
			seedSessions(b, st, sessions, n)
			benchRuns(b, p, sessions, true)
		})
	}
}

// seedSessions writes sessions sessions "live0", "live1"... of st, each
// a branch of n messages (seedHistory).
func seedSessions(tb testing.TB, st transcript.Store, sessions, n int) {
	tb.Helper()
	msgs := seedHistory(n)
	for s := range sessions {
		w, err := st.Open(context.Background(), "live"+strconv.Itoa(s), transcript.WriterOptions{Durability: transcript.SyncNone})
		if err != nil {
			tb.Fatal(err)
		}
		for i := range msgs {
			if _, err := w.AppendMessage(&msgs[i]); err != nil {
				tb.Fatal(err)
			}
		}
		w.Close()
	}
}

// seedHistory returns n messages of a conversation with tool calls, in
// cycles of four: a question, an answer calling read (with the id form
// of an Anthropic upstream), the call's result and a closing answer.
func seedHistory(n int) []llm.Message {
	msgs := make([]llm.Message, 0, n)
	for i := 0; len(msgs) < n; i++ {
		k := strconv.Itoa(i)
		switch i % 4 {
		case 0:
			msgs = append(msgs, llm.TextMessage(llm.RoleUser, "earlier question "+k+" "+strings.Repeat("word ", 30)))
		case 1:
			msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, StopReason: llm.StopToolUse, Usage: llm.Usage{Input: 2000 + int64(i), Output: 20},
				Content: []llm.Block{{Type: llm.BlockText, Text: []byte("let me look")},
					{Type: llm.BlockToolCall, ID: []byte("toolu_scripted_" + k), Name: []byte("read"), Arguments: []byte(`{"path":"notes/` + k + `.md"}`)}}})
		case 2:
			m := llm.TextMessage(llm.RoleToolResult, "contents of note "+k+" "+strings.Repeat("line ", 40))
			m.ToolCallID, m.ToolName = "toolu_scripted_"+strconv.Itoa(i-1), "read"
			msgs = append(msgs, m)
		case 3:
			m := llm.TextMessage(llm.RoleAssistant, "the answer "+k+" "+strings.Repeat("word ", 20))
			m.StopReason, m.Usage = llm.StopStop, llm.Usage{Input: 2100 + int64(i), Output: 30}
			msgs = append(msgs, m)
		}
	}
	return msgs
}
