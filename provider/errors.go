package provider

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// ErrTruncated reports a body that ended before the provider finished the
// message (no terminal event, or a cut inside an event). Typically it means
// a dropped connection, a proxy timeout or a server crash mid-stream.
var ErrTruncated = errors.New("provider: stream ended before the message was complete")

// ErrBadJSON is wrapped by a *SyntaxError when an event's data is not JSON.
// Typically it means a broken proxy or a server that is not the wire format
// the decoder was told to expect.
var ErrBadJSON = errors.New("provider: event data is not valid JSON")

// ErrInvalidUTF8 is wrapped by a *SyntaxError when a decoded string (text,
// thinking, tool name, id or arguments) is not valid UTF-8.
var ErrInvalidUTF8 = errors.New("provider: invalid UTF-8 in event")

// LimitError reports input over a configured limit: What is "SSE line",
// "SSE event" or "tool-call arguments", Limit the limit in bytes.
type LimitError struct {
	What  string
	Limit int
}

func (e *LimitError) Error() string {
	return "provider: " + e.What + " exceeds the limit of " + strconv.Itoa(e.Limit) + " bytes"
}

// ProviderError is an error the provider reported inside the stream (an
// Anthropic "error" event, a Responses "error" or "response.failed" event,
// or a chat chunk holding {"error":{...}}). Type is the provider's error
// type or code (e.g. "overloaded_error"), Message its text.
type ProviderError struct {
	Type    string
	Message string
}

func (e *ProviderError) Error() string {
	if e.Type == "" {
		return "provider error: " + e.Message
	}
	return "provider error (" + e.Type + "): " + e.Message
}

// SyntaxError reports an event that could not be decoded. Offset is the
// byte offset of the event in the body, Excerpt a bounded excerpt of it, and
// Err is ErrBadJSON or ErrInvalidUTF8 (use errors.Is).
type SyntaxError struct {
	Offset  int64
	Excerpt string
	Err     error
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%v at offset %d: %q", e.Err, e.Offset, e.Excerpt)
}

func (e *SyntaxError) Unwrap() error { return e.Err }

// StopReasonError ends a stream whose provider finished with a stop reason
// that pi-ai maps to an error: a refusal, a content filter, or a reason it
// does not know ("Unhandled stop reason: x"). Raw is the wire's reason and
// Message the message's ErrorMessage.
type StopReasonError struct {
	Raw     string
	Message string
}

func (e *StopReasonError) Error() string { return "provider: " + e.Message }

// HTTPError is a refused request: the provider answered with a non-2xx
// status before streaming. RetryAfter is the wait the provider asked for
// (Retry-After / retry-after-ms), zero when it gave none. Message is the
// provider's error message (or a bounded excerpt of the body) and Type the
// provider's error type when the body said.
type HTTPError struct {
	Status     int
	RetryAfter time.Duration
	Type       string
	Message    string
}

func (e *HTTPError) Error() string {
	s := "provider: HTTP " + strconv.Itoa(e.Status)
	if e.Type != "" {
		s += " " + e.Type
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.RetryAfter > 0 {
		s += " (retry after " + e.RetryAfter.String() + ")"
	}
	return s
}

// Temporary reports whether retrying the request may succeed (429, 408,
// 409 and 5xx, including Anthropic's 529 overloaded).
func (e *HTTPError) Temporary() bool {
	return e.Status == 429 || e.Status == 408 || e.Status == 409 || e.Status >= 500
}

// excerpt returns at most 40+40 bytes of b around its middle, as fastjson does.
func excerpt(b []byte) string {
	const n = 40
	if len(b) <= 2*n {
		return string(b)
	}
	return string(b[:n]) + "..." + string(b[len(b)-n:])
}

// ErrUnsupportedOption is wrapped by an *OptionError when a request option
// (llm.RequestOptions) has no equivalent on the request's wire, e.g. stop
// sequences on OpenAI Responses or a json_object response format on
// Anthropic Messages. Nothing is sent: an option is never dropped.
var ErrUnsupportedOption = errors.New("provider: request option not supported by this wire")

// ErrInvalidOption is wrapped by an *OptionError when a request option is
// malformed or conflicts with the request: an ExtraBody that is not one
// JSON object or repeats a member the encoder writes, a schema that is not
// a JSON object, a tool choice naming a tool the request does not offer, a
// header the transport owns (authentication, content negotiation).
var ErrInvalidOption = errors.New("provider: invalid request option")

// OptionError reports a request option refused before anything was sent.
// Option names it as the caller wrote it ("stop", "tool_choice",
// "response_format", "top_p", "parallel_tool_calls", "headers[Authorization]",
// "extra_body.model"); Wire is the request's wire; Reason says why; Err is
// ErrUnsupportedOption or ErrInvalidOption (use errors.Is).
type OptionError struct {
	Option string
	Wire   Wire
	Reason string
	Err    error
}

func (e *OptionError) Error() string {
	return "provider: request option " + e.Option + " refused for " + e.Wire.String() + ": " + e.Reason
}

func (e *OptionError) Unwrap() error { return e.Err }

func unsupported(w Wire, option, reason string) error {
	return &OptionError{Option: option, Wire: w, Reason: reason, Err: ErrUnsupportedOption}
}

func invalid(w Wire, option, reason string) error {
	return &OptionError{Option: option, Wire: w, Reason: reason, Err: ErrInvalidOption}
}
