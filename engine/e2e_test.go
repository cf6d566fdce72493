package engine

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/prompt"
	"github.com/ocbench/ocbench/provider"
	"github.com/ocbench/ocbench/provider/scripted"
)

// The end-to-end tests run the engine against provider/scripted over
// loopback HTTP, through package provider's client and decoders and the
// full streamwrap chain, in each of the three wire formats.

var wires = []llm.API{llm.APIOpenAICompletions, llm.APIOpenAIResponses, llm.APIAnthropicMessages}

type e2e struct {
	t       *testing.T
	url     string
	ws      string
	session string
	api     llm.API
}

func startE2E(t *testing.T, api llm.API, o scripted.Options) *e2e {
	t.Helper()
	_, srv, err := scripted.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := prompt.MaterializeSample(ws); err != nil {
		t.Fatal(err)
	}
	return &e2e{t: t, url: srv.URL, ws: ws, session: filepath.Join(dir, "session.jsonl"), api: api}
}

func (e *e2e) params(msg string) Params {
	return Params{
		Prompt:    msg,
		Model:     llm.Model{ID: "scripted-1", API: e.api, Provider: "scripted", BaseURL: e.url},
		APIKey:    "test-key",
		Workspace: e.ws, OpenClawPrompt: true, BuiltinTools: true,
		SessionFile: e.session,
	}
}

func forEachWire(t *testing.T, f func(t *testing.T, api llm.API)) {
	for _, api := range wires {
		t.Run(string(api), func(t *testing.T) { f(t, api) })
	}
}

func lastUser(req *llm.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == llm.RoleUser {
			return req.Messages[i].TextContent()
		}
	}
	return ""
}

func TestE2EDefaultScript(t *testing.T) {
	forEachWire(t, func(t *testing.T, api llm.API) {
		e := startE2E(t, api, scripted.Options{})
		var deltas strings.Builder
		p := e.params("get started")
		p.OnEvent = func(ev *Event) {
			if ev.Kind == EventStream && ev.Stream.Type == llm.EventTextDelta {
				deltas.Write(ev.Stream.Delta)
			}
		}
		res, err := Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if res.Turns != 2 || len(res.ToolCalls) != 1 || res.ToolCalls[0].Name != "read" || res.ToolCalls[0].IsError {
			t.Fatalf("%+v", res)
		}
		if !strings.Contains(res.FinalText(), "I read AGENTS.md") || !strings.Contains(deltas.String(), "I'll start by reading") {
			t.Fatalf("text %q / deltas %q", res.FinalText(), deltas.String())
		}
		if res.Usage.CacheRead != 2*3072 || res.Usage.Output != 38+46 {
			t.Errorf("usage %+v", res.Usage)
		}
		msgs, roles := sessionRoles(t, e.session)
		if roles != "user,assistant:toolUse,toolResult,assistant:stop" {
			t.Fatal(roles)
		}
		agents, _ := os.ReadFile(filepath.Join(e.ws, "AGENTS.md"))
		if msgs[2].TextContent() != string(agents) {
			t.Errorf("the read result is not AGENTS.md")
		}
		if msgs[1].API != api {
			t.Errorf("assistant api %q", msgs[1].API)
		}
	})
}

