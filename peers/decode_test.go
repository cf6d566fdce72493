// Package peers holds what ocbench is compared with: the official SDKs'
// stream decoders, the idiomatic standard-library decoder, another JSON
// repairer and another tokenizer. It is a separate module, so that
// embedding ocbench never pulls them in. Its benchmarks are named
// BenchmarkPeers/<stage>/<input>/<impl> and read the very inputs of
// ocbench's own scenarios (package bench), which `ocbench bench` runs
// beside its own; its tests check that every peer agrees with ocbench on
// those inputs before any number is compared.
package peers

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	anthropicsse "github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"
	"github.com/openai/openai-go/v3"
	openaisse "github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"

	"github.com/ocbench/ocbench/bench"
	"github.com/ocbench/ocbench/provider"
)

// decoded is what every decoder must rebuild from a stream: the text and
// each tool call's name and argument text, in order.
type decoded struct {
	text  string
	names []string
	args  []string
}

func sseResponse(body []byte) *http.Response {
	return &http.Response{
		StatusCode: 200,
		Header:     http.Header{"Content-Type": []string{"text/event-stream"}},
		Body:       io.NopCloser(bytes.NewReader(body)),
	}
}

func openaiSDK(body []byte) (decoded, error) {
	st := openaisse.NewStream[openai.ChatCompletionChunk](openaisse.NewDecoder(sseResponse(body)), nil)
	var acc openai.ChatCompletionAccumulator
	for st.Next() {
		acc.AddChunk(st.Current())
	}
	if err := st.Err(); err != nil {
		return decoded{}, err
	}
	var d decoded
	if len(acc.Choices) > 0 {
		d.text = acc.Choices[0].Message.Content
		for _, tc := range acc.Choices[0].Message.ToolCalls {
			d.names = append(d.names, tc.Function.Name)
			d.args = append(d.args, tc.Function.Arguments)
		}
	}
	return d, nil
}

func anthropicSDK(body []byte) (decoded, error) {
	st := anthropicsse.NewStream[anthropic.MessageStreamEventUnion](anthropicsse.NewDecoder(sseResponse(body)), nil)
	var msg anthropic.Message
	for st.Next() {
		if err := msg.Accumulate(st.Current()); err != nil {
			return decoded{}, err
		}
	}
	if err := st.Err(); err != nil {
		return decoded{}, err
	}
	var d decoded
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			d.text += b.Text
		case "tool_use":
			d.names = append(d.names, b.Name)
			d.args = append(d.args, string(b.Input))
		}
	}
	return d, nil
}

func responsesSDK(body []byte) (decoded, error) {
	st := openaisse.NewStream[responses.ResponseStreamEventUnion](openaisse.NewDecoder(sseResponse(body)), nil)
	var d decoded
	var text strings.Builder
	for st.Next() {
		ev := st.Current()
		switch ev.Type {
		case "response.output_text.delta":
			text.WriteString(ev.Delta)
		case "response.output_item.done":
			if ev.Item.Type == "function_call" {
				d.names = append(d.names, ev.Item.Name)
				d.args = append(d.args, ev.Item.Arguments.OfString)
			}
		}
	}
	d.text = text.String()
	return d, st.Err()
}

