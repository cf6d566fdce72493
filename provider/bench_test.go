package provider

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider/synth"
)

var synthStreams = []struct {
	name string
	wire Wire
	gen  func(int, uint64) *synth.Stream
}{
	{"OpenAIChat", WireOpenAIChat, synth.OpenAIChat},
	{"Anthropic", WireAnthropic, synth.Anthropic},
	{"Responses", WireOpenAIResponses, synth.Responses},
}

// decodeStream drains d and returns the number of events.
func decodeStream(d *Decoder) int {
	n := 0
	for d.Next() {
		n++
	}
	return n
}

func BenchmarkDecode(b *testing.B) {
	for _, s := range synthStreams {
		b.Run(s.name, func(b *testing.B) {
			st := s.gen(2000, 1)
			br := bytes.NewReader(st.Body)
			d := NewDecoder(s.wire, br, Options{})
			b.SetBytes(int64(len(st.Body)))
			b.ReportAllocs()
			events := 0
			for b.Loop() {
				br.Reset(st.Body)
				d.Reset(s.wire, br, Options{})
				events = decodeStream(d)
			}
			if d.Err() != nil {
				b.Fatal(d.Err())
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(st.Events), "ns/event")
			_ = events
		})
	}
}

// BenchmarkFraming is the floor: reading the same bodies line by line
// with no JSON at all.
func BenchmarkFraming(b *testing.B) {
	for _, s := range synthStreams {
		b.Run(s.name, func(b *testing.B) {
			st := s.gen(2000, 1)
			br := bytes.NewReader(st.Body)
			d := NewDecoder(s.wire, br, Options{})
			b.SetBytes(int64(len(st.Body)))
			b.ReportAllocs()
			for b.Loop() {
				br.Reset(st.Body)
				d.Reset(s.wire, br, Options{})
				for {
					if _, err := d.readEvent(); err != nil {
						break
					}
				}
			}
		})
	}
}

func TestSynthStreamsDecode(t *testing.T) {
	for _, s := range synthStreams {
		t.Run(s.name, func(t *testing.T) {
			st := s.gen(2000, 7)
			r := decodeBytes(s.wire, st.Body, Options{})
			if err := checkInvariants(r, 0); err != nil {
				t.Fatal(err)
			}
			if r.err != nil || r.msg.StopReason != llm.StopToolUse {
				t.Fatalf("err %v stop %v", r.err, r.msg.StopReason)
			}
			if got := r.msg.TextContent(); got != st.Text {
				t.Errorf("text %q, want %q", got, st.Text)
			}
			var calls []int
			calls = r.msg.ToolCalls(calls)
			if len(calls) != len(st.Calls) {
				t.Fatalf("%d calls", len(calls))
			}
			for i, ci := range calls {
				b := &r.msg.Content[ci]
				want := st.Calls[i]
				if string(b.ID) != want.ID || string(b.Name) != want.Name || string(b.Arguments) != want.Args {
					t.Errorf("call %d: %s %s %s", i, b.ID, b.Name, b.Arguments)
				}
			}
			u := r.msg.Usage
			if u.Input != st.Usage.Input || u.Output != st.Usage.Output || u.CacheRead != st.Usage.CacheRead ||
				u.CacheWrite != st.Usage.CacheWrite || u.TotalTokens != st.Usage.TotalTokens {
				t.Errorf("usage %+v, want %+v", u, st.Usage)
			}
		})
	}
}

// TestDecoderZeroAllocs pins the hot path: after a warm-up, Reset plus
// decoding a whole 2,000-event stream allocates nothing.
func TestDecoderZeroAllocs(t *testing.T) {
	for _, s := range synthStreams {
		t.Run(s.name, func(t *testing.T) {
			st := s.gen(2000, 1)
			br := bytes.NewReader(st.Body)
			d := NewDecoder(s.wire, br, Options{})
			run := func() {
				br.Reset(st.Body)
				d.Reset(s.wire, br, Options{})
				decodeStream(d)
			}
			run()
			run()
			if allocs := testing.AllocsPerRun(20, run); allocs != 0 {
				t.Fatalf("%v allocations per stream, want 0", allocs)
			}
			if d.Err() != nil {
				t.Fatal(d.Err())
			}
		})
	}
}

