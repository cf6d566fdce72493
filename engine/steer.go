package engine

import (
	"context"
	"errors"
	"sync"
)

// SteerMode says when a queued message reaches the model.
type SteerMode uint8

const (
	// Steer delivers the message after the current assistant turn's tool
	// calls have finished, before the next model call; the run continues
	// even if the model had meant to stop.
	Steer SteerMode = iota
	// FollowUp delivers the message only when the run would otherwise end
	// (the model stopped without tool calls), as a new prompt in the same
	// run.
	FollowUp
	// Interrupt cancels what the run is doing now (the model call or the
	// running tool), records it as interrupted, skips the turn's remaining
	// tool calls with error results, and then delivers the message.
	Interrupt
)

var steerModeNames = [...]string{Steer: "steer", FollowUp: "followup", Interrupt: "interrupt"}

func (m SteerMode) String() string {
	if int(m) < len(steerModeNames) {
		return steerModeNames[m]
	}
	return "unknown"
}

// ParseSteerMode is the inverse of SteerMode.String.
func ParseSteerMode(s string) (SteerMode, bool) {
	for i, n := range steerModeNames {
		if n == s {
			return SteerMode(i), true
		}
	}
	return 0, false
}

// ErrInterrupted is the cancellation cause of a model call or tool run cut
// short by an Interrupt message.
var ErrInterrupted = errors.New("engine: interrupted by a queued message")

// Queue holds messages sent to a session while a run is active. It is safe
// for concurrent use: the gateway pushes from request goroutines while the
// run drains it between turns. A Queue may outlive runs; messages still
// queued when a run ends stay for the next one.
type Queue struct {
	mu     sync.Mutex
	items  []queued
	cancel context.CancelCauseFunc // of the active phase, nil between runs
}

type queued struct {
	mode SteerMode
	text string
}

// Push queues text. An Interrupt also cancels the run's current model call
// or tool.
func (q *Queue) Push(mode SteerMode, text string) {
	q.mu.Lock()
	q.items = append(q.items, queued{mode, text})
	cancel := q.cancel
	q.mu.Unlock()
	if mode == Interrupt && cancel != nil {
		cancel(ErrInterrupted)
	}
}

// Len returns the number of queued messages.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}

// setPhase installs the cancel function of the run's current phase. It
// returns true if an Interrupt is already waiting (the phase should not
// start).
func (q *Queue) setPhase(cancel context.CancelCauseFunc) bool {
	if q == nil {
		return false // a run without a queue: inlined, no call
	}
	return q.setPhaseLocked(cancel)
}

func (q *Queue) setPhaseLocked(cancel context.CancelCauseFunc) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.cancel = cancel
	if cancel == nil {
		return false
	}
	for _, it := range q.items {
		if it.mode == Interrupt {
			return true
		}
	}
	return false
}

// take removes and returns the queued messages of the given modes, in
// the order they were pushed, appending to dst.
func (q *Queue) take(dst []queued, modes ...SteerMode) []queued {
	if q == nil {
		return dst
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	keep := q.items[:0]
	for _, it := range q.items {
		match := false
		for _, m := range modes {
			if it.mode == m {
				match = true
				break
			}
		}
		if match {
			dst = append(dst, it)
		} else {
			keep = append(keep, it)
		}
	}
	clear(q.items[len(keep):])
	q.items = keep
	return dst
}
