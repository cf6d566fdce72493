// Package fastjson holds the decode peer that brings only a JSON parser:
// valyala/fastjson, one Parser reused for every event (the way ocbench
// itself uses it on its cold paths), behind a plain in-memory SSE framer
// (peerkit.Events). On each wire it does the work ocbench's decoder does:
// frame the events, parse every event's JSON whole, and pull out the text
// deltas, the tool calls' names and argument fragments, and the usage.
package fastjson

import (
	"errors"
	"testing"

	"github.com/valyala/fastjson"

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
	peerkit.CheckDecoders(t, "fastjson", decoders)
}

// TestNoAllocsPerEvent: a warm peer allocates only its result's strings,
// not per event (the comparison is of parsers, not of allocators).
func TestNoAllocsPerEvent(t *testing.T) {
	for _, ws := range peerdata.WireStreams() {
		dec := decoders[ws.Name]
		_, _ = dec(ws.Stream.Body)
		allocs := testing.AllocsPerRun(5, func() { _, _ = dec(ws.Stream.Body) })
		if allocs > 10 {
			t.Errorf("%s: %v allocations per stream of %d events", ws.Name, allocs, ws.Stream.Events)
		}
	}
}

func BenchmarkPeers(b *testing.B) {
	peerkit.RunPeers(b, "fastjson", func(b *testing.B, pb peerdata.PeerBench) {
		peerkit.BenchDecode(b, pb, decoders[pb.Input])
	})
}

// usage is where the peers put the token counts they read.
type usage struct{ in, out, cacheRead, cacheWrite int64 }

type peer struct {
	p       fastjson.Parser
	b       peerkit.Builder
	u       usage
	scratch []byte
	event   func(pe *peer, name []byte, v *fastjson.Value) error
}

func newPeer(event func(pe *peer, name []byte, v *fastjson.Value) error) *peer {
	return &peer{event: event}
}

func (pe *peer) decode(body []byte) (peerkit.Decoded, error) {
	pe.b.Reset()
	pe.u = usage{}
	err := peerkit.Events(body, &pe.scratch, func(name, data []byte) error {
		if string(data) == "[DONE]" {
			return nil
		}
		v, err := pe.p.ParseBytes(data)
		if err != nil {
			return err
		}
		return pe.event(pe, name, v)
	})
	return pe.b.Decoded(), err
}

var errBad = errors.New("fastjson peer: not an event object")

func chatEvent(pe *peer, _ []byte, v *fastjson.Value) error {
	if v.Type() != fastjson.TypeObject {
		return errBad
	}
	for _, c := range v.GetArray("choices") {
		delta := c.Get("delta")
		if s := delta.GetStringBytes("content"); len(s) > 0 {
			pe.b.Text(s)
		}
		for _, tc := range delta.GetArray("tool_calls") {
			idx := tc.GetInt64("index")
			if name := tc.GetStringBytes("function", "name"); len(name) > 0 {
				pe.b.Tool(idx, name)
			}
			if a := tc.GetStringBytes("function", "arguments"); len(a) > 0 {
				pe.b.Args(idx, a)
			}
		}
		_ = c.GetStringBytes("finish_reason")
	}
	if u := v.Get("usage"); u != nil && u.Type() == fastjson.TypeObject {
		pe.u.cacheRead = u.GetInt64("prompt_tokens_details", "cached_tokens")
		pe.u.in = u.GetInt64("prompt_tokens") - pe.u.cacheRead
		pe.u.out = u.GetInt64("completion_tokens")
	}
	return nil
}

func anthropicEvent(pe *peer, name []byte, v *fastjson.Value) error {
	if v.Type() != fastjson.TypeObject {
		return errBad
	}
	typ := v.GetStringBytes("type")
	if len(typ) == 0 {
		typ = name
	}
	switch string(typ) {
	case "content_block_delta":
		d := v.Get("delta")
		switch string(d.GetStringBytes("type")) {
		case "text_delta":
			pe.b.Text(d.GetStringBytes("text"))
		case "input_json_delta":
			pe.b.Args(v.GetInt64("index"), d.GetStringBytes("partial_json"))
		}
	case "content_block_start":
		if cb := v.Get("content_block"); string(cb.GetStringBytes("type")) == "tool_use" {
			pe.b.Tool(v.GetInt64("index"), cb.GetStringBytes("name"))
		}
	case "message_start":
		if u := v.Get("message", "usage"); u != nil {
			pe.u.in = u.GetInt64("input_tokens")
			pe.u.cacheRead = u.GetInt64("cache_read_input_tokens")
			pe.u.cacheWrite = u.GetInt64("cache_creation_input_tokens")
		}
	case "message_delta":
		if u := v.Get("usage"); u != nil {
			pe.u.out = u.GetInt64("output_tokens")
		}
	}
	return nil
}

func responsesEvent(pe *peer, name []byte, v *fastjson.Value) error {
	if v.Type() != fastjson.TypeObject {
		return errBad
	}
	typ := v.GetStringBytes("type")
	if len(typ) == 0 {
		typ = name
	}
	switch string(typ) {
	case "response.output_text.delta":
		pe.b.Text(v.GetStringBytes("delta"))
	case "response.function_call_arguments.delta":
		pe.b.Args(v.GetInt64("output_index"), v.GetStringBytes("delta"))
	case "response.output_item.added":
		if item := v.Get("item"); string(item.GetStringBytes("type")) == "function_call" {
			pe.b.Tool(v.GetInt64("output_index"), item.GetStringBytes("name"))
		}
	case "response.completed":
		if u := v.Get("response", "usage"); u != nil {
			pe.u.cacheRead = u.GetInt64("input_tokens_details", "cached_tokens")
			pe.u.in = u.GetInt64("input_tokens") - pe.u.cacheRead
			pe.u.out = u.GetInt64("output_tokens")
		}
	}
	return nil
}
