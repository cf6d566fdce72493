package streamwrap

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider"
	"github.com/ocbench/ocbench/provider/synth"
	"github.com/ocbench/ocbench/streamwrap/repair"
)

// opaque hides every optional method of a stream (Step, passThrough, ...):
// the layer above reaches it through Next, Event and Message.
type opaque struct{ llm.Stream }

// guardedChain is Chain's always-on part under the extended profile, with
// argument repair and entity decoding, built layer by layer; with hide, each layer sees the one below as opaque, so
// no pass-through layer is skipped.
func guardedChain(base llm.StreamFunc, hide bool) llm.StreamFunc {
	return guardedChainRepair(base, hide, true)
}

// guardedChainRepair is guardedChain, without the argument repair when
// withRepair is false (the entity stage then passes ArgsOnly deltas).
func guardedChainRepair(base llm.StreamFunc, hide, withRepair bool) llm.StreamFunc {
	wrap := func(f llm.StreamFunc) llm.StreamFunc {
		if !hide {
			return f
		}
		return func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
			s, err := f(ctx, req)
			if s != nil {
				s = opaque{s}
			}
			return s, err
		}
	}
	tools := NewAllowlist("read", "write", "exec", "lookup", "search")
	f := wrap(argumentStage(base, repair.ProfileExtended, true))
	f = wrap(PromoteStandaloneTextToolCalls(f, tools))
	f = wrap(TrimToolCallNames(f, TrimConfig{Allowed: tools, UnknownToolThreshold: DefaultUnknownToolThreshold}))
	if withRepair {
		f = wrap(RepairMalformedToolCallArguments(f, RepairConfig{}))
	}
	f = wrap(DecodeHTMLEntityArguments(f))
	f = wrap(handleSensitiveStopReason(f, true))
	f = wrap(IdleTimeout(f, IdleConfig{Timeout: time.Minute}))
	return DiagnosticModelCallEvents(f, DiagnosticsConfig{Sink: DiagnosticSinkFunc(func(*ModelCallEvent) {})})
}

// record runs one stream and writes every event and the final message;
// with calls, also every tool call of the live message at each event.
func record(f llm.StreamFunc, req *llm.Request, calls ...bool) []byte {
	var out []byte
	s, err := f(context.Background(), req)
	if err != nil {
		return fmt.Appendf(out, "error %v", err)
	}
	for s.Next() {
		e := s.Event()
		out = fmt.Appendf(out, "%v %d %q %v", e.Type, e.ContentIndex, e.Delta, e.Reason)
		if b := s.Message().Block(e.ContentIndex); b != nil && e.Type == llm.EventToolCallEnd {
			out = fmt.Appendf(out, " %s %q", b.Name, b.Arguments)
		}
		if len(calls) > 0 && calls[0] {
			for i := range s.Message().Content {
				if b := &s.Message().Content[i]; b.Type == llm.BlockToolCall {
					out = fmt.Appendf(out, " [%d %q %q %q]", i, b.ID, b.Name, b.Arguments)
				}
			}
		}
		out = append(out, '\n')
	}
	m := s.Message()
	m.Timestamp = 0 // the decoder's clock
	out = m.AppendJSON(out)
	out = fmt.Appendf(out, "\nerr %v\n", s.Err())
	s.Close()
	return out
}

// Skipping the pass-through layers (the stop-reason, entity, repair,
// trimming and argument stages) changes nothing a consumer sees: events, final message and error, over
// whole streams of every wire and the same streams cut anywhere (streams
// that end in errors, without a terminal event, inside tool calls).
func TestPassThroughMatchesLayers(t *testing.T) {
	bodies := []struct {
		wire provider.Wire
		body []byte
	}{
		{provider.WireOpenAIChat, synth.OpenAIChatStream(60, 3)},
		{provider.WireAnthropic, synth.AnthropicStream(60, 3)},
		{provider.WireOpenAIResponses, synth.ResponsesStream(60, 3)},
	}
	// Anthropic tool calls: the second with arguments cut short, or with a
	// stop reason pi-ai does not know.
	anth := func(args, stop string) []byte {
		return []byte(anthStart +
			"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\" read \",\"input\":{}}}\n\n" +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"path\\\": \\\"a\\\"}\"}}\n\n" +
			"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n" +
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_2\",\"name\":\"write\",\"input\":{}}}\n\n" +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"" + args + "\"}}\n\n" +
			"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":2}\n\n" +
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"" + stop + "\"},\"usage\":{\"output_tokens\":5}}\n\n" +
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	}
	bodies = append(bodies, struct {
		wire provider.Wire
		body []byte
	}{provider.WireAnthropic, anth("{bad", "tool_use")}, struct {
		wire provider.Wire
		body []byte
	}{provider.WireAnthropic, anth("{}", "sensitive")})
	req := &llm.Request{Model: llm.Model{ID: "m", Provider: "openai-compatible"}}
	for _, b := range bodies {
		req.Model.API = b.wire.API()
		for cut := len(b.body); cut > 0; cut -= 1 + cut/40 {
			body := b.body[:cut]
			base := func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
				d := provider.NewDecoder(b.wire, bytes.NewReader(body), provider.Options{API: req.Model.API})
				d.SetContext(ctx) // as the transport does
				return d, nil
			}
			fused, layered := record(guardedChain(base, false), req), record(guardedChain(base, true), req)
			if !bytes.Equal(fused, layered) {
				t.Fatalf("%v cut at %d: with pass-through layers skipped\n%s\nlayer by layer\n%s", b.wire, cut, fused, layered)
			}
			samePassThrough(t, b.wire, body)
		}
	}
}

