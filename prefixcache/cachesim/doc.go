// Package cachesim simulates the prompt caches of LLM providers: given a
// sequence of requests, each cut into token blocks with a content hash, it
// says for every request how many input tokens the provider would read from
// its cache, how many it would write to it, how many it would bill as
// ordinary input, and why (cold, expired after a gap, prefix changed at a
// given block, below the provider's minimum, too many breakpoints).
//
// One Rules value describes one provider model, from the rules in the
// project's wire-and-cache spec §2:
//
//   - Anthropic: explicit breakpoints (cache_control), at most 4 per request;
//     an entry is written at each breakpoint whose prefix reaches the model's
//     minimum cacheable length; a request reads the longest live entry found
//     at a breakpoint or at a block boundary up to 20 content blocks before
//     it; entries live 5 minutes (or 1 hour), refreshed on every hit; writes
//     cost 1.25× (2× for 1 hour) and reads 0.1× the base input price.
//   - OpenAI: automatic; only prompts of at least 1,024 tokens; hits are the
//     longest cached prefix rounded down to 1,024 + 128·k tokens; in-memory
//     retention ends after minutes of inactivity and always within an hour,
//     the "24h" retention keeps prefixes for a day.
//   - Gemini: implicit caching of the longest cached prefix above a
//     per-model minimum.
//   - DeepSeek: on-disk caching of whole persisted prefix units written at
//     the end of each request, counted in 64-token storage units.
//
// The simulator works on hashes only: a block's Hash stands for its
// rendered bytes, and the prefix through block i is identified by a hash
// chain h_i = xxhash(h_{i-1} ‖ Hash_i) seeded with the request's Namespace
// (model identity), as in vLLM's prefix cache. Matching is therefore at block
// granularity: a block that changed is a miss from its first token.
//
// What this package does not do: it does not render or tokenize prompts
// (package prompt and tokenize), read session files (transcript) or turn a
// session into requests (cacheprofile). It keeps a bounded map of cache
// entries: expired entries are purged, and past Options.MaxEntries the map
// is dropped whole rather than maintained as an LRU.
//
// A Sim is not safe for concurrent use; Simulate allocates nothing in steady
// state beyond new map entries.
package cachesim
