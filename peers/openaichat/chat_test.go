// Package openaichat holds the official OpenAI SDK's chat stream decoder:
// openai-go's ssestream into openai.ChatCompletionChunk, accumulated by
// openai.ChatCompletionAccumulator. The chunk type lives in the SDK's root
// package, whose compilation takes 2 to 3 GB of compiler memory (2.8 GB measured) and
// minutes the first time; ocbench bench builds this package only with
// --peers all or once the build cache holds that root package.
package openaichat

import (
	"testing"

	"github.com/openai/openai-go/v3"
	openaisse "github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/ocbench/ocbench/bench/peerdata"
	"github.com/ocbench/ocbench/peers/peerkit"
)

func TestAgree(t *testing.T) {
	peerkit.CheckDecoders(t, "openaichat", map[string]peerkit.Decoder{"openai-chat": openaiSDK})
}

func BenchmarkPeers(b *testing.B) {
	peerkit.RunPeers(b, "openaichat", func(b *testing.B, pb peerdata.PeerBench) {
		peerkit.BenchDecode(b, pb, openaiSDK)
	})
}

func openaiSDK(body []byte) (peerkit.Decoded, error) {
	st := openaisse.NewStream[openai.ChatCompletionChunk](openaisse.NewDecoder(peerkit.SSEResponse(body)), nil)
	var acc openai.ChatCompletionAccumulator
	for st.Next() {
		acc.AddChunk(st.Current())
	}
	if err := st.Err(); err != nil {
		return peerkit.Decoded{}, err
	}
	var d peerkit.Decoded
	if len(acc.Choices) > 0 {
		d.Text = acc.Choices[0].Message.Content
		for _, tc := range acc.Choices[0].Message.ToolCalls {
			d.Names = append(d.Names, tc.Function.Name)
			d.Args = append(d.Args, tc.Function.Arguments)
		}
	}
	return d, nil
}
