package scripted

import (
	"bytes"
	"testing"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider"
	"github.com/ocbench/ocbench/provider/wireenc"
)

func TestRenderDecodesToTheTurn(t *testing.T) {
	turn := &Turn{Steps: []Step{Text("hi"), Stall(0), ToolCall("call_1", "read", `{"path":"a"}`).Chunked(2)}}
	for _, w := range []wireenc.Wire{wireenc.OpenAIChat, wireenc.OpenAIResponses, wireenc.Anthropic} {
		body := Render(nil, w, wireenc.Meta{ID: "x", Model: "m"}, turn)
		pw, _ := provider.ParseWire(w.String())
		m, err := llm.Drain(provider.NewDecoder(pw, bytes.NewReader(body), provider.Options{}))
		if err != nil || m.TextContent() != "hi" || m.StopReason != llm.StopToolUse {
			t.Fatalf("%v: %v %q %v", w, err, m.TextContent(), m.StopReason)
		}
		if got := string(m.Content[m.ToolCalls(nil)[0]].Arguments); got != `{"path":"a"}` {
			t.Errorf("%v: arguments %s", w, got)
		}
		cut := *turn
		cut.CutAt = len(body) / 2
		if n := len(Render(nil, w, wireenc.Meta{}, &cut)); n != cut.CutAt {
			t.Errorf("%v: cut body has %d bytes, want %d", w, n, cut.CutAt)
		}
	}
}