func TestE2EMalformedCalls(t *testing.T) {
	forEachWire(t, func(t *testing.T, api llm.API) {
		script := &scripted.Script{Turns: []scripted.Turn{
			{Steps: []scripted.Step{
				scripted.ToolCall("call_a", "read", scripted.Malform(`{"path":"AGENTS.md"}`, scripted.QuirkTrailingComma)),
				scripted.ToolCall("call_b", "ls", scripted.Malform(`{"path":"."}`, scripted.QuirkFence)),
			}},
			{Steps: []scripted.Step{scripted.Text("read it")}},
		}}
		e := startE2E(t, api, scripted.Options{Script: script})
		res, err := Run(context.Background(), e.params("go"))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.ToolCalls) != 2 || res.Repairs != 2 {
			t.Fatalf("repairs %d, calls %+v", res.Repairs, res.ToolCalls)
		}
		for _, c := range res.ToolCalls {
			if c.IsError {
				t.Errorf("repairable call %s failed: %v", c.Name, c.Err)
			}
		}
		msgs, _ := sessionRoles(t, e.session)
		checkPaired(t, msgs)
	})
	// A call the repair cannot save is refused with an error result, and
	// the model gets to answer it.
	forEachWire(t, func(t *testing.T, api llm.API) {
		script := &scripted.Script{Turns: []scripted.Turn{
			{Steps: []scripted.Step{scripted.ToolCall("call_t", "write", `{"path":"x.txt","content":"unterminated`)}},
		}}
		e := startE2E(t, api, scripted.Options{Script: script})
		res, err := Run(context.Background(), e.params("go"))
		// The argument stage refuses a cut-off call: the turn ends as an
		// error that says so, and the call never runs.
		if !errors.Is(err, ErrProvider) || res.Final.StopReason != llm.StopError || !strings.Contains(res.Final.ErrorMessage, "cut off") {
			t.Fatalf("truncated call was not refused: %v", err)
		}
		if len(res.ToolCalls) != 0 {
			t.Fatalf("a refused call ran: %+v", res.ToolCalls)
		}
		if _, err := os.Stat(filepath.Join(e.ws, "x.txt")); err == nil {
			t.Fatal("a refused call wrote a file")
		}
		msgs, _ := sessionRoles(t, e.session)
		checkPaired(t, msgs)
	})
}

func TestE2EUnknownToolLoopGuard(t *testing.T) {
	forEachWire(t, func(t *testing.T, api llm.API) {
		script := &scripted.Script{Turns: []scripted.Turn{
			{Steps: []scripted.Step{scripted.ToolCall("", "teleport", `{"to":"mars"}`)}},
		}}
		e := startE2E(t, api, scripted.Options{Script: script})
		p := e.params("go to mars")
		p.Stream.UnknownToolThreshold = 3
		res, err := Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		// Three unknown-tool turns pass (each answered by an error
		// result); the fourth is rewritten into a text that stops.
		if res.Turns != 4 || len(res.ToolCalls) != 3 || !strings.Contains(res.FinalText(), `can't use the tool "teleport"`) {
			t.Fatalf("turns %d calls %d text %q", res.Turns, len(res.ToolCalls), res.FinalText())
		}
		for _, c := range res.ToolCalls {
			if !errors.Is(c.Err, ErrUnknownTool) {
				t.Errorf("%+v", c)
			}
		}
	})
}

func TestE2EIdleTimeout(t *testing.T) {
	forEachWire(t, func(t *testing.T, api llm.API) {
		script := &scripted.Script{Turns: []scripted.Turn{
			{Steps: []scripted.Step{scripted.Text("thinking about it"), scripted.Stall(10 * time.Second), scripted.Text("never")}},
		}}
		e := startE2E(t, api, scripted.Options{Script: script})
		p := e.params("hello")
		p.Stream.IdleTimeout = 500 * time.Millisecond
		start := time.Now()
		res, err := Run(context.Background(), p)
		if !errors.Is(err, ErrProvider) || time.Since(start) > 5*time.Second {
			t.Fatalf("err %v after %v", err, time.Since(start))
		}
		if res.Final == nil || res.Final.StopReason != llm.StopError || !strings.Contains(res.Final.ErrorMessage, "idle timeout") {
			t.Fatalf("%+v", res.Final)
		}
		msgs, roles := sessionRoles(t, e.session)
		if roles != "user,assistant:error" || !strings.Contains(msgs[1].TextContent(), "thinking about it") {
			t.Fatalf("%s %q", roles, msgs[1].TextContent())
		}
	})
}

