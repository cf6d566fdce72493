package gateway

import (
	"context"
	"io"
	"net/http"

	"github.com/ocbench/ocbench/llm"
)

// A run's events are written the way the proxy writes an upstream's: the
// events one upstream read produced go out in one write and one flush,
// made when the run is about to wait — before the next read of the
// upstream's body (the HTTP transport below calls the run's flush hook),
// and at the end of each model call (before the tools run, or the run
// ends, unless the RunService says nothing waits then: RunEnder). The run's RunService says whether its events come from such a
// source (RunCoalescer); events of any other are flushed one by one.

// RunCoalescer is implemented by a RunService that calls the flush hook
// the gateway puts in the run's context (FlushHook) before every wait for
// its provider, so that its events can be gathered between waits.
type RunCoalescer interface {
	CoalescesRuns() bool
}

// RunEnder is implemented by a RunService whose runs, after a model call
// that asks for no tool (the run's last), do nothing that waits before
// they return. The gateway then writes that call's last events with the
// run's result, in one write, instead of flushing them alone first.
type RunEnder interface {
	EndsWithoutWait() bool
}

// hasToolCall reports whether m asks for a tool: the run goes on to run
// it, which may take time.
func hasToolCall(m *llm.Message) bool {
	for i := range m.Content {
		if m.Content[i].Type == llm.BlockToolCall {
			return true
		}
	}
	return false
}

type flushHookKey struct{}

// withFlushHook returns ctx carrying f, the run's "about to wait" hook.
func withFlushHook(ctx context.Context, f func()) context.Context {
	return context.WithValue(ctx, flushHookKey{}, f)
}

// FlushHook returns the hook a run's context carries (nil for none): a
// RunService calls it before waiting on its provider.
func FlushHook(ctx context.Context) func() {
	f, _ := ctx.Value(flushHookKey{}).(func())
	return f
}

// flushingTransport calls the request context's flush hook before every
// read of a response body: when the decoder above has consumed what it
// had, and the next bytes may take the upstream's time.
type flushingTransport struct{ base http.RoundTripper }

func (t flushingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if f := FlushHook(req.Context()); f != nil && resp.Body != nil {
		resp.Body = &hookedBody{ReadCloser: resp.Body, before: f}
	}
	return resp, nil
}

type hookedBody struct {
	io.ReadCloser
	before func()
}

func (b *hookedBody) Read(p []byte) (int, error) {
	b.before()
	return b.ReadCloser.Read(p)
}
