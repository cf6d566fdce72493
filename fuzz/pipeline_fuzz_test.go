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
// under the extended profile: whatever arrives, the stream ends, and a turn
// that hands tool calls to tools hands them JSON objects.
func FuzzPipeline(f *testing.F) {
	for i := uint64(0); i < 40; i++ {
		c := Generate(11, i)
		f.Add(uint8(c.Wire), c.Body, c.HTMLEntities)
	}
	f.Fuzz(func(t *testing.T, wire uint8, body []byte, entities bool) {
		c := &Case{Wire: provider.Wire(wire % 3), Tools: []string{"read", "write", "exec"}, HTMLEntities: entities, Body: body}
		var r runner
		m := r.turn(context.Background(), c, repair.ProfileExtended)
		if m.StopReason == llm.StopNone {
			t.Fatalf("stream ended without a stop reason: %s", m.AppendJSON(nil))
		}
		if m.StopReason != llm.StopToolUse {
			return
		}
		var p fastjson.Parser
		for _, ci := range m.ToolCalls(nil) {
			v, err := p.ParseBytes(m.Content[ci].Arguments)
			if err != nil || v.Type() != fastjson.TypeObject {
				t.Fatalf("executed arguments %q are not an object", m.Content[ci].Arguments)
			}
		}
	})
}
