package bench

import (
	"bytes"
	"fmt"

	"github.com/ocbench/ocbench/prompt"
	"github.com/ocbench/ocbench/tokenize"
)

// PromptParams is the prompt-assembly input: full mode, 8 bootstrap files
// totalling 60,000 characters and 50 skills (prompt.BenchmarkParams).
func PromptParams() (*prompt.Params, error) { return prompt.BenchmarkParams() }

// promptScenarios assemble the system prompt:
//
//   - cold: no cache, every section rendered on every call;
//   - cold-tokenized: no cache, with the stable prefix's tokens counted
//     (o200k_base), as a cache miss does;
//   - warm: a prefix-cache hit: the stable prefix is copied from the cache
//     and only the dynamic part is rendered.
//
// Every variant must produce the very bytes of a plain render.
func promptScenarios() ([]Scenario, error) {
	p, err := PromptParams()
	if err != nil {
		return nil, err
	}
	var ref prompt.Renderer
	want, _, err := ref.AppendPrompt(nil, p)
	if err != nil {
		return nil, err
	}
	check := func(input string, got []byte) error {
		if !bytes.Equal(got, want) {
			return fmt.Errorf("prompt/%s: assembled prompt differs from a plain render (%d vs %d bytes)", input, len(got), len(want))
		}
		return nil
	}
	n := int64(len(want))
	return []Scenario{
		{
			Name: "prompt/cold", Stage: "prompt", Input: "cold", Impl: Ours, Bytes: n,
			Setup: func() (func() error, func(), error) {
				var r prompt.Renderer
				dst := make([]byte, 0, len(want)+1024)
				first := true
				return func() error {
					var err error
					dst, _, err = r.AppendPrompt(dst[:0], p)
					if err == nil && first {
						first = false
						err = check("cold", dst)
					}
					return err
				}, nil, nil
			},
		},
		{
			Name: "prompt/cold-tokenized", Stage: "prompt", Input: "cold-tokenized", Impl: Ours, Bytes: n,
			Setup: func() (func() error, func(), error) {
				c, err := tokenize.Get(tokenize.O200kBase)
				if err != nil {
					return nil, nil, err
				}
				r := prompt.Renderer{Counter: c}
				dst := make([]byte, 0, len(want)+1024)
				first := true
				return func() error {
					var lay prompt.Layout
					var err error
					dst, lay, err = r.AppendPrompt(dst[:0], p)
					if err == nil && first {
						first = false
						if err = check("cold-tokenized", dst); err == nil && lay.StableTokens <= 0 {
							err = fmt.Errorf("prompt/cold-tokenized: stable prefix not counted (%d tokens)", lay.StableTokens)
						}
					}
					return err
				}, nil, nil
			},
		},
		{
			Name: "prompt/warm", Stage: "prompt", Input: "warm", Impl: Ours, Bytes: n,
			Setup: func() (func() error, func(), error) {
				c, err := tokenize.Get(tokenize.O200kBase)
				if err != nil {
					return nil, nil, err
				}
				r := prompt.NewCachedRenderer(64<<20, c)
				dst, _, err := r.AppendPrompt(make([]byte, 0, len(want)+1024), p) // fills the cache
				if err != nil {
					return nil, nil, err
				}
				renders := r.Stats().StableRenders
				first := true
				return func() error {
					var err error
					dst, _, err = r.AppendPrompt(dst[:0], p)
					if err == nil && first {
						first = false
						if err = check("warm", dst); err == nil && r.Stats().StableRenders != renders {
							err = fmt.Errorf("prompt/warm: the stable prefix was rendered again (cache miss)")
						}
					}
					return err
				}, nil, nil
			},
		},
	}, nil
}
