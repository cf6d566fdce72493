package llm

import (
	"context"
	"errors"
	"testing"
)

type otherKey struct{}

// WithActivity's context answers as the one it derives from, but for its
// own value; BaseContext sees through it, and a context derived from it
// is cancelled with its parent.
func TestWithActivityContext(t *testing.T) {
	parent, cancel := context.WithCancelCause(context.WithValue(context.Background(), otherKey{}, "v"))
	calls := 0
	ctx := WithActivity(WithActivity(parent, func() {}), func() { calls++ })
	ActivityFunc(ctx)()
	if calls != 1 || ActivityFunc(parent) != nil || ActivityFunc(context.Background()) != nil {
		t.Fatalf("activity function: %d calls, parent's %v", calls, ActivityFunc(parent) != nil)
	}
	if ctx.Value(otherKey{}) != "v" || ctx.Done() != parent.Done() {
		t.Fatal("values and Done are not the parent's")
	}
	if BaseContext(ctx) != parent || BaseContext(parent) != parent || BaseContext(nil) != nil {
		t.Fatal("BaseContext does not give the parent")
	}
	child, stop := context.WithCancel(ctx)
	defer stop()
	cause := errors.New("why")
	cancel(cause)
	<-child.Done()
	if ctx.Err() != context.Canceled || context.Cause(ctx) != cause || context.Cause(child) != cause {
		t.Fatalf("err %v, cause %v, child's cause %v", ctx.Err(), context.Cause(ctx), context.Cause(child))
	}
}
