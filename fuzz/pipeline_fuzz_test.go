package fuzz

import (
	"context"
	"testing"

	"github.com/valyala/fastjson"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider"
	"github.com/ocbench/ocbench/streamwrap/repair"
)

// FuzzPipeline feeds arbitrary bodies to a decoder and the whole chain
// under the extended profile and under the openclaw one (the decoder with
// @openclaw/ai's transport rules): whatever arrives, the stream ends, and a
// turn that hands tool calls to tools hands them JSON objects.
func FuzzPipeline(f *testing.F) {
	for i := uint64(0); i < 40; i++ {
		c := Generate(11, i)
		f.Add(uint8(c.Wire), c.Body, c.HTMLEntities, c.Reasoning)
	}
	f.Fuzz(func(t *testing.T, wire uint8, body []byte, entities, reasoning bool) {
		c := &Case{Wire: provider.Wire(wire % 3), Tools: []string{"read", "write", "exec"}, HTMLEntities: entities, Reasoning: reasoning, Body: body}
		for _, profile := range []repair.Profile{repair.ProfileExtended, repair.ProfileOpenClaw} {
			var r runner
			m := r.turn(context.Background(), c, profile)
			if m.StopReason == llm.StopNone {
				t.Fatalf("%v: stream ended without a stop reason: %s", profile, m.AppendJSON(nil))
			}
			if m.StopReason != llm.StopToolUse {
				continue
			}
			var p fastjson.Parser
			for _, ci := range m.ToolCalls(nil) {
				v, err := p.ParseBytes(m.Content[ci].Arguments)
				if err != nil || v.Type() != fastjson.TypeObject {
					t.Fatalf("%v: executed arguments %q are not an object", profile, m.Content[ci].Arguments)
				}
			}
		}
	})
}
