// Package openairesponses holds the official OpenAI SDK's decoder of the
// Responses stream: openai-go's ssestream into its
// responses.ResponseStreamEventUnion. It imports only the SDK's responses
// package, not the SDK's root package, whose compilation alone takes
// gigabytes of memory (that one is in package openaichat).
package openairesponses

import (
	"strings"
	"testing"

	openaisse "github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"

	"github.com/ocbench/ocbench/bench/peerdata"
	"github.com/ocbench/ocbench/peers/peerkit"
)

func TestAgree(t *testing.T) {
	peerkit.CheckDecoders(t, "openairesponses", map[string]peerkit.Decoder{"openai-responses": responsesSDK})
}

func BenchmarkPeers(b *testing.B) {
	peerkit.RunPeers(b, "openairesponses", func(b *testing.B, pb peerdata.PeerBench) {
		peerkit.BenchDecode(b, pb, responsesSDK)
	})
}

func responsesSDK(body []byte) (peerkit.Decoded, error) {
	st := openaisse.NewStream[responses.ResponseStreamEventUnion](openaisse.NewDecoder(peerkit.SSEResponse(body)), nil)
	var d peerkit.Decoded
	var text strings.Builder
	for st.Next() {
		ev := st.Current()
		switch ev.Type {
		case "response.output_text.delta":
			text.WriteString(ev.Delta)
		case "response.output_item.done":
			if ev.Item.Type == "function_call" {
				d.Names = append(d.Names, ev.Item.Name)
				d.Args = append(d.Args, ev.Item.Arguments.OfString)
			}
		}
	}
	d.Text = text.String()
	return d, st.Err()
}
