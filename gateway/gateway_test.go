package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider"
	"github.com/ocbench/ocbench/provider/scripted"
)

// rig is a gateway in front of a scripted upstream, both on loopback.
type rig struct {
	url      string
	srv      *Server
	upstream *scripted.Server
	cancel   context.CancelFunc
	done     chan error
}

func startRig(t *testing.T, s *scripted.Script, cfg Config) *rig {
	t.Helper()
	if s != nil {
		_, up, err := scripted.Start(scripted.Options{Script: s, Pick: scripted.Sequential(s)})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Upstream = up.URL
		r := startGateway(t, cfg)
		r.upstream = up
		t.Cleanup(func() { up.Close() })
		return r
	}
	return startGateway(t, cfg)
}

func startGateway(t *testing.T, cfg Config) *rig {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return startGatewayOn(t, cfg, ln)
}

func startGatewayOn(t *testing.T, cfg Config, ln net.Listener) *rig {
	t.Helper()
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &rig{url: "http://" + ln.Addr().String(), srv: srv, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- srv.Serve(ctx, ln, 5*time.Second) }()
	t.Cleanup(func() {
		cancel()
		<-r.done
	})
	return r
}

const readTool = `"tools":[{"type":"function","function":{"name":"read","parameters":{"type":"object"}}}]`

func chatBody(stream bool) string {
	return `{"model":"m1","stream":` + map[bool]string{true: "true", false: "false"}[stream] +
		`,"messages":[{"role":"user","content":"read a.txt"}],` + readTool + `}`
}

func post(t *testing.T, url, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// decodeSSE reads a streamed answer the way any client would, with the
// provider decoder.
func decodeSSE(t *testing.T, w provider.Wire, r io.Reader) *llm.Message {
	t.Helper()
	d := provider.NewDecoder(w, r, provider.Options{})
	m, _ := llm.Drain(d)
	return m
}

func toolArgs(t *testing.T, m *llm.Message) map[string]any {
	t.Helper()
	calls := m.ToolCalls(nil)
	if len(calls) != 1 {
		t.Fatalf("want one tool call, got %d: %s", len(calls), m.AppendJSON(nil))
	}
	var args map[string]any
	if err := json.Unmarshal(m.Content[calls[0]].Arguments, &args); err != nil {
		t.Fatalf("arguments %q are not a JSON object: %v", m.Content[calls[0]].Arguments, err)
	}
	return args
}

func malformedScript() *scripted.Script {
	return &scripted.Script{Turns: []scripted.Turn{{Steps: []scripted.Step{
		scripted.Text("Reading it."),
		scripted.ToolCall("call_1", " read ", `{"path": "a.txt",}`).Chunked(3),
	}}}}
}

func TestProxyRepairsStreamedToolCalls(t *testing.T) {
	for _, tc := range []struct {
		name, path, body string
		wire             provider.Wire
	}{
		{"chat", "/v1/chat/completions", chatBody(true), provider.WireOpenAIChat},
		{"messages", "/v1/messages", `{"model":"m1","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"read a.txt"}],"tools":[{"name":"read","input_schema":{"type":"object"}}]}`, provider.WireAnthropic},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := startRig(t, malformedScript(), Config{})
			resp := post(t, r.url+tc.path, tc.body)
			if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
				b, _ := io.ReadAll(resp.Body)
				t.Fatalf("status %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
			}
			m := decodeSSE(t, tc.wire, resp.Body)
			if m.StopReason != llm.StopToolUse {
				t.Fatalf("stop reason %v (%s)", m.StopReason, m.ErrorMessage)
			}
			if got := toolArgs(t, m)["path"]; got != "a.txt" {
				t.Errorf("path %v", got)
			}
			if name := string(m.Content[m.ToolCalls(nil)[0]].Name); name != "read" {
				t.Errorf("tool name %q not trimmed", name)
			}
			if m.TextContent() != "Reading it." {
				t.Errorf("text %q", m.TextContent())
			}
		})
	}
}

