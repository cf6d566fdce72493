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
package llm
