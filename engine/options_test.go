package engine

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider/scripted"
)

// Params.RequestOptions reach every model call of the run through the
// decorator chain; the compaction summary call gets only the transport
// options.
func TestRequestOptionsReachEveryCall(t *testing.T) {
	top := 0.5
	par := false
	opts := llm.RequestOptions{
		ToolChoice:        llm.ToolChoice{Mode: llm.ToolChoiceAuto},
		ParallelToolCalls: &par,
		ResponseFormat:    &llm.ResponseFormat{Type: llm.ResponseJSONObject},
		Stop:              []string{"END"},
		TopP:              &top,
		Headers:           map[string]string{"X-Route": "blue"},
		ExtraBody:         []byte(`{"metadata":{"team":"a"}}`),
	}
	e := newRunEnv(t, conversationScript()...)
	var got []llm.RequestOptions
	var systems []string
	inner := e.fp.stream
	stream := func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		got = append(got, req.Options)
		systems = append(systems, req.System)
		return inner(ctx, req)
	}
	var history []llm.Message
	for i, q := range []string{"one", "two", "three"} {
		p := e.params(q)
		p.SessionFile, p.History, p.StreamFunc, p.RequestOptions = "", history, stream, opts
		if i == 2 {
			p.Compaction.KeepRecentTokens = 1
		}
		res, err := Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		history = res.Conversation
	}
	if len(got) != 6 {
		t.Fatalf("%d calls", len(got))
	}
	for i, o := range got {
		summary := strings.Contains(systems[i], "summar")
		if o.Headers["X-Route"] != "blue" || string(o.ExtraBody) != string(opts.ExtraBody) {
			t.Fatalf("call %d: transport options lost: %+v", i, o)
		}
		full := o.TopP != nil && *o.TopP == 0.5 && o.ParallelToolCalls != nil && !*o.ParallelToolCalls &&
			o.ResponseFormat != nil && o.ToolChoice.Mode == llm.ToolChoiceAuto && len(o.Stop) == 1
		if summary == full {
			t.Fatalf("call %d (summary %t): options %+v", i, summary, o)
		}
	}
	if !strings.Contains(systems[4], "summar") {
		t.Fatalf("call 5 is not the summary call: %.60q", systems[4])
	}
}

// Through package provider's HTTP transport the options are on the wire:
// in the body under the wire's names and as headers, on every call.
func TestRequestOptionsOnTheWire(t *testing.T) {
	prov := scripted.MustNew(scripted.Options{Script: &scripted.Script{Turns: []scripted.Turn{
		{Steps: []scripted.Step{scripted.ToolCall("", "echo", `{"text":"x"}`)}},
		{Steps: []scripted.Step{scripted.Text("done")}},
	}}})
	var mu sync.Mutex
	var bodies []string
	var routes []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		routes = append(routes, r.Header.Get("X-Route"))
		mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(b))
		prov.Handler().ServeHTTP(w, r)
	}))
	defer srv.Close()
	top := 0.25
	res, err := Run(context.Background(), Params{
		Prompt: "go", Model: llm.Model{ID: "scripted-1", API: llm.APIOpenAICompletions, Provider: "scripted", BaseURL: srv.URL},
		APIKey: "k", Tools: []*Tool{echoTool},
		RequestOptions: llm.RequestOptions{TopP: &top, Stop: []string{"END"}, Headers: map[string]string{"X-Route": "blue"}},
	})
	if err != nil || res.FinalText() != "done" {
		t.Fatalf("%v %q", err, res.FinalText())
	}
	if len(bodies) != 2 {
		t.Fatalf("%d requests", len(bodies))
	}
	for i, b := range bodies {
		if !strings.Contains(b, `"top_p":0.25`) || !strings.Contains(b, `"stop":["END"]`) || routes[i] != "blue" {
			t.Fatalf("request %d: header %q body %s", i, routes[i], b)
		}
	}
}
