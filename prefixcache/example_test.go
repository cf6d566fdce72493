package prefixcache_test

import (
	"fmt"

	"github.com/ocbench/ocbench/prefixcache"
)

func ExampleCache() {
	c := prefixcache.New(1 << 20)
	key := uint64(0x1234) // the xxhash of a prompt's stable inputs
	if _, ok := c.Get(key); !ok {
		_ = c.Put(&prefixcache.Entry{Key: key, Prefix: []byte("You are a personal assistant running inside OpenClaw."), Tokens: 11})
	}
	e, _ := c.Get(key)
	st := c.Stats()
	fmt.Println(e.Tokens, st.Hits, st.Misses)
	// Output: 11 1 1
}
