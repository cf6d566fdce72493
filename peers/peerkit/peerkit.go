// Package peerkit is what the peer packages of this module share: the
// result every stream decoder must rebuild, ocbench's own decoding of it,
// the agreement check run before any peer is timed and the BenchmarkPeers
// loop over the list package bench/peerdata declares for each peer
// package (peerdata.PeerPackages). It measures nothing by itself.
package peerkit

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/ocbench/ocbench/bench/peerdata"
	"github.com/ocbench/ocbench/provider"
)

// Decoded is what every decoder must rebuild from a stream: the text and
// each tool call's name and argument text, in order.
type Decoded struct {
	Text  string
	Names []string
	Args  []string
}

// Decoder is one peer's decoding of a whole stream body.
type Decoder func(body []byte) (Decoded, error)

// SSEResponse wraps a stream body as the HTTP response the SDKs read.
func SSEResponse(body []byte) *http.Response {
	return &http.Response{
		StatusCode: 200,
		Header:     http.Header{"Content-Type": []string{"text/event-stream"}},
		Body:       io.NopCloser(bytes.NewReader(body)),
	}
}

// Ours decodes body with ocbench's decoder.
func Ours(w provider.Wire, body []byte) (Decoded, error) {
	dec := provider.NewDecoder(w, bytes.NewReader(body), provider.Options{})
	for dec.Next() {
	}
	m := dec.Message()
	d := Decoded{Text: m.TextContent()}
	for _, i := range m.ToolCalls(nil) {
		d.Names = append(d.Names, string(m.Content[i].Name))
		d.Args = append(d.Args, string(m.Content[i].RawArgs))
	}
	return d, dec.Err()
}

// Package returns peerdata's declaration of the peer package at dir, failing
// tb when there is none.
func Package(tb testing.TB, dir string) peerdata.PeerPackage {
	tb.Helper()
	p, ok := peerdata.PeerPackageIn(dir)
	if !ok {
		tb.Fatalf("package peerdata declares no peer package %q", dir)
	}
	return p
}

func wireStream(tb testing.TB, input string) peerdata.WireStream {
	tb.Helper()
	for _, ws := range peerdata.WireStreams() {
		if ws.Name == input {
			return ws
		}
	}
	tb.Fatalf("no wire stream %q", input)
	return peerdata.WireStream{}
}

func sameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return a == b
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// CheckDecoders checks that each declared decode benchmark of the package
// at dir has a decoder in decs (keyed by input) that rebuilds what
// ocbench decodes from the benchmark stream: same text, same tool names,
// same arguments.
func CheckDecoders(t *testing.T, dir string, decs map[string]Decoder) {
	for _, pb := range Package(t, dir).Benchmarks {
		if pb.Stage != "decode" {
			continue
		}
		dec, ok := decs[pb.Input]
		if !ok {
			t.Errorf("%s/%s: declared in bench, no decoder here", pb.Name(), pb.Impl)
			continue
		}
		ws := wireStream(t, pb.Input)
		want, err := Ours(ws.Wire, ws.Stream.Body)
		if err != nil {
			t.Fatalf("%s: ocbench: %v", ws.Name, err)
		}
		got, err := dec(ws.Stream.Body)
		if err != nil {
			t.Errorf("%s/%s: %v", ws.Name, pb.Impl, err)
			continue
		}
		if got.Text != want.Text {
			t.Errorf("%s/%s: text differs (%d vs %d bytes)", ws.Name, pb.Impl, len(got.Text), len(want.Text))
		}
		if len(got.Args) != len(want.Args) || len(got.Names) != len(want.Names) {
			t.Errorf("%s/%s: %d tool calls, ocbench %d", ws.Name, pb.Impl, len(got.Args), len(want.Args))
			continue
		}
		for i := range want.Args {
			if got.Names[i] != want.Names[i] || !sameJSON(got.Args[i], want.Args[i]) {
				t.Errorf("%s/%s: tool call %d differs", ws.Name, pb.Impl, i)
			}
		}
	}
}

