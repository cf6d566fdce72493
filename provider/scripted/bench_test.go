package scripted

import (
	"bytes"
	"context"
	"fmt"
	"github.com/ocbench/ocbench/internal/cputime"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider"
	"github.com/ocbench/ocbench/provider/wireenc"
)

// longScript returns a turn of about n events: text deltas of 4 bytes,
// then a tool call whose arguments arrive 4 bytes at a time.
func longScript(n int) *Script {
	args := `{"path":"` + strings.Repeat("d/", n/4) + `f.txt"}`
	text := strings.Repeat("tok ", n*3/4)
	return &Script{Chunk: 4, Turns: []Turn{{
		Steps: []Step{Text(text).Chunked(4), ToolCall("call_1", "read", args).Chunked(4)},
		Usage: llm.Usage{Input: 1000, Output: int64(n), CacheRead: 4096},
	}}}
}

// drain plays one in-process stream to its end and returns its event count.
func drain(tb testing.TB, p *Provider, req *llm.Request) int {
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		tb.Fatal(err)
	}
	n := 0
	for s.Next() {
		n++
	}
	if s.Err() != nil {
		tb.Fatal(s.Err())
	}
	s.Close()
	return n
}

// A scripted in-process stream allocates nothing per event once warm: the
// only allocation is the stream handle, whatever the stream's length.
func TestInProcessStreamAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector")
	}
	for _, w := range wireenc.Wires {
		var perStream [2]float64
		for i, n := range []int{20, 2000} {
			p := MustNew(Options{Script: longScript(n)})
			req := userReq("go")
			req.Model.API = w.API()
			drain(t, p, req) // warm the pools
			drain(t, p, req)
			// A GC in the middle empties the pools; take the best of three.
			perStream[i] = 1e9
			for range 3 {
				perStream[i] = min(perStream[i], testing.AllocsPerRun(50, func() { drain(t, p, req) }))
			}
		}
		if perStream[1] > perStream[0] || perStream[1] > 1 {
			t.Errorf("%v: %v allocations for a 20-event stream, %v for 2000 events; want at most 1 and no growth with events",
				w, perStream[0], perStream[1])
		}
	}
}

func BenchmarkInProcessStream(b *testing.B) {
	for _, w := range wireenc.Wires {
		b.Run(w.String(), func(b *testing.B) {
			p := MustNew(Options{Script: longScript(2000)})
			req := userReq("go")
			req.Model.API = w.API()
			events := drain(b, p, req)
			body := encodeTurn(b, p, w, &longScript(2000).Turns[0])
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu := cputime.Thread()
			for b.Loop() {
				drain(b, p, req)
			}
			cpu = cputime.Thread() - cpu
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*events), "ns/event")
			if cpu > 0 {
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*events), "cpu-ns/event")
			}
			b.ReportMetric(float64(events), "events/op")
		})
	}
}

func BenchmarkLoopbackStream(b *testing.B) {
	p := MustNew(Options{Script: longScript(200)})
	srv, err := p.Start()
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	for _, w := range wireenc.Wires {
		b.Run(w.String(), func(b *testing.B) {
			body := requestBody(w, userReq("go"), true)
			b.ReportAllocs()
			var n int64
			for b.Loop() {
				resp, err := post(context.Background(), srv.URL, w, body)
				if err != nil {
					b.Fatal(err)
				}
				k, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				n = k
			}
			b.SetBytes(n)
		})
	}
}

func BenchmarkEncodeOnly(b *testing.B) {
	for _, w := range wireenc.Wires {
		b.Run(fmt.Sprint(w), func(b *testing.B) {
			p := MustNew(Options{})
			turn := &longScript(2000).Turns[0]
			var bd body
			b.ReportAllocs()
			for b.Loop() {
				bd.pl.reset(w, p.meta(w, nil), wireenc.Options{}, &Script{Chunk: 4}, turn, 0)
				bd.off, bd.eof, bd.produced = 0, false, 0
				n, _ := io.Copy(io.Discard, &bd)
				b.SetBytes(n)
			}
		})
	}
}

// BenchmarkDecodeOnly decodes the same bodies from memory with no script
// playing: InProcessStream minus this is the scripted provider's own cost.
func BenchmarkDecodeOnly(b *testing.B) {
	for _, w := range wireenc.Wires {
		b.Run(w.String(), func(b *testing.B) {
			p := MustNew(Options{})
			body := encodeTurn(b, p, w, &longScript(2000).Turns[0])
			pw, _ := provider.ParseWire(w.String())
			br := bytes.NewReader(body)
			d := provider.NewDecoder(pw, br, provider.Options{})
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu := cputime.Thread()
			n := 0
			for b.Loop() {
				br.Reset(body)
				d.Reset(pw, br, provider.Options{})
				for d.Next() {
					n++
				}
			}
			if cpu = cputime.Thread() - cpu; cpu > 0 {
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(n), "cpu-ns/event")
			}
		})
	}
}
