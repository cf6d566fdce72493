package bench

import (
	"bytes"
	"context"
	"time"

	"github.com/ocbench/ocbench/bench/peerdata"
	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider"
	"github.com/ocbench/ocbench/streamwrap"
	"github.com/ocbench/ocbench/streamwrap/repair"
)

// chainScenarios decode each synthetic stream through the whole decorator
// chain as a live turn runs it: every always-on decorator, argument repair
// (the extended profile, with OpenClaw's wrapper where its gate allows),
// the idle timeout (keeping its contexts from call to call, as the engine
// does) and diagnostics. The decoder gets the call's context, as the
// transport gives it: its cancellation and its activity hook.
func chainScenarios() ([]Scenario, error) {
	var scs []Scenario
	for _, ws := range peerdata.WireStreams() {
		scs = append(scs, Scenario{
			Name: "decode+chain/" + ws.Name, Stage: "decode+chain", Input: ws.Name, Impl: Ours,
			Bytes: int64(len(ws.Stream.Body)), Events: int64(ws.Stream.Events),
			Setup: func() (func() error, func(), error) { return chainOp(ws), nil, nil },
		})
	}
	return scs, nil
}

// chainOp returns the operation of ws's decode+chain scenario: one whole
// stream through the chain, its first run checked against the generator.
func chainOp(ws peerdata.WireStream) func() error {
	var names []string
	for _, c := range ws.Stream.Calls {
		names = append(names, c.Name)
	}
	r := bytes.NewReader(ws.Stream.Body)
	d := provider.NewDecoder(ws.Wire, r, provider.Options{})
	base := func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		r.Reset(ws.Stream.Body)
		d.Reset(ws.Wire, r, provider.Options{API: req.Model.API, Provider: req.Model.Provider, Model: req.Model.ID})
		d.SetContext(ctx) // as the transport does
		return d, nil
	}
	calls := 0
	fn := streamwrap.Chain(base, streamwrap.Options{
		Profile:          repair.ProfileExtended,
		LiveTools:        streamwrap.NewAllowlist(names...),
		IdleTimeout:      time.Minute,
		IdleReuseContext: true,
		Diagnostics:      streamwrap.DiagnosticSinkFunc(func(*streamwrap.ModelCallEvent) { calls++ }),
	})
	req := &llm.Request{Model: llm.Model{ID: "synth", API: ws.Wire.API(), Provider: "openai-compatible"}}
	ctx := context.Background()
	first := true
	return func() error {
		st, err := fn(ctx, req)
		if err != nil {
			return err
		}
		m, err := llm.Drain(st)
		if err == nil && first {
			first = false
			err = checkDecoded(ws, m)
		}
		st.Close()
		return err
	}
}
