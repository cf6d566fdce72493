// Package llm is ocbench's vocabulary: messages and their blocks, tool calls,
// usage, stop reasons, the streaming event model, and the function type that
// every provider and decorator implements.
//
// It owns types and the rules that bind them (lifetimes, reuse, JSON shape).
// It does not decode any wire format (package provider does), repair or guard
// anything (package streamwrap), or run turns (package engine).
//
// # Streams
//
// A Stream is pulled like bufio.Scanner: Next advances to the next event,
// Event returns it, Err returns the sticky error once Next has returned false,
// and Message returns the partial message the events have built so far (the
// final message after EventDone or EventError).
//
// Byte slices reachable from an Event (Delta) are borrowed views into the
// producer's buffers and are valid only until the next call to Next. The
// Message and its Blocks are owned by the stream: they stay valid until the
// stream is closed or reset, and are mutated in place by decorators, exactly as
// OpenClaw's wrappers mutate pi-ai's shared partial message. Whoever keeps a
// message beyond that calls Message.Clone.
//
// Event types dispatch on small integers; nothing here uses reflection or maps
// on the per-event path.
//
// # Models and requests
//
// A Model describes what a request is for: the wire (API, one of the APIs
// constants), the provider id (Provider, whose documentation lists what it
// decides), the endpoint (BaseURL) and its compatibility profile (Compat:
// token field, stream usage, prompt_cache_key, argument repair, key
// variable; detected by package provider when nil). Model.Validate,
// ParseAPI and ParseProvider catch a typo before anything is sent, with a
// *ModelError that suggests the value meant. A Request carries the
// conversation and RequestOptions (tool choice, parallel tool calls,
// response format, stop sequences, top_p, headers, extra body members),
// which package provider encodes under each wire's own names or refuses.
package llm