// stdlibChat is the idiomatic decoder a Go programmer writes first:
// bufio.Scanner, encoding/json into a small struct per event, builders.
func stdlibChat(body []byte) (decoded, error) {
	type chunk struct {
		Choices []struct {
			Delta struct {
				Content   string `json:"content"`
				ToolCalls []struct {
					Index    int `json:"index"`
					Function struct {
						Name      string `json:"name"`
						Arguments string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"delta"`
		} `json:"choices"`
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var text strings.Builder
	var names []string
	var args []*strings.Builder
	for sc.Scan() {
		line, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: "))
		if !ok || string(line) == "[DONE]" {
			continue
		}
		var c chunk
		if err := json.Unmarshal(line, &c); err != nil {
			return decoded{}, err
		}
		for _, ch := range c.Choices {
			text.WriteString(ch.Delta.Content)
			for _, tc := range ch.Delta.ToolCalls {
				for len(args) <= tc.Index {
					args = append(args, new(strings.Builder))
					names = append(names, "")
				}
				if tc.Function.Name != "" {
					names[tc.Index] = tc.Function.Name
				}
				args[tc.Index].WriteString(tc.Function.Arguments)
			}
		}
	}
	d := decoded{text: text.String(), names: names}
	for _, a := range args {
		d.args = append(d.args, a.String())
	}
	return d, sc.Err()
}

func stdlibAnthropic(body []byte) (decoded, error) {
	type event struct {
		Type         string `json:"type"`
		Index        int    `json:"index"`
		ContentBlock struct {
			Type string `json:"type"`
			Name string `json:"name"`
		} `json:"content_block"`
		Delta struct {
			Type        string `json:"type"`
			Text        string `json:"text"`
			PartialJSON string `json:"partial_json"`
		} `json:"delta"`
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var text strings.Builder
	var d decoded
	var args []*strings.Builder
	tool := map[int]int{}
	for sc.Scan() {
		line, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: "))
		if !ok {
			continue
		}
		var e event
		if err := json.Unmarshal(line, &e); err != nil {
			return decoded{}, err
		}
		switch e.Type {
		case "content_block_start":
			if e.ContentBlock.Type == "tool_use" {
				tool[e.Index] = len(args)
				args = append(args, new(strings.Builder))
				d.names = append(d.names, e.ContentBlock.Name)
			}
		case "content_block_delta":
			switch e.Delta.Type {
			case "text_delta":
				text.WriteString(e.Delta.Text)
			case "input_json_delta":
				args[tool[e.Index]].WriteString(e.Delta.PartialJSON)
			}
		}
	}
	d.text = text.String()
	for _, a := range args {
		d.args = append(d.args, a.String())
	}
	return d, sc.Err()
}

func ours(w provider.Wire, body []byte) (decoded, error) {
	dec := provider.NewDecoder(w, bytes.NewReader(body), provider.Options{})
	for dec.Next() {
	}
	m := dec.Message()
	d := decoded{text: m.TextContent()}
	for _, i := range m.ToolCalls(nil) {
		d.names = append(d.names, string(m.Content[i].Name))
		d.args = append(d.args, string(m.Content[i].RawArgs))
	}
	return d, dec.Err()
}

type peerDecoder struct {
	impl   string
	decode func([]byte) (decoded, error)
}

func decodePeers(input string) []peerDecoder {
	switch input {
	case "openai-chat":
		return []peerDecoder{{"openai-go", openaiSDK}, {"bufio+json", stdlibChat}}
	case "anthropic":
		return []peerDecoder{{"anthropic-sdk-go", anthropicSDK}, {"bufio+json", stdlibAnthropic}}
	case "openai-responses":
		return []peerDecoder{{"openai-go", responsesSDK}}
	}
	return nil
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

// TestAllAgree checks that every peer rebuilds what ocbench decodes from
// the benchmark streams: same text, same tool names, same arguments.
func TestAllAgree(t *testing.T) {
	for _, ws := range bench.WireStreams() {
		want, err := ours(ws.Wire, ws.Stream.Body)
		if err != nil {
			t.Fatalf("%s: ocbench: %v", ws.Name, err)
		}
		if want.text != ws.Stream.Text || len(want.args) != len(ws.Stream.Calls) {
			t.Fatalf("%s: ocbench does not decode the generated stream", ws.Name)
		}
		for _, p := range decodePeers(ws.Name) {
			got, err := p.decode(ws.Stream.Body)
			if err != nil {
				t.Errorf("%s/%s: %v", ws.Name, p.impl, err)
				continue
			}
			if got.text != want.text {
				t.Errorf("%s/%s: text differs (%d vs %d bytes)", ws.Name, p.impl, len(got.text), len(want.text))
			}
			if len(got.args) != len(want.args) {
				t.Errorf("%s/%s: %d tool calls, ocbench %d", ws.Name, p.impl, len(got.args), len(want.args))
				continue
			}
			for i := range want.args {
				if got.names[i] != want.names[i] || !sameJSON(got.args[i], want.args[i]) {
					t.Errorf("%s/%s: tool call %d differs", ws.Name, p.impl, i)
				}
			}
		}
	}
}

func benchDecode(b *testing.B) {
	for _, ws := range bench.WireStreams() {
		for _, p := range decodePeers(ws.Name) {
			b.Run("decode/"+ws.Name+"/"+p.impl, func(b *testing.B) {
				b.SetBytes(int64(len(ws.Stream.Body)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := p.decode(ws.Stream.Body); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(ws.Stream.Events), "ns/event")
			})
		}
	}
}

// BenchmarkPeers runs every peer on ocbench's scenario inputs. Sub-benchmark
// names are stage/input/impl, matching ocbench's scenario stage and input.
func BenchmarkPeers(b *testing.B) {
	benchDecode(b)
	benchRepair(b)
	benchTokenize(b)
}
