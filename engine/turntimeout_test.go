package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ocbench/ocbench/llm"
)

// The turn timeout is per call: the one timer of the run is reset for
// each call, so calls that each stay under it pass however long the run
// is, and the call that stalls is cut.
func TestTurnTimeoutPerCallWithOneTimer(t *testing.T) {
	slow := func() { time.Sleep(40 * time.Millisecond) }
	tool := MustNewTool("noop", "", func(context.Context, struct{}) (string, error) { return "ok", nil })
	var turns []fakeTurn
	for range 5 {
		turns = append(turns, fakeTurn{before: slow, msg: assistantCalls([3]string{"c", "noop", `{}`})})
	}
	turns = append(turns, fakeTurn{msg: assistantText("still going")}, fakeTurn{stall: true, msg: assistantText("never")})
	fp := &fakeProvider{turns: turns}
	p := Params{Prompt: "go", StreamFunc: fp.stream, Tools: []*Tool{tool}, TurnTimeout: 150 * time.Millisecond, Model: llm.Model{ID: "m"}}
	start := time.Now()
	res, err := Run(context.Background(), p)
	if err != nil || res.FinalText() != "still going" || res.Turns != 6 {
		t.Fatalf("%v %q %d", err, res.FinalText(), res.Turns)
	}
	if time.Since(start) < 200*time.Millisecond {
		t.Fatalf("the run took %s: the calls did not take their time", time.Since(start))
	}
	// The next run's first call stalls: cut at the timeout, reported.
	fp.turns = fp.turns[:0]
	fp.calls = 0
	fp.turns = append(fp.turns, fakeTurn{msg: assistantCalls([3]string{"c", "noop", `{}`})}, fakeTurn{stall: true, msg: assistantText("never")})
	start = time.Now()
	res, err = Run(context.Background(), p)
	if !errors.Is(err, ErrProvider) || !strings.Contains(err.Error(), "timed out after 150ms") || res.Aborted {
		t.Fatalf("%v %+v", err, res)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %s", d)
	}
	if res.Final == nil || res.Final.StopReason != llm.StopError {
		t.Fatalf("final %+v", res.Final)
	}
}

// A turn timeout shorter than the first call's setup fires as soon as the
// timer is made, before the run has stored it: the call is cut, reported
// as a timeout, and nothing reads the timer early (go test -race).
func TestTurnTimeoutFiresAtOnce(t *testing.T) {
	for range 20 {
		fp := &fakeProvider{turns: []fakeTurn{{stall: true, msg: assistantText("never")}}}
		p := Params{Prompt: "go", StreamFunc: fp.stream, TurnTimeout: time.Nanosecond, Model: llm.Model{ID: "m"}}
		res, err := Run(context.Background(), p)
		if !errors.Is(err, ErrProvider) || !strings.Contains(err.Error(), "timed out after 1ns") || res.Final == nil || res.Final.StopReason != llm.StopError {
			t.Fatalf("%v %+v", err, res.Final)
		}
	}
}

// Runs take their turn clock from those earlier runs freed: a run whose
// timeout is shorter than the last run's still gets it, and each run of a
// clock gets its own deadline (the clock's pending firing from a run that
// ended does not end the next run's call early, nor late).
func TestTurnClockAcrossRuns(t *testing.T) {
	tool := MustNewTool("noop", "", func(context.Context, struct{}) (string, error) { return "ok", nil })
	run := func(d time.Duration, turns ...fakeTurn) (Result, error, time.Duration) {
		fp := &fakeProvider{turns: turns}
		p := Params{Prompt: "go", StreamFunc: fp.stream, Tools: []*Tool{tool}, TurnTimeout: d, Model: llm.Model{ID: "m"}}
		start := time.Now()
		res, err := Run(context.Background(), p)
		return res, err, time.Since(start)
	}
	quick := fakeTurn{msg: assistantText("done")}
	for range 3 {
		if _, err, _ := run(10*time.Minute, quick); err != nil {
			t.Fatal(err)
		}
	}
	res, err, took := run(80*time.Millisecond, fakeTurn{stall: true, msg: assistantText("never")})
	if !errors.Is(err, ErrProvider) || !strings.Contains(err.Error(), "timed out after 80ms") || res.Final == nil {
		t.Fatalf("%v %+v", err, res.Final)
	}
	if took > 5*time.Second {
		t.Fatalf("took %s", took)
	}
	// The clock of that run, reused: a call slower than the last run's
	// deadline but within its own passes.
	slow := fakeTurn{before: func() { time.Sleep(50 * time.Millisecond) }, msg: assistantCalls([3]string{"c", "noop", `{}`})}
	if res, err, _ := run(80*time.Millisecond, slow, slow, slow, quick); err != nil || res.FinalText() != "done" {
		t.Fatalf("%v %q", err, res.FinalText())
	}
}
