package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/transcript"
)

type runEnv struct {
	dir, ws, session string
	fp               *fakeProvider
	events           []EventKind
	mu               sync.Mutex
}

func newRunEnv(t *testing.T, turns ...fakeTurn) *runEnv {
	t.Helper()
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	os.MkdirAll(ws, 0o755)
	os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("alpha\nbeta\n"), 0o644)
	return &runEnv{dir: dir, ws: ws, session: filepath.Join(dir, "sessions", "s.jsonl"), fp: &fakeProvider{turns: turns}}
}

func (e *runEnv) params(prompt string) Params {
	return Params{
		Prompt:     prompt,
		Model:      llm.Model{ID: "fake-model", API: "fake-api", Provider: "fake", ContextWindow: 200000},
		StreamFunc: e.fp.stream,
		Workspace:  e.ws, OpenClawPrompt: true, BuiltinTools: true,
		SessionFile: e.session,
		OnEvent: func(ev *Event) {
			e.mu.Lock()
			e.events = append(e.events, ev.Kind)
			e.mu.Unlock()
		},
	}
}

// roles reads the session file back and returns the roles on its branch.
func sessionRoles(t *testing.T, path string) ([]llm.Message, string) {
	t.Helper()
	sc, err := transcript.LoadContext(path)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i, m := range sc.Messages {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(m.Role.String())
		if m.Role == llm.RoleAssistant {
			b.WriteString(":" + m.StopReason.String())
		}
		if m.Role == llm.RoleToolResult && m.IsError {
			b.WriteString("!")
		}
	}
	return sc.Messages, b.String()
}

// checkPaired asserts every tool call in msgs has exactly one result.
func checkPaired(t *testing.T, msgs []llm.Message) {
	t.Helper()
	open := map[string]int{}
	for _, m := range msgs {
		switch m.Role {
		case llm.RoleAssistant:
			for _, b := range m.Content {
				if b.Type == llm.BlockToolCall {
					open[string(b.ID)]++
				}
			}
		case llm.RoleToolResult:
			open[m.ToolCallID]--
		}
	}
	for id, n := range open {
		if n != 0 {
			t.Errorf("tool call %s: %d unpaired", id, n)
		}
	}
}

