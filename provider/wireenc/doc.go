// Package wireenc encodes ocbench's event model back into provider wire
// bytes: the Server-Sent Events of OpenAI Chat Completions
// (chat.completion.chunk, the usage chunk and data: [DONE]), OpenAI
// Responses (response.created ... response.completed, with sequence numbers)
// and Anthropic Messages (message_start, content_block_*, message_delta,
// message_stop, ping), and the whole JSON objects of their non-streaming
// answers.
//
// It owns the byte layout of those wires, as recorded in
// testdata/streams/, so that whatever it writes decodes with package
// provider's decoders into the same message. It does not decode anything
// (package provider does), repair tool calls (package streamwrap), decide
// what to say (package provider/scripted, which scripts turns and uses the
// malformation hooks here), or own the HTTP side (gateway, scripted).
//
// # Streaming
//
// An Encoder re-encodes one stream: Reset it with the wire, the stream's
// identity (Meta) and Options, then call AppendEvent for every llm.Event in
// order, passing the stream's *llm.Message (which holds the block content
// that end events refer to). Each call appends zero or more complete SSE
// events to a caller-owned buffer. After a warm-up an Encoder allocates
// nothing; reuse it for the next stream with Reset. An Encoder is not safe
// for concurrent use.
//
// With Options.ToolArgs = BufferArgs, tool-call deltas emit nothing and the
// whole call (id, name and the block's final Arguments, or its RawArgs when
// Arguments is undecided) is written at toolcall_end: that is how a gateway
// streams repaired tool calls back to a client.
//
// # Malformations
//
// The scripted provider reproduces broken servers. Argument text and tool
// names are written verbatim (so trailing commas, fences, Python literals
// or padded names pass through unchanged); SetWireIndex sends a block under
// a chosen wire index (a reused index) or none at all (NoIndex); AppendRaw
// writes any event; AppendError writes the wire's in-band error event; and
// AppendDoneRaw ends a stream with a raw stop reason of the caller's choice.
package wireenc
