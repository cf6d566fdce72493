package cachesim

import (
	"testing"
	"time"
)

// BenchmarkSimulate measures one call of a growing tool loop with a
// 200-message history, per provider mode.
func BenchmarkSimulate(b *testing.B) {
	for _, tc := range []struct {
		name  string
		rules Rules
	}{
		{"anthropic", RulesFor(ProviderAnthropic, "claude-sonnet-4-5")},
		{"openai", RulesFor(ProviderOpenAI, "gpt-5.1")},
		{"deepseek", DefaultRules(ProviderDeepSeek)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s := New(tc.rules, Options{})
			blocks := make([]Block, 201)
			blocks[0] = Block{Hash: 1, Tokens: 5000, Breakpoint: true}
			for i := 1; i < len(blocks); i++ {
				blocks[i] = Block{Hash: uint64(i) * 7919, Tokens: 300}
			}
			blocks[len(blocks)-1].Breakpoint = true
			req := &Request{Time: t0, Namespace: 1, Blocks: blocks}
			b.SetBytes(int64(len(blocks)))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				req.Time = req.Time.Add(time.Second)
				s.Simulate(req)
			}
		})
	}
}