// BenchDecode is the decode sub-benchmark of one declared peer benchmark.
func BenchDecode(b *testing.B, pb peerdata.PeerBench, dec Decoder) {
	ws := wireStream(b, pb.Input)
	b.SetBytes(int64(len(ws.Stream.Body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := dec(ws.Stream.Body); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(ws.Stream.Events), "ns/event")
}

// RunPeers runs the declared benchmarks of the package at dir as
// BenchmarkPeers/<stage>/<input>/<impl>; run measures one of them.
func RunPeers(b *testing.B, dir string, run func(b *testing.B, pb peerdata.PeerBench)) {
	for _, pb := range Package(b, dir).Benchmarks {
		b.Run(pb.Stage+"/"+pb.Input+"/"+pb.Impl, func(b *testing.B) { run(b, pb) })
	}
}

// Events frames body as SSE the way a decoder holding the whole body in
// memory does (IndexByte over the body, no copy of single-line data) and
// calls fn with each event's name and data; data lines are joined with
// "\n" in scratch. An event without data is skipped. fn's slices are
// valid until it returns. It is the framing of the decode peers that
// bring only a JSON parser (fastjson, sonic).
func Events(body []byte, scratch *[]byte, fn func(name, data []byte) error) error {
	var name, data []byte
	lines := 0
	for len(body) > 0 {
		var line []byte
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			line, body = body[:i], body[i+1:]
		} else {
			line, body = body, nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		switch {
		case len(line) == 0:
			if lines > 0 && len(data) > 0 {
				if err := fn(name, data); err != nil {
					return err
				}
			}
			name, data, lines = nil, nil, 0
		case bytes.HasPrefix(line, []byte("data:")):
			v := bytes.TrimPrefix(line[5:], []byte(" "))
			if lines == 0 {
				data = v
			} else {
				if lines == 1 {
					*scratch = append((*scratch)[:0], data...)
				}
				*scratch = append(append(*scratch, '\n'), v...)
				data = *scratch
			}
			lines++
		case bytes.HasPrefix(line, []byte("event:")):
			name = bytes.TrimPrefix(line[6:], []byte(" "))
		}
	}
	if lines > 0 && len(data) > 0 {
		return fn(name, data)
	}
	return nil
}

// Builder collects what a decode peer extracts (text deltas, tool calls
// keyed by the wire's index, argument fragments) into reused buffers, so
// that a warm peer allocates only the strings of its final Decoded.
type Builder struct {
	text  []byte
	keys  []int64
	names [][]byte
	args  [][]byte
	n     int
}

// Reset starts a new stream.
func (b *Builder) Reset() {
	b.text = b.text[:0]
	b.keys = b.keys[:0]
	b.n = 0
}

// Text appends a text delta.
func (b *Builder) Text(s []byte) { b.text = append(b.text, s...) }

func (b *Builder) find(key int64) int {
	for i := range b.keys {
		if b.keys[i] == key {
			return i
		}
	}
	return -1
}

// Tool opens the tool call of key, or renames it when open.
func (b *Builder) Tool(key int64, name []byte) {
	i := b.find(key)
	if i < 0 {
		i = b.n
		b.keys = append(b.keys, key)
		if i == len(b.names) {
			b.names = append(b.names, nil)
			b.args = append(b.args, nil)
		}
		b.names[i], b.args[i] = b.names[i][:0], b.args[i][:0]
		b.n++
	}
	b.names[i] = append(b.names[i][:0], name...)
}

// Args appends an argument fragment to the tool call of key (opened
// without a name when it is not open).
func (b *Builder) Args(key int64, frag []byte) {
	i := b.find(key)
	if i < 0 {
		b.Tool(key, nil)
		i = b.n - 1
	}
	b.args[i] = append(b.args[i], frag...)
}

// Decoded is the stream's result.
func (b *Builder) Decoded() Decoded {
	d := Decoded{Text: string(b.text)}
	for i := range b.n {
		d.Names = append(d.Names, string(b.names[i]))
		d.Args = append(d.Args, string(b.args[i]))
	}
	return d
}
