package gateway

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider"
	"github.com/ocbench/ocbench/provider/scripted"
)

const messagesToolBody = `{"model":"m1","max_tokens":100,"stream":false,"messages":[{"role":"user","content":"read a.txt"}],"tools":[{"name":"read","input_schema":{"type":"object"}}]}`

// A non-streaming request whose upstream stream fails must get the
// provider's error status and body, never a 200 with partial content or a
// cut-off tool call, and the failure is counted.
func TestNonStreamingFailureIsNeverSuccess(t *testing.T) {
	cut := scripted.Step{Kind: scripted.StepTools, Calls: []scripted.Call{{ID: "call_1", Name: "read", Args: `{"path":"AGENTS.md"}`, Cut: 10}}}
	cases := []struct {
		name   string
		steps  []scripted.Step
		idle   time.Duration
		status int
		typ    string
	}{
		{"in-band error after text", []scripted.Step{scripted.Text("Partial answer"), scripted.InBandError("overloaded_error", "Overloaded")}, 0, 529, "overloaded_error"},
		{"cut inside a tool call", []scripted.Step{scripted.Text("Reading it."), cut}, 0, 502, ""},
		{"idle timeout", []scripted.Step{scripted.Text("hello"), scripted.Stall(5 * time.Second), scripted.Text("late")}, 150 * time.Millisecond, 504, ""},
	}
	for _, tc := range cases {
		for _, wc := range []struct {
			wire       provider.Wire
			path, body string
		}{
			{provider.WireOpenAIChat, "/v1/chat/completions", chatBody(false)},
			{provider.WireAnthropic, "/v1/messages", messagesToolBody},
		} {
			t.Run(tc.name+"/"+routeName(wc.wire), func(t *testing.T) {
				r := startRig(t, &scripted.Script{Turns: []scripted.Turn{{Steps: tc.steps}}}, Config{IdleTimeout: tc.idle})
				resp := post(t, r.url+wc.path, wc.body)
				b, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != tc.status {
					t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, b)
				}
				var anth struct {
					Type  string
					Error struct{ Type, Message string }
				}
				if err := json.Unmarshal(b, &anth); err != nil || anth.Error.Message == "" {
					t.Fatalf("error body %s: %v", b, err)
				}
				if wc.wire == provider.WireAnthropic && anth.Type != "error" {
					t.Errorf("Anthropic error body without type error: %s", b)
				}
				if tc.typ != "" && anth.Error.Type != tc.typ {
					t.Errorf("error type %q, want %q kept", anth.Error.Type, tc.typ)
				}
				if strings.Contains(string(b), "AGE") || strings.Contains(string(b), "Partial") {
					t.Errorf("partial content in a failure: %s", b)
				}
				if got := counterValue(t, r, "ocbench_gateway_stream_errors_total"); got != 1 {
					t.Errorf("stream errors counted %v, want 1", got)
				}
			})
		}
	}
}

// counterValue sums a metric's samples from the gateway's registry.
func counterValue(t *testing.T, r *rig, name string) float64 {
	t.Helper()
	mfs, err := r.srv.m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			sum += m.GetCounter().GetValue()
		}
	}
	return sum
}

// The streamed in-band error keeps the provider's type too.
func TestStreamedErrorKeepsType(t *testing.T) {
	s := &scripted.Script{Turns: []scripted.Turn{{Steps: []scripted.Step{scripted.Text("Partial"), scripted.InBandError("overloaded_error", "Overloaded")}}}}
	r := startRig(t, s, Config{})
	resp := post(t, r.url+"/v1/messages", strings.Replace(messagesToolBody, `"stream":false`, `"stream":true`, 1))
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), `"type":"overloaded_error"`) {
		t.Errorf("stream: %s", b)
	}
	if got := counterValue(t, r, "ocbench_gateway_stream_errors_total"); got != 1 {
		t.Errorf("stream errors counted %v, want 1", got)
	}
}

// An answer larger than MaxAnswerBytes: non-streaming gets 502 with the
// typed error; streaming forwards the text without keeping it (so a long
// streamed answer is fine) but a held-back part past the limit ends the
// stream with an in-band error.
func TestAnswerLimit(t *testing.T) {
	up := bigUpstream(t, 600, 1000) // 600 kB of text
	r := startGateway(t, Config{Upstream: up, MaxAnswerBytes: 256 << 10})
	resp := post(t, r.url+"/v1/chat/completions", chatBody(false))
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(string(b), "exceeds the limit") {
		t.Errorf("non-streaming over the limit: %d %.300s", resp.StatusCode, b)
	}
	resp = post(t, r.url+"/v1/chat/completions", chatBody(true))
	m := decodeSSE(t, provider.WireOpenAIChat, resp.Body)
	if m.StopReason != llm.StopStop || len(m.TextContent()) != 600*1000 {
		t.Errorf("streamed text: stop %v, %d bytes (%s)", m.StopReason, len(m.TextContent()), m.ErrorMessage)
	}
}