func TestE2EAbort(t *testing.T) {
	forEachWire(t, func(t *testing.T, api llm.API) {
		// Mid-stream.
		script := &scripted.Script{Turns: []scripted.Turn{
			{Steps: []scripted.Step{scripted.Text("partial answer"), scripted.Stall(0)}},
		}}
		e := startE2E(t, api, scripted.Options{Script: script})
		ctx, cancel := context.WithCancel(context.Background())
		p := e.params("hello")
		p.OnEvent = func(ev *Event) {
			if ev.Kind == EventStream && ev.Stream.Type == llm.EventTextDelta {
				cancel()
			}
		}
		res, err := Run(ctx, p)
		if !errors.Is(err, context.Canceled) || !res.Aborted {
			t.Fatalf("%v %+v", err, res)
		}
		msgs, roles := sessionRoles(t, e.session)
		if roles != "user,assistant:aborted" || !strings.Contains(msgs[1].TextContent(), "partial") {
			t.Fatalf("%s", roles)
		}
		// Mid-tool.
		script = &scripted.Script{Turns: []scripted.Turn{
			{Steps: []scripted.Step{scripted.ToolCall("c1", "slow", `{}`), scripted.ToolCall("c2", "ls", `{}`)}},
		}}
		e = startE2E(t, api, scripted.Options{Script: script})
		ctx, cancel = context.WithCancel(context.Background())
		started := make(chan struct{}, 1)
		p = e.params("hello")
		p.Tools = []*Tool{slowTool(t, started)}
		go func() { <-started; cancel() }()
		res, err = Run(ctx, p)
		if !errors.Is(err, context.Canceled) || !res.Aborted {
			t.Fatalf("%v %+v", err, res)
		}
		msgs, roles = sessionRoles(t, e.session)
		if roles != "user,assistant:toolUse,toolResult!,toolResult!" {
			t.Fatal(roles)
		}
		checkPaired(t, msgs)
	})
}

func TestE2ESteering(t *testing.T) {
	forEachWire(t, func(t *testing.T, api llm.API) {
		pick := func(req *llm.Request) (*scripted.Script, *scripted.Turn) {
			s := &scripted.Script{}
			switch {
			case lastUser(req) == "use the notes instead":
				s.Turns = []scripted.Turn{{Steps: []scripted.Step{scripted.Text("switched to the notes")}}}
			case scripted.Position(req) == 0:
				s.Turns = []scripted.Turn{{Steps: []scripted.Step{scripted.ToolCall("", "ls", `{}`)}}}
			default:
				s.Turns = []scripted.Turn{{Steps: []scripted.Step{scripted.Text("listed")}}}
			}
			return s, &s.Turns[0]
		}
		e := startE2E(t, api, scripted.Options{Pick: pick})
		q := &Queue{}
		p := e.params("list the files")
		p.Queue = q
		p.OnEvent = func(ev *Event) {
			if ev.Kind == EventToolStart {
				q.Push(Steer, "use the notes instead")
			}
		}
		res, err := Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if res.Steered != 1 || res.FinalText() != "switched to the notes" || res.Turns != 2 {
			t.Fatalf("%+v", res)
		}
		_, roles := sessionRoles(t, e.session)
		if roles != "user,assistant:toolUse,toolResult,user,assistant:stop" {
			t.Fatal(roles)
		}
	})
}

const summaryMarker = "Summarize the conversation above"

func TestE2ECompaction(t *testing.T) {
	forEachWire(t, func(t *testing.T, api llm.API) {
		var overflowed atomic.Bool
		pick := func(req *llm.Request) (*scripted.Script, *scripted.Turn) {
			s := &scripted.Script{}
			switch u := lastUser(req); {
			case strings.Contains(u, summaryMarker):
				s.Turns = []scripted.Turn{{Steps: []scripted.Step{scripted.Text("Goal: answer questions. Progress: two questions answered.")}}}
			case u == "third" && !overflowed.Swap(true):
				s.Turns = []scripted.Turn{{HTTPError: &scripted.HTTPError{Status: 400, Type: "invalid_request_error",
					Message: "prompt is too long: 210000 tokens > 200000 maximum"}}}
			default:
				s.Turns = []scripted.Turn{{Steps: []scripted.Step{scripted.Text("answer to " + u + " " + strings.Repeat("z", 2000))}}}
			}
			return s, &s.Turns[0]
		}
		e := startE2E(t, api, scripted.Options{Pick: pick})
		for _, q := range []string{"first", "second"} {
			if _, err := Run(context.Background(), e.params(q)); err != nil {
				t.Fatal(err)
			}
		}
		p := e.params("third")
		p.Compaction.KeepRecentTokens = 10
		res, err := Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		c := res.Compaction
		if !c.Compacted || c.Trigger != TriggerOverflow || !strings.HasPrefix(c.Summary, "Goal:") || c.FirstKeptEntryID == "" {
			t.Fatalf("%+v", c)
		}
		if !strings.HasPrefix(res.FinalText(), "answer to third") {
			t.Fatalf("%q", res.FinalText())
		}
		msgs, _ := sessionRoles(t, e.session)
		if !strings.Contains(msgs[0].TextContent(), "Progress: two questions answered.") {
			t.Fatalf("reloaded context starts with %q", msgs[0].TextContent())
		}
	})
}

