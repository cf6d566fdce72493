package scripted

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider"
	"github.com/ocbench/ocbench/provider/wireenc"
	"github.com/valyala/fastjson"
)

var testUsage = llm.Usage{Input: 120, Output: 45, CacheRead: 2048, CacheWrite: 256, Reasoning: 9}

func shapes() map[string]Turn {
	return map[string]Turn{
		"text": {Steps: []Step{Text("Hello — ünïcode ✓, \"quoted\"\nand a new line.").Chunked(5)}, Usage: testUsage},
		"tools": {Steps: []Step{ToolCall("call_1", "read", `{"path":"README.md"}`).Chunked(4)},
			Usage: testUsage, Stop: llm.StopToolUse},
		"text+tools": {Steps: []Step{Text("Let me check the weather."), ToolCall("call_w", "get_weather", `{"city":"Paris"}`).Chunked(3)},
			Usage: testUsage},
		"thinking": {Steps: []Step{Thinking("925 ÷ 5 = 185, so the answer is 185.", "EvQBCkYICxgCsig==").Chunked(7), Text("185")},
			Usage: testUsage},
		"parallel": {Steps: []Step{Text("Reading three files."), Parallel(
			Call{ID: "call_a", Name: "read", Args: `{"path":"a.txt"}`},
			Call{ID: "call_b", Name: "read", Args: `{"path":"b.txt"}`},
			Call{Name: "exec", Args: `{"command":"ls -la && echo \"done\""}`}).Chunked(3)},
			Usage: testUsage},
		"sequential-calls": {Steps: []Step{{Kind: StepTools, Calls: []Call{
			{ID: "call_x", Name: "read", Args: `{"path":"x"}`}, {ID: "call_y", Name: "write", Args: `{"path":"y","content":"z"}`}}, Chunk: 5}}},
	}
}

func TestWiresDecodeToTheScript(t *testing.T) {
	for name, turn := range shapes() {
		s := &Script{Turns: []Turn{turn}}
		p := MustNew(Options{Script: s})
		for mode, play := range modes(t, p) {
			for _, w := range wireenc.Wires {
				t.Run(fmt.Sprintf("%s/%s/%v", name, mode, w), func(t *testing.T) {
					if w == wireenc.OpenAIChat && name == "thinking" {
						// OpenAI Chat has no signature: the decoder records
						// which field carried the reasoning instead.
						turn := turn
						turn.Steps = append([]Step{Thinking(turn.Steps[0].Text, "reasoning_content")}, turn.Steps[1:]...)
						s := &Script{Turns: []Turn{turn}}
						m, _, err := playInProcess(t, context.Background(), MustNew(Options{Script: s}), w, userReq("hi"))
						if err != nil {
							t.Fatal(err)
						}
						checkTurn(t, w, &turn, m)
						return
					}
					m, types, err := play(t, context.Background(), w, userReq("hi"))
					if err != nil {
						t.Fatal(err)
					}
					if types[0] != llm.EventStart || types[len(types)-1] != llm.EventDone {
						t.Errorf("events %v", types)
					}
					checkTurn(t, w, &turn, m)
					wantStop := llm.StopStop
					if turn.hasToolCalls() {
						wantStop = llm.StopToolUse
					}
					if m.StopReason != wantStop {
						t.Errorf("stop %v, want %v", m.StopReason, wantStop)
					}
				})
			}
		}
	}
}

