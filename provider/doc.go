// Package provider turns provider HTTP responses into llm streams.
//
// It owns the wire decoders for the three streaming APIs ocbench speaks
// (OpenAI Chat Completions, OpenAI Responses and Anthropic Messages), the
// encoders of their request bodies, and the HTTP transport that sends a
// llm.Request and returns the decoded llm.Stream.
//
// A Decoder reads Server-Sent Events through a bufio.Reader, framing the
// lines already buffered in place (an event's data is a slice of the read
// buffer until the next read) and reading the rest with ReadSlice, growing
// up to Options.MaxEventBytes; it builds the stream's llm.Message in place:
// text, thinking and tool-call blocks, usage, stop reason and model identity.
// After a warm-up, decoding a whole stream allocates nothing; decoders are
// resettable (Reset) and pooled (GetDecoder / PutDecoder).
//
// # Two JSON paths
//
// The hot events (chat chunks, Anthropic content_block_delta, Responses
// text and argument deltas) are decoded by a field-targeted scanner
// (jscan.go) that validates the JSON (RFC 8259) in one pass, never builds a
// tree, and unescapes only the strings it uses into a per-event arena.
// Every other event, and unusual shapes such as in-band errors, go to
// reference decoders built on one reused fastjson.Parser (chat.go,
// anthropic.go, responses.go). The fuzzers run both on every input and
// require the same events and message wherever both accept the JSON.
//
// An event that repeats the shape of one the scanner decoded (the same
// bytes but for some string contents and numbers) is matched against it
// instead (shape.go): literal runs compared, holes checked, the learned
// spans moved. The fuzzers also decode every input without shapes and
// require exactly the same result, errors included.
//
// Decoders never repair: a tool call whose argument text is not valid JSON
// ends with empty Arguments and its RawArgs intact, and the streamwrap
// package decides what to do with it. Guards (loop guard, idle timeout,
// sensitive stop reasons) are streamwrap's too; the scripted provider used by
// the harness lives in provider/scripted, and the wire encoder used to
// produce synthetic bodies in provider/wireenc.
//
// # Failures
//
// A stream that ends early, exceeds a limit, or receives an in-band error
// keeps everything decoded so far in its Message, then emits one EventError
// with llm.StopError (llm.StopAborted for a cancelled context). Err returns a
// typed error: ErrTruncated, *LimitError, *ProviderError, *SyntaxError
// (wrapping ErrBadJSON or ErrInvalidUTF8), *StopReasonError or the context's
// error. Errors before streaming starts (HTTP 4xx/5xx) are *HTTPError values
// returned by the transport's StreamFunc.
//
// # Requests
//
// AppendRequestJSON encodes an llm.Request in a wire's JSON, with its
// llm.RequestOptions under the wire's own names; Client.Stream also adds
// the options' headers after its own. Before anything is sent, a model
// that cannot be right is refused with an *llm.ModelError
// (llm.Model.Validate), and an option the wire has no equivalent for, or a
// malformed one, with an *OptionError wrapping ErrUnsupportedOption or
// ErrInvalidOption. ProfileOf shows what the transport does for a model:
// the URL, the compatibility profile (Compat, detected from the provider
// id and the base URL unless the model sets one) and the key variables.
package provider