// samePassThrough fails t unless the chain with and without repair gives
// the same events, live tool calls at every event, final message and
// error whether its pass-through layers are skipped or not: skipping the
// trimming and entity stages on ArgsOnly deltas is invisible.
func samePassThrough(t *testing.T, wire provider.Wire, body []byte) {
	t.Helper()
	req := &llm.Request{Model: llm.Model{ID: "m", Provider: "openai-compatible", API: wire.API()}}
	base := func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		d := provider.NewDecoder(wire, bytes.NewReader(body), provider.Options{API: req.Model.API})
		d.SetContext(ctx)
		return d, nil
	}
	for _, withRepair := range []bool{true, false} {
		// A tool call without an id gets a random fallback id in each.
		fused := fallbackIDs.ReplaceAll(record(guardedChainRepair(base, false, withRepair), req, true), []byte("call_<random>"))
		layered := fallbackIDs.ReplaceAll(record(guardedChainRepair(base, true, withRepair), req, true), []byte("call_<random>"))
		if !bytes.Equal(fused, layered) {
			t.Fatalf("%v (repair %v): with pass-through layers skipped\n%s\nlayer by layer\n%s", wire, withRepair, fused, layered)
		}
	}
}

// fallbackIDs matches the ids trimming generates (appendFallbackID).
var fallbackIDs = regexp.MustCompile(`call_[0-9a-f]{24}`)

// FuzzPassThrough: any body of any wire gives the same through the fused
// chain as layer by layer (samePassThrough).
func FuzzPassThrough(f *testing.F) {
	f.Add(uint8(0), synth.OpenAIChatStream(12, 5))
	f.Add(uint8(1), synth.AnthropicStream(12, 5))
	f.Add(uint8(2), synth.ResponsesStream(12, 5))
	f.Add(uint8(1), synth.AnthropicStream(40, 7))
	f.Add(uint8(2), synth.ResponsesStream(40, 7))
	wires := []provider.Wire{provider.WireOpenAIChat, provider.WireAnthropic, provider.WireOpenAIResponses}
	f.Fuzz(func(t *testing.T, w uint8, body []byte) {
		samePassThrough(t, wires[int(w)%len(wires)], body)
	})
}

// FuzzTrimSteady: whenever trimming takes its fast path on an argument
// delta (steady), a full normalize of the live message would change no
// tool call's name or id, nor the ids' pass: the fast path skips nothing.
func FuzzTrimSteady(f *testing.F) {
	f.Add(uint8(0), synth.OpenAIChatStream(12, 5))
	f.Add(uint8(1), synth.AnthropicStream(12, 5))
	f.Add(uint8(2), synth.ResponsesStream(40, 7))
	f.Add(uint8(0), []byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"[tool:read]{\\\"path\\\":\\\"a\\\"}\"}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"))
	wires := []provider.Wire{provider.WireOpenAIChat, provider.WireAnthropic, provider.WireOpenAIResponses}
	f.Fuzz(func(t *testing.T, w uint8, body []byte) {
		wire := wires[int(w)%len(wires)]
		base := func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
			return provider.NewDecoder(wire, bytes.NewReader(body), provider.Options{API: req.Model.API, Provider: req.Model.Provider}), nil
		}
		tools := NewAllowlist("read", "write", "exec", "lookup", "search")
		f := argumentStage(base, repair.ProfileExtended, true)
		f = PromoteStandaloneTextToolCalls(f, tools)
		f = TrimToolCallNames(f, TrimConfig{Allowed: tools, UnknownToolThreshold: DefaultUnknownToolThreshold})
		st, err := f(context.Background(), &llm.Request{Model: llm.Model{API: wire.API()}})
		if err != nil {
			t.Skip()
		}
		ts := st.(*trimStream)
		defer ts.Close()
		for {
			ev, msg, ok := ts.next.Step()
			if ok && ev.Type == llm.EventToolCallDelta && ts.views == nil && ts.steady(msg, ev.ContentIndex) {
				before := record1(msg)
				calls := ts.calls
				ts.normalize(msg)
				if after := record1(msg); after != before || ts.calls != calls {
					t.Fatalf("steady at %d, but normalize changed %s into %s (calls %d -> %d)", ev.ContentIndex, before, after, calls, ts.calls)
				}
			}
			if _, _, ok = ts.settle(ev, msg, ok); !ok {
				return
			}
		}
	})
}

// record1 writes every tool call's index, id and name.
func record1(m *llm.Message) string {
	var out []byte
	for i := range m.Content {
		if b := &m.Content[i]; b.Type == llm.BlockToolCall {
			out = fmt.Appendf(out, "[%d %q %q]", i, b.ID, b.Name)
		}
	}
	return string(out)
}
