package llm

import "context"

type activityKey struct{}

// WithActivity returns a context that carries f, a function a provider
// calls for every chunk or frame it receives, including frames that produce
// no event (an Anthropic ping, an SSE comment). The idle-timeout decorator
// of package streamwrap installs it so that such traffic keeps a stream
// alive, as @openclaw/ai's notifyLlmRequestActivity does.
func WithActivity(ctx context.Context, f func()) context.Context {
	return context.WithValue(ctx, activityKey{}, f)
}

// ActivityFunc returns the function installed by WithActivity, or nil.
// Providers look it up once per stream, not per frame.
func ActivityFunc(ctx context.Context) func() {
	f, _ := ctx.Value(activityKey{}).(func())
	return f
}
