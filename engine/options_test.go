package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/llm"
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
