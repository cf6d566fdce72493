package provider

import (
	"testing"

	"github.com/valyala/fastjson"
)

var microChunk = []byte(`{"id":"chatcmpl-SYNTH0000000000000000000000","object":"chat.completion.chunk","created":1770933892,"model":"gpt-4.1-2025-04-14","system_fingerprint":"fp_de604bd877","choices":[{"index":0,"delta":{"content":" the"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"abcdefgh"}`)

func BenchmarkMicroFastjson(b *testing.B) {
	var p fastjson.Parser
	for b.Loop() {
		v, _ := p.ParseBytes(microChunk)
		_ = v.GetStringBytes("choices", "0", "delta", "content")
	}
}

func BenchmarkMicroSkipValue(b *testing.B) {
	for b.Loop() {
		if skipValue(microChunk, 0) < 0 {
			b.Fatal()
		}
	}
}

func BenchmarkMicroTopIter(b *testing.B) {
	for b.Loop() {
		it, _ := topIter(microChunk)
		for {
			_, _, ok := it.next()
			if !ok {
				break
			}
		}
	}
}

func BenchmarkMicroScanString(b *testing.B) {
	for b.Loop() {
		skipString(microChunk, 6)
	}
}