// Recorded streams are zero-alloc too once warm (each reuses its decoder).
func TestRecordedZeroAllocs(t *testing.T) {
	for _, c := range recordedCases {
		if c.stop == llm.StopError {
			continue // error paths build error values
		}
		body := readStream(t, c.file)
		br := bytes.NewReader(body)
		d := NewDecoder(c.wire, br, Options{})
		run := func() {
			br.Reset(body)
			d.Reset(c.wire, br, Options{})
			decodeStream(d)
		}
		run()
		if allocs := testing.AllocsPerRun(20, run); allocs != 0 {
			t.Errorf("%s: %v allocations per stream", c.file, allocs)
		}
	}
}

// Truncating the synthetic streams (parallel tool calls, escapes,
// non-ASCII) anywhere keeps every decoded block a prefix of the full one.
func TestSynthTruncated(t *testing.T) {
	for _, s := range synthStreams {
		t.Run(s.name, func(t *testing.T) {
			// 40 events still hold every kind the generator makes (text
			// deltas, two tool calls in several fragments, usage, the stop),
			// at a sixth of the cost of 120: the cuts are quadratic in the
			// stream's length. Every byte of the first and last 512 is cut
			// (the stream's opening events; the stop and usage), and every
			// fifth byte between, which cuts every event of the middle at
			// several offsets.
			st := s.gen(40, 3)
			full := decodeBytes(s.wire, st.Body, Options{})
			d := NewDecoder(s.wire, nil, Options{})
			tail := max(len(st.Body)-512, 0)
			next := func(i int) int {
				if i < 512 || i >= tail {
					return i + 1
				}
				return i + 5
			}
			for i := 0; i < len(st.Body); i = next(i) {
				d.Reset(s.wire, bytes.NewReader(st.Body[:i]), Options{})
				r := drain(d)
				if err := checkInvariants(r, 0); err != nil {
					t.Fatalf("cut at %d: %v", i, err)
				}
				for j := range r.msg.Content {
					got, want := &r.msg.Content[j], &full.msg.Content[j]
					if !bytes.HasPrefix(want.Text, got.Text) || !bytes.HasPrefix(want.RawArgs, got.RawArgs) {
						t.Fatalf("cut at %d: block %d is not a prefix", i, j)
					}
				}
			}
		})
	}
}

// BenchmarkClientE2E sends a request over loopback HTTP (keep-alive) and
// decodes the 2,000-event answer: the transport's whole cost per stream.
func BenchmarkClientE2E(b *testing.B) {
	for _, s := range synthStreams {
		b.Run(s.name, func(b *testing.B) {
			st := s.gen(2000, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = w.Write(st.Body)
			}))
			defer srv.Close()
			c, err := NewClient(WithGetenv(func(string) string { return "" }))
			if err != nil {
				b.Fatal(err)
			}
			req := &llm.Request{
				Model:    llm.Model{ID: "m", API: s.wire.API(), Provider: "local", BaseURL: srv.URL},
				Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "go")},
			}
			b.SetBytes(int64(len(st.Body)))
			b.ReportAllocs()
			for b.Loop() {
				stream, err := c.Stream(context.Background(), req)
				if err != nil {
					b.Fatal(err)
				}
				for stream.Next() {
				}
				if err := stream.Err(); err != nil {
					b.Fatal(err)
				}
				stream.Close()
			}
		})
	}
}

// BenchmarkDecodeShort decodes short (30-event) streams with one reused
// decoder, as the gateway's pooled decoders do: "fresh" learns its shapes
// in every stream (the decoder forgets them, and the events it scanned,
// first), "kept" meets the shapes it kept from the previous stream, and
// "otherIDs" alternates with a stream whose ids differ (shapes holding
// them cannot match).
func BenchmarkDecodeShort(b *testing.B) {
	for _, s := range synthStreams {
		for _, mode := range []string{"fresh", "kept", "otherIDs"} {
			b.Run(s.name+"/"+mode, func(b *testing.B) {
				st := s.gen(30, 1)
				other := bytes.ReplaceAll(st.Body, []byte("SYNTH"), []byte("SYNTX"))
				br := bytes.NewReader(st.Body)
				d := NewDecoder(s.wire, br, Options{})
				b.SetBytes(int64(len(st.Body)))
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					body := st.Body
					if mode == "otherIDs" && i%2 == 1 {
						body = other
					}
					i++
					br.Reset(body)
					if mode == "fresh" {
						d.shapes.n, d.shapes.seenN = 0, 0 // nor what the last stream scanned
					}
					d.Reset(s.wire, br, Options{})
					decodeStream(d)
				}
			})
		}
	}
}

