// Package streamwrap owns OpenClaw's stream decorators and the order in which
// they wrap a provider: the yield-abort gate, the replay sanitizer (request
// side), standalone-text tool-call promotion, tool-name trimming and the
// unknown-tool loop guard, argument repair and the repair profiles,
// HTML-entity decoding, output text transforms, the payload log, sensitive
// stop reasons, the idle timeout and diagnostic model-call events.
//
// It does not decode wire formats (package provider does) and it does not
// hold the repair algorithms themselves (package streamwrap/repair does);
// the decorators decide when and where those pure functions run.
//
// # Decorators
//
// Each decorator wraps an llm.StreamFunc and returns another, as
// http.Handler middleware does. The stream it returns wraps the inner
// llm.Stream: it sees every event in order, may mutate the event and the
// shared llm.Message in place (OpenClaw's wrappers mutate pi-ai's shared
// partial message), may emit or swallow events, and patches the final
// message. Per-stream state lives in a struct that is pooled and reset, so
// that a steady-state stream allocates nothing per event. Optional
// capabilities of the inner stream survive the wrapping: every decorator
// stream has Unwrap and forwards RawStopReason and ReportsActivity.
//
// A decorator stream must be closed exactly once; after Close it returns
// to a pool and must not be used again.
//
// # Order
//
// Chain applies the decorators in the order of OpenClaw 2026.9.6's
// installEmbeddedAttemptStreamGuards (streamwrap.md §2), each with its
// condition. Events run through the in-place decorators inner first (trim,
// then repair, then decode, then text transforms); the stop-reason
// decorator sees the stream after them, the idle timer sits outside it and
// diagnostics time the whole call.
//
// # Mapping OpenClaw's objects
//
// OpenClaw's events carry a live partial message, a final message on done
// and error, and the block of toolcall_end; its stream has a separate
// result(). In Go one llm.Message is all of these: the partial while
// streaming, the final message once the stream has ended. A decorator
// treats Message during a non-terminal event as OpenClaw's event.partial,
// during done or error as event.message, and once the inner stream is
// exhausted (or at its terminal event) as the result() message, patching
// it before the consumer reads it.
package streamwrap
