package gateway

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider"
	"github.com/ocbench/ocbench/provider/scripted"
)

var realUsage = llm.Usage{Input: 1234, CacheRead: 500, CacheWrite: 7, Output: 42}

func usageScript(u llm.Usage) *scripted.Script {
	return &scripted.Script{Turns: []scripted.Turn{{Usage: u, Steps: []scripted.Step{scripted.Text("hi")}}}}
}

// Usage billing can trust: what the upstream sent is passed on (Anthropic's
// message_start carries the input and cache figures), nothing is
// fabricated when the client did not ask or the upstream sent none, and
// the token counters add what was reported.
func TestUsageIsHonest(t *testing.T) {
	chatStream := func(includeUsage bool) string {
		so := ""
		if includeUsage {
			so = `"stream_options":{"include_usage":true},`
		}
		return `{"model":"m1","stream":true,` + so + `"messages":[{"role":"user","content":"hi"}]}`
	}
	t.Run("chat stream, not asked", func(t *testing.T) {
		r := startRig(t, usageScript(realUsage), Config{})
		b, _ := io.ReadAll(post(t, r.url+"/v1/chat/completions", chatStream(false)).Body)
		if strings.Contains(string(b), `"usage"`) {
			t.Errorf("usage chunk the client did not ask for:\n%s", b)
		}
	})
	t.Run("chat stream, asked, sent", func(t *testing.T) {
		r := startRig(t, usageScript(realUsage), Config{})
		b, _ := io.ReadAll(post(t, r.url+"/v1/chat/completions", chatStream(true)).Body)
		m := decodeSSE(t, provider.WireOpenAIChat, strings.NewReader(string(b)))
		if m.Usage.Output != 42 || m.Usage.CacheRead != 500 {
			t.Errorf("usage %+v\n%s", m.Usage, b)
		}
		if got := counterValue(t, r, "ocbench_gateway_tokens_total"); got == 0 {
			t.Error("tokens not counted")
		}
	})
	// An upstream that sends no usage at all (the scripted one estimates it).
	noUsage := serveHTTP(t, &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","model":"m1","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	})})
	t.Run("chat stream, asked, upstream sent none", func(t *testing.T) {
		r := startGateway(t, Config{Upstream: noUsage})
		b, _ := io.ReadAll(post(t, r.url+"/v1/chat/completions", chatStream(true)).Body)
		if strings.Contains(string(b), `"usage"`) {
			t.Errorf("fabricated zero usage:\n%s", b)
		}
		if got := counterValue(t, r, "ocbench_gateway_tokens_total"); got != 0 {
			t.Errorf("tokens counted from nothing: %v", got)
		}
	})
	t.Run("chat non-streaming, upstream sent none", func(t *testing.T) {
		r := startGateway(t, Config{Upstream: noUsage})
		b, _ := io.ReadAll(post(t, r.url+"/v1/chat/completions", `{"model":"m1","messages":[{"role":"user","content":"hi"}]}`).Body)
		var v map[string]any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%v: %s", err, b)
		}
		if _, ok := v["usage"]; ok {
			t.Errorf("fabricated zero usage: %s", b)
		}
	})
	t.Run("anthropic message_start", func(t *testing.T) {
		r := startRig(t, usageScript(realUsage), Config{})
		b, _ := io.ReadAll(post(t, r.url+"/v1/messages", `{"model":"m1","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"hi"}]}`).Body)
		start := strings.SplitN(string(b), "\n\n", 2)[0]
		if !strings.Contains(start, "message_start") || !strings.Contains(start, `"input_tokens":1234`) || !strings.Contains(start, `"cache_read_input_tokens":500`) {
			t.Errorf("message_start without the upstream's usage: %s", start)
		}
	})
}

// Request ids: the upstream's id is passed through; without one the
// gateway answers with its own, on every route.
func TestRequestIDs(t *testing.T) {
	r := startRig(t, usageScript(realUsage), Config{})
	resp := post(t, r.url+"/v1/chat/completions", chatBody(false))
	io.Copy(io.Discard, resp.Body)
	if resp.Header.Get("X-Request-Id") == "" {
		t.Error("chat: no x-request-id")
	}
	resp = post(t, r.url+"/v1/messages", messagesToolBody)
	io.Copy(io.Discard, resp.Body)
	if resp.Header.Get("Request-Id") == "" {
		t.Error("messages: no request-id")
	}
	// An upstream that names its answers.
	up := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-Id", "req_upstream_42")
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","model":"m1","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	})}
	url := serveHTTP(t, up)
	g := startGateway(t, Config{Upstream: url})
	resp = post(t, g.url+"/v1/chat/completions", chatBody(true))
	io.Copy(io.Discard, resp.Body)
	if got := resp.Header.Get("X-Request-Id"); got != "req_upstream_42" {
		t.Errorf("upstream id not passed through: %q", got)
	}
}

// The proxy adapts chat bodies to the upstream's Compat: a generic server
// gets max_tokens and no prompt_cache_key; the rest passes untouched.
func TestProxyFollowsCompat(t *testing.T) {
	bodies := make(chan string, 2)
	up := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies <- string(b)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","model":"m1","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	})}
	url := serveHTTP(t, up)
	g := startGateway(t, Config{Upstream: url})
	resp := post(t, g.url+"/v1/chat/completions", `{"model":"m1","stream":true,"max_completion_tokens":50,"prompt_cache_key":"k","custom_field":1,"messages":[{"role":"user","content":"hi"}]}`)
	io.Copy(io.Discard, resp.Body)
	got := <-bodies
	if !strings.Contains(got, `"max_tokens":50`) || strings.Contains(got, "max_completion_tokens") || strings.Contains(got, "prompt_cache_key") || !strings.Contains(got, `"custom_field":1`) {
		t.Errorf("upstream got %s", got)
	}
	oa := provider.CompatOpenAI
	g = startGateway(t, Config{Upstream: url, UpstreamCompat: &oa})
	in := `{"model":"m1","stream":true,"max_completion_tokens":50,"prompt_cache_key":"k","messages":[{"role":"user","content":"hi"}]}`
	resp = post(t, g.url+"/v1/chat/completions", in)
	io.Copy(io.Discard, resp.Body)
	if got := <-bodies; got != in {
		t.Errorf("OpenAI upstream got a changed body %s", got)
	}
}

func TestEncodingFor(t *testing.T) {
	for model, want := range map[string]string{"gpt-4o-mini": "o200k_base", "openai/gpt-5": "o200k_base", "o3-mini": "o200k_base",
		"gpt-4-turbo": "cl100k_base", "claude-sonnet-4-5": "cl100k_base", "llama-3": "cl100k_base"} {
		if got := EncodingFor(model).String(); got != want {
			t.Errorf("%s: %s, want %s", model, got, want)
		}
	}
}
