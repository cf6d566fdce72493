package provider

import (
	"bytes"
	"fmt"
	"testing"
)

// TestLanesAgree: deltas that a lane matches but cannot apply itself (the
// block of their key closed, another block type at the key, a delta after
// the block's stop, OpenClaw's own Responses text path) decode as the
// validating scan decodes them, fresh and with the lanes a pooled decoder
// kept from a stream of the same wire decoded in the other mode.
func TestLanesAgree(t *testing.T) {
	text := func(i int, v string) string {
		return fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":"%s"}}`, i, v)
	}
	args := func(i int, v string) string {
		return fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":"%s"}}`, i, v)
	}
	start := `{"type":"message_start","message":{"id":"m","model":"x","usage":{"input_tokens":1}}}`
	textStart := `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`
	toolStart := `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"read","input":{}}}`
	stop := `{"type":"content_block_stop","index":0}`
	end := `{"type":"message_stop"}`
	lane := func(ev func(int, string) string, n int) []string {
		var p []string
		for i := range n {
			p = append(p, "content_block_delta", ev(0, fmt.Sprintf("v%d \\\"q\\\" é", i)))
		}
		return p
	}
	cat := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	open := []string{"message_start", start, "content_block_start", textStart}
	anth := [][]string{
		// text deltas after their block's stop (orphans under the OpenClaw rules)
		cat(open, lane(text, 4), []string{"content_block_stop", stop}, lane(text, 3), []string{"message_stop", end}),
		// text deltas into a tool call at the same index, then arguments
		cat(open, lane(text, 4), []string{"content_block_stop", stop, "content_block_start", toolStart},
			lane(text, 3), lane(args, 4), []string{"content_block_stop", stop}, lane(args, 2), []string{"message_stop", end}),
		// argument deltas into a text block
		cat(open, lane(args, 4), lane(text, 3), []string{"message_stop", end}),
	}
	rtext := func(oi int, v string) string {
		return fmt.Sprintf(`{"type":"response.output_text.delta","item_id":"i","output_index":%d,"content_index":0,"delta":"%s"}`, oi, v)
	}
	rargs := func(oi int, v string) string {
		return fmt.Sprintf(`{"type":"response.function_call_arguments.delta","item_id":"f","output_index":%d,"delta":"%s"}`, oi, v)
	}
	rlane := func(ev func(int, string) string, oi, n int) []string {
		var p []string
		for i := range n {
			p = append(p, "response.output_text.delta", ev(oi, fmt.Sprintf("v%d \\\"q\\\" é", i)))
		}
		return p
	}
	msgAdded := `{"type":"response.output_item.added","output_index":0,"item":{"id":"i","type":"message","role":"assistant","content":[]}}`
	msgDone := `{"type":"response.output_item.done","output_index":0,"item":{"id":"i","type":"message","role":"assistant","content":[{"type":"output_text","text":"x"}]}}`
	fcAdded := `{"type":"response.output_item.added","output_index":0,"item":{"id":"f","type":"function_call","call_id":"c","name":"read","arguments":""}}`
	done := `{"type":"response.completed","response":{"id":"r","status":"completed","output":[]}}`
	resp := [][]string{
		cat([]string{"response.output_item.added", msgAdded}, rlane(rtext, 0, 4), []string{"response.output_item.done", msgDone},
			rlane(rtext, 0, 3), []string{"response.completed", done}),
		cat([]string{"response.output_item.added", fcAdded}, rlane(rargs, 0, 4), rlane(rtext, 0, 3), rlane(rargs, 0, 2),
			[]string{"response.completed", done}),
		cat(rlane(rtext, 0, 4), []string{"response.output_item.added", fcAdded}, rlane(rargs, 1, 3), rlane(rargs, 0, 3),
			[]string{"response.completed", done}),
	}
	check := func(w Wire, body []byte) {
		for _, o := range []Options{{}, {OpenClaw: true}} {
			decodeBoth(t, w, body, o)
			// The lanes another mode's stream left in a pooled decoder.
			other := Options{OpenClaw: !o.OpenClaw}
			prior := NewDecoder(w, bytes.NewReader(body), other)
			drain(prior)
			prior.Reset(w, bytes.NewReader(body), o)
			sameOutcome(t, "after a stream in the other mode", body, decodeBytes(w, body, o), drain(prior))
		}
	}
	for _, p := range anth {
		check(WireAnthropic, named(p...))
	}
	for _, p := range resp {
		check(WireOpenAIResponses, named(p...))
	}
}

// TestLanesTaken: the synthetic streams' deltas go through the lanes.
func TestLanesTaken(t *testing.T) {
	for _, s := range synthStreams[1:] {
		st := s.gen(200, 1)
		d := NewDecoder(s.wire, bytes.NewReader(st.Body), Options{})
		decodeStream(d)
		lanes := 0
		for _, i := range d.shapes.ord[:d.shapes.n] {
			if d.shapes.sh[i].lane != laneNone {
				lanes++
			}
		}
		if lanes < 2 {
			t.Errorf("%s: %d shapes with a lane", s.name, lanes)
		}
	}
}
