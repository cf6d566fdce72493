// Package cacheprofile shows where an agent's sessions win and lose the
// providers' prompt-cache discount. It turns a session (OpenClaw or pi
// JSONL, versions 1 to 3, plain or zstd, or OpenClaw's SQLite transcript
// store) into the sequence of model calls it records, rebuilds each call's
// request as token blocks (the unseen tools and system prompt, a request
// options block, then the messages of the active branch), runs them through
// the provider's cache simulator (package prefixcache/cachesim), and
// compares the prediction with the cache reads and writes the provider
// reported, call by call.
//
// Sizes. The tools and system prompt are not in a session: their size is
// estimated from the first call that reports usage (its prompt size minus
// the chars/4 estimate of its messages). Messages get the chars/4 estimate
// until a call reports its prompt size (input + cacheRead + cacheWrite,
// exact): the growth since the previous reported call is then shared among
// the messages added in between, in proportion to their estimates. Sizes,
// once set, never change, so every call sees the same sizes for the same
// messages.
//
// Options. For Anthropic a zero-token block after the system prompt stands
// for the request options that invalidate the message part when they change
// (the thinking level). A run's options are resolved when it starts, at the
// user's message: a thinking_level_change written during a tool loop
// applies from the next run.
//
// Misses. A miss the transcript explains (the first call, a gap longer than
// the cache lifetime, a model or thinking-level change, a compaction or
// rewrite of history, a prompt below the minimum) is reported with that
// cause. A recorded miss the transcript does not explain is never guessed
// away: it is listed as unexplained with the evidence (the gap, the prefix
// that was unchanged, whether anything was read, how the recorded prompt
// size compares with the transcript's growth), because it means something
// outside the transcript changed: the system prompt, the tools or the
// request options.
//
// This package owns reconstruction, estimation, agreement statistics and
// the text, JSON and HTML reports. It does not parse session lines (package
// transcript does), define cache rules (cachesim) or assemble prompts
// (prompt).
package cacheprofile
