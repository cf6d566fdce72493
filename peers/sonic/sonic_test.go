// Package sonic holds the decode peer built on bytedance/sonic, the JIT and
// SIMD JSON library: each event is decoded into a small typed struct, reused,
// by one reused sonic decoder (decoder.Decoder.Reset; sonic's default
// options, strings referencing the input, trailing bytes checked as
// sonic.Unmarshal checks them), behind a plain in-memory SSE framer
// (peerkit.Events). On each wire it does the work ocbench's decoder does:
// frame the events, parse every event's JSON, and pull out the text
// deltas, the tool calls' names and argument fragments, and the usage.
// sonic's JIT needs amd64 or arm64 and Go older than 1.28; elsewhere it
// falls back to encoding/json, which this package reports (TestNative).
package sonic

import (
	"runtime"
	"testing"
	"unsafe"

	"github.com/bytedance/sonic"
	"github.com/bytedance/sonic/decoder"

	"github.com/ocbench/ocbench/bench/peerdata"
	"github.com/ocbench/ocbench/peers/peerkit"
)

var decoders = map[string]peerkit.Decoder{
	"openai-chat":      newPeer(chatEvent).decode,
	"anthropic":        newPeer(anthropicEvent).decode,
	"openai-responses": newPeer(responsesEvent).decode,
}

// TestAgree: each decoder rebuilds what ocbench decodes.
func TestAgree(t *testing.T) {
	peerkit.CheckDecoders(t, "sonic", decoders)
}

// TestReusedEventsAreZeroed: a member one event has and the next lacks
// does not leak into the next (the reused values are zeroed).
func TestReusedEventsAreZeroed(t *testing.T) {
	pe := newPeer(chatEvent)
	body := []byte("data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n" +
		"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"name\":\"x\"}}]}}]}\n\n")
	d, err := pe.decode(body)
	if err != nil || d.Text != "a" || len(d.Names) != 1 {
		t.Fatalf("%v %+v", err, d)
	}
}

// TestNative: on amd64 and arm64 (with a Go sonic supports) the peer runs
// sonic's own decoder, not its encoding/json fallback.
func TestNative(t *testing.T) {
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		t.Skipf("sonic has no native decoder on %s: the figures are encoding/json's", runtime.GOARCH)
	}
	if sonic.ConfigDefault == nil {
		t.Fatal("no sonic API")
	}
	var v struct{ A string }
	if err := sonic.ConfigDefault.UnmarshalFromString(`{"A":"x"}`, &v); err != nil || v.A != "x" {
		t.Fatalf("sonic: %v %q", err, v.A)
	}
}

func BenchmarkPeers(b *testing.B) {
	peerkit.RunPeers(b, "sonic", func(b *testing.B, pb peerdata.PeerBench) {
		peerkit.BenchDecode(b, pb, decoders[pb.Input])
	})
}

type peer struct {
	// One event value per wire, reused and zeroed before each event
	// (sonic, like encoding/json, leaves members an event lacks as they
	// were).
	chat    chatChunk
	anth    anthropicEv
	resp    responsesEv
	dec     decoder.Decoder
	b       peerkit.Builder
	scratch []byte
	event   func(pe *peer, name []byte, s string) error
	in, out int64
}

func newPeer(event func(pe *peer, name []byte, s string) error) *peer {
	return &peer{event: event}
}

func (pe *peer) decode(body []byte) (peerkit.Decoded, error) {
	pe.b.Reset()
	err := peerkit.Events(body, &pe.scratch, func(name, data []byte) error {
		if string(data) == "[DONE]" {
			return nil
		}
		// The body is not changed while it is decoded: sonic reads it as a
		// string in place (UnmarshalFromString), without the copy that
		// Unmarshal of a []byte makes.
		return pe.event(pe, name, unsafe.String(unsafe.SliceData(data), len(data)))
	})
	return pe.b.Decoded(), err
}

func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// unmarshal decodes the event s into v as sonic.UnmarshalFromString does,
// with the peer's one decoder.
func (pe *peer) unmarshal(s string, v any) error {
	pe.dec.Reset(s)
	if err := pe.dec.Decode(v); err != nil {
		return err
	}
	return pe.dec.CheckTrailings()
}

