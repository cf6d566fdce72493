// Package stdlib holds the standard-library peers: the stream decoder a Go
// programmer writes first (bufio.Scanner and encoding/json into a small
// struct per event) for the chat and Anthropic wires, and encoding/json's
// validity check against ocbench's fast path. They compile in seconds, so
// every run has them.
package stdlib

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/bench/peerdata"
	"github.com/ocbench/ocbench/peers/peerkit"
)

var decoders = map[string]peerkit.Decoder{
	"openai-chat": stdlibChat,
	"anthropic":   stdlibAnthropic,
}

// TestAgree: both decoders rebuild what ocbench decodes, and encoding/json
// accepts every argument text the validate benchmarks check.
func TestAgree(t *testing.T) {
	peerkit.CheckDecoders(t, "stdlib", decoders)
	for _, pb := range peerkit.Package(t, "stdlib").Benchmarks {
		if pb.Stage == "validate" && !json.Valid(validArgs(t, pb.Input)) {
			t.Errorf("%s: encoding/json rejects the valid arguments", pb.Name())
		}
	}
}

func validArgs(tb testing.TB, object string) []byte {
	for _, in := range peerdata.RepairInputs() {
		if in.Quirk == "valid" && in.Name == object+"-valid" {
			return in.Args
		}
	}
	tb.Fatalf("no valid repair input for %s", object)
	return nil
}

func BenchmarkPeers(b *testing.B) {
	peerkit.RunPeers(b, "stdlib", func(b *testing.B, pb peerdata.PeerBench) {
		switch pb.Stage {
		case "decode":
			peerkit.BenchDecode(b, pb, decoders[pb.Input])
		case "validate":
			args := validArgs(b, pb.Input)
			b.SetBytes(int64(len(args)))
			b.ReportAllocs()
			for b.Loop() {
				_ = json.Valid(args)
			}
		default:
			b.Fatalf("no %s peer here", pb.Stage)
		}
	})
}

// stdlibChat is the idiomatic decoder a Go programmer writes first:
// bufio.Scanner, encoding/json into a small struct per event, builders.
func stdlibChat(body []byte) (peerkit.Decoded, error) {
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
			return peerkit.Decoded{}, err
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
	d := peerkit.Decoded{Text: text.String(), Names: names}
	for _, a := range args {
		d.Args = append(d.Args, a.String())
	}
	return d, sc.Err()
}

func stdlibAnthropic(body []byte) (peerkit.Decoded, error) {
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
	var d peerkit.Decoded
	var args []*strings.Builder
	tool := map[int]int{}
	for sc.Scan() {
		line, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: "))
		if !ok {
			continue
		}
		var e event
		if err := json.Unmarshal(line, &e); err != nil {
			return peerkit.Decoded{}, err
		}
		switch e.Type {
		case "content_block_start":
			if e.ContentBlock.Type == "tool_use" {
				tool[e.Index] = len(args)
				args = append(args, new(strings.Builder))
				d.Names = append(d.Names, e.ContentBlock.Name)
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
	d.Text = text.String()
	for _, a := range args {
		d.Args = append(d.Args, a.String())
	}
	return d, sc.Err()
}
