// Package tokenize counts tokens: exactly, for the tiktoken encodings
// cl100k_base and o200k_base, and approximately, with the chars/4 heuristic
// that OpenClaw (pi-coding-agent's estimateTokens) uses for its compaction
// and context-budget decisions, including the 1.2 safety factor.
//
// Exact counts come from this package's own pre-tokenizer and byte-pair
// merge. The pre-tokenizer (split.go) is a hand-written scanner for the
// cl100k_base and o200k_base split patterns that produces exactly the pieces
// a backtracking regular-expression engine does, including the backtracking
// of \s*[\r\n]+ and \s+(?!\S) on whitespace and line-break runs (where
// tiktoken-go/tokenizer's generated matcher is wrong), the case-insensitive
// contractions and o200k's letter-case classes. The merge ranks are read once
// from OpenAI's published vocabulary files, embedded in the binary by
// github.com/pkoukk/tiktoken-go-loader's assets package (go:embed data; a
// vocabulary compiled into Go map literals, as tiktoken-go/tokenizer ships
// it, cost a fresh build some 15-80 s of compiling): counting needs no
// network and no files at run time. Counting allocates nothing.
//
// Tests check the pieces against Go's regexp with the same patterns
// (split_test.go, FuzzCount), and a differential test in the nested module
// ../peers checks token ids and counts against pkoukk/tiktoken-go on
// thousands of random strings and a mixed corpus; that tokenizer is kept out
// of this package's dependency graph (only the loader's data is linked).
//
// Counting is slow next to everything else on the hot path (some tens of
// MB/s), so a Cache remembers counts keyed by an xxhash of the content:
// unchanged text is never counted twice.
//
// This package owns counting only. It does not know about prompts, messages
// as Go types, or caches of rendered text (see prefixcache); it imports
// nothing else from this module.
package tokenize
