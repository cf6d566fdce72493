package provider

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ocbench/ocbench/llm"
	"github.com/valyala/fastjson"
)

type captured struct {
	path   string
	header http.Header
	body   []byte
}

// sseServer answers every POST with body and records the requests and
// the remote addresses (to see connection reuse).
func sseServer(t *testing.T, body []byte) (*httptest.Server, *[]captured, *sync.Mutex) {
	t.Helper()
	var mu sync.Mutex
	var reqs []captured
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		reqs = append(reqs, captured{r.URL.Path, r.Header.Clone(), b})
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv, &reqs, &mu
}

func testRequest(api llm.API, base string) *llm.Request {
	temp := 0.5
	req := &llm.Request{
		Model:         llm.Model{ID: "m-1", API: api, Provider: "openai", BaseURL: base},
		System:        "STABLE PART. volatile part",
		CacheBoundary: len("STABLE PART."),
		MaxTokens:     1000,
		Temperature:   &temp,
		SessionID:     "sess-1",
		Tools:         []llm.Tool{{Name: "read", Description: "Read a file", Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"}}}`)}},
	}
	if api == "anthropic-messages" {
		req.Model.Provider = "anthropic"
	}
	asst := llm.Message{Role: llm.RoleAssistant}
	_, b := asst.AddBlock(llm.BlockText)
	b.Text = append(b.Text, "Reading."...)
	_, b = asst.AddBlock(llm.BlockToolCall)
	b.ID = append(b.ID, "call_1|fc_1"...)
	b.Name = append(b.Name, "read"...)
	b.Arguments = append(b.Arguments, `{"path":"a.txt"}`...)
	res := llm.TextMessage(llm.RoleToolResult, "file body")
	res.ToolCallID = "call_1|fc_1"
	res.ToolName = "read"
	req.Messages = []llm.Message{llm.TextMessage(llm.RoleUser, "read a.txt"), asst, res}
	return req
}

func TestClientPerWire(t *testing.T) {
	for _, tc := range []struct {
		api          llm.API
		stream, path string
		check        func(t *testing.T, v *fastjson.Value, h http.Header)
	}{
		{"openai-completions", "openai-chat-text-toolcall-cached-constructed.sse", "/v1/chat/completions", func(t *testing.T, v *fastjson.Value, h http.Header) {
			if h.Get("Authorization") != "Bearer sk-env" {
				t.Errorf("auth %q", h.Get("Authorization"))
			}
			if !v.GetBool("stream") || !v.GetBool("stream_options", "include_usage") {
				t.Error("stream options missing")
			}
			msgs := v.GetArray("messages")
			if len(msgs) != 4 || string(msgs[0].GetStringBytes("role")) != "system" || string(msgs[3].GetStringBytes("role")) != "tool" {
				t.Fatalf("messages %s", v.Get("messages"))
			}
			if string(msgs[2].GetStringBytes("tool_calls", "0", "function", "arguments")) != `{"path":"a.txt"}` ||
				string(msgs[2].GetStringBytes("tool_calls", "0", "id")) != "call_1" || string(msgs[3].GetStringBytes("tool_call_id")) != "call_1" {
				t.Errorf("tool call %s", msgs[2])
			}
			if v.GetInt("max_completion_tokens") != 1000 || string(v.GetStringBytes("tools", "0", "function", "name")) != "read" {
				t.Errorf("body %s", v)
			}
		}},
		{"openai-responses", "openai-responses-function-call.sse", "/v1/responses", func(t *testing.T, v *fastjson.Value, h http.Header) {
			if h.Get("Authorization") != "Bearer sk-env" {
				t.Errorf("auth %q", h.Get("Authorization"))
			}
			in := v.GetArray("input")
			if len(in) != 5 {
				t.Fatalf("input %s", v.Get("input"))
			}
			if string(in[3].GetStringBytes("type")) != "function_call" || string(in[3].GetStringBytes("call_id")) != "call_1" || string(in[3].GetStringBytes("id")) != "fc_1" {
				t.Errorf("function_call %s", in[3])
			}
			if string(in[4].GetStringBytes("type")) != "function_call_output" || string(in[4].GetStringBytes("output")) != "file body" {
				t.Errorf("output %s", in[4])
			}
			if v.GetBool("store") || !v.GetBool("stream") || v.GetInt("max_output_tokens") != 1000 || string(v.GetStringBytes("prompt_cache_key")) != "sess-1" {
				t.Errorf("body %s", v)
			}
		}},
		{"anthropic-messages", "anthropic-text-then-tooluse-ping.sse", "/v1/messages", func(t *testing.T, v *fastjson.Value, h http.Header) {
			if h.Get("x-api-key") != "sk-ant-env" || h.Get("anthropic-version") != AnthropicVersion || h.Get("Authorization") != "" {
				t.Errorf("headers %v", h)
			}
			sys := v.GetArray("system")
			if len(sys) != 2 || string(sys[0].GetStringBytes("text")) != "STABLE PART." || string(sys[0].GetStringBytes("cache_control", "type")) != "ephemeral" ||
				sys[1].Get("cache_control") != nil || string(sys[1].GetStringBytes("text")) != " volatile part" {
				t.Errorf("system %s", v.Get("system"))
			}
			msgs := v.GetArray("messages")
			if len(msgs) != 3 {
				t.Fatalf("messages %s", v.Get("messages"))
			}
			if string(msgs[1].GetStringBytes("content", "1", "type")) != "tool_use" || string(msgs[1].GetStringBytes("content", "1", "id")) != "call_1" ||
				string(msgs[1].GetStringBytes("content", "1", "input", "path")) != "a.txt" {
				t.Errorf("assistant %s", msgs[1])
			}
			if string(msgs[2].GetStringBytes("content", "0", "type")) != "tool_result" || string(msgs[2].GetStringBytes("content", "0", "tool_use_id")) != "call_1" ||
				string(msgs[2].GetStringBytes("content", "0", "cache_control", "type")) != "ephemeral" {
				t.Errorf("tool result %s", msgs[2])
			}
			if v.GetInt("max_tokens") != 1000 || string(v.GetStringBytes("tools", "0", "input_schema", "type")) != "object" {
				t.Errorf("body %s", v)
			}
		}},
	} {
		t.Run(string(tc.api), func(t *testing.T) {
			srv, reqs, mu := sseServer(t, readStream(t, tc.stream))
			env := map[string]string{"OPENAI_API_KEY": "sk-env", "ANTHROPIC_API_KEY": "sk-ant-env"}
			c, err := NewClient(WithGetenv(func(k string) string { return env[k] }))
			if err != nil {
				t.Fatal(err)
			}
			req := testRequest(tc.api, srv.URL+"/v1")
			s, err := c.StreamFunc()(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			r := drainStream(s)
			if err := checkInvariants(r, 0); err != nil {
				t.Fatal(err)
			}
			if r.err != nil || r.msg.StopReason != llm.StopToolUse {
				t.Fatalf("err %v stop %v", r.err, r.msg.StopReason)
			}
			if r.msg.Provider != req.Model.Provider || r.msg.API != tc.api {
				t.Errorf("identity %q %q", r.msg.Provider, r.msg.API)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			got := (*reqs)[0]
			mu.Unlock()
			if got.path != tc.path {
				t.Errorf("path %q", got.path)
			}
			if got.header.Get("Content-Type") != "application/json" || got.header.Get("Accept") != "text/event-stream" {
				t.Errorf("headers %v", got.header)
			}
			v, err := fastjson.ParseBytes(got.body)
			if err != nil {
				t.Fatalf("request body %s: %v", got.body, err)
			}
			if string(v.GetStringBytes("model")) != "m-1" {
				t.Errorf("model %s", v.Get("model"))
			}
			tc.check(t, v, got.header)
		})
	}
}

func drainStream(s llm.Stream) result {
	var r result
	for s.Next() {
		e := s.Event()
		r.events = append(r.events, recEvent{e.Type, e.ContentIndex, string(e.Delta), e.Reason})
	}
	r.msg = s.Message().Clone()
	r.err = s.Err()
	if rs, ok := s.(RawStopReasoner); ok {
		r.raw = string(rs.RawStopReason())
	}
	return r
}

// Two streams in a row use the same keep-alive connection.
func TestClientKeepAlive(t *testing.T) {
	body := readStream(t, "openai-chat-text-toolcall-cached-constructed.sse")
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(body)
	}))
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	c, _ := NewClient(WithGetenv(func(string) string { return "" }))
	for i := 0; i < 3; i++ {
		s, err := c.Stream(context.Background(), testRequest("openai-completions", srv.URL))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := llm.Drain(s); err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("%d connections for 3 streams, want 1", n)
	}
}

func TestClientHTTPErrors(t *testing.T) {
	for _, tc := range []struct {
		status  int
		header  map[string]string
		body    string
		typ     string
		msg     string
		retry   time.Duration
		tempErr bool
	}{
		{429, map[string]string{"Retry-After": "7"}, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`, "requests", "Rate limit reached", 7 * time.Second, true},
		{429, map[string]string{"retry-after-ms": "1500", "Retry-After": "2"}, `{"error":{"message":"slow down"}}`, "", "slow down", 1500 * time.Millisecond, true},
		{400, nil, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 205351 tokens > 200000 maximum"},"request_id":"req_1"}`, "invalid_request_error", "prompt is too long: 205351 tokens > 200000 maximum", 0, false},
		{529, nil, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "overloaded_error", "Overloaded", 0, true},
		{502, nil, `<html>bad gateway</html>`, "", "<html>bad gateway</html>", 0, true},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			for k, v := range tc.header {
				w.Header().Set(k, v)
			}
			w.WriteHeader(tc.status)
			_, _ = w.Write([]byte(tc.body))
		}))
		c, _ := NewClient()
		s, err := c.Stream(context.Background(), testRequest("anthropic-messages", srv.URL))
		srv.Close()
		if s != nil {
			t.Fatalf("%d: got a stream", tc.status)
		}
		var he *HTTPError
		if !errors.As(err, &he) {
			t.Fatalf("%d: err %v", tc.status, err)
		}
		if he.Status != tc.status || he.Type != tc.typ || he.Message != tc.msg || he.RetryAfter != tc.retry || he.Temporary() != tc.tempErr {
			t.Errorf("%d: %+v", tc.status, he)
		}
		if !strings.Contains(he.Error(), tc.msg) {
			t.Errorf("Error() = %q", he.Error())
		}
	}
}

