// Package embed checks, from outside the ocbench module, that a Go service
// can embed the engine through its public API alone: typed tools, a plain
// system prompt, conversations kept in memory, parallel tool calls and a
// session store. It holds tests only and imports no internal package, so
// anything the examples rely on that is not exported fails here first.
package embed