func TestE2ECompactionTimeout(t *testing.T) {
	forEachWire(t, func(t *testing.T, api llm.API) {
		pick := func(req *llm.Request) (*scripted.Script, *scripted.Turn) {
			s := &scripted.Script{}
			if strings.Contains(lastUser(req), summaryMarker) {
				s.Turns = []scripted.Turn{{Steps: []scripted.Step{scripted.Stall(0)}}}
			} else {
				s.Turns = []scripted.Turn{{Steps: []scripted.Step{scripted.Text("long answer " + strings.Repeat("w", 20000))}}}
			}
			return s, &s.Turns[0]
		}
		e := startE2E(t, api, scripted.Options{Pick: pick})
		if _, err := Run(context.Background(), e.params("first "+strings.Repeat("q", 20000))); err != nil {
			t.Fatal(err)
		}
		p := e.params("second")
		p.Model.ContextWindow = 16000
		p.Compaction.Timeout = 200 * time.Millisecond
		res, err := Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Compaction.TimedOut || res.Compaction.Compacted || res.Preemptive.Route != RouteCompactOnly {
			t.Fatalf("%+v %+v", res.Compaction, res.Preemptive)
		}
		if !strings.Contains(strings.Join(res.Notes, "\n"), "proceeding with pre-compaction state") {
			t.Fatalf("notes %q", res.Notes)
		}
		_, roles := sessionRoles(t, e.session)
		if roles != "user,assistant:stop,user,assistant:stop" {
			t.Fatal(roles)
		}
	})
}

func TestE2EHTTPErrors(t *testing.T) {
	forEachWire(t, func(t *testing.T, api llm.API) {
		var calls atomic.Int32
		mode := "400"
		var mu sync.Mutex
		pick := func(req *llm.Request) (*scripted.Script, *scripted.Turn) {
			n := calls.Add(1)
			mu.Lock()
			m := mode
			mu.Unlock()
			s := &scripted.Script{}
			switch {
			case m == "400":
				s.Turns = []scripted.Turn{{HTTPError: &scripted.HTTPError{Status: 400, Type: "invalid_request_error", Message: "model does not exist"}}}
			case m == "429" && n == 1:
				s.Turns = []scripted.Turn{{HTTPError: &scripted.HTTPError{Status: 429, RetryAfter: 50 * time.Millisecond, Type: "rate_limit_error", Message: "slow down"}}}
			case m == "429-long":
				s.Turns = []scripted.Turn{{HTTPError: &scripted.HTTPError{Status: 429, RetryAfter: time.Hour, Type: "rate_limit_error", Message: "come back in an hour"}}}
			default:
				s.Turns = []scripted.Turn{{Steps: []scripted.Step{scripted.Text("fine now")}}}
			}
			return s, &s.Turns[0]
		}
		e := startE2E(t, api, scripted.Options{Pick: pick})
		res, err := Run(context.Background(), e.params("hi"))
		var he *provider.HTTPError
		if !errors.Is(err, ErrProvider) || !errors.As(err, &he) || he.Status != 400 || !strings.Contains(res.Final.ErrorMessage, "model does not exist") {
			t.Fatalf("400: %v", err)
		}
		mu.Lock()
		mode = "429"
		mu.Unlock()
		calls.Store(0)
		res, err = Run(context.Background(), e.params("hi again"))
		if err != nil || res.Retries != 1 || res.FinalText() != "fine now" {
			t.Fatalf("429: %v %+v", err, res)
		}
		mu.Lock()
		mode = "429-long"
		mu.Unlock()
		start := time.Now()
		res, err = Run(context.Background(), e.params("hi once more"))
		if !errors.As(err, &he) || he.Status != 429 || time.Since(start) > 5*time.Second || res.Retries != 0 {
			t.Fatalf("429 with a long Retry-After: %v after %v", err, time.Since(start))
		}
		msgs, roles := sessionRoles(t, e.session)
		if roles != "user,assistant:error,user,assistant:stop,user,assistant:error" {
			t.Fatal(roles)
		}
		if !strings.Contains(msgs[5].ErrorMessage, "come back in an hour") {
			t.Errorf("%q", msgs[5].ErrorMessage)
		}
	})
}

