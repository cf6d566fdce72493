package bench

import (
	"bytes"
	"fmt"

	"github.com/ocbench/ocbench/bench/peerdata"
	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider"
)

// checkDecoded fails when m is not what the generator put in the stream:
// a scenario that decodes wrongly must not report a speed.
func checkDecoded(ws peerdata.WireStream, m *llm.Message) error {
	if m.StopReason == llm.StopError || m.StopReason == llm.StopAborted {
		return fmt.Errorf("%s: stream failed: %s", ws.Name, m.ErrorMessage)
	}
	if got := m.TextContent(); got != ws.Stream.Text {
		return fmt.Errorf("%s: decoded text differs (%d vs %d bytes)", ws.Name, len(got), len(ws.Stream.Text))
	}
	calls := m.ToolCalls(nil)
	if len(calls) != len(ws.Stream.Calls) {
		return fmt.Errorf("%s: %d tool calls, want %d", ws.Name, len(calls), len(ws.Stream.Calls))
	}
	return nil
}

func decodeScenarios() ([]Scenario, error) {
	var scs []Scenario
	for _, ws := range peerdata.WireStreams() {
		scs = append(scs, Scenario{
			Name: "decode/" + ws.Name, Stage: "decode", Input: ws.Name, Impl: Ours,
			Bytes: int64(len(ws.Stream.Body)), Events: int64(ws.Stream.Events),
			Setup: func() (func() error, func(), error) {
				r := bytes.NewReader(ws.Stream.Body)
				d := provider.NewDecoder(ws.Wire, r, provider.Options{})
				first := true
				return func() error {
					r.Reset(ws.Stream.Body)
					d.Reset(ws.Wire, r, provider.Options{})
					m, err := llm.Drain(d)
					if err != nil {
						return err
					}
					if first {
						first = false
						return checkDecoded(ws, m)
					}
					return nil
				}, nil, nil
			},
		})
	}
	return scs, nil
}
