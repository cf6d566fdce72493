// Package peers is the root of the module that holds what ocbench is
// compared with, so that embedding ocbench never pulls any of it in. Each
// peer lives in its own package, compiled into its own test binary, so that
// `ocbench bench` builds only the peers a run measures: stdlib (bufio and
// encoding/json), jsonrepair (kaptinlin/jsonrepair), tiktoken
// (pkoukk/tiktoken-go), openairesponses (openai-go's responses package),
// and the two whose SDK root packages take gigabytes to compile,
// openaichat (openai-go) and anthropicsdk (anthropic-sdk-go). Package
// bench/peerdata declares each package's benchmarks and inputs
// (peerdata.PeerPackages); a peer imports it and never package bench,
// whose scenarios pull in the engine and SQLite. Package peerkit holds
// what the peers share. This package itself keeps the tests of
// the SDK clients against ocbench's gateway.
package peers
