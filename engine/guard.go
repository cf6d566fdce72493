package engine

import (
	"errors"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/tokenize"
	"github.com/ocbench/ocbench/transcript"
)

// ErrContextGuard is the overflow the per-call context guard reports
// (OpenClaw's tool-result context guard); the run treats it as a context
// overflow and compacts.
var ErrContextGuard = errors.New("Context overflow: estimated context size exceeds safe threshold during tool loop.")

// capToolResult applies OpenClaw's persistence guard to a tool result
// before it is written: text over the live cap is truncated (minKeep
// 2000), so neither the transcript nor the next call carries it whole.
func (r *runner) capToolResult(m *llm.Message) {
	// A text of n bytes is at most n UTF-16 units: one within the cap in
	// bytes is not measured.
	n := 0
	for i := range m.Content {
		if m.Content[i].Type == llm.BlockText {
			n += len(m.Content[i].Text)
		}
	}
	if n <= r.liveCap {
		return
	}
	if transcript.ToolResultTextLength(m) > r.liveCap {
		*m = transcript.TruncateToolResultMessage(*m, r.liveCap, transcript.ToolResultMinKeepChars)
	}
}

// guardChars is the context guard's char estimate of one message (spec
// §3.7): user text (+8000 per image); assistant text, thinking and tool-call
// argument JSON; tool results twice their text (details are never kept in
// memory here); 256 for anything else.
func guardChars(m *llm.Message) int {
	n := 0
	switch m.Role {
	case llm.RoleUser:
		for i := range m.Content {
			b := &m.Content[i]
			if b.Type == llm.BlockImage {
				n += 8000
			} else if b.Type == llm.BlockText {
				n += tokenize.UTF16LenBytes(b.Text)
			}
		}
	case llm.RoleAssistant:
		for i := range m.Content {
			b := &m.Content[i]
			switch b.Type {
			case llm.BlockText, llm.BlockThinking:
				n += tokenize.UTF16LenBytes(b.Text)
			case llm.BlockToolCall:
				if len(b.Arguments) == 0 {
					n += 2
				} else {
					n += tokenize.UTF16LenBytes(b.Arguments)
				}
			}
		}
	case llm.RoleToolResult:
		n = 2 * transcript.ToolResultTextLength(m)
	default:
		n = 256
	}
	return n
}

// estimateBoth returns EstimateTokens(m) and guardChars(m), measuring each
// text once.
func estimateBoth(m *llm.Message, buf []byte) (tokens, guard int, _ []byte) {
	return measureMessage(m, buf, true)
}

// estimatePrompt is EstimatePromptTokens(r.hist, prompt), which also
// gives the context guard its estimates of r.hist (the first call would
// count every message of the history again otherwise).
func (r *runner) estimatePrompt(prompt *llm.Message) int {
	if lp := r.live; lp != nil {
		// The estimates of the messages the session's last runs prepared
		// are kept: only those since are estimated.
		r.sess.scratch = lp.estimate(r.hist, r.sess.scratch)
		r.guardEst, r.guardTotal, r.guardResult = lp.guard, lp.guardTotal, lp.guardResult
		t, buf := EstimateTokens(prompt, r.sess.scratch)
		r.sess.scratch = buf
		return tokenize.WithSafety(lp.tokens[lp.est] + t)
	}
	h := r.hist
	if cap(r.guardEst) < len(h) {
		r.guardEst = make([]int, 0, len(h)+min(2*r.p.MaxTurns, 16))
	}
	r.guardEst, r.guardTotal, r.guardResult = r.guardEst[:0], 0, 0
	sum := 0
	buf := r.sess.scratch
	for i := range h {
		t, g, b := estimateBoth(&h[i], buf)
		buf = b
		sum += t
		r.noteGuard(&h[i], g)
	}
	t, buf := EstimateTokens(prompt, buf)
	r.sess.scratch = buf
	return tokenize.WithSafety(sum + t)
}

// contextGuard runs OpenClaw's tool-result context guard before a model
// call: a tool result whose estimate exceeds max(1024, window×2×0.5) is
// cut, on a copy, to half that many chars; if the whole estimate still
// exceeds max(1024, window×4×0.9), the call is not made and the run
// treats it as a context overflow. It returns the messages to send.
// Estimates of the history are kept across calls, so each call only
// estimates what was appended since the last one (setHist, which replaces
// the history, drops them).
func (r *runner) contextGuard() ([]llm.Message, error) {
	window := r.p.Model.ContextWindow
	if window <= 0 {
		window = DefaultContextTokenBudget
	}
	maxSingle := max(1024, window)
	maxTotal := max(1024, window*36/10)
	h := r.hist
	if len(h) < len(r.guardEst) {
		r.guardEst, r.guardTotal, r.guardResult = r.guardEst[:0], 0, 0
	}
	if cap(r.guardEst) < len(h) {
		// Room for a few turns too: one slice for most runs (a long
		// tool loop grows it by append).
		r.guardEst = append(make([]int, 0, len(h)+min(2*r.p.MaxTurns+2, 32)), r.guardEst...)
	}
	for i := len(r.guardEst); i < len(h); i++ {
		r.noteGuard(&h[i], guardChars(&h[i]))
	}
	total := r.guardTotal
	out := h
	if r.sanCut > 0 {
		// The last call sent a cut copy from there.
		r.san.Keep(r.sanCut - 1)
		r.sanCut = 0
	}
	if r.guardResult <= maxSingle {
		// No tool result to cut: the history is not walked.
		if total > maxTotal {
			return nil, ErrContextGuard
		}
		return out, nil
	}
	for i, c := range r.guardEst {
		if c <= maxSingle || h[i].Role != llm.RoleToolResult {
			continue
		}
		if len(out) > 0 && &out[0] == &h[0] {
			out = append([]llm.Message(nil), h...)
			// The sanitizer's memo saw h[i] (or will see it again).
			r.san.Keep(i)
			r.sanCut = i + 1
		}
		out[i] = transcript.TruncateToolResultMessage(h[i], maxSingle/2, 0)
		total += guardChars(&out[i]) - c
	}
	if total > maxTotal {
		return nil, ErrContextGuard
	}
	return out, nil
}

// setHist makes h the history of the next call, in place of the one the
// context guard's estimates are of (a rebuilt or rewritten history); the
// run appends to it with appendMsg and addToHistory, which keep them.
func (r *runner) setHist(h []llm.Message) {
	if r.newN > 0 || r.pending != nil {
		r.ownNew(8) // the new messages leave the history's tail
	}
	r.hist = h
	// Another history: the run's own sanitizer memo, from its first
	// message (a session's keeps what its prepared history decides).
	r.san = nil
	if r.chain != nil {
		r.san = &r.chain.san
		r.san.Keep(0)
	}
	r.sanCut = 0
	if r.live != nil {
		// guardEst may be the livePrep's: never written over.
		r.guardEst, r.live = nil, nil
	}
	r.guardEst, r.guardTotal, r.guardResult = r.guardEst[:0], 0, 0
}

// noteGuard adds the context guard's estimate g of m, the next message of
// the history.
func (r *runner) noteGuard(m *llm.Message, g int) {
	r.guardEst = append(r.guardEst, g)
	r.guardTotal += g
	if m.Role == llm.RoleToolResult {
		r.guardResult = max(r.guardResult, g)
	}
}