func TestRetryAfterDate(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h := http.Header{"Retry-After": {now.Add(30 * time.Second).Format(http.TimeFormat)}}
	if d := retryAfter(h, now); d != 30*time.Second {
		t.Fatalf("got %v", d)
	}
}

// Cancelling the context mid-stream ends it with "aborted", keeps what
// was decoded, and Err is the context's error.
func TestClientCancel(t *testing.T) {
	first := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello\"}}]}\n\n"
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(first))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	c, _ := NewClient()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := c.Stream(ctx, testRequest("openai-completions", srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var types []llm.EventType
	for s.Next() {
		types = append(types, s.Event().Type)
		if s.Event().Type == llm.EventTextDelta {
			cancel()
		}
	}
	m := s.Message()
	if m.StopReason != llm.StopAborted || m.ErrorMessage != "Request was aborted" {
		t.Fatalf("stop %v %q", m.StopReason, m.ErrorMessage)
	}
	if !errors.Is(s.Err(), context.Canceled) {
		t.Fatalf("err %v", s.Err())
	}
	if m.TextContent() != "Hello" {
		t.Fatalf("text %q", m.TextContent())
	}
	if types[len(types)-1] != llm.EventError {
		t.Fatalf("events %v", types)
	}
}

func TestClientUnknownAPI(t *testing.T) {
	c, _ := NewClient()
	_, err := c.Stream(context.Background(), &llm.Request{Model: llm.Model{API: "google-gemini"}})
	if !errors.Is(err, ErrUnknownAPI) {
		t.Fatalf("err %v", err)
	}
	if _, err := NewClient(WithHTTPClient(nil)); err == nil {
		t.Fatal("nil client accepted")
	}
}

func TestEndpoint(t *testing.T) {
	for _, tc := range []struct {
		w    Wire
		base string
		want string
	}{
		{WireOpenAIChat, "", "https://api.openai.com/v1/chat/completions"},
		{WireOpenAIResponses, "http://localhost:8000/v1/", "http://localhost:8000/v1/responses"},
		{WireAnthropic, "", "https://api.anthropic.com/v1/messages"},
		{WireAnthropic, "http://proxy/v1", "http://proxy/v1/messages"},
	} {
		if got := Endpoint(tc.w, &llm.Model{BaseURL: tc.base}); got != tc.want {
			t.Errorf("Endpoint(%v, %q) = %q", tc.w, tc.base, got)
		}
	}
}

// A request's headers arrive after the transport's own; the ones the
// transport owns, and malformed ones, are refused before anything is sent.
func TestClientRequestHeaders(t *testing.T) {
	const chatBody = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	srv, reqs, mu := sseServer(t, []byte(chatBody))
	c, err := NewClient(WithHeader("anthropic-beta", "client-flag"))
	if err != nil {
		t.Fatal(err)
	}
	for _, api := range []llm.API{llm.APIOpenAICompletions, llm.APIAnthropicMessages} {
		req := testRequest(api, srv.URL)
		req.APIKey = "sk-test"
		req.Options.Headers = map[string]string{"anthropic-beta": "request-flag", "X-Trace": "t-1"}
		s, err := c.Stream(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = llm.Drain(s)
		s.Close()
	}
	mu.Lock()
	got := append([]captured(nil), *reqs...)
	mu.Unlock()
	if len(got) != 2 {
		t.Fatalf("%d requests", len(got))
	}
	for i, h := range []http.Header{got[0].header, got[1].header} {
		if v := h.Values("Anthropic-Beta"); len(v) != 2 || v[0] != "client-flag" || v[1] != "request-flag" {
			t.Errorf("request %d: anthropic-beta %q", i, v)
		}
		if h.Get("X-Trace") != "t-1" || h.Get("Content-Type") != "application/json" || h.Get("Accept") != "text/event-stream" {
			t.Errorf("request %d: headers %v", i, h)
		}
	}
	if got[0].header.Get("Authorization") != "Bearer sk-test" || got[1].header.Get("X-Api-Key") != "sk-test" || got[1].header.Get("Anthropic-Version") != AnthropicVersion {
		t.Errorf("credentials/version: %v / %v", got[0].header, got[1].header)
	}
	for _, tc := range []struct{ k, v, option string }{
		{"Authorization", "Bearer other", "headers[Authorization]"},
		{"x-api-key", "other", "headers[x-api-key]"},
		{"content-type", "text/plain", "headers[content-type]"},
		{"Accept-Encoding", "gzip", "headers[Accept-Encoding]"},
		{"Host", "example.invalid", "headers[Host]"},
		{"X Bad", "secret-v", `headers["X Bad"]`},
		{"X-Split", "a\r\nInjected: 1", "headers[X-Split]"},
	} {
		req := testRequest(llm.APIOpenAICompletions, srv.URL)
		req.Options.Headers = map[string]string{tc.k: tc.v}
		_, err := c.Stream(context.Background(), req)
		var oe *OptionError
		if !errors.Is(err, ErrInvalidOption) || !errors.As(err, &oe) || oe.Option != tc.option || strings.Contains(err.Error(), tc.v) {
			t.Errorf("%q: %v", tc.k, err)
		}
	}
	// Refused options never reach the server.
	req := testRequest(llm.APIOpenAIResponses, srv.URL)
	req.Options.Stop = []string{"END"}
	if _, err := c.Stream(context.Background(), req); !errors.Is(err, ErrUnsupportedOption) {
		t.Errorf("stop on responses: %v", err)
	}
	mu.Lock()
	n := len(*reqs)
	mu.Unlock()
	if n != 2 {
		t.Errorf("%d requests reached the server, want 2", n)
	}
}

// A refused request's error never carries the values of the request's
// own headers, which may be a gateway's credentials.
func TestHTTPErrorRedactsRequestHeaders(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(401)
		_, _ = w.Write([]byte(`{"error":{"message":"bad gateway key ` + r.Header.Get("X-Gateway-Key") + `","type":"auth"}}`))
	}))
	defer srv.Close()
	c, _ := NewClient()
	req := testRequest(llm.APIOpenAICompletions, srv.URL)
	req.Options.Headers = map[string]string{"X-Gateway-Key": "gw-secret-123456"}
	_, err := c.Stream(context.Background(), req)
	var he *HTTPError
	if !errors.As(err, &he) || strings.Contains(err.Error(), "gw-secret-123456") || !strings.Contains(he.Message, "bad gateway key") {
		t.Fatalf("%v", err)
	}
}
