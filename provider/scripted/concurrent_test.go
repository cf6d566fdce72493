package scripted

import (
	"context"
	"sync"
	"testing"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider/wireenc"
)

// Many goroutines share one Provider, as a load test does: pooled players
// and decoders never leak state from one stream into another.
func TestConcurrentStreams(t *testing.T) {
	shapesByName := shapes()
	var turns []Turn
	for _, name := range []string{"text", "text+tools", "thinking", "parallel"} {
		turns = append(turns, shapesByName[name])
	}
	s := &Script{Turns: turns}
	p := MustNew(Options{Script: s, Pick: Sequential(s)})
	play := modes(t, p)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mode := "inprocess"
			if g%2 == 1 {
				mode = "loopback"
			}
			w := wireenc.Wires[g%3]
			for i := 0; i < 40; i++ {
				m, _, err := play[mode](t, context.Background(), w, userReq("x"))
				if err != nil {
					t.Errorf("%s/%v: %v", mode, w, err)
					return
				}
				// Whatever turn it got, it must be one of the script's, whole.
				ok := false
				for k := range turns {
					if sameTurn(w, &turns[k], m) {
						ok = true
					}
				}
				if !ok {
					t.Errorf("%s/%v: message matches no turn: %s", mode, w, m.AppendJSON(nil))
					return
				}
			}
		}()
	}
	wg.Wait()
}

// sameTurn reports whether m has the text and tool calls of turn.
func sameTurn(w wireenc.Wire, turn *Turn, m *llm.Message) bool {
	var text, args string
	for _, st := range turn.Steps {
		switch st.Kind {
		case StepText:
			text += st.Text
		case StepTools:
			for _, c := range st.Calls {
				args += c.Args
			}
		}
	}
	var gotArgs string
	for _, i := range m.ToolCalls(nil) {
		gotArgs += string(m.Content[i].RawArgs)
	}
	return m.TextContent() == text && gotArgs == args
}
