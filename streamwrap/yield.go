package streamwrap

import (
	"context"
	"errors"
	"time"

	"github.com/ocbench/ocbench/llm"
)

// ErrSessionsYield is the cancellation cause of a run that yields its turn
// to another session (OpenClaw's abort reason {code:"sessions_yield"}).
// Cancel the run's context with context.WithCancelCause and this error (or
// one wrapping it) to make the yield-abort gate answer without calling the
// provider.
var ErrSessionsYield = errors.New("streamwrap: sessions_yield")

// YieldAbortGate is OpenClaw's yield-abort gate (streamwrap.md §3.1). When
// yieldDetected reports true, the call's context is cancelled and its cause
// is ErrSessionsYield, it skips the provider and returns a stream with no
// events whose message has one empty text block, stop reason aborted, the
// model's api, provider and id, zero usage and the current time. Otherwise
// the call passes through. A nil yieldDetected makes the gate a
// pass-through.
func YieldAbortGate(next llm.StreamFunc, yieldDetected func() bool) llm.StreamFunc {
	if yieldDetected == nil {
		return next
	}
	return func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		if ctx.Err() != nil && errors.Is(context.Cause(ctx), ErrSessionsYield) && yieldDetected() {
			return newYieldAbortedStream(&req.Model), nil
		}
		return next(ctx, req)
	}
}

// yieldAbortedStream is createYieldAbortedResponse: no events, a final
// aborted message.
type yieldAbortedStream struct {
	msg llm.Message
	ev  llm.Event
}

func newYieldAbortedStream(m *llm.Model) *yieldAbortedStream {
	s := &yieldAbortedStream{}
	s.msg.Role = llm.RoleAssistant
	s.msg.AddBlock(llm.BlockText)
	s.msg.StopReason = llm.StopAborted
	s.msg.API, s.msg.Provider, s.msg.Model = m.API, m.Provider, m.ID
	s.msg.Timestamp = time.Now().UnixMilli()
	return s
}

func (s *yieldAbortedStream) Next() bool            { return false }
func (s *yieldAbortedStream) Event() *llm.Event     { return &s.ev }
func (s *yieldAbortedStream) Message() *llm.Message { return &s.msg }
func (s *yieldAbortedStream) Err() error            { return nil }
func (s *yieldAbortedStream) Close() error          { return nil }