func TestProxyNonStreaming(t *testing.T) {
	r := startRig(t, malformedScript(), Config{})
	resp := post(t, r.url+"/v1/chat/completions", chatBody(false))
	var out struct {
		Object  string `json:"object"`
		Choices []struct {
			Message struct {
				ToolCalls []struct {
					Function struct{ Name, Arguments string } `json:"function"`
				} `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if out.Object != "chat.completion" || len(out.Choices) != 1 || len(out.Choices[0].Message.ToolCalls) != 1 {
		t.Fatalf("answer %+v", out)
	}
	tc := out.Choices[0].Message.ToolCalls[0].Function
	if tc.Name != "read" || !json.Valid([]byte(tc.Arguments)) || !strings.Contains(tc.Arguments, `"a.txt"`) {
		t.Errorf("tool call %+v", tc)
	}
}

func TestLimitsAndFailures(t *testing.T) {
	r := startRig(t, malformedScript(), Config{MaxBodyBytes: 1024, Models: []string{"m1"}})
	check := func(name string, resp *http.Response, code int, wantInBody string) {
		t.Helper()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != code || !strings.Contains(string(b), wantInBody) {
			t.Errorf("%s: status %d body %s; want %d with %q", name, resp.StatusCode, b, code, wantInBody)
		}
	}
	check("oversized", post(t, r.url+"/v1/chat/completions", `{"model":"m1","x":"`+strings.Repeat("a", 2000)+`"}`), 413, "exceeds 1024 bytes")
	check("malformed", post(t, r.url+"/v1/chat/completions", `{"model":`), 400, "not valid JSON")
	check("no model", post(t, r.url+"/v1/chat/completions", `{"messages":[]}`), 400, `is required`)
	check("unknown model", post(t, r.url+"/v1/chat/completions", `{"model":"nope","messages":[]}`), 404, "unknown model nope")
	check("unknown route", post(t, r.url+"/v1/nothing", `{}`), 404, "no route")
	resp, err := http.Get(r.url + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	check("models", resp, 200, `"id":"m1"`)

	// An upstream that is down: 502.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := "http://" + ln.Addr().String()
	ln.Close()
	down := startGateway(t, Config{Upstream: dead})
	check("upstream down", post(t, down.url+"/v1/chat/completions", chatBody(true)), 502, "upstream_unreachable")

	// An upstream that refuses: its status and Retry-After pass through.
	busy := startRig(t, &scripted.Script{Turns: []scripted.Turn{{HTTPError: &scripted.HTTPError{Status: 429, RetryAfter: 7 * time.Second, Body: `{"error":{"message":"slow down"}}`}}}}, Config{})
	resp = post(t, busy.url+"/v1/chat/completions", chatBody(true))
	if resp.Header.Get("Retry-After") != "7" {
		t.Errorf("Retry-After %q", resp.Header.Get("Retry-After"))
	}
	check("upstream 429", resp, 429, "slow down")
}

func TestIdleTimeoutIsReportedInStream(t *testing.T) {
	s := &scripted.Script{Turns: []scripted.Turn{{Steps: []scripted.Step{scripted.Text("hello"), scripted.Stall(5 * time.Second), scripted.Text("late")}}}}
	r := startRig(t, s, Config{IdleTimeout: 150 * time.Millisecond})
	start := time.Now()
	resp := post(t, r.url+"/v1/chat/completions", chatBody(true))
	b, _ := io.ReadAll(resp.Body)
	if time.Since(start) > 3*time.Second {
		t.Fatalf("idle timeout did not end the stream (%v)", time.Since(start))
	}
	m := decodeSSE(t, provider.WireOpenAIChat, bytes.NewReader(b))
	if m.TextContent() != "hello" || m.StopReason != llm.StopError || !strings.Contains(m.ErrorMessage, "idle timeout") {
		t.Errorf("text %q stop %v error %q\n%s", m.TextContent(), m.StopReason, m.ErrorMessage, b)
	}
}

func TestOverloadAnswers429(t *testing.T) {
	s := &scripted.Script{Turns: []scripted.Turn{{Steps: []scripted.Step{scripted.Text("a"), scripted.Stall(time.Second), scripted.Text("b")}}}}
	r := startRig(t, s, Config{MaxStreams: 1})
	first := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		resp, err := http.Post(r.url+"/v1/chat/completions", "application/json", strings.NewReader(chatBody(true)))
		if err == nil {
			buf := make([]byte, 1)
			resp.Body.Read(buf) // the stream has started
			close(first)
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	<-first
	resp := post(t, r.url+"/v1/chat/completions", chatBody(true))
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" {
		t.Errorf("second stream: status %d Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	wg.Wait()
}

func TestClientDisconnectCancelsUpstream(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s := &scripted.Script{Turns: []scripted.Turn{{Steps: []scripted.Step{scripted.Text("a"), scripted.Stall(30 * time.Second), scripted.Text("b")}}}}
	func() {
		r := startRig(t, s, Config{})
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, r.url+"/v1/chat/completions", strings.NewReader(chatBody(true)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 1)
		resp.Body.Read(buf)
		start := time.Now()
		cancel()
		resp.Body.Close()
		// The gateway's handler must end well before the 30 s stall.
		deadline := time.Now().Add(5 * time.Second)
		for r.srv.m.inFlightValue() > 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := r.srv.m.inFlightValue(); n != 0 {
			t.Fatalf("%v streams still in flight %v after the client left", n, time.Since(start))
		}
		r.cancel()
		<-r.done
		r.done <- nil // for the cleanup
		r.upstream.Close()
		http.DefaultClient.CloseIdleConnections()
	}()
}

func TestShutdownDrainsStreams(t *testing.T) {
	s := &scripted.Script{Latency: scripted.Latency{Gap: 20 * time.Millisecond},
		Turns: []scripted.Turn{{Steps: []scripted.Step{scripted.Text("one two three four five six").Chunked(4)}}}}
	r := startRig(t, s, Config{})
	resp, err := http.Post(r.url+"/v1/chat/completions", "application/json", strings.NewReader(chatBody(true)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 1)
	resp.Body.Read(buf)
	r.cancel() // what SIGTERM does in the serve command
	rest, _ := io.ReadAll(resp.Body)
	m := decodeSSE(t, provider.WireOpenAIChat, io.MultiReader(bytes.NewReader(buf), bytes.NewReader(rest)))
	if m.TextContent() != "one two three four five six" || m.StopReason != llm.StopStop {
		t.Errorf("stream cut by shutdown: %q %v %s", m.TextContent(), m.StopReason, m.ErrorMessage)
	}
	if err := <-r.done; err != nil {
		t.Errorf("Serve: %v", err)
	}
	r.done <- nil
	if _, err := http.Post(r.url+"/v1/chat/completions", "application/json", strings.NewReader(chatBody(true))); err == nil {
		t.Error("a request after shutdown was served")
	}
}

func TestUpstreamBase(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:8000":         "http://127.0.0.1:8000/v1",
		"http://127.0.0.1:8000/":        "http://127.0.0.1:8000/v1",
		"http://127.0.0.1:8000/v1":      "http://127.0.0.1:8000/v1",
		"http://127.0.0.1:8000/v1/":     "http://127.0.0.1:8000/v1",
		"https://openrouter.ai/api/v1":  "https://openrouter.ai/api/v1",
		"https://api.anthropic.com/v1/": "https://api.anthropic.com/v1",
	} {
		if got := UpstreamBase(in); got != want {
			t.Errorf("UpstreamBase(%q) = %q, want %q", in, got, want)
		}
	}
	if got := upstreamURL("http://h:1/v1", provider.WireAnthropic); got != "http://h:1/v1/messages" {
		t.Errorf("messages endpoint %q", got)
	}
	if got := upstreamURL("http://h:1", provider.WireOpenAIChat); got != "http://h:1/v1/chat/completions" {
		t.Errorf("chat endpoint %q", got)
	}
}

// The same --upstream serves the proxy whether it is given with /v1 or not.
func TestUpstreamWithV1(t *testing.T) {
	s := &scripted.Script{Turns: []scripted.Turn{{Steps: []scripted.Step{scripted.Text("ok")}}}}
	_, up, err := scripted.Start(scripted.Options{Script: s})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Close() })
	for _, u := range []string{up.URL, up.URL + "/v1", up.URL + "/v1/"} {
		r := startGateway(t, Config{Upstream: u})
		resp := post(t, r.url+"/v1/chat/completions", chatBody(false))
		if resp.StatusCode != 200 {
			b, _ := io.ReadAll(resp.Body)
			t.Errorf("upstream %s: %d %s", u, resp.StatusCode, b)
		}
	}
}

// /v1/responses proxies the Responses wire with the chain's repairs,
// streamed and not.
func TestResponsesRoute(t *testing.T) {
	body := func(stream bool) string {
		return `{"model":"m1","stream":` + map[bool]string{true: "true", false: "false"}[stream] +
			`,"input":"read a.txt","tools":[{"type":"function","name":"read","parameters":{"type":"object"}}]}`
	}
	r := startRig(t, malformedScript(), Config{})
	resp := post(t, r.url+"/v1/responses", body(true))
	m := decodeSSE(t, provider.WireOpenAIResponses, resp.Body)
	if m.StopReason != llm.StopToolUse || toolArgs(t, m)["path"] != "a.txt" {
		t.Errorf("streamed: stop %v %s", m.StopReason, m.AppendJSON(nil))
	}
	r = startRig(t, malformedScript(), Config{})
	resp = post(t, r.url+"/v1/responses", body(false))
	var out struct {
		Object, Status string
		Output         []struct{ Type, Name, Arguments string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	var call *struct{ Type, Name, Arguments string }
	for i := range out.Output {
		if out.Output[i].Type == "function_call" {
			call = &out.Output[i]
		}
	}
	if out.Object != "response" || out.Status != "completed" || call == nil || call.Name != "read" || !json.Valid([]byte(call.Arguments)) {
		t.Errorf("non-streamed: %+v", out)
	}
}

// Coalescing never holds an event back: what the upstream sent before a
// stall reaches the client before the stall ends.
func TestCoalescedEventsAreNotHeldBack(t *testing.T) {
	s := &scripted.Script{Turns: []scripted.Turn{{Steps: []scripted.Step{scripted.Text("hello"), scripted.Stall(time.Second), scripted.Text(" late")}}}}
	r := startRig(t, s, Config{})
	start := time.Now()
	resp := post(t, r.url+"/v1/chat/completions", chatBody(true))
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("stream ended before hello: %v", err)
		}
		if strings.Contains(line, `"content":"hello"`) {
			break
		}
	}
	if d := time.Since(start); d > 700*time.Millisecond {
		t.Errorf("hello arrived after %v: held back until the stall ended", d)
	}
	io.Copy(io.Discard, resp.Body)
}
