package wireenc_test

import (
	"bytes"
	"github.com/ocbench/ocbench/internal/cputime"
	"runtime"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider/wireenc"
	"github.com/valyala/fastjson"
)

func longMessage() *llm.Message {
	return msg(llm.StopToolUse, usage, thinking(strings.Repeat("think ", 200), "sig"), text(strings.Repeat("word ", 400)),
		call("call_1", "read", `{"path":"`+strings.Repeat("d/", 300)+`f"}`), call("call_2", "exec", `{"command":"ls"}`))
}

// Encoding a whole stream into a reused buffer allocates nothing.
func TestAppendEventAllocatesNothing(t *testing.T) {
	m := longMessage()
	for _, w := range wireenc.Wires {
		for _, mode := range []wireenc.ToolArgsMode{wireenc.StreamArgs, wireenc.BufferArgs} {
			var e wireenc.Encoder
			opts := wireenc.Options{ToolArgs: mode, Ping: true}
			meta := wireenc.Meta{ID: "resp_abc", Model: "m", Created: 1}
			e.Reset(w, meta, opts)
			buf := e.AppendStream(nil, m, 4)
			allocs := testing.AllocsPerRun(20, func() {
				e.Reset(w, meta, opts)
				buf = e.AppendStream(buf[:0], m, 4)
				buf = e.AppendMessage(buf[:0], m, "")
			})
			if allocs != 0 {
				t.Errorf("%v mode %d: %v allocations per stream", w, mode, allocs)
			}
		}
	}
}

func BenchmarkAppendStream(b *testing.B) {
	m := longMessage()
	for _, w := range wireenc.Wires {
		b.Run(w.String(), func(b *testing.B) {
			var e wireenc.Encoder
			meta := wireenc.Meta{ID: "x", Model: "m", Created: 1}
			e.Reset(w, meta, wireenc.Options{})
			buf := e.AppendStream(nil, m, 4)
			events := 0
			for i := range m.Content {
				events += 2 + (len(m.Content[i].Text)+len(m.Content[i].RawArgs)+3)/4
			}
			b.SetBytes(int64(len(buf)))
			b.ReportAllocs()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu := cputime.Thread()
			for b.Loop() {
				e.Reset(w, meta, wireenc.Options{})
				buf = e.AppendStream(buf[:0], m, 4)
			}
			cpu = cputime.Thread() - cpu
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*events), "ns/event")
			if cpu > 0 {
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*events), "cpu-ns/event")
			}
		})
	}
}

// FuzzRoundTrip: any text, thinking, name and argument text (valid
// UTF-8) encoded on any wire decodes back to the same message.
func FuzzRoundTrip(f *testing.F) {
	f.Add(uint8(0), "hello", "think", "read", `{"path":"a"}`, 3)
	f.Add(uint8(1), "é — \u2028 \x00", "", "functions. read ", "```json\n{'a': True,}\n```", 1)
	f.Add(uint8(2), "", "x", "", "", 0)
	f.Fuzz(func(t *testing.T, wire uint8, txt, think, name, args string, chunk int) {
		w := wireenc.Wires[int(wire)%len(wireenc.Wires)]
		if !validUTF8(txt) || !validUTF8(think) || !validUTF8(name) || !validUTF8(args) {
			t.Skip()
		}
		if chunk < 0 || chunk > 100 {
			chunk = 0
		}
		var blocks []llm.Block
		if think != "" && w != wireenc.OpenAIChat {
			blocks = append(blocks, thinking(think, "sig"))
		}
		if txt != "" {
			blocks = append(blocks, text(txt))
		}
		blocks = append(blocks, call("call_1", name, args))
		m := msg(llm.StopToolUse, usage, blocks...)
		e := wireenc.NewEncoder(w, wireenc.Meta{ID: "id", Model: "m"}, wireenc.Options{})
		body := e.AppendStream(nil, m, chunk)
		got, _, err := decode(t, w, body)
		if err != nil {
			t.Fatalf("%v: %v\n%s", w, err, body)
		}
		if bytes.Count(body, []byte("\n\n")) == 0 {
			t.Fatal("no events")
		}
		compare(t, w, m, got)
	})
}

// FuzzAppendEvent: any sequence of events, in any order and with any
// content index, encodes without panicking into well-formed SSE whose data
// lines are JSON (or the chat [DONE] sentinel).
func FuzzAppendEvent(f *testing.F) {
	f.Add(uint8(0), []byte{1, 2, 3, 3, 4, 11}, []byte("hello"))
	f.Add(uint8(1), []byte{1, 8, 9, 9, 10, 2, 3, 4, 11}, []byte(`{"a":1}`))
	f.Add(uint8(2), []byte{1, 5, 6, 7, 12, 200, 0}, []byte("\x00é"))
	f.Fuzz(func(t *testing.T, wire uint8, ops []byte, delta []byte) {
		w := wireenc.Wires[int(wire)%len(wireenc.Wires)]
		if len(ops) > 200 {
			ops = ops[:200]
		}
		var m llm.Message
		for i := 0; i < 4; i++ {
			_, b := m.AddBlock(llm.BlockType(i % 3))
			b.Text = append(b.Text, delta...)
			b.RawArgs = append(b.RawArgs, delta...)
			b.ID = append(b.ID, "id|item"...)
			b.Redacted = i == 1 && len(delta)%2 == 0
		}
		m.StopReason = llm.StopReason(len(delta) % 6)
		var e wireenc.Encoder
		e.Reset(w, wireenc.Meta{ID: "x", Model: "m"}, wireenc.Options{ToolArgs: wireenc.ToolArgsMode(len(ops) % 2), Ping: true})
		var out []byte
		for i, op := range ops {
			if op%7 == 0 {
				e.SetWireIndex(int(op)%6-1, int(op)%3-1)
			}
			ev := llm.Event{Type: llm.EventType(op % 13), ContentIndex: int(op/13) - 2, Delta: delta[:i%(len(delta)+1)]}
			out = e.AppendEvent(out, &ev, &m)
		}
		out = e.AppendError(out, "t", string(delta))
		out = e.AppendDoneRaw(out, &m, string(delta))
		for _, ev := range bytes.Split(out, []byte("\n\n")) {
			for _, line := range bytes.Split(ev, []byte("\n")) {
				data, ok := bytes.CutPrefix(line, []byte("data: "))
				if !ok || string(data) == "[DONE]" {
					continue
				}
				if err := fastjson.ValidateBytes(data); err != nil {
					t.Fatalf("%v: invalid data %q: %v", w, data, err)
				}
			}
		}
	})
}
