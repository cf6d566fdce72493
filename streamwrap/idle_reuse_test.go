package streamwrap

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ocbench/ocbench/llm"
)

// Calls one after another under one context reuse the idle state, its
// timer and its contexts: nothing is allocated per call.
func TestIdleReuseAllocatesNothingPerCall(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts do not hold under -race")
	}
	script := newScript()
	base := func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		script.reset()
		return script, nil
	}
	f := IdleTimeout(base, IdleConfig{Timeout: time.Minute, ReuseContext: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := &llm.Request{}
	run := func() {
		s, err := f(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		for s.Next() {
		}
		if s.Err() != nil {
			t.Fatal(s.Err())
		}
		s.Close()
	}
	run()
	if a := testing.AllocsPerRun(200, run); a != 0 {
		t.Fatalf("a call through the idle decorator allocated %v times", a)
	}
}

// After calls that reused the state, a stalled call still times out, the
// next call (on a fresh context) works, and concurrent calls through one
// decorator each get a state of their own.
func TestIdleReuseStillTimesOut(t *testing.T) {
	var stall bool
	var mu sync.Mutex
	base := func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		mu.Lock()
		defer mu.Unlock()
		if stall {
			return &idleFake{ctx: ctx, blockAll: true}, nil
		}
		return &idleFake{ctx: ctx, start: time.Now(), chunks: []string{"a"}}, nil
	}
	var fired atomic.Int32
	f := IdleTimeout(base, IdleConfig{Timeout: 60 * time.Millisecond, ReuseContext: true, OnIdleTimeout: func(error) { fired.Add(1) }})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	call := func() (llm.Stream, error) {
		s, err := f(ctx, &llm.Request{})
		if err != nil {
			return nil, err
		}
		for s.Next() {
		}
		return s, nil
	}
	for i := range 5 {
		s, err := call()
		if err != nil || s.Err() != nil {
			t.Fatalf("call %d: %v %v", i, err, s.Err())
		}
		// Longer than the timeout between calls: a disarmed timer must
		// not fire into the next call.
		time.Sleep(70 * time.Millisecond)
		s.Close()
	}
	mu.Lock()
	stall = true
	mu.Unlock()
	s, err := call()
	if err != nil || !errors.Is(s.Err(), ErrIdleTimeout) || fired.Load() != 1 {
		t.Fatalf("stalled call: %v %v fired %d", err, s.Err(), fired.Load())
	}
	s.Close()
	mu.Lock()
	stall = false
	mu.Unlock()
	s, err = call()
	if err != nil || s.Err() != nil {
		t.Fatalf("after the timeout: %v %v", err, s.Err())
	}
	s.Close()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := f(ctx, &llm.Request{})
			if err != nil {
				t.Error(err)
				return
			}
			for s.Next() {
			}
			if s.Err() != nil {
				t.Error(s.Err())
			}
			s.Close()
		}()
	}
	wg.Wait()
}

// With CallContext, the stream runs under the caller's context, derives
// none of its own (a new context per call allocates nothing more than the
// activity hook), and a stall cancels that context with the timeout.
func TestIdleCallContextCancelsTheCallersContext(t *testing.T) {
	var stall atomic.Bool
	var got atomic.Pointer[context.Context]
	base := func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		got.Store(&ctx)
		if stall.Load() {
			return &idleFake{ctx: ctx, blockAll: true}, nil
		}
		return &idleFake{ctx: ctx, start: time.Now(), chunks: []string{"a"}}, nil
	}
	var mu sync.Mutex
	var lent context.Context
	var lentCancel context.CancelCauseFunc
	callCtx := func(ctx context.Context) context.CancelCauseFunc {
		mu.Lock()
		defer mu.Unlock()
		if ctx == lent {
			return lentCancel
		}
		return nil
	}
	f := IdleTimeout(base, IdleConfig{Timeout: 60 * time.Millisecond, ReuseContext: true, CallContext: callCtx})
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	mu.Lock()
	lent, lentCancel = ctx, cancel
	mu.Unlock()
	s, err := f(ctx, &llm.Request{})
	if err != nil {
		t.Fatal(err)
	}
	for s.Next() {
	}
	if s.Err() != nil || llm.BaseContext(*got.Load()) != ctx {
		t.Fatalf("%v: the inner stream did not run under the caller's context", s.Err())
	}
	s.Close()
	stall.Store(true)
	s, err = f(ctx, &llm.Request{})
	if err != nil {
		t.Fatal(err)
	}
	for s.Next() {
	}
	if !errors.Is(s.Err(), ErrIdleTimeout) || !errors.Is(context.Cause(ctx), ErrIdleTimeout) {
		t.Fatalf("stalled call: %v, caller's context %v", s.Err(), context.Cause(ctx))
	}
	s.Close()
	// Another context, not the caller's own: the stream derives one and
	// leaves the caller's alone.
	stall.Store(false)
	other, cancelOther := context.WithCancel(context.Background())
	defer cancelOther()
	s, err = f(other, &llm.Request{})
	if err != nil {
		t.Fatal(err)
	}
	for s.Next() {
	}
	if s.Err() != nil || llm.BaseContext(*got.Load()) == other {
		t.Fatalf("%v: a context not lent was used as the stream's own", s.Err())
	}
	s.Close()
	if other.Err() != nil {
		t.Fatal("the stream cancelled a context it did not own")
	}
}

// A timer left pending between calls does not keep a dropped chain's
// idle state (and the contexts it keeps) alive.
func TestIdlePendingTimerKeepsNoDroppedState(t *testing.T) {
	var collected atomic.Bool
	func() {
		script := newScript()
		f := IdleTimeout(func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
			script.reset()
			return script, nil
		}, IdleConfig{Timeout: time.Hour, ReuseContext: true})
		s, err := f(context.Background(), &llm.Request{})
		if err != nil {
			t.Fatal(err)
		}
		for s.Next() {
		}
		runtime.AddCleanup(s.(*idleStream), func(*atomic.Bool) { collected.Store(true) }, &collected)
		s.Close()
	}()
	for i := 0; i < 20 && !collected.Load(); i++ {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
	if !collected.Load() {
		t.Fatal("the pending idle timer keeps a dropped chain's state alive")
	}
}
