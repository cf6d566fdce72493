package streamwrap

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider"
	"github.com/ocbench/ocbench/provider/synth"
	"github.com/ocbench/ocbench/streamwrap/repair"
)

// scriptStream is a resettable provider stand-in that builds its message as
// a decoder does: a text block, then a tool call whose argument fragments
// are appended to RawArgs and decided at toolcall_end.
type scriptStream struct {
	text  [][]byte
	frags [][]byte
	name  string
	id    string
	step  int
	ev    llm.Event
	msg   llm.Message
}

func (s *scriptStream) reset() {
	s.step = 0
	s.msg.Reset()
	s.msg.Role = llm.RoleAssistant
	s.msg.API, s.msg.Provider, s.msg.Model = "openai-completions", "openai-compatible", "m"
}

func (s *scriptStream) Next() bool {
	n := s.step
	s.step++
	nt, nf := len(s.text), len(s.frags)
	s.ev = llm.Event{}
	switch {
	case n == 0:
		s.ev.Type = llm.EventStart
	case n == 1:
		s.msg.AddBlock(llm.BlockText)
		s.ev.Type = llm.EventTextStart
	case n < 2+nt:
		b := &s.msg.Content[0]
		b.Text = append(b.Text, s.text[n-2]...)
		s.ev = llm.Event{Type: llm.EventTextDelta, Delta: s.text[n-2]}
	case n == 2+nt:
		s.ev = llm.Event{Type: llm.EventTextEnd}
	case n == 3+nt:
		i, b := s.msg.AddBlock(llm.BlockToolCall)
		b.ID = append(b.ID, s.id...)
		b.Name = append(b.Name, s.name...)
		s.ev = llm.Event{Type: llm.EventToolCallStart, ContentIndex: i}
	case n < 4+nt+nf:
		b := &s.msg.Content[1]
		d := s.frags[n-4-nt]
		b.RawArgs = append(b.RawArgs, d...)
		s.ev = llm.Event{Type: llm.EventToolCallDelta, ContentIndex: 1, Delta: d}
	case n == 4+nt+nf:
		b := &s.msg.Content[1]
		if len(b.Arguments) == 0 && repair.Valid(b.RawArgs) {
			b.Arguments = append(b.Arguments, b.RawArgs...)
		}
		s.ev = llm.Event{Type: llm.EventToolCallEnd, ContentIndex: 1}
	case n == 5+nt+nf:
		s.msg.StopReason = llm.StopToolUse
		s.ev = llm.Event{Type: llm.EventDone, Reason: llm.StopToolUse}
	default:
		return false
	}
	return true
}

func (s *scriptStream) Event() *llm.Event     { return &s.ev }
func (s *scriptStream) Message() *llm.Message { return &s.msg }
func (s *scriptStream) Err() error            { return nil }
func (s *scriptStream) Close() error          { return nil }

func newScript() *scriptStream {
	s := &scriptStream{name: "read", id: "call_1"}
	for i := 0; i < 50; i++ {
		s.text = append(s.text, []byte(" word"))
	}
	for _, f := range []string{`{"pa`, `th":"a &amp; b.txt"`, `,"n":1`, `}`} {
		s.frags = append(s.frags, []byte(f))
	}
	return s
}

// fullChain returns a chain with every always-on decorator plus argument
// repair and entity decoding, and a request that turns both on.
func fullChain(base llm.StreamFunc) (llm.StreamFunc, *llm.Request) {
	sink := DiagnosticSinkFunc(func(e *ModelCallEvent) {})
	f := Chain(base, Options{
		LiveTools:     NewAllowlist("read", "write", "exec"),
		YieldDetected: func() bool { return false },
		Diagnostics:   sink,
		RunID:         "run",
	})
	req := &llm.Request{Model: llm.Model{ID: "m", API: "openai-completions", Provider: "openai-compatible", HTMLEntityArgs: true}}
	// A history with a tool call and its result, as every later turn has.
	call := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockToolCall, ID: []byte("call_0"), Name: []byte("read"), Arguments: []byte(`{"path":"a"}`)}}}
	res := llm.TextMessage(llm.RoleToolResult, "file a")
	res.ToolCallID, res.ToolName = "call_0", "read"
	req.Messages = []llm.Message{llm.TextMessage(llm.RoleUser, "read a"), call, res}
	return f, req
}

func TestChainZeroAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under -race")
	}
	script := newScript()
	base := func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		script.reset()
		return script, nil
	}
	f, req := fullChain(base)
	ctx := context.Background()
	run := func() {
		s, err := f(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		for s.Next() {
		}
		s.Close()
	}
	run()
	m := &script.msg
	if m.StopReason != llm.StopToolUse || string(m.Content[1].Arguments) != `{"path":"a & b.txt","n":1}` {
		t.Fatalf("chain result: %s", m.AppendJSON(nil))
	}
	if a := testing.AllocsPerRun(200, run); a != 0 {
		t.Fatalf("whole stream through Chain allocated %v times", a)
	}
}

// TestChainOrder checks the run order per event: trim (9) runs before
// repair (10), which runs before decode (11): the repair sees the trimmed
// name, the decode sees the repaired arguments.
func TestChainOrder(t *testing.T) {
	script := newScript()
	script.name = " functions.read "
	script.frags = [][]byte{[]byte(`.functions.read:0 {"path":"x &lt;y&gt;"}`), []byte(`x`)}
	base := func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		script.reset()
		return script, nil
	}
	f, req := fullChain(base)
	s, err := f(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	m, err := llm.Drain(s)
	if err != nil {
		t.Fatal(err)
	}
	b := m.Content[1]
	if string(b.Name) != "read" || string(b.Arguments) != `{"path":"x <y>"}` || m.StopReason != llm.StopToolUse {
		t.Fatalf("got name %q args %s stop %v", b.Name, b.Arguments, m.StopReason)
	}
	s.Close()
}

var benchWires = []struct {
	name string
	wire provider.Wire
	gen  func(int, uint64) []byte
}{
	{"openai-chat", provider.WireOpenAIChat, synth.OpenAIChatStream},
	{"anthropic", provider.WireAnthropic, synth.AnthropicStream},
	{"openai-responses", provider.WireOpenAIResponses, synth.ResponsesStream},
}

// BenchmarkDecodeChain decodes the synthetic 2,000-event streams through
// the whole chain (always-on decorators, repair, entity decoding).
func BenchmarkDecodeChain(b *testing.B) {
	for _, w := range benchWires {
		b.Run(w.name, func(b *testing.B) {
			body := w.gen(2000, 1)
			br := bytes.NewReader(body)
			d := provider.NewDecoder(w.wire, br, provider.Options{})
			base := func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
				br.Reset(body)
				d.Reset(w.wire, br, provider.Options{API: req.Model.API, Provider: req.Model.Provider})
				d.SetContext(ctx) // as the transport does
				return d, nil
			}
			f, req := fullChain(base)
			req.Model.API = w.wire.API()
			ctx := context.Background()
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			events := 0
			cpu0 := processCPU()
			for b.Loop() {
				s, _ := f(ctx, req)
				events = 0
				for s.Next() {
					events++
				}
				s.Close()
			}
			if d.Err() != nil {
				b.Fatal(d.Err())
			}
			reportCPU(b, cpu0, len(body), events)
		})
	}
}

// BenchmarkDecodeOnly is the same streams without the chain, for the ratio.
func BenchmarkDecodeOnly(b *testing.B) {
	for _, w := range benchWires {
		b.Run(w.name, func(b *testing.B) {
			body := w.gen(2000, 1)
			br := bytes.NewReader(body)
			d := provider.NewDecoder(w.wire, br, provider.Options{})
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			cpu0 := processCPU()
			events := 0
			for b.Loop() {
				br.Reset(body)
				d.Reset(w.wire, br, provider.Options{})
				events = 0
				for d.Next() {
					events++
				}
			}
			reportCPU(b, cpu0, len(body), events)
		})
	}
}

func TestDecodeChainSynthZeroAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under -race")
	}
	for _, w := range benchWires {
		body := w.gen(2000, 1)
		br := bytes.NewReader(body)
		d := provider.NewDecoder(w.wire, br, provider.Options{})
		base := func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
			br.Reset(body)
			d.Reset(w.wire, br, provider.Options{API: req.Model.API, Provider: req.Model.Provider})
			return d, nil
		}
		f, req := fullChain(base)
		req.Model.API = w.wire.API()
		run := func() {
			s, _ := f(context.Background(), req)
			for s.Next() {
			}
			s.Close()
		}
		run()
		if d.Message().StopReason == llm.StopError {
			t.Fatalf("%s: %s", w.name, d.Message().ErrorMessage)
		}
		if a := testing.AllocsPerRun(20, run); a != 0 {
			t.Errorf("%s: decode+chain of 2,000 events allocated %v times per stream", w.name, a)
		}
	}
}

// With the idle timeout over a decoder that reports its reads (the call's
// context, as the transport gives it), as a live turn runs the chain: no
// allocation per stream either.
func TestDecodeChainIdleZeroAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under -race")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, w := range benchWires {
		body := w.gen(2000, 1)
		br := bytes.NewReader(body)
		d := provider.NewDecoder(w.wire, br, provider.Options{})
		reported := false
		base := func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
			br.Reset(body)
			d.Reset(w.wire, br, provider.Options{API: req.Model.API, Provider: req.Model.Provider})
			d.SetContext(ctx)
			reported = d.ReportsActivity()
			return d, nil
		}
		f := Chain(base, Options{
			Profile:          repair.ProfileExtended,
			LiveTools:        NewAllowlist("read", "write", "exec"),
			IdleTimeout:      time.Minute,
			IdleReuseContext: true,
			Diagnostics:      DiagnosticSinkFunc(func(*ModelCallEvent) {}),
		})
		req := &llm.Request{Model: llm.Model{ID: "m", API: w.wire.API(), Provider: "openai-compatible"}}
		run := func() {
			s, _ := f(ctx, req)
			for s.Next() {
			}
			s.Close()
		}
		run()
		if !reported || d.Message().StopReason == llm.StopError {
			t.Fatalf("%s: reads reported %v, %s", w.name, reported, d.Message().ErrorMessage)
		}
		if a := testing.AllocsPerRun(20, run); a != 0 {
			t.Errorf("%s: decode+chain with the idle timeout allocated %v times per stream", w.name, a)
		}
	}
}

// BenchmarkChainOverhead runs a 2,000-event scripted stream (text deltas,
// then a tool call of 400 fragments) through the whole chain and through
// nothing, to isolate the chain's cost per event.
func BenchmarkChainOverhead(b *testing.B) {
	script := newScript()
	script.text = script.text[:0]
	for i := 0; i < 1590; i++ {
		script.text = append(script.text, []byte(" word"))
	}
	script.frags = [][]byte{[]byte(`{"path":"`)}
	for i := 0; i < 398; i++ {
		script.frags = append(script.frags, []byte("abcdefgh"))
	}
	script.frags = append(script.frags, []byte(`"}`))
	base := func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		script.reset()
		return script, nil
	}
	chained, req := fullChain(base)
	for _, c := range []struct {
		name string
		f    llm.StreamFunc
	}{{"bare", base}, {"chain", chained}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			events := 0
			cpu0 := processCPU()
			for b.Loop() {
				s, _ := c.f(context.Background(), req)
				events = 0
				for s.Next() {
					events++
				}
				s.Close()
			}
			reportCPU(b, cpu0, 0, events)
		})
	}
}

// reportCPU adds wall ns/event and the process-CPU metrics cpu-ns/event and
// cpu-MB/s (when size > 0).
func reportCPU(b *testing.B, cpu0 time.Duration, size, events int) {
	n := float64(b.N)
	if events > 0 {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n/float64(events), "ns/event")
	}
	cpu := processCPU() - cpu0
	if cpu <= 0 {
		return
	}
	if events > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/n/float64(events), "cpu-ns/event")
	}
	if size > 0 {
		b.ReportMetric(float64(size)*n/cpu.Seconds()/1e6, "cpu-MB/s")
	}
}
