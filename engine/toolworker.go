package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// toolWorker runs a run's tool calls on a goroutine of their own, so that
// a handler blocked where it cannot see its context (a read of a FIFO, a
// stuck network call) cannot hold the run past Params.ToolTimeout. Calls
// of a run are sequential, so one worker, started at the first call and
// reused, serves them all; its channels and timer are reused too.
type toolWorker struct {
	jobs  chan toolJob
	done  chan CallResult
	timer *time.Timer
}

type toolJob struct {
	ctx  context.Context
	tool *Tool
	args []byte
}

func newToolWorker() *toolWorker {
	w := &toolWorker{jobs: make(chan toolJob), done: make(chan CallResult, 1), timer: time.NewTimer(time.Hour)}
	w.timer.Stop()
	go func(jobs <-chan toolJob, done chan<- CallResult) {
		for j := range jobs {
			done <- j.tool.run(j.ctx, j.args)
		}
	}(w.jobs, w.done)
	return w
}

// stop ends the worker once its current call (if any) returns.
func (w *toolWorker) stop() { close(w.jobs) }

// idleWorkers keeps the workers of ended runs, idle (no call in flight,
// timer stopped), for later runs, so that a run's first tool call neither
// starts a goroutine nor allocates: at most maxIdleWorkers goroutines wait
// there, parked on their job channel.
var idleWorkers struct {
	mu sync.Mutex
	w  []*toolWorker
}

const maxIdleWorkers = 64

// getToolWorker returns an idle worker, or a new one.
func getToolWorker() *toolWorker {
	idleWorkers.mu.Lock()
	defer idleWorkers.mu.Unlock()
	if n := len(idleWorkers.w); n > 0 {
		w := idleWorkers.w[n-1]
		idleWorkers.w[n-1] = nil
		idleWorkers.w = idleWorkers.w[:n-1]
		return w
	}
	return newToolWorker()
}

// putToolWorker keeps w, idle, for a later run, or stops it.
func putToolWorker(w *toolWorker) {
	idleWorkers.mu.Lock()
	defer idleWorkers.mu.Unlock()
	if len(idleWorkers.w) < maxIdleWorkers {
		idleWorkers.w = append(idleWorkers.w, w)
		return
	}
	w.stop()
}

// callTool is Registry.Call bounded by Params.ToolTimeout: the lookup and
// the validation run on the run's goroutine, and so does the handler of an
// Inline tool; any other handler runs on the run's tool worker, its
// context ends at the deadline, and a handler that has not returned
// toolAbandonGrace later is left behind (its worker with it) with an
// error result wrapping ErrToolTimeout. It also returns when the call
// ended (the clock read that gives its Duration), for the run's other
// uses of that moment.
//
// The result is written into *res (all of it), not returned: a call on
// the turn path copies it once, not through every layer.
func (r *runner) callTool(ctx context.Context, name string, args []byte, res *CallResult) time.Time {
	start := time.Now()
	if t := r.reg.admit(ctx, name, args, res); t != nil {
		if d := r.p.ToolTimeout; d <= 0 || t.inline {
			t.runInto(ctx, args, res)
		} else {
			*res = r.runTool(ctx, t, name, args, start)
		}
	}
	end := time.Now()
	res.Duration = end.Sub(start)
	return end
}

// runTool runs an admitted call that is not Inline, under
// Params.ToolTimeout (see callTool).
func (r *runner) runTool(ctx context.Context, t *Tool, name string, args []byte, start time.Time) CallResult {
	d := r.p.ToolTimeout
	if r.tw == nil {
		r.tw = getToolWorker()
	}
	w := r.tw
	// One cancellable context serves every call made under the same
	// parent until a timeout spends it.
	if r.toolCtx == nil || r.toolParent != ctx {
		r.toolCtx, r.toolCancel = context.WithCancelCause(ctx)
		r.toolParent = ctx
	}
	cctx, cancel := r.toolCtx, r.toolCancel
	spend := func() { r.toolCtx, r.toolCancel, r.toolParent = nil, nil, nil }
	w.jobs <- toolJob{ctx: cctx, tool: t, args: args}
	w.timer.Reset(d)
	timedOut := false
	select {
	case res := <-w.done:
		w.timer.Stop()
		return res
	case <-w.timer.C:
		timedOut = true
		cancel(ErrToolTimeout)
		spend()
	case <-ctx.Done():
		w.timer.Stop()
		cancel(nil)
		spend()
	}
	// The call's context has ended: give the handler a moment to return.
	w.timer.Reset(toolAbandonGrace)
	select {
	case res := <-w.done:
		w.timer.Stop()
		return timedOutResult(ctx, res, timedOut, name, d)
	case <-w.timer.C:
	}
	// Abandoned: the worker exits when the handler finally returns.
	w.stop()
	r.tw = nil
	return abandonedResult(ctx, name, d, start)
}

// timedOutResult marks the result of a handler that returned after its
// context ended at the timeout as a timeout.
func timedOutResult(ctx context.Context, res CallResult, timedOut bool, name string, d time.Duration) CallResult {
	if timedOut && ctx.Err() == nil && res.IsError &&
		(res.Err == nil || errors.Is(res.Err, context.DeadlineExceeded) || errors.Is(res.Err, context.Canceled)) {
		res.Err = fmt.Errorf("%w: %q after %s", ErrToolTimeout, name, d)
		res.Text += fmt.Sprintf("\n\n[Tool %s timed out after %s.]", name, d)
	}
	return res
}

// abandonedResult is the result of a call left behind.
func abandonedResult(ctx context.Context, name string, d time.Duration, start time.Time) CallResult {
	if ctx.Err() != nil {
		return CallResult{Text: "Tool " + name + " was not completed: the run was aborted.", IsError: true, Err: ctx.Err(), Duration: time.Since(start)}
	}
	err := fmt.Errorf("%w: %q after %s", ErrToolTimeout, name, d)
	return CallResult{Text: fmt.Sprintf("Tool %s did not finish within %s and was stopped.", name, d), IsError: true, Err: err, Duration: time.Since(start)}
}

// callWithTimeout is callTool for calls that run concurrently
// (Params.ParallelTools): the same deadline, grace and results, on a
// goroutine and a timer of the call's own.
func callWithTimeout(ctx context.Context, reg *Registry, name string, args []byte, d time.Duration) CallResult {
	if d <= 0 {
		return reg.Call(ctx, name, args)
	}
	start := time.Now()
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	done := make(chan CallResult, 1)
	go func() { done <- reg.Call(cctx, name, args) }()
	t := time.NewTimer(d)
	defer t.Stop()
	timedOut := false
	select {
	case res := <-done:
		return res
	case <-t.C:
		timedOut = true
		cancel(ErrToolTimeout)
	case <-ctx.Done():
		cancel(nil)
	}
	t.Reset(toolAbandonGrace)
	select {
	case res := <-done:
		return timedOutResult(ctx, res, timedOut, name, d)
	case <-t.C:
	}
	return abandonedResult(ctx, name, d, start)
}