type chatChunk struct {
	Choices []struct {
		Delta struct {
			Content   string `json:"content"`
			ToolCalls []struct {
				Index    int64 `json:"index"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int64 `json:"prompt_tokens"`
		CompletionTokens    int64 `json:"completion_tokens"`
		PromptTokensDetails struct {
			CachedTokens int64 `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
}

func chatEvent(pe *peer, _ []byte, s string) error {
	c := &pe.chat
	// Zero the elements with the slice's array kept.
	c.Choices = c.Choices[:cap(c.Choices)]
	clear(c.Choices)
	c.Choices, c.Usage = c.Choices[:0], nil
	if err := pe.unmarshal(s, c); err != nil {
		return err
	}
	for i := range c.Choices {
		d := &c.Choices[i].Delta
		if d.Content != "" {
			pe.b.Text(bytesOf(d.Content))
		}
		for j := range d.ToolCalls {
			tc := &d.ToolCalls[j]
			if tc.Function.Name != "" {
				pe.b.Tool(tc.Index, bytesOf(tc.Function.Name))
			}
			if tc.Function.Arguments != "" {
				pe.b.Args(tc.Index, bytesOf(tc.Function.Arguments))
			}
		}
	}
	if u := c.Usage; u != nil {
		pe.in, pe.out = u.PromptTokens-u.PromptTokensDetails.CachedTokens, u.CompletionTokens
	}
	return nil
}

type anthropicEv struct {
	Type         string `json:"type"`
	Index        int64  `json:"index"`
	ContentBlock struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"content_block"`
	Delta struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
	} `json:"delta"`
	Message struct {
		Usage struct {
			InputTokens int64 `json:"input_tokens"`
		} `json:"usage"`
	} `json:"message"`
	Usage struct {
		OutputTokens int64 `json:"output_tokens"`
	} `json:"usage"`
}

func anthropicEvent(pe *peer, name []byte, s string) error {
	e := &pe.anth
	*e = anthropicEv{}
	if err := pe.unmarshal(s, e); err != nil {
		return err
	}
	typ := e.Type
	if typ == "" {
		typ = string(name)
	}
	switch typ {
	case "content_block_delta":
		switch e.Delta.Type {
		case "text_delta":
			pe.b.Text(bytesOf(e.Delta.Text))
		case "input_json_delta":
			pe.b.Args(e.Index, bytesOf(e.Delta.PartialJSON))
		}
	case "content_block_start":
		if e.ContentBlock.Type == "tool_use" {
			pe.b.Tool(e.Index, bytesOf(e.ContentBlock.Name))
		}
	case "message_start":
		pe.in = e.Message.Usage.InputTokens
	case "message_delta":
		pe.out = e.Usage.OutputTokens
	}
	return nil
}

type responsesEv struct {
	Type        string `json:"type"`
	OutputIndex int64  `json:"output_index"`
	Delta       string `json:"delta"`
	Item        struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"item"`
	Response struct {
		Usage struct {
			InputTokens  int64 `json:"input_tokens"`
			OutputTokens int64 `json:"output_tokens"`
		} `json:"usage"`
	} `json:"response"`
}

func responsesEvent(pe *peer, name []byte, s string) error {
	e := &pe.resp
	*e = responsesEv{}
	if err := pe.unmarshal(s, e); err != nil {
		return err
	}
	typ := e.Type
	if typ == "" {
		typ = string(name)
	}
	switch typ {
	case "response.output_text.delta":
		pe.b.Text(bytesOf(e.Delta))
	case "response.function_call_arguments.delta":
		pe.b.Args(e.OutputIndex, bytesOf(e.Delta))
	case "response.output_item.added":
		if e.Item.Type == "function_call" {
			pe.b.Tool(e.OutputIndex, bytesOf(e.Item.Name))
		}
	case "response.completed":
		pe.in, pe.out = e.Response.Usage.InputTokens, e.Response.Usage.OutputTokens
	}
	return nil
}