func TestDefaultScriptRunsATurnLoop(t *testing.T) {
	p := MustNew(Options{})
	for mode, play := range modes(t, p) {
		for _, w := range wireenc.Wires {
			req := userReq("set up the workspace")
			seen := map[string]bool{}            // tool-call ids (Responses: call id and item id)
			for round := 0; round < 3; round++ { // three user messages, each a full loop
				m, _, err := play(t, context.Background(), w, req)
				if err != nil {
					t.Fatalf("%s/%v: %v", mode, w, err)
				}
				if m.StopReason != llm.StopToolUse {
					t.Fatalf("%s/%v: first answer %s", mode, w, m.AppendJSON(nil))
				}
				calls := m.ToolCalls(nil)
				if len(calls) != 1 || string(m.Content[calls[0]].Name) != "read" ||
					string(m.Content[calls[0]].Arguments) != `{"path":"`+DefaultReadPath+`"}` {
					t.Fatalf("%s/%v: tool call %s", mode, w, m.AppendJSON(nil))
				}
				// Every answer's ids are its own, as a real provider's are:
				// a repeated one would pair a later result with an earlier
				// call.
				for _, id := range strings.Split(string(m.Content[calls[0]].ID), "|") {
					if id == "" || seen[id] {
						t.Fatalf("%s/%v round %d: tool-call id %q empty or seen in an earlier answer (%v)", mode, w, round, id, seen)
					}
					seen[id] = true
				}
				req.Messages = append(req.Messages, *m, llm.Message{Role: llm.RoleToolResult,
					ToolCallID: string(m.Content[calls[0]].ID), ToolName: "read",
					Content: []llm.Block{{Type: llm.BlockText, Text: []byte("# Agents\nbe careful")}}})
				m, _, err = play(t, context.Background(), w, req)
				if err != nil {
					t.Fatal(err)
				}
				if m.StopReason != llm.StopStop || !strings.Contains(m.TextContent(), DefaultReadPath) {
					t.Fatalf("%s/%v: final answer %s", mode, w, m.AppendJSON(nil))
				}
				req.Messages = append(req.Messages, *m, llm.TextMessage(llm.RoleUser, "again"))
			}
		}
	}
}

func TestLatency(t *testing.T) {
	const first, gap = 40 * time.Millisecond, 4 * time.Millisecond
	turn := Turn{Steps: []Step{Text("one two three four").Chunked(5)}, Latency: Latency{FirstEvent: first, Gap: gap}}
	p := MustNew(Options{Script: &Script{Turns: []Turn{turn}}})
	for mode := range modes(t, p) {
		for _, w := range wireenc.Wires {
			start := time.Now()
			var firstAt time.Duration
			n := 0
			srv := modesServer(t, p, mode)
			s := streamOf(t, p, srv, w)
			for s.Next() {
				if s.Event().Type == llm.EventTextDelta && n == 0 {
					firstAt = time.Since(start)
				}
				if s.Event().Type == llm.EventTextDelta {
					n++
				}
			}
			total := time.Since(start)
			if s.Err() != nil {
				t.Fatal(s.Err())
			}
			s.Close()
			if firstAt < first {
				t.Errorf("%s/%v: first delta after %v, want >= %v", mode, w, firstAt, first)
			}
			if min := first + time.Duration(n-1)*gap; total < min {
				t.Errorf("%s/%v: stream took %v for %d deltas, want >= %v", mode, w, total, n, min)
			}
		}
	}
}

// modesServer returns a server URL for the loopback mode, "" in process.
func modesServer(t *testing.T, p *Provider, mode string) string {
	if mode != "loopback" {
		return ""
	}
	srv, err := p.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(); http.DefaultClient.CloseIdleConnections() })
	return srv.URL
}

// streamOf opens a stream in process (base == "") or over loopback.
func streamOf(t *testing.T, p *Provider, base string, w wireenc.Wire) llm.Stream {
	return streamCtx(t, context.Background(), p, base, w)
}

