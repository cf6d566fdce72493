package tokenize_test

import (
	"fmt"

	"github.com/ocbench/ocbench/tokenize"
)

func Example() {
	c, err := tokenize.Get(tokenize.O200kBase)
	if err != nil {
		panic(err)
	}
	n, _ := c.Count("hello world")
	fmt.Println(n, tokenize.EstimateString("hello world"), tokenize.WithSafety(10))
	// Output: 2 3 12
}

func ExampleCache() {
	cache := tokenize.NewCache(tokenize.MustGet(tokenize.Cl100kBase), 1024)
	for i := 0; i < 3; i++ {
		cache.Count("the same stable prefix, counted once")
	}
	st := cache.Stats()
	fmt.Println(st.Misses, st.Hits)
	// Output: 1 2
}

// Encode splits a run of tabs and line breaks as tiktoken does: the run up
// to its last line break is one piece, here one token.
func ExampleCounter_Encode() {
	c := tokenize.MustGet(tokenize.Cl100kBase)
	ids, _ := c.Encode("x\n\t\n\t\n")
	n, _ := c.CountBytes([]byte("x\n\t\n\t\n"))
	fmt.Println(ids, n)
	// Output: [87 198 11367] 3
}
