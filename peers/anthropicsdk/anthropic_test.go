// Package anthropicsdk holds the official Anthropic SDK's stream decoder:
// anthropic-sdk-go's ssestream into anthropic.MessageStreamEventUnion,
// accumulated by anthropic.Message.Accumulate. The event type lives in the
// SDK's root package, whose compilation takes gigabytes of compiler memory
// and minutes the first time; ocbench bench builds this package only with
// --peers all or once the build cache holds that root package.
package anthropicsdk

import (
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	anthropicsse "github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"

	"github.com/ocbench/ocbench/bench/peerdata"
	"github.com/ocbench/ocbench/peers/peerkit"
)

func TestAgree(t *testing.T) {
	peerkit.CheckDecoders(t, "anthropicsdk", map[string]peerkit.Decoder{"anthropic": anthropicSDK})
}

func BenchmarkPeers(b *testing.B) {
	peerkit.RunPeers(b, "anthropicsdk", func(b *testing.B, pb peerdata.PeerBench) {
		peerkit.BenchDecode(b, pb, anthropicSDK)
	})
}

func anthropicSDK(body []byte) (peerkit.Decoded, error) {
	st := anthropicsse.NewStream[anthropic.MessageStreamEventUnion](anthropicsse.NewDecoder(peerkit.SSEResponse(body)), nil)
	var msg anthropic.Message
	for st.Next() {
		if err := msg.Accumulate(st.Current()); err != nil {
			return peerkit.Decoded{}, err
		}
	}
	if err := st.Err(); err != nil {
		return peerkit.Decoded{}, err
	}
	var d peerkit.Decoded
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			d.Text += b.Text
		case "tool_use":
			d.Names = append(d.Names, b.Name)
			d.Args = append(d.Args, string(b.Input))
		}
	}
	return d, nil
}
