package scripted

import (
	"context"
	"errors"
	"testing"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider/wireenc"
)

// FuzzParse: any input either parses into a valid, playable script or
// fails with ErrBadScript; it never panics.
func FuzzParse(f *testing.F) {
	f.Add([]byte(exampleScript))
	f.Add([]byte(`{"turns":[{"steps":[{"text":"hi"}]}]}`))
	f.Add([]byte(`{"turns":[{"steps":[{"tools":[{"name":"a","args":"{,"}],"interleave":true}],"cut_at":3}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data)
		if err != nil {
			if !errors.Is(err, ErrBadScript) {
				t.Fatalf("error %v does not wrap ErrBadScript", err)
			}
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("parsed script is invalid: %v", err)
		}
		// Play every turn without stalls or refusals, in every wire.
		for i := range s.Turns {
			turn := s.Turns[i]
			turn.HTTPError, turn.Latency = nil, Latency{}
			var steps []Step
			for _, st := range turn.Steps {
				if st.Kind != StepStall {
					steps = append(steps, st)
				}
			}
			turn.Steps = steps
			p := MustNew(Options{Script: &Script{Turns: []Turn{turn}, Chunk: s.Chunk}})
			for _, w := range wireenc.Wires {
				req := userReq("x")
				req.Model.API = w.API()
				st, err := p.Stream(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				m, _ := llm.Drain(st)
				if m.StopReason == llm.StopNone {
					t.Fatalf("stream ended without a stop reason")
				}
				st.Close()
			}
		}
	})
}

// FuzzParseRequest: request bodies of any shape give a request or
// ErrBadRequest, never a panic.
func FuzzParseRequest(f *testing.F) {
	f.Add(uint8(0), []byte(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"},{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"r","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":[{"type":"text","text":"ok"}]}]}`))
	f.Add(uint8(1), []byte(`{"input":[{"type":"function_call","call_id":"c"},{"type":"function_call_output","output":"x"},{"role":"user","content":"y"}],"instructions":"s"}`))
	f.Add(uint8(2), []byte(`{"system":"s","messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"c","content":[{"type":"text","text":"x"}]}]},{"role":"assistant","content":[{"type":"tool_use","input":{"a":1}}]}]}`))
	f.Fuzz(func(t *testing.T, wire uint8, body []byte) {
		w := wireenc.Wires[int(wire)%len(wireenc.Wires)]
		req, _, err := parseRequest(w, body)
		if err != nil {
			if !errors.Is(err, ErrBadRequest) {
				t.Fatalf("error %v does not wrap ErrBadRequest", err)
			}
			return
		}
		if p := Position(req); p < 0 || p > len(req.Messages) {
			t.Fatalf("position %d of %d messages", p, len(req.Messages))
		}
	})
}

// FuzzMalform: quirks never panic, and the argument text a call is given
// is what the decoder receives, whatever bytes it holds (valid UTF-8).
func FuzzMalform(f *testing.F) {
	f.Add(`{"a":"b","c":[1,true,null]}`, uint8(3), 5)
	f.Add(`{"s":"it's \"q\" & <x>"}`, uint8(7), 1)
	f.Add(`{"unterminated`, uint8(5), 3)
	f.Fuzz(func(t *testing.T, args string, q uint8, chunk int) {
		quirk := Quirk(q % uint8(numQuirks))
		got := Malform(args, quirk)
		if chunk < 0 || chunk > 64 {
			chunk = 0
		}
		if !validUTF8(got) {
			return // provider rejects invalid UTF-8 by design
		}
		turn := Turn{Steps: []Step{{Kind: StepTools, Chunk: chunk, Calls: []Call{{ID: "call_1", Name: "f", Args: got}}}}}
		p := MustNew(Options{Script: &Script{Turns: []Turn{turn}}})
		for _, w := range wireenc.Wires {
			m, _, err := playInProcess(t, context.Background(), p, w, userReq("x"))
			if err != nil {
				t.Fatalf("%v: %v", w, err)
			}
			if len(m.Content) != 1 || string(m.Content[0].RawArgs) != got {
				t.Fatalf("%v: args %q arrived as %s", w, got, m.AppendJSON(nil))
			}
		}
	})
}