// proxiedChat is a chat stream as an upstream sends one turn to the
// gateway: a role chunk, textChunks content deltas, one tool call (its
// head, then argChunks argument fragments), the finish chunk, the usage
// chunk and [DONE]; id and created are the stream's own.
func proxiedChat(id string, created, textChunks, argChunks int) []byte {
	head := `data: {"id":"` + id + `","object":"chat.completion.chunk","created":` + strconv.Itoa(created) +
		`,"model":"gpt-4.1-2025-04-14","system_fingerprint":"fp_de604bd877","choices":[`
	choice := func(delta, finish string) string {
		return `{"index":0,"delta":` + delta + `,"logprobs":null,"finish_reason":` + finish + `}`
	}
	var b []byte
	b = append(b, head+choice(`{"role":"assistant","content":"","refusal":null}`, "null")+"]}\n\n"...)
	words := []string{"Reading", " the", " file", " now", ",", " one", " moment", ".", " It", " holds", " \"quoted\"", " text"}
	for i := range textChunks {
		b = append(b, head+choice(`{"content":`+strconv.Quote(words[i%len(words)])+`}`, "null")+"]}\n\n"...)
	}
	b = append(b, head+choice(`{"tool_calls":[{"index":0,"id":"call_`+id[len(id)-8:]+`","type":"function","function":{"name":"read","arguments":""}}]}`, "null")+"]}\n\n"...)
	args := []string{`{\"`, `path`, `\": `, `\"src/`, `main`, `.go`, `\", `, `\"limit`, `\": `, `200}`}
	for i := range argChunks {
		b = append(b, head+choice(`{"tool_calls":[{"index":0,"function":{"arguments":"`+args[i%len(args)]+`"}}]}`, "null")+"]}\n\n"...)
	}
	b = append(b, head+choice(`{}`, `"tool_calls"`)+"]}\n\n"...)
	b = append(b, head+`],"usage":{"prompt_tokens":1843,"completion_tokens":61,"total_tokens":1904,"prompt_tokens_details":{"cached_tokens":1536},"completion_tokens_details":{"reasoning_tokens":0}}}`+"\n\n"...)
	return append(b, "data: [DONE]\n\n"...)
}

// decodePooled decodes the stream r with a pooled decoder, as the
// gateway does one upstream stream (callgrind: --toggle-collect on it).
func decodePooled(w Wire, r io.Reader, o Options) error {
	d := GetDecoder(w, r, o)
	defer PutDecoder(d)
	if decodeStream(d) == 0 && d.Err() == nil {
		return io.ErrUnexpectedEOF
	}
	return d.Err()
}

// BenchmarkDecodeProxied decodes short chat streams (34 chunks: role,
// 20 text deltas, a tool call in 10 fragments, finish, usage) the way
// the gateway does per proxied stream: a decoder from the pool, its
// options, drained, put back. "sameIDs" replays one stream (the scripted
// upstream's, whose id stands still); "newIDs" gives every stream its
// own id and creation time, as a real upstream does.
func BenchmarkDecodeProxied(b *testing.B) {
	const streams = 16
	var same, fresh [streams][]byte
	for i := range streams {
		same[i] = proxiedChat("chatcmpl-BENCH000000000000000000000000", 1770933892, 20, 10)
		fresh[i] = proxiedChat("chatcmpl-BENCH"+strconv.Itoa(10000000+i*7919)+"00000000000000000000", 1770933892+i, 20, 10)
	}
	o := Options{API: "openai-completions", Provider: "upstream", Model: "m1", Reasoning: true}
	for _, mode := range []struct {
		name   string
		bodies *[streams][]byte
	}{{"sameIDs", &same}, {"newIDs", &fresh}} {
		b.Run(mode.name, func(b *testing.B) {
			var br bytes.Reader
			b.SetBytes(int64(len(mode.bodies[0])))
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				br.Reset(mode.bodies[i%streams])
				i++
				if err := decodePooled(WireOpenAIChat, &br, o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