func streamCtx(t *testing.T, ctx context.Context, p *Provider, base string, w wireenc.Wire) llm.Stream {
	t.Helper()
	req := userReq("hi")
	if base == "" {
		req.Model.API = w.API()
		s, err := p.Stream(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	resp, err := post(ctx, base, w, requestBody(w, req, true))
	if err != nil {
		t.Fatal(err)
	}
	pw, _ := provider.ParseWire(w.String())
	d := provider.NewDecoder(pw, resp.Body, provider.Options{})
	d.SetContext(ctx)
	return d
}

func TestStalls(t *testing.T) {
	const pause = 30 * time.Millisecond
	p := MustNew(Options{Script: &Script{Turns: []Turn{{Steps: []Step{Text("before"), Stall(pause), Text("after")}}}}})
	for mode := range modes(t, p) {
		base := modesServer(t, p, mode)
		for _, w := range wireenc.Wires {
			s := streamOf(t, p, base, w)
			var before time.Time
			var gapSeen time.Duration
			for s.Next() {
				switch s.Event().Type {
				case llm.EventTextEnd:
					if before.IsZero() {
						before = time.Now()
					}
				case llm.EventTextStart:
					if !before.IsZero() {
						gapSeen = time.Since(before)
					}
				}
			}
			if s.Err() != nil {
				t.Fatalf("%s/%v: %v", mode, w, s.Err())
			}
			// Chat has no end marker: the first block ends when the second
			// starts, so the pause is seen before the first end instead.
			// Over loopback the end event reaches the client a little after
			// the server starts its pause, so allow for the transit.
			if w != wireenc.OpenAIChat && gapSeen < pause*3/4 {
				t.Errorf("%s/%v: pause of %v between blocks, want >= %v", mode, w, gapSeen, pause)
			}
			if got := s.Message().TextContent(); w != wireenc.OpenAIChat && got != "beforeafter" {
				t.Errorf("%s/%v: text %q", mode, w, got)
			}
			s.Close()
		}
	}
}

func TestStallForeverEndsWithTheContext(t *testing.T) {
	p := MustNew(Options{Script: &Script{Turns: []Turn{{Steps: []Step{Text("partial answer"), Stall(0), Text("never")}}}}})
	for mode := range modes(t, p) {
		base := modesServer(t, p, mode)
		for _, w := range wireenc.Wires {
			ctx, cancel := context.WithCancel(context.Background())
			s := streamCtx(t, ctx, p, base, w)
			time.AfterFunc(30*time.Millisecond, cancel)
			start := time.Now()
			m, err := llm.Drain(s)
			if time.Since(start) < 25*time.Millisecond {
				t.Errorf("%s/%v: ended after %v, before the cancel", mode, w, time.Since(start))
			}
			if !errors.Is(err, context.Canceled) || m.StopReason != llm.StopAborted || m.ErrorMessage != "Request was aborted" {
				t.Errorf("%s/%v: err %v, stop %v %q", mode, w, err, m.StopReason, m.ErrorMessage)
			}
			if !strings.HasPrefix(m.TextContent(), "partial answer") {
				t.Errorf("%s/%v: lost the text before the stall: %q", mode, w, m.TextContent())
			}
			s.Close()
			cancel()
		}
	}
}

func TestHTTPErrors(t *testing.T) {
	turn := Turn{HTTPError: &HTTPError{Status: 429, RetryAfter: 2 * time.Second, Message: "slow down"}}
	p := MustNew(Options{Script: &Script{Turns: []Turn{turn}}})
	for _, w := range wireenc.Wires {
		_, _, err := playInProcess(t, context.Background(), p, w, userReq("hi"))
		var he *provider.HTTPError
		if !errorsAs(err, &he) || he.Status != 429 || he.RetryAfter != 2*time.Second || he.Message != "slow down" ||
			he.Type != "rate_limit_error" || !he.Temporary() {
			t.Errorf("in process %v: %#v", w, err)
		}
	}
	base := modesServer(t, p, "loopback")
	for _, w := range wireenc.Wires {
		resp, err := post(context.Background(), base, w, requestBody(w, userReq("hi"), true))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "2" || resp.Header.Get("Retry-After-Ms") != "2000" {
			t.Errorf("loopback %v: %d %v", w, resp.StatusCode, resp.Header)
		}
		v, err := fastjson.ParseBytes(body)
		if err != nil {
			t.Fatalf("%v: %s", w, body)
		}
		if got := string(v.GetStringBytes("error", "message")); got != "slow down" {
			t.Errorf("loopback %v: body %s", w, body)
		}
		if w == wireenc.Anthropic && string(v.GetStringBytes("type")) != "error" {
			t.Errorf("anthropic error body %s", body)
		}
	}
	// A verbatim body, and an overloaded 529.
	p = MustNew(Options{Script: &Script{Turns: []Turn{{HTTPError: &HTTPError{Status: 529, Body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}}}}})
	base = modesServer(t, p, "loopback")
	resp, err := post(context.Background(), base, wireenc.Anthropic, requestBody(wireenc.Anthropic, userReq("hi"), true))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 529 || string(body) != `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}` {
		t.Errorf("529: %d %s", resp.StatusCode, body)
	}
}

func TestInBandErrorAndRawStop(t *testing.T) {
	p := MustNew(Options{Script: &Script{Turns: []Turn{{Steps: []Step{Text("so far"), InBandError("overloaded_error", "Overloaded")}}}}})
	for mode, play := range modes(t, p) {
		for _, w := range wireenc.Wires {
			m, types, err := play(t, context.Background(), w, userReq("hi"))
			var pe *provider.ProviderError
			if !errorsAs(err, &pe) || pe.Message != "Overloaded" || m.StopReason != llm.StopError || m.TextContent() != "so far" {
				t.Errorf("%s/%v: %v %v", mode, w, err, types)
			}
		}
	}
	for _, tc := range []struct {
		w   wireenc.Wire
		raw string
	}{{wireenc.Anthropic, "refusal"}, {wireenc.OpenAIChat, "content_filter"}, {wireenc.OpenAIResponses, "content_filter"}} {
		p := MustNew(Options{Script: &Script{Turns: []Turn{{Steps: []Step{Text("I can't")}, RawStop: tc.raw, ErrorMessage: "declined"}}}})
		m, _, err := playInProcess(t, context.Background(), p, tc.w, userReq("hi"))
		var sre *provider.StopReasonError
		if !errorsAs(err, &sre) || sre.Raw != tc.raw || m.StopReason != llm.StopError {
			t.Errorf("%v %s: %v", tc.w, tc.raw, err)
		}
	}
	p = MustNew(Options{Script: &Script{Turns: []Turn{{Steps: []Step{Text("cut")}, Stop: llm.StopLength}}}})
	for _, w := range wireenc.Wires {
		m, _, err := playInProcess(t, context.Background(), p, w, userReq("hi"))
		if err != nil || m.StopReason != llm.StopLength {
			t.Errorf("%v length: %v %v", w, err, m.StopReason)
		}
	}
}

func TestModelsAndNonStreaming(t *testing.T) {
	p := MustNew(Options{Model: "scripted-x", Script: &Script{Turns: []Turn{shapes()["text+tools"]}}})
	base := modesServer(t, p, "loopback")
	resp, err := http.Get(base + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if v, err := fastjson.ParseBytes(body); err != nil || string(v.GetStringBytes("data", "0", "id")) != "scripted-x" {
		t.Fatalf("models: %s", body)
	}
	for _, tc := range []struct {
		w    wireenc.Wire
		path []string
		want string
	}{
		{wireenc.OpenAIChat, []string{"choices", "0", "message", "tool_calls", "0", "function", "arguments"}, `{"city":"Paris"}`},
		{wireenc.OpenAIResponses, []string{"output", "1", "arguments"}, `{"city":"Paris"}`},
		{wireenc.Anthropic, []string{"content", "0", "text"}, "Let me check the weather."},
	} {
		resp, err := post(context.Background(), base, tc.w, requestBody(tc.w, userReq("hi"), false))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		v, err := fastjson.ParseBytes(body)
		if err != nil || resp.Header.Get("Content-Type") != "application/json" || string(v.GetStringBytes(tc.path...)) != tc.want {
			t.Errorf("%v: %s", tc.w, body)
		}
	}
	// Paths without /v1 and unknown paths.
	resp, err = post(context.Background(), base, wireenc.OpenAIChat, []byte(`not json`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("bad body: %d", resp.StatusCode)
	}
	resp, err = http.Post(base+"/chat/completions", "application/json", strings.NewReader(string(requestBody(wireenc.OpenAIChat, userReq("x"), false))))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("path without /v1: %d", resp.StatusCode)
	}
	resp, err = http.Get(base + "/v1/nothing")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("unknown path: %d", resp.StatusCode)
	}
}

func TestPickers(t *testing.T) {
	s := &Script{Turns: []Turn{{Steps: []Step{Text("zero")}}, {Steps: []Step{Text("one")}}, {Steps: []Step{Text("two")}}}}
	seq := Sequential(s)
	for i := 0; i < 7; i++ {
		_, turn := seq(userReq("x"))
		if turn != &s.Turns[i%3] {
			t.Fatalf("sequential request %d got the wrong turn", i)
		}
	}
	other := &Script{Turns: []Turn{{Steps: []Step{Text("weather")}}}}
	pick := ByLastUser([]Rule{{Contains: "weather", Script: other}}, ByPosition(s))
	if _, turn := pick(userReq("what's the weather?")); turn != &other.Turns[0] {
		t.Error("rule not applied")
	}
	req := userReq("hello")
	req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant}, llm.Message{Role: llm.RoleToolResult},
		llm.Message{Role: llm.RoleAssistant}, llm.Message{Role: llm.RoleToolResult},
		llm.Message{Role: llm.RoleAssistant}, llm.Message{Role: llm.RoleToolResult})
	if _, turn := pick(req); turn != &s.Turns[2] {
		t.Error("position past the last turn should give the last turn")
	}
	if _, turn := ByLastUser(nil, nil)(req); turn != nil {
		t.Error("no rule and no fallback should refuse")
	}
	p := MustNew(Options{Pick: func(*llm.Request) (*Script, *Turn) { return nil, nil }})
	_, err := p.Stream(context.Background(), userReq("x"))
	var he *provider.HTTPError
	if !errorsAs(err, &he) || he.Status != 500 {
		t.Errorf("refused pick: %v", err)
	}
}