func TestRunToolLoop(t *testing.T) {
	e := newRunEnv(t,
		fakeTurn{msg: assistantCalls([3]string{"c1", "read", `{"path":"notes.txt"}`}, [3]string{"c2", "ls", `{}`})},
		fakeTurn{msg: assistantCalls([3]string{"c3", "write", `{"path":"out.txt","content":"done"}`})},
		fakeTurn{msg: assistantText("all done")},
	)
	res, err := Run(context.Background(), e.params("read my notes"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Turns != 3 || len(res.ToolCalls) != 3 || res.FinalText() != "all done" || res.StopReason != llm.StopStop {
		t.Fatalf("result: %+v", res)
	}
	if res.Usage.TotalTokens != 15+15+12 {
		t.Errorf("usage %+v", res.Usage)
	}
	msgs, roles := sessionRoles(t, e.session)
	want := "user,assistant:toolUse,toolResult,toolResult,assistant:toolUse,toolResult,assistant:stop"
	if roles != want {
		t.Fatalf("transcript %s\nwant       %s", roles, want)
	}
	if got := msgs[2].TextContent(); got != "alpha\nbeta\n" {
		t.Errorf("read result %q", got)
	}
	// The second request carried the tool results, in call order.
	req := e.fp.reqs[1]
	if len(req) != 4 || req[2].ToolCallID != "c1" || req[3].ToolCallID != "c2" {
		t.Fatalf("second request: %d messages", len(req))
	}
	if b, _ := os.ReadFile(filepath.Join(e.ws, "out.txt")); string(b) != "done" {
		t.Errorf("write tool: %q", b)
	}
	// A second run continues the same session.
	e.fp.turns = append(e.fp.turns, fakeTurn{msg: assistantText("again")})
	res, err = Run(context.Background(), e.params("and again"))
	if err != nil || res.FinalText() != "again" {
		t.Fatalf("second run: %v %+v", err, res)
	}
	if n := len(e.fp.reqs[3]); n != 8 {
		t.Fatalf("second run sent %d messages, want 8 (history + prompt)", n)
	}
	if e.events[0] != EventRunStart || e.events[len(e.events)-1] != EventRunEnd {
		t.Errorf("events %v", e.events)
	}
}

func TestRunBadToolCallsBecomeErrorResults(t *testing.T) {
	e := newRunEnv(t,
		fakeTurn{msg: assistantCalls(
			[3]string{"c1", "teleport", `{}`},
			[3]string{"c2", "read", `{"path":42}`},
			[3]string{"c3", "read", `{"path":"../../etc/passwd"}`},
			[3]string{"c4", "read", ``},
		)},
		fakeTurn{msg: assistantText("sorry")},
	)
	res, err := Run(context.Background(), e.params("go"))
	if err != nil {
		t.Fatal(err)
	}
	wantErrs := []error{ErrUnknownTool, ErrInvalidArguments, ErrPathEscape, ErrInvalidArguments}
	for i, tc := range res.ToolCalls {
		if !tc.IsError || !errors.Is(tc.Err, wantErrs[i]) {
			t.Errorf("call %d: %+v", i, tc)
		}
	}
	msgs, roles := sessionRoles(t, e.session)
	if roles != "user,assistant:toolUse,toolResult!,toolResult!,toolResult!,toolResult!,assistant:stop" {
		t.Fatal(roles)
	}
	checkPaired(t, msgs)
}

func TestRunTurnLimit(t *testing.T) {
	loop := fakeTurn{msg: assistantCalls([3]string{"c", "ls", `{}`})}
	e := newRunEnv(t, loop, loop, loop, loop)
	p := e.params("loop")
	p.MaxTurns = 3
	res, err := Run(context.Background(), p)
	if !errors.Is(err, ErrTurnLimit) || !res.TurnLimit || res.Turns != 3 {
		t.Fatalf("%v %+v", err, res)
	}
	msgs, _ := sessionRoles(t, e.session)
	checkPaired(t, msgs)
}

func TestRunSteerAndFollowUp(t *testing.T) {
	q := &Queue{}
	e := newRunEnv(t,
		fakeTurn{msg: assistantCalls([3]string{"c1", "ls", `{}`}), before: func() {
			q.Push(FollowUp, "then summarize")
			q.Push(Steer, "also read notes.txt")
		}},
		fakeTurn{msg: assistantText("ok, noted")},
		fakeTurn{msg: assistantText("summary")},
	)
	p := e.params("list files")
	p.Queue = q
	res, err := Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if res.Steered != 2 || res.Turns != 3 || res.FinalText() != "summary" {
		t.Fatalf("%+v", res)
	}
	// The steer message came after the tool result, before call 2; the
	// follow-up only after the model stopped.
	r2 := e.fp.reqs[1]
	if last := r2[len(r2)-1]; last.Role != llm.RoleUser || last.TextContent() != "also read notes.txt" || r2[len(r2)-2].Role != llm.RoleToolResult {
		t.Fatalf("call 2 ends with %v %q", last.Role, last.TextContent())
	}
	r3 := e.fp.reqs[2]
	if last := r3[len(r3)-1]; last.TextContent() != "then summarize" {
		t.Fatalf("call 3 ends with %q", last.TextContent())
	}
	_, roles := sessionRoles(t, e.session)
	if roles != "user,assistant:toolUse,toolResult,user,assistant:stop,user,assistant:stop" {
		t.Fatal(roles)
	}
}

func TestRunInterruptMidStream(t *testing.T) {
	q := &Queue{}
	e := newRunEnv(t,
		fakeTurn{stall: true, msg: assistantText("never"), before: func() {
			go func() { time.Sleep(20 * time.Millisecond); q.Push(Interrupt, "stop, do this instead") }()
		}},
		fakeTurn{msg: assistantText("doing it")},
	)
	p := e.params("long task")
	p.Queue = q
	res, err := Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if res.Steered != 1 || res.FinalText() != "doing it" {
		t.Fatalf("%+v", res)
	}
	_, roles := sessionRoles(t, e.session)
	if roles != "user,assistant:aborted,user,assistant:stop" {
		t.Fatal(roles)
	}
}

func slowTool(t *testing.T, started chan<- struct{}) *Tool {
	return MustNewSchemaTool("slow", "sleeps", nil, func(ctx context.Context, args []byte) (ToolOutput, error) {
		started <- struct{}{}
		select {
		case <-ctx.Done():
			return ToolOutput{}, context.Cause(ctx)
		case <-time.After(5 * time.Second):
			return ToolOutput{Text: "slept"}, nil
		}
	})
}

func TestRunInterruptMidTool(t *testing.T) {
	q := &Queue{}
	started := make(chan struct{}, 1)
	e := newRunEnv(t,
		fakeTurn{msg: assistantCalls([3]string{"c1", "slow", `{}`}, [3]string{"c2", "ls", `{}`})},
		fakeTurn{msg: assistantText("switched")},
	)
	p := e.params("go")
	p.Queue = q
	p.Tools = []*Tool{slowTool(t, started)}
	go func() { <-started; q.Push(Interrupt, "new plan") }()
	res, err := Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ToolCalls) != 2 || !res.ToolCalls[0].IsError || !res.ToolCalls[1].IsError || !errors.Is(res.ToolCalls[1].Err, ErrInterrupted) {
		t.Fatalf("%+v", res.ToolCalls)
	}
	msgs, roles := sessionRoles(t, e.session)
	if roles != "user,assistant:toolUse,toolResult!,toolResult!,user,assistant:stop" {
		t.Fatal(roles)
	}
	checkPaired(t, msgs)
}

func TestRunAbortMidStream(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	e := newRunEnv(t,
		fakeTurn{msg: assistantCalls([3]string{"c1", "ls", `{}`})},
		fakeTurn{stall: true, msg: assistantText("never"), before: func() {
			go func() { time.Sleep(20 * time.Millisecond); cancel() }()
		}},
	)
	res, err := Run(ctx, e.params("go"))
	if !errors.Is(err, context.Canceled) || !res.Aborted {
		t.Fatalf("%v %+v", err, res)
	}
	msgs, roles := sessionRoles(t, e.session)
	if roles != "user,assistant:toolUse,toolResult,assistant:aborted" {
		t.Fatal(roles)
	}
	checkPaired(t, msgs)
}

func TestRunAbortMidTool(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{}, 1)
	e := newRunEnv(t, fakeTurn{msg: assistantCalls([3]string{"c1", "slow", `{}`}, [3]string{"c2", "ls", `{}`})})
	p := e.params("go")
	p.Tools = []*Tool{slowTool(t, started)}
	go func() { <-started; cancel() }()
	res, err := Run(ctx, p)
	if !errors.Is(err, context.Canceled) || !res.Aborted || res.Turns != 1 {
		t.Fatalf("%v %+v", err, res)
	}
	msgs, roles := sessionRoles(t, e.session)
	if roles != "user,assistant:toolUse,toolResult!,toolResult!" {
		t.Fatal(roles)
	}
	checkPaired(t, msgs)
	// The session is unlocked and usable afterwards.
	e.fp.turns = append(e.fp.turns, fakeTurn{msg: assistantText("resumed")})
	if res, err := Run(context.Background(), e.params("resume")); err != nil || res.FinalText() != "resumed" {
		t.Fatalf("resume: %v %+v", err, res)
	}
}

