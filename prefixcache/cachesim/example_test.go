package cachesim_test

import (
	"fmt"
	"time"

	"github.com/ocbench/ocbench/prefixcache/cachesim"
)

// A tool loop on Claude Sonnet 4.5 with OpenClaw's two breakpoints (end of
// the stable system prefix, end of the last message), then a pause longer
// than the 5-minute TTL.
func Example() {
	sim := cachesim.New(cachesim.RulesFor(cachesim.ProviderAnthropic, "claude-sonnet-4-5"), cachesim.Options{})
	start := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	blocks := []cachesim.Block{
		{Hash: 0xA, Tokens: 6000, Breakpoint: true, Label: -1}, // tools + stable system prompt
		{Hash: 0xB, Tokens: 40, Breakpoint: true, Label: 0},    // the user's message
	}
	show := func(at time.Duration) {
		res := sim.Simulate(&cachesim.Request{Time: start.Add(at), Namespace: 1, Blocks: blocks})
		fmt.Printf("read %5d  write %5d  uncached %d  %v\n", res.Read, res.Write, res.Uncached, res.Reason)
	}
	show(0)
	// The assistant's tool call and its result; the breakpoint moves along.
	blocks[1].Breakpoint = false
	blocks = append(blocks,
		cachesim.Block{Hash: 0xC, Tokens: 80, Label: 1},
		cachesim.Block{Hash: 0xD, Tokens: 900, Breakpoint: true, Label: 2})
	show(4 * time.Second)
	show(10 * time.Minute)
	// Output:
	// read     0  write  6040  uncached 0  cold
	// read  6040  write   980  uncached 0  hit
	// read     0  write  7020  uncached 0  expired
}

// OpenAI reports cached tokens in 128-token steps above 1,024.
func ExampleRulesFor() {
	r := cachesim.RulesFor(cachesim.ProviderUnknown, "gpt-5.1")
	sim := cachesim.New(r, cachesim.Options{})
	req := &cachesim.Request{Blocks: []cachesim.Block{{Hash: 1, Tokens: 1500}}}
	sim.Simulate(req)
	res := sim.Simulate(req)
	fmt.Println(r.Provider, r.MinTokens, r.Unit, res.Read)
	// Output: openai 1024 128 1408
}
