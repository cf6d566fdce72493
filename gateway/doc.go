// Package gateway is ocbench as an HTTP service: an OpenAI- and
// Anthropic-compatible proxy that runs an upstream's stream through
// OpenClaw's decorator chain and streams the repaired result back in the
// client's own wire format, turn loops served as SSE (/v1/runs), session
// read-back, Prometheus metrics and health.
//
// It owns the HTTP side: limits (body size, concurrent streams, request and
// idle timeouts), admission (429 or 503 with Retry-After instead of an
// unbounded queue), client disconnects cancelling the upstream, graceful
// shutdown that drains streams in flight, its own HTTP/1.1 server (one
// goroutine per connection, requests read in place; Server.Handler is the
// same handler chain for use under net/http), and the connection to the
// upstream: a lean HTTP/1.1 client of its own for a plain-http upstream
// (pooled persistent connections, strict response framing), net/http for
// HTTPS, proxies and redirects; and, for a serving process, a floor under
// the Go heap (SetHeapFloor). It does not decode or
// encode wires (provider, provider/wireenc), repair (streamwrap) or run
// turns (engine, through the RunService interface).
package gateway
