package fuzz

import (
	"bytes"
	"math/rand/v2"
	"strconv"

	"github.com/ocbench/ocbench/provider"
	"github.com/ocbench/ocbench/provider/scripted"
)

// variantSalt keeps the variants' random stream apart from the case's.
const variantSalt = 0x5bd1e9955bd1e995

// GenerateVariant is Generate's case i with the ends of turns varied too,
// for the differential run against another implementation: the wire's
// stop reasons beyond the usual ones (chat "end", "tool_call",
// "content_filter", "network_error", unknown ones; Anthropic
// "pause_turn", "compaction", "refusal", "sensitive", ...; Responses
// "incomplete"), reasoning deltas with and without a reasoning model, a
// chat body without [DONE], an Anthropic body without message_stop, and
// bodies cut at any byte. Each of the end-of-stream rules of
// @openclaw/ai's transports (spec streamwrap.md §1.5) is met this way.
// Case.Variant names what was varied. Tool calls are Generate's.
func GenerateVariant(seed, i uint64) *Case { return generate(seed, i, true) }

var variantStops = [...][]string{
	provider.WireOpenAIChat:      {"stop", "end", "tool_call", "tool_calls", "function_call", "length", "content_filter", "network_error", "sensitive", "weird_reason"},
	provider.WireOpenAIResponses: {"incomplete", "failed"},
	provider.WireAnthropic:       {"end_turn", "pause_turn", "compaction", "stop_sequence", "max_tokens", "model_context_window_exceeded", "tool_use", "refusal", "sensitive", "weird_reason"},
}

// variantTurn varies the scripted turn before it is rendered.
func (c *Case) variantTurn(r *rand.Rand, t *scripted.Turn) {
	if r.IntN(4) == 0 {
		t.Steps = append([]scripted.Step{scripted.Thinking("Let me think about "+words[r.IntN(len(words))], "sig-"+strconv.Itoa(r.IntN(100)))}, t.Steps...)
		c.Variant = append(c.Variant, "thinking")
	}
	if r.IntN(2) == 0 {
		c.Reasoning = true
		c.Variant = append(c.Variant, "reasoning model")
	}
	if !c.Cut && !c.Length && r.IntN(3) == 0 {
		stops := variantStops[c.Wire]
		t.RawStop = stops[r.IntN(len(stops))]
		c.Variant = append(c.Variant, "stop "+t.RawStop)
	}
}

// variantBody varies the rendered body.
func (c *Case) variantBody(r *rand.Rand) {
	switch k := r.IntN(12); {
	case k == 0 && c.Wire == provider.WireOpenAIChat:
		if b := removeEvent(c.Body, []byte("data: [DONE]")); b != nil {
			c.Body = b
			c.Variant = append(c.Variant, "no [DONE]")
		}
	case k == 1 && c.Wire == provider.WireOpenAIChat:
		if b := removeEvent(c.Body, []byte(`"finish_reason":"`)); b != nil {
			c.Body = b
			c.Variant = append(c.Variant, "no finish_reason")
		}
	case k == 0 && c.Wire == provider.WireAnthropic:
		if b := removeEvent(c.Body, []byte(`"type":"message_stop"`)); b != nil {
			c.Body = b
			c.Variant = append(c.Variant, "no message_stop")
		}
	case k == 2 && len(c.Body) > 2:
		// After the first event, which names the model (a replay tool may
		// name a stream that names none after itself).
		first := bytes.Index(c.Body, []byte("\n\n")) + 2
		if first <= 1 || first >= len(c.Body)-1 {
			break
		}
		n := first + r.IntN(len(c.Body)-first)
		c.Body = c.Body[:n:n]
		c.Variant = append(c.Variant, "cut at byte "+strconv.Itoa(n))
	}
}

// removeEvent returns body without the SSE events (blank-line separated)
// that contain marker, or nil when none does.
func removeEvent(body, marker []byte) []byte {
	var out []byte
	found := false
	for len(body) > 0 {
		ev := body
		if i := bytes.Index(body, []byte("\n\n")); i >= 0 {
			ev, body = body[:i+2], body[i+2:]
		} else {
			body = nil
		}
		if bytes.Contains(ev, marker) {
			found = true
			continue
		}
		out = append(out, ev...)
	}
	if !found {
		return nil
	}
	return out
}
