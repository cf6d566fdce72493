package cachesim

import (
	"testing"
	"time"
)

// FuzzSimulate drives every provider mode with requests decoded from the
// input (3 bytes per block: hash, tokens, flags; 0xFF starts a new request
// after a gap) and a tiny entry bound: tokens must always add up, nothing
// may be negative, and the bound must hold.
func FuzzSimulate(f *testing.F) {
	f.Add([]byte{1, 200, 1, 2, 100, 0, 0xFF, 1, 200, 1, 2, 100, 0, 3, 50, 1})
	f.Add([]byte{1, 255, 3, 0xFF, 1, 255, 3, 0xFF, 9, 9, 9})
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, r := range []Rules{RulesFor(ProviderAnthropic, "claude-sonnet-4-5"), RulesFor(ProviderOpenAI, "gpt-5.1"),
			RulesFor(ProviderGemini, "gemini-2.5-flash"), DefaultRules(ProviderDeepSeek)} {
			r.MinTokens = min(r.MinTokens, 300)
			s := New(r, Options{MaxEntries: 8})
			now := t0
			var blocks []Block
			run := func() {
				if len(blocks) == 0 {
					return
				}
				res := s.Simulate(&Request{Time: now, Namespace: 1, Blocks: blocks})
				if res.Read < 0 || res.Write < 0 || res.Uncached < 0 || res.Write1h > res.Write ||
					res.Read+res.Write+res.Uncached != res.Total {
					t.Fatalf("%v: %+v", r.Provider, res)
				}
				if s.Len() > 8 {
					t.Fatalf("%v: %d entries", r.Provider, s.Len())
				}
			}
			for i := 0; i+2 < len(data); i += 3 {
				if data[i] == 0xFF {
					run()
					now = now.Add(time.Duration(data[i+1]) * 7 * time.Second)
					blocks = blocks[:0]
					i -= 1
					continue
				}
				fl := data[i+2]
				blocks = append(blocks, Block{Hash: uint64(data[i]), Tokens: int(data[i+1]) * 4, Parts: int(fl >> 4),
					Breakpoint: fl&1 != 0, LongTTL: fl&2 != 0})
			}
			run()
		}
	})
}