func TestE2EEndlessStream(t *testing.T) {
	// A server that never stops sending text deltas.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, `data: {"id":"x","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`+"\n\n")
		chunk := `data: {"id":"x","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"` + strings.Repeat("la", 512) + `"}}]}` + "\n\n"
		for r.Context().Err() == nil {
			if _, err := fmt.Fprint(w, chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	p := Params{
		Prompt:          "sing",
		Model:           llm.Model{ID: "m", API: "openai-completions", Provider: "local", BaseURL: srv.URL},
		APIKey:          "k",
		SessionFile:     filepath.Join(dir, "s.jsonl"),
		MaxMessageBytes: 256 << 10,
	}
	res, err := Run(context.Background(), p)
	if !errors.Is(err, ErrMessageTooLarge) || res.Final.StopReason != llm.StopError {
		t.Fatalf("%v %+v", err, res.Final)
	}
	msgs, roles := sessionRoles(t, p.SessionFile)
	if roles != "user,assistant:error" || len(msgs[1].TextContent()) < 256<<10 {
		t.Fatalf("%s, %d bytes kept", roles, len(msgs[1].TextContent()))
	}
}

func TestE2EInterruptAndFollowUp(t *testing.T) {
	forEachWire(t, func(t *testing.T, api llm.API) {
		pick := func(req *llm.Request) (*scripted.Script, *scripted.Turn) {
			s := &scripted.Script{}
			switch lastUser(req) {
			case "forget that, say hi":
				s.Turns = []scripted.Turn{{Steps: []scripted.Step{scripted.Text("hi")}}}
			case "and bye":
				s.Turns = []scripted.Turn{{Steps: []scripted.Step{scripted.Text("bye")}}}
			default:
				s.Turns = []scripted.Turn{{Steps: []scripted.Step{scripted.Text("a very long essay"), scripted.Stall(0)}}}
			}
			return s, &s.Turns[0]
		}
		e := startE2E(t, api, scripted.Options{Pick: pick})
		q := &Queue{}
		p := e.params("write an essay")
		p.Queue = q
		pushed := false
		p.OnEvent = func(ev *Event) {
			if ev.Kind == EventStream && ev.Stream.Type == llm.EventTextDelta && !pushed {
				pushed = true
				q.Push(FollowUp, "and bye")
				q.Push(Interrupt, "forget that, say hi")
			}
		}
		res, err := Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if res.FinalText() != "bye" || res.Steered != 2 || res.Turns != 3 {
			t.Fatalf("text %q steered %d turns %d", res.FinalText(), res.Steered, res.Turns)
		}
		msgs, roles := sessionRoles(t, e.session)
		if roles != "user,assistant:aborted,user,assistant:stop,user,assistant:stop" {
			t.Fatal(roles)
		}
		if !strings.Contains(msgs[1].TextContent(), "a very long essay") {
			t.Fatalf("the interrupted text was lost: %q", msgs[1].TextContent())
		}
	})
}
