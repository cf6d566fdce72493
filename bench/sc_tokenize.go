package bench

import (
	"fmt"

	"github.com/ocbench/ocbench/bench/peerdata"
	"github.com/ocbench/ocbench/tokenize"
)

func tokenizeScenarios() ([]Scenario, error) {
	text := peerdata.MixedText()
	var scs []Scenario
	for _, enc := range []tokenize.Encoding{tokenize.Cl100kBase, tokenize.O200kBase} {
		c, err := tokenize.Get(enc)
		if err != nil {
			return nil, err
		}
		name := enc.String()
		scs = append(scs, Scenario{
			Name: "tokenize/" + name, Stage: "tokenize", Input: name, Impl: Ours, Bytes: int64(len(text)),
			Setup: func() (func() error, func(), error) {
				return func() error { _, err := c.Count(text); return err }, nil, nil
			},
		}, Scenario{
			Name: "tokenize-cached/" + name, Stage: "tokenize-cached", Input: name, Impl: Ours, Bytes: int64(len(text)),
			Setup: func() (func() error, func(), error) {
				cache := tokenize.NewCache(c, 1024)
				want, err := c.Count(text)
				if err != nil {
					return nil, nil, err
				}
				return func() error {
					n, err := cache.Count(text)
					if err == nil && n != want {
						err = fmt.Errorf("cached count %d, exact %d", n, want)
					}
					return err
				}, nil, nil
			},
		})
	}
	return scs, nil
}
