package engine

import (
	"context"
	"sync"

	"github.com/ocbench/ocbench/llm"
)

// fakeTurn is one answer of fakeProvider: a finished message replayed as
// events, a refusal, or a stall until the context ends.
type fakeTurn struct {
	msg    llm.Message
	refuse error
	stall  bool
	// before runs when the turn is requested (to steer, cancel, ...).
	before func()
}

// fakeProvider is a minimal in-test StreamFunc for loop-logic unit tests;
// end-to-end tests use provider/scripted.
type fakeProvider struct {
	mu    sync.Mutex
	turns []fakeTurn
	calls int
	reqs  [][]llm.Message
}

func (f *fakeProvider) stream(ctx context.Context, req *llm.Request) (llm.Stream, error) {
	f.mu.Lock()
	i := f.calls
	f.calls++
	f.reqs = append(f.reqs, append([]llm.Message(nil), req.Messages...))
	var t fakeTurn
	if i < len(f.turns) {
		t = f.turns[i]
	} else {
		t = fakeTurn{msg: assistantText("done")}
	}
	f.mu.Unlock()
	if t.before != nil {
		t.before()
	}
	if t.refuse != nil {
		return nil, t.refuse
	}
	return &fakeStream{ctx: ctx, src: t.msg.Clone(), stall: t.stall}, nil
}

type fakeStream struct {
	ctx   context.Context
	src   *llm.Message
	stall bool
	msg   llm.Message
	ev    llm.Event
	step  int // 0 start, then 3 per block, then terminal
	done  bool
	err   error
}

func (s *fakeStream) Next() bool {
	if s.done {
		return false
	}
	if s.ctx.Err() != nil || (s.stall && s.step > 0) {
		if s.stall {
			<-s.ctx.Done()
		}
		s.msg.Fail(llm.StopAborted, "Request was aborted")
		s.ev = llm.Event{Type: llm.EventError, Reason: llm.StopAborted}
		s.err = s.ctx.Err()
		s.done = true
		return true
	}
	if s.step == 0 {
		s.msg.Role = llm.RoleAssistant
		s.msg.API, s.msg.Provider, s.msg.Model = "fake-api", "fake", "fake-model"
		s.ev = llm.Event{Type: llm.EventStart}
		s.step++
		return true
	}
	bi, phase := (s.step-1)/3, (s.step-1)%3
	if bi >= len(s.src.Content) {
		s.msg.StopReason = s.src.StopReason
		s.msg.ErrorMessage = s.src.ErrorMessage
		s.msg.Usage = s.src.Usage
		if s.msg.StopReason == llm.StopError {
			s.ev = llm.Event{Type: llm.EventError, Reason: llm.StopError}
		} else {
			s.ev = llm.Event{Type: llm.EventDone, Reason: s.msg.StopReason}
		}
		s.done = true
		return true
	}
	b := &s.src.Content[bi]
	base := [...]llm.EventType{llm.BlockText: llm.EventTextStart, llm.BlockThinking: llm.EventThinkingStart, llm.BlockToolCall: llm.EventToolCallStart}[b.Type]
	s.ev = llm.Event{Type: base + llm.EventType(phase), ContentIndex: bi}
	switch phase {
	case 0:
		_, nb := s.msg.AddBlock(b.Type)
		nb.ID = append(nb.ID, b.ID...)
		nb.Name = append(nb.Name, b.Name...)
	case 1:
		nb := &s.msg.Content[bi]
		if b.Type == llm.BlockToolCall {
			nb.RawArgs = append(nb.RawArgs, b.Arguments...)
			s.ev.Delta = b.Arguments
		} else {
			nb.Text = append(nb.Text, b.Text...)
			s.ev.Delta = b.Text
		}
	case 2:
		if b.Type == llm.BlockToolCall {
			s.msg.Content[bi].Arguments = append(s.msg.Content[bi].Arguments, b.Arguments...)
		}
	}
	s.step++
	return true
}

func (s *fakeStream) Event() *llm.Event     { return &s.ev }
func (s *fakeStream) Message() *llm.Message { return &s.msg }
func (s *fakeStream) Err() error            { return s.err }
func (s *fakeStream) Close() error          { return nil }

func assistantText(text string) llm.Message {
	m := llm.TextMessage(llm.RoleAssistant, text)
	m.StopReason = llm.StopStop
	m.Usage = llm.Usage{Input: 10, Output: 2, TotalTokens: 12}
	return m
}

func assistantCalls(calls ...[3]string) llm.Message {
	m := llm.Message{Role: llm.RoleAssistant, StopReason: llm.StopToolUse, Usage: llm.Usage{Input: 10, Output: 5, TotalTokens: 15}}
	for _, c := range calls {
		_, b := m.AddBlock(llm.BlockToolCall)
		b.ID = []byte(c[0])
		b.Name = []byte(c[1])
		b.Arguments = []byte(c[2])
	}
	return m
}
