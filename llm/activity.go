package llm

import "context"

type activityKey struct{}

// WithActivity returns a context that carries f, a function a provider
// calls for every chunk or frame it receives, including frames that produce
// no event (an Anthropic ping, an SSE comment). The idle-timeout decorator
// of package streamwrap installs it so that such traffic keeps a stream
// alive, as @openclaw/ai's notifyLlmRequestActivity does. A provider stream
// that also calls it before each wait for the provider says so by
// implementing ActivityReporter.
func WithActivity(ctx context.Context, f func()) context.Context {
	return &activityCtx{ctx, f}
}

// activityCtx is WithActivity's context: a value context that
// BaseContext sees through.
type activityCtx struct {
	context.Context
	f func()
}

func (c *activityCtx) Value(key any) any {
	if _, ok := key.(activityKey); ok {
		return c.f
	}
	return c.Context.Value(key)
}

func (c *activityCtx) String() string { return "llm.WithActivity" }

// ActivityFunc returns the function installed by WithActivity, or nil.
// Providers look it up once per stream, not per frame.
func ActivityFunc(ctx context.Context) func() {
	f, _ := ctx.Value(activityKey{}).(func())
	return f
}

// BaseContext returns the context WithActivity derived ctx from (through
// every such layer), ctx itself when it is no such context: its Done, Err,
// Deadline and cause are ctx's, and a provider that asks for Err per event
// saves the value layer's call.
func BaseContext(ctx context.Context) context.Context {
	for {
		c, ok := ctx.(*activityCtx)
		if !ok {
			return ctx
		}
		ctx = c.Context
	}
}

// ActivityReporter is implemented by streams that may report their waits
// through the activity function of the context they were created with
// (WithActivity), and by decorators that forward the question to the
// stream they wrap.
//
// When ReportsActivity returns true, the stream calls that function, on
// the goroutine that calls Next, before every read from the provider
// (which may wait) and again when the read returns. Every event it has
// delivered was then delivered before its latest call, and a stream that
// has delivered no event since that call is waiting for the provider. That
// lets an idle timer stamp the clock per read instead of per event.
type ActivityReporter interface {
	ReportsActivity() bool
}
