// Package tokenize counts tokens: exactly, for the tiktoken encodings
// cl100k_base and o200k_base, and approximately, with the chars/4 heuristic
// that OpenClaw (pi-coding-agent's estimateTokens) uses for its compaction
// and context-budget decisions, including the 1.2 safety factor.
//
// Exact counts come from github.com/tiktoken-go/tokenizer, whose vocabularies
// are compiled into the binary: counting needs no network and no files at run
// time. A differential test in the nested module ../peers checks that the
// counts equal pkoukk/tiktoken-go's on a mixed corpus; that module is kept out
// of this package's dependency graph.
//
// Counting is slow next to everything else on the hot path (about 5 MB/s), so
// a Cache remembers counts keyed by an xxhash of the content: unchanged text
// is never counted twice.
//
// This package owns counting only. It does not know about prompts, messages
// as Go types, or caches of rendered text (see prefixcache); it imports
// nothing else from this module.
package tokenize
