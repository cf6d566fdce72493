// Package scripted is a provider that replays scripted turns, so that the
// engine, the gateway, the benchmarks and the load tests run with no key
// and no network.
//
// A Script is a list of Turns; a Turn is a list of Steps (text, thinking
// with a signature, tool calls, possibly parallel and interleaved, pauses
// and stalls, in-band errors, raw events, an early end of the body) plus
// its usage (cache reads and writes included), stop reason, latency, an
// optional HTTP refusal and an optional cut at a byte offset. Tool calls
// carry their argument text verbatim, so every malformation of the quirk
// catalogue (trailing commas, code fences, double encoding, Python
// literals, single quotes, concatenated objects, padded or namespaced
// names, truncation, a reused or missing index) reaches the decoder byte
// for byte; Malform and the Quirk constants produce them from valid
// arguments. Scripts are written in Go or in a small JSON form (Parse,
// Load).
//
// A Picker chooses the turn that answers each request; the default,
// ByPosition, answers a user message with the first turn, the tool results
// that follow with the next ones, and so on, so that an engine's turn loop
// (and a load test of many such loops) runs forever. Default is the
// built-in script used when nothing is configured: a text and a call to the
// read tool, then a final answer.
//
// The provider speaks any of the three wire formats, in two ways. In
// process, Provider.Stream is an llm.StreamFunc: it encodes the turn into
// SSE bytes with package wireenc, on demand, and decodes them with package
// provider's real decoder, so the whole decode path runs; with no scripted
// latency nothing sleeps, no goroutine is started, and players and decoders
// are pooled, so a stream allocates nothing per event. Over loopback,
// Provider.Handler serves /v1/chat/completions, /v1/responses,
// /v1/messages and /v1/models, and Start runs it on 127.0.0.1:0. Render
// writes a turn's whole body without waiting, for replayable fixtures.
//
// It owns scripts, their playback and the fake endpoints. It does not own
// the wire layouts (wireenc), decoding (provider) or repair (streamwrap).
package scripted
