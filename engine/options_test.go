package engine

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

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

// Runs of the same tools and stream options one after another share a
// decorator chain, each with the run's own provider, tool clock and
// unknown-tool streak; options holding a caller's function get a chain
// of their own.
func TestRunChainsPooled(t *testing.T) {
	ts, err := newToolSet([]*Tool{echoTool})
	if err != nil {
		t.Fatal(err)
	}
	p := Params{Model: llm.Model{ID: "m", API: "openai-completions", Provider: "scripted"}}
	calls := 0
	fn := func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		calls++
		return nil, errors.New("refused")
	}
	r1 := runner{p: &p}
	r1.wrapStream(fn, ts)
	rc := r1.chain
	rc.lastTool = time.Now()
	r1.close()
	r2 := runner{p: &p}
	f2 := r2.wrapStream(fn, ts)
	// The race detector makes sync.Pool drop a put item at random: the
	// second run may then build a chain of its own.
	if r2.chain != rc && !raceEnabled || !r2.chain.lastTool.IsZero() {
		t.Fatalf("the second run did not get the first run's chain, reset (same %v)", r2.chain == rc)
	}
	if name, n := r2.chain.guard.Count(); name != "" || n != 0 {
		t.Fatalf("unknown-tool streak carried over: %q %d", name, n)
	}
	if _, err := f2(context.Background(), &llm.Request{Model: p.Model}); err == nil || calls != 1 {
		t.Fatalf("the pooled chain did not call the run's provider: %v, %d calls", err, calls)
	}
	r2.close()
	q := p
	q.Stream.OnIdleTimeout = func(error) {}
	r3 := runner{p: &q}
	r3.wrapStream(fn, ts)
	if r3.chain == rc || r3.chain.pool != nil {
		t.Fatal("a chain with a caller's function was pooled")
	}
	r3.close()
}