func TestRunProviderRefusal(t *testing.T) {
	e := newRunEnv(t, fakeTurn{refuse: errors.New("401 unauthorized: bad key")})
	res, err := Run(context.Background(), e.params("hi"))
	if !errors.Is(err, ErrProvider) || res.Final == nil || res.Final.StopReason != llm.StopError {
		t.Fatalf("%v %+v", err, res)
	}
	msgs, roles := sessionRoles(t, e.session)
	if roles != "user,assistant:error" || !strings.Contains(msgs[1].ErrorMessage, "bad key") {
		t.Fatal(roles, msgs[1].ErrorMessage)
	}
}

func TestRunBadSessions(t *testing.T) {
	e := newRunEnv(t)
	os.MkdirAll(filepath.Dir(e.session), 0o755)
	// A foreign file: left untouched, clear error.
	foreign := []byte("{\"hello\":\"world\"}\nnot a session\n")
	os.WriteFile(e.session, foreign, 0o644)
	_, err := Run(context.Background(), e.params("hi"))
	if !errors.Is(err, transcript.ErrNotSession) {
		t.Fatalf("foreign file: %v", err)
	}
	if b, _ := os.ReadFile(e.session); string(b) != string(foreign) {
		t.Fatal("foreign file modified")
	}
	// A session locked by another writer.
	os.Remove(e.session)
	w, err := transcript.OpenWriter(e.session, transcript.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), e.params("hi"))
	if !errors.Is(err, transcript.ErrLocked) {
		t.Fatalf("locked: %v", err)
	}
	w.Close()
	if e.fp.calls != 0 {
		t.Fatal("the model was called despite the setup failure")
	}
	// A torn last line is set aside, reported, and the run goes on.
	f, _ := os.OpenFile(e.session, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"type":"message","id":"abcd0123","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"to`)
	f.Close()
	res, err := Run(context.Background(), e.params("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Notes) == 0 || !strings.Contains(strings.Join(res.Notes, "\n"), "torn") {
		t.Fatalf("notes: %q", res.Notes)
	}
}

func TestRunOverflowCompaction(t *testing.T) {
	overflow := llm.Message{Role: llm.RoleAssistant, StopReason: llm.StopError, ErrorMessage: "prompt is too long: 250000 tokens > 200000 maximum"}
	e := newRunEnv(t)
	// A first run leaves history to compact.
	e.fp.turns = []fakeTurn{
		{msg: assistantCalls([3]string{"c1", "read", `{"path":"notes.txt"}`})},
		{msg: assistantText("first answer " + strings.Repeat("x", 4000))},
	}
	p := e.params("first question")
	if _, err := Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	e.fp.turns = append(e.fp.turns,
		fakeTurn{msg: overflow}, // call 3: overflow
		fakeTurn{msg: assistantText("SUMMARY: user asked things")}, // call 4: summary request
		fakeTurn{msg: assistantText("answer after compaction")},    // call 5: retry
	)
	p = e.params("second question")
	p.Compaction.KeepRecentTokens = 1
	res, err := Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Compaction.Compacted || res.Compaction.Trigger != TriggerOverflow || res.FinalText() != "answer after compaction" {
		t.Fatalf("%+v", res.Compaction)
	}
	sum := e.fp.reqs[3]
	if last := sum[len(sum)-1]; !strings.Contains(last.TextContent(), "Summarize the conversation") {
		t.Fatalf("summary request ends with %q", last.TextContent())
	}
	retry := e.fp.reqs[4]
	if !strings.Contains(retry[0].TextContent(), "SUMMARY: user asked things") {
		t.Fatalf("retry does not start with the summary: %q", retry[0].TextContent())
	}
	msgs, _ := sessionRoles(t, e.session)
	if !strings.Contains(msgs[0].TextContent(), transcript.CompactionSummaryPrefix) {
		t.Fatalf("reloaded context does not start with the summary")
	}
}

func TestRunCompactionTimeout(t *testing.T) {
	e := newRunEnv(t,
		fakeTurn{msg: assistantText(strings.Repeat("y", 20000))},
	)
	// 40,000 chars: over the preemptive budget of a 16,000-token window,
	// under the per-call guard's 57,600.
	p := e.params(strings.Repeat("x", 20000))
	if _, err := Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	e.fp.turns = append(e.fp.turns,
		fakeTurn{stall: true, msg: assistantText("never")}, // summary request stalls
		fakeTurn{msg: assistantText("went ahead")},
	)
	p = e.params("next")
	p.Model.ContextWindow = 16000 // 20000+ estimated tokens do not fit
	p.Compaction.Timeout = 50 * time.Millisecond
	res, err := Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if res.Preemptive.Route != RouteCompactOnly || !res.Compaction.TimedOut || res.Compaction.Compacted || !errors.Is(res.Compaction.Err, ErrCompactionTimeout) {
		t.Fatalf("%+v %+v", res.Preemptive, res.Compaction)
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), "proceeding with pre-compaction state") || res.FinalText() != "went ahead" {
		t.Fatalf("%q %q", res.Notes, res.FinalText())
	}
	// The model got the full pre-compaction history.
	if n := len(e.fp.reqs[len(e.fp.reqs)-1]); n != 3 {
		t.Fatalf("final request has %d messages", n)
	}
}

type failingHarness struct{ fakeHarness }

func (h *failingHarness) Run(ctx context.Context, p *Params) (*Result, error) {
	h.runs++
	return nil, errors.New("plugin exploded")
}

func TestRunPluginHarness(t *testing.T) {
	e := newRunEnv(t)
	plug := &fakeHarness{id: "codex", prio: 5}
	p := e.params("hi")
	p.Harness = HarnessPolicy{DefaultRuntime: "codex"}
	p.Harnesses = []Harness{plug}
	res, err := Run(context.Background(), p)
	if err != nil || plug.runs != 1 || res.Harness.Reason != ReasonForcedPlugin || e.fp.calls != 0 {
		t.Fatalf("%v %+v runs=%d calls=%d", err, res.Harness, plug.runs, e.fp.calls)
	}
	// A failing plugin harness is not retried on the embedded one.
	bad := &failingHarness{fakeHarness{id: "codex"}}
	p.Harnesses = []Harness{bad}
	if _, err := Run(context.Background(), p); err == nil || err.Error() != "plugin exploded" || e.fp.calls != 0 {
		t.Fatalf("%v calls=%d", err, e.fp.calls)
	}
	// An unregistered forced harness fails before anything is opened.
	p.Harnesses = nil
	if _, err := Run(context.Background(), p); !errors.Is(err, ErrHarnessNotRegistered) {
		t.Fatal(err)
	}
	if _, err := os.Stat(e.session); err == nil {
		t.Fatal("the session file was created by a run that could not start")
	}
	// Auto picks the embedded harness when no plugin supports the model.
	p.Harness = HarnessPolicy{DefaultRuntime: "auto"}
	p.Harnesses = []Harness{&fakeHarness{id: "codex", supports: func(HarnessQuery) bool { return false }}}
	res, err = Run(context.Background(), p)
	if err != nil || res.Harness.Reason != ReasonAutoPi || e.fp.calls != 1 {
		t.Fatalf("%v %+v", err, res.Harness)
	}
}

func TestRunPreemptiveTruncation(t *testing.T) {
	big := strings.Repeat("data line\n", 60000) // 600,000 chars
	bigTool := MustNewSchemaTool("dump", "", nil, func(ctx context.Context, args []byte) (ToolOutput, error) {
		return ToolOutput{Text: big}, nil
	})
	e := newRunEnv(t,
		fakeTurn{msg: assistantCalls([3]string{"c1", "dump", `{}`}, [3]string{"c2", "dump", `{}`}, [3]string{"c3", "dump", `{}`})},
		fakeTurn{msg: assistantText("dumped")},
	)
	p := e.params("dump it")
	p.Tools = []*Tool{bigTool}
	// A model with a huge window and no cap writes the results whole.
	p.Model.ContextWindow = 1_000_000
	p.Compaction.ToolResultMaxChars = 1 << 30
	if _, err := Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	// The next run's history holds a 600k-char tool result: prepare caps
	// it at the live cap (16,000 chars for a 200k window), so it fits.
	e.fp.turns = append(e.fp.turns, fakeTurn{msg: assistantText("fine")})
	p = e.params("next")
	p.Tools = []*Tool{bigTool}
	res, err := Run(context.Background(), p)
	if err != nil || res.Preemptive.Route != RouteFits {
		t.Fatalf("%v %+v", err, res.Preemptive)
	}
	req := e.fp.reqs[len(e.fp.reqs)-1]
	if n := len(req[2].TextContent()); n > 16000 || !strings.Contains(req[2].TextContent(), "more characters truncated") {
		t.Fatalf("tool result sent with %d chars", n)
	}
	// With a cap larger than the window allows, the preemptive check
	// routes to truncating tool results, and the call goes out smaller.
	e.fp.turns = append(e.fp.turns, fakeTurn{msg: assistantText("fine again")})
	p = e.params("again")
	p.Tools = []*Tool{bigTool}
	p.Compaction.ToolResultMaxChars = 1 << 30
	p.Model.ContextWindow = 100000
	res, err = Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	// Prepare caps each result at 120,000 chars (30% of the window);
	// three of them still overflow, and the reduction plan absorbs it.
	if res.Preemptive.Route != RouteTruncateToolResultsOnly || res.Preemptive.ShouldCompact || res.Compaction.Attempted {
		t.Fatalf("route %v %+v", res.Preemptive.Route, res.Preemptive)
	}
	req = e.fp.reqs[len(e.fp.reqs)-1]
	total := 0
	for _, m := range req {
		if m.Role == llm.RoleToolResult {
			total += len(m.TextContent())
		}
	}
	if total > 130000 {
		t.Fatalf("tool results not reduced: %d chars", total)
	}
	// The rewrite is in the transcript: the active branch holds the
	// reduced results, still paired, and the next run starts from them...
	msgs, _ := sessionRoles(t, e.session)
	checkPaired(t, msgs)
	total = 0
	for _, m := range msgs {
		if m.Role == llm.RoleToolResult {
			total += len(m.TextContent())
		}
	}
	if total > 130000 {
		t.Fatalf("active branch holds %d chars of tool results", total)
	}
	// ...and nothing written was lost: the full results are still in the
	// file, on the dead branch.
	rd, err := transcript.OpenFile(e.session, transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	full := 0
	for rd.Next() {
		if m := rd.Entry().Message; m != nil && m.Role == llm.RoleToolResult && len(m.TextContent()) == len(big) {
			full++
		}
	}
	rd.Close()
	if full != 3 {
		t.Fatalf("%d full tool results left in the file, want 3", full)
	}
}

func TestCompactionKeepsThePrompt(t *testing.T) {
	overflow := llm.Message{Role: llm.RoleAssistant, StopReason: llm.StopError, ErrorMessage: "context_length_exceeded"}
	e := newRunEnv(t,
		fakeTurn{msg: assistantText("one")},
		fakeTurn{msg: overflow},
		fakeTurn{msg: assistantText("summary of one")},
		fakeTurn{msg: assistantText("answer two")},
	)
	if _, err := Run(context.Background(), e.params("question one")); err != nil {
		t.Fatal(err)
	}
	p := e.params("question two")
	p.Compaction.KeepRecentTokens = 1 // keep as little as possible
	res, err := Run(context.Background(), p)
	if err != nil || !res.Compaction.Compacted {
		t.Fatalf("%v %+v", err, res.Compaction)
	}
	retry := e.fp.reqs[3]
	if last := retry[len(retry)-1]; last.Role != llm.RoleUser || last.TextContent() != "question two" {
		t.Fatalf("the retry lost the prompt: %v %q", last.Role, last.TextContent())
	}
}

func TestManualCompactionWithRotation(t *testing.T) {
	e := newRunEnv(t,
		fakeTurn{msg: assistantText("answer one " + strings.Repeat("a", 3000))},
		fakeTurn{msg: assistantText("answer two " + strings.Repeat("b", 3000))},
		fakeTurn{msg: assistantText("Summary: two questions answered.")},
		fakeTurn{msg: assistantText("answer three")},
	)
	for _, q := range []string{"one", "two"} {
		if _, err := Run(context.Background(), e.params(q)); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := sessionRoles(t, e.session)
	p := e.params("")
	p.Compaction.KeepRecentTokens = 100
	p.Session.RotateAfterCompaction = true
	p.Session.Durability = transcript.SyncTurn
	out, err := CompactSession(context.Background(), &p)
	if err != nil || !out.Compacted || out.Trigger != TriggerManual {
		t.Fatalf("%v %+v", err, out)
	}
	archives, _ := filepath.Glob(e.session + ".archive-*.zst")
	if len(archives) != 1 {
		t.Fatalf("archives: %v", archives)
	}
	// The archive still holds the whole pre-compaction conversation.
	rd, err := transcript.OpenFile(archives[0], transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rd.Next() {
		if rd.Entry().Type == transcript.TypeMessage {
			n++
		}
	}
	rd.Close()
	if n != len(before) {
		t.Fatalf("archive holds %d messages, the session had %d", n, len(before))
	}
	after, roles := sessionRoles(t, e.session)
	if !strings.Contains(after[0].TextContent(), "Summary: two questions answered.") || roles != "user,user,assistant:stop" {
		t.Fatalf("after compaction: %s", roles)
	}
	// The next run continues from the compacted session.
	res, err := Run(context.Background(), e.params("three"))
	if err != nil || res.FinalText() != "answer three" {
		t.Fatalf("%v %q", err, res.FinalText())
	}
	if last := e.fp.reqs[len(e.fp.reqs)-1]; len(last) != 4 {
		t.Fatalf("next run sent %d messages", len(last))
	}
}

func TestThresholdCompactionAfterRun(t *testing.T) {
	big := assistantText("long answer")
	big.Usage = llm.Usage{Input: 150000, Output: 40000, TotalTokens: 190000} // > 200000 - 20000
	e := newRunEnv(t,
		fakeTurn{msg: assistantText("first")},
		fakeTurn{msg: big},
		fakeTurn{msg: assistantText("Summary: long answers were given.")},
	)
	if _, err := Run(context.Background(), e.params("one")); err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), e.params("two"))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Compaction.Compacted || res.Compaction.Trigger != TriggerThreshold || len(res.Compactions) != 1 || res.FinalText() != "long answer" {
		t.Fatalf("%+v %q", res.Compaction, res.FinalText())
	}
	msgs, _ := sessionRoles(t, e.session)
	if !strings.Contains(msgs[0].TextContent(), "long answers were given") {
		t.Fatal("the session was not compacted for the next run")
	}
	// When the summary does not come in time, the run still ends on time,
	// on the pre-compaction state, and says so.
	e2 := newRunEnv(t,
		fakeTurn{msg: assistantText("first")},
		fakeTurn{msg: big},
		fakeTurn{stall: true, msg: assistantText("never")},
	)
	Run(context.Background(), e2.params("one"))
	p := e2.params("two")
	p.Compaction.AggregateTimeout = 50 * time.Millisecond
	res, err = Run(context.Background(), p)
	if err != nil || !res.Compaction.TimedOut || !strings.Contains(res.Compaction.Reason, "aggregate timeout (50ms): proceeding with pre-compaction state") {
		t.Fatalf("%v %+v", err, res.Compaction)
	}
}

func TestRewriteToolResultsRemapsCompaction(t *testing.T) {
	for _, file := range []bool{false, true} {
		p := &Params{}
		if file {
			p.SessionFile = filepath.Join(t.TempDir(), "s.jsonl")
		}
		s, err := openSession(p)
		if err != nil {
			t.Fatal(err)
		}
		add := func(m llm.Message) {
			if err := s.append(&m); err != nil {
				t.Fatal(err)
			}
		}
		add(llm.TextMessage(llm.RoleUser, "u1"))
		add(assistantCalls([3]string{"c1", "read", `{}`}))
		add(*toolResultMessage(nil, nil, []byte("c1"), "read", strings.Repeat("r", 1000), false, time.Now()))
		add(assistantText("a2"))
		add(llm.TextMessage(llm.RoleUser, "u2"))
		add(assistantText("a3"))
		mid := toolResultMessage(nil, nil, []byte("c1"), "read", "r[...1]", false, time.Now())
		if n, err := s.rewriteToolResults(map[string]*llm.Message{"c1": mid}); err != nil || n != 1 {
			t.Fatalf("%d %v", n, err)
		}
		if got := s.messages(); len(got) != 6 || got[2].TextContent() != "r[...1]" || got[5].TextContent() != "a3" {
			t.Fatalf("file=%v: rewrite not applied: %d messages", file, len(got))
		}
		_, firstKept, ok := s.planCompaction(1)
		if !ok {
			t.Fatal("no plan")
		}
		if _, err := s.commitCompaction("the summary", firstKept, 100); err != nil {
			t.Fatal(err)
		}
		before := s.messages()
		short := toolResultMessage(nil, nil, []byte("c1"), "read", "r[...]", false, time.Now())
		n, err := s.rewriteToolResults(map[string]*llm.Message{"c1": short})
		if err != nil || n != 1 {
			t.Fatalf("%d %v", n, err)
		}
		after := s.messages()
		if len(after) != len(before) || !strings.Contains(after[0].TextContent(), "the summary") {
			t.Fatalf("file=%v: context changed shape: %d -> %d", file, len(before), len(after))
		}
		for i := range after {
			if after[i].TextContent() != before[i].TextContent() {
				t.Fatalf("file=%v: message %d changed: %q -> %q", file, i, before[i].TextContent(), after[i].TextContent())
			}
		}
		s.close()
		if file {
			sc, err := transcript.LoadContext(p.SessionFile)
			if err != nil || len(sc.Messages) != len(after) || !strings.Contains(sc.Messages[0].TextContent(), "the summary") {
				t.Fatalf("reloaded: %v %d", err, len(sc.Messages))
			}
		}
	}
}

func TestToolResultCapAndContextGuard(t *testing.T) {
	huge := strings.Repeat("0123456789\n", 5000) // 55,000 chars
	dump := MustNewSchemaTool("dump", "", nil, func(ctx context.Context, args []byte) (ToolOutput, error) {
		return ToolOutput{Text: huge}, nil
	})
	e := newRunEnv(t,
		fakeTurn{msg: assistantCalls([3]string{"c1", "dump", `{}`})},
		fakeTurn{msg: assistantText("ok")},
	)
	p := e.params("dump")
	p.Tools = []*Tool{dump}
	p.Model.ContextWindow = 8000 // live cap 9,600 chars; guard cuts results over 8,000 estimated chars
	if _, err := Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	// Capped before it was written...
	msgs, _ := sessionRoles(t, e.session)
	if n := len(msgs[2].TextContent()); n > 9600 || !strings.Contains(msgs[2].TextContent(), "more characters truncated") {
		t.Fatalf("written tool result: %d chars", n)
	}
	// ...and cut again, on a copy, for the call (2 x 9,600 > 8,000).
	if n := len(e.fp.reqs[1][2].TextContent()); n > 4100 {
		t.Fatalf("sent tool result: %d chars", n)
	}
	// Too much in total: the guard stops the call and the run compacts.
	e2 := newRunEnv(t,
		fakeTurn{msg: assistantCalls([3]string{"c1", "dump", `{}`}, [3]string{"c2", "dump", `{}`}, [3]string{"c3", "dump", `{}`},
			[3]string{"c4", "dump", `{}`}, [3]string{"c5", "dump", `{}`}, [3]string{"c6", "dump", `{}`}, [3]string{"c7", "dump", `{}`},
			[3]string{"c8", "dump", `{}`})},
		fakeTurn{msg: assistantText("summary of the dumps")},
		fakeTurn{msg: assistantText("done")},
	)
	p = e2.params("dump a lot")
	p.Tools = []*Tool{dump}
	p.Model.ContextWindow = 8000
	res, err := Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Compactions) == 0 || res.Compactions[0].Trigger != TriggerOverflow || !res.Compactions[0].Compacted {
		t.Fatalf("%+v", res.Compactions)
	}
	// The fake provider never fails: the overflow can only be the guard's,
	// and the guard's call was never sent.
	for _, req := range e2.fp.reqs {
		if strings.Contains(req[len(req)-1].TextContent(), "Summarize the conversation") {
			continue // the summary request is compaction's, not a turn
		}
		chars := 0
		for i := range req {
			chars += guardChars(&req[i])
		}
		if chars > 8000*36/10 {
			t.Fatalf("a call of %d estimated chars was sent", chars)
		}
	}
}

// checkNewMessages asserts that res.NewMessages are the message entries
// the run wrote to the session file, in order (the run's new messages are
// the history's tail until something diverges; see runner.ownNew).
func checkNewMessages(t *testing.T, path string, res *Result) {
	t.Helper()
	rd, err := transcript.OpenFile(path, transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var written []llm.Message
	for rd.Next() {
		if e := rd.Entry(); e.Type == transcript.TypeMessage && e.Message != nil {
			written = append(written, *e.Message.Clone())
		}
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	describe := func(ms []llm.Message) string {
		var b strings.Builder
		for _, m := range ms {
			fmt.Fprintf(&b, "%s:%s:%s:%q:%q|", m.Role, m.StopReason, m.ToolCallID, m.TextContent(), m.ErrorMessage)
		}
		return b.String()
	}
	n := len(res.NewMessages)
	if n == 0 || n > len(written) {
		t.Fatalf("%d new messages, %d written", n, len(written))
	}
	if got, want := describe(res.NewMessages), describe(written[len(written)-n:]); got != want {
		t.Fatalf("new messages\n%s\nwritten\n%s", got, want)
	}
}

// TestRunNewMessagesAreWhatWasWritten covers the ways a run's new
// messages leave the history's tail: a failed turn whose calls get error
// results, an interrupted turn (its placeholder in the history), a
// compaction (a new history), and the plain tool loop.
func TestRunNewMessagesAreWhatWasWritten(t *testing.T) {
	overflow := llm.Message{Role: llm.RoleAssistant, StopReason: llm.StopError, ErrorMessage: "prompt is too long: 250000 tokens > 200000 maximum"}
	failedCalls := assistantCalls([3]string{"c9", "ls", `{}`})
	failedCalls.StopReason, failedCalls.ErrorMessage = llm.StopError, "upstream broke"
	q := &Queue{}
	cases := []struct {
		name  string
		turns []fakeTurn
		queue *Queue
		keep  int
	}{
		{name: "tool loop", turns: []fakeTurn{{msg: assistantCalls([3]string{"c1", "ls", `{}`})}, {msg: assistantCalls([3]string{"c2", "ls", `{}`})}, {msg: assistantText("done")}}},
		{name: "failed turn with calls", turns: []fakeTurn{{msg: assistantCalls([3]string{"c1", "ls", `{}`})}, {msg: failedCalls}}},
		{name: "interrupted", queue: q, turns: []fakeTurn{{stall: true, msg: assistantText("never"), before: func() {
			go func() { time.Sleep(20 * time.Millisecond); q.Push(Interrupt, "stop, do this instead") }()
		}}, {msg: assistantText("doing it")}}},
		{name: "overflow compaction", keep: 1, turns: []fakeTurn{{msg: assistantCalls([3]string{"c1", "ls", `{}`})}, {msg: overflow},
			{msg: assistantText("SUMMARY: things")}, {msg: assistantText("after")}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newRunEnv(t, fakeTurn{msg: assistantText("earlier answer " + strings.Repeat("x", 4000))})
			if _, err := Run(context.Background(), e.params("earlier")); err != nil {
				t.Fatal(err)
			}
			e.fp.turns = append(e.fp.turns, c.turns...)
			p := e.params("now")
			p.Queue = c.queue
			p.Compaction.KeepRecentTokens = c.keep
			res, _ := Run(context.Background(), p)
			checkNewMessages(t, e.session, &res)
		})
	}
}