func TestHTTPRequestHistoryDrivesThePicker(t *testing.T) {
	s := &Script{Turns: []Turn{{Steps: []Step{ToolCall("call_1", "read", `{}`)}}, {Steps: []Step{Text("second")}}}}
	p := MustNew(Options{Script: s})
	base := modesServer(t, p, "loopback")
	for _, w := range wireenc.Wires {
		req := userReq("go")
		req.Messages = append(req.Messages,
			llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockText, Text: []byte("x")}, {Type: llm.BlockToolCall, ID: []byte("call_1"), Name: []byte("read")}}},
			llm.Message{Role: llm.RoleToolResult, ToolCallID: "call_1"})
		m, _, err := playLoopback(t, context.Background(), base, w, req)
		if err != nil || m.TextContent() != "second" {
			t.Errorf("%v: %v %s", w, err, m.AppendJSON(nil))
		}
	}
}

func TestValidate(t *testing.T) {
	for name, s := range map[string]*Script{
		"nil":        nil,
		"no turns":   {},
		"kind":       {Turns: []Turn{{Steps: []Step{{}}}}},
		"no calls":   {Turns: []Turn{{Steps: []Step{{Kind: StepTools}}}}},
		"status":     {Turns: []Turn{{HTTPError: &HTTPError{Status: 200}}}},
		"cut":        {Turns: []Turn{{Steps: []Step{{Kind: StepTools, Calls: []Call{{Name: "x", Args: "{}", Cut: 9}}}}}}},
		"chunk":      {Chunk: -1, Turns: []Turn{{}}},
		"neg cut_at": {Turns: []Turn{{CutAt: -1}}},
	} {
		err := s.Validate()
		var se *ScriptError
		if !errors.Is(err, ErrBadScript) || !errors.As(err, &se) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := New(Options{Script: &Script{}}); !errors.Is(err, ErrBadScript) {
		t.Errorf("New accepted an empty script: %v", err)
	}
	if err := Default().Validate(); err != nil {
		t.Error(err)
	}
}

func TestNilRequest(t *testing.T) {
	s, err := MustNew(Options{}).Stream(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := llm.Drain(s)
	if err != nil || m.StopReason != llm.StopToolUse {
		t.Fatalf("%v %v", err, m.StopReason)
	}
	s.Close()
	if s.Next() || s.Close() != nil {
		t.Error("a closed stream still streams")
	}
}
