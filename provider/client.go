package provider

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ocbench/ocbench/internal/redact"
	"github.com/ocbench/ocbench/llm"
	"github.com/valyala/fastjson"
)

// ErrUnknownAPI is returned (wrapped in an *llm.ModelError) for a request
// whose Model.API names no wire format this package speaks. It is
// llm.ErrUnknownAPI.
var ErrUnknownAPI = llm.ErrUnknownAPI

// Default endpoints, used when Model.BaseURL is empty.
const (
	DefaultOpenAIBaseURL    = "https://api.openai.com/v1"
	DefaultAnthropicBaseURL = "https://api.anthropic.com"
	AnthropicVersion        = "2023-06-01"
	maxErrorBody            = 64 << 10
	maxDrain                = 256 << 10
)

// sharedTransport is the keep-alive connection pool every Client uses
// unless given its own http.Client.
var sharedTransport = &http.Transport{
	Proxy: http.ProxyFromEnvironment,
	DialContext: (&net.Dialer{
		Timeout:   30 * time.Second,
		KeepAlive: 30 * time.Second,
	}).DialContext,
	ForceAttemptHTTP2:     true,
	MaxIdleConns:          1024,
	MaxIdleConnsPerHost:   256,
	IdleConnTimeout:       90 * time.Second,
	TLSHandshakeTimeout:   10 * time.Second,
	ExpectContinueTimeout: time.Second,
}

// Client sends llm.Requests to OpenAI-compatible and Anthropic endpoints and
// returns the decoded streams. It is safe for concurrent use.
type Client struct {
	hc      *http.Client
	header  http.Header
	opts    Options
	getenv  func(string) string
	bufPool sync.Pool
}

// ClientOption configures a Client.
type ClientOption func(*Client) error

// WithHTTPClient makes the client send with hc instead of the shared
// keep-alive transport.
func WithHTTPClient(hc *http.Client) ClientOption {
	return func(c *Client) error {
		if hc == nil {
			return errors.New("provider: WithHTTPClient(nil)")
		}
		c.hc = hc
		return nil
	}
}

// WithHeader adds a header to every request (e.g. an OpenRouter referer or
// an Anthropic beta flag).
func WithHeader(key, value string) ClientOption {
	return func(c *Client) error {
		if key == "" {
			return errors.New("provider: WithHeader with an empty key")
		}
		c.header.Add(key, value)
		return nil
	}
}

// WithLimits sets the decoders' MaxEventBytes and MaxArgBytes (zero keeps
// the default).
func WithLimits(maxEventBytes, maxArgBytes int) ClientOption {
	return func(c *Client) error {
		if maxEventBytes < 0 || maxArgBytes < 0 {
			return errors.New("provider: negative limit")
		}
		c.opts.MaxEventBytes = maxEventBytes
		c.opts.MaxArgBytes = maxArgBytes
		return nil
	}
}

// WithGetenv replaces os.Getenv for finding API keys.
func WithGetenv(getenv func(string) string) ClientOption {
	return func(c *Client) error {
		if getenv == nil {
			return errors.New("provider: WithGetenv(nil)")
		}
		c.getenv = getenv
		return nil
	}
}

// NewClient returns a client. Without options it uses a shared keep-alive
// transport with no overall timeout (streams may be long; cancel them with
// the request context).
func NewClient(opts ...ClientOption) (*Client, error) {
	c := &Client{hc: &http.Client{Transport: sharedTransport}, header: http.Header{}, getenv: os.Getenv}
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// StreamFunc returns c.Stream as an llm.StreamFunc.
func (c *Client) StreamFunc() llm.StreamFunc { return c.Stream }

// Endpoint returns the URL a request for model m is sent to.
func Endpoint(w Wire, m *llm.Model) string {
	base := strings.TrimRight(m.BaseURL, "/")
	switch w {
	case WireAnthropic:
		if base == "" {
			base = DefaultAnthropicBaseURL
		}
		if strings.HasSuffix(base, "/v1") {
			return base + "/messages"
		}
		return base + "/v1/messages"
	case WireOpenAIResponses:
		if base == "" {
			base = DefaultOpenAIBaseURL
		}
		return base + "/responses"
	default:
		if base == "" {
			base = DefaultOpenAIBaseURL
		}
		return base + "/chat/completions"
	}
}

// apiKey finds the key: req.APIKey, else the variables of the model's
// profile (Compat.KeyEnv alone when set, else <PROVIDER>_API_KEY, then
// the wire's usual OPENAI_API_KEY / ANTHROPIC_API_KEY). An empty key sends
// no credentials (local servers).
func (c *Client) apiKey(w Wire, req *llm.Request) string {
	if req.APIKey != "" {
		return req.APIKey
	}
	var buf [2]string
	for _, k := range keyEnvs(buf[:0], w, req.Model.Provider, CompatFor(&req.Model).KeyEnv) {
		if v := c.getenv(k); v != "" {
			return v
		}
	}
	return ""
}

// Stream encodes req for req.Model.API, sends it and returns the decoded
// stream. A non-2xx answer is returned as *HTTPError with no stream.
// Cancelling ctx closes the body and ends the stream with StopAborted.
func (c *Client) Stream(ctx context.Context, req *llm.Request) (llm.Stream, error) {
	w, ok := WireOf(req.Model.API)
	if !ok {
		_, err := llm.ParseAPI(string(req.Model.API))
		return nil, fmt.Errorf("provider: %w", err)
	}
	if err := req.Model.Validate(); err != nil {
		return nil, fmt.Errorf("provider: %w", err)
	}
	if err := checkHeaders(w, req.Options.Headers); err != nil {
		return nil, err
	}
	bp, _ := c.bufPool.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	body, err := AppendRequestJSON((*bp)[:0], w, req)
	if err != nil {
		c.bufPool.Put(bp)
		return nil, err
	}
	*bp = body
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, Endpoint(w, &req.Model), bytes.NewReader(*bp))
	if err != nil {
		c.bufPool.Put(bp)
		return nil, err
	}
	h := hreq.Header
	for k, v := range c.header {
		h[k] = v
	}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "text/event-stream")
	key := c.apiKey(w, req)
	if w == WireAnthropic {
		if key != "" {
			h.Set("x-api-key", key)
		}
	} else if key != "" {
		h.Set("Authorization", "Bearer "+key)
	}
	// The request's own headers come after the transport's, which
	// checkHeaders keeps them from replacing.
	for k, v := range req.Options.Headers {
		h.Add(k, v)
	}
	if w == WireAnthropic && h.Get("anthropic-version") == "" {
		h.Set("anthropic-version", AnthropicVersion)
	}
	resp, err := c.hc.Do(hreq)
	if err != nil {
		c.bufPool.Put(bp)
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		herr := readHTTPError(resp, key, req.Options.Headers)
		c.bufPool.Put(bp)
		return nil, herr
	}
	d := GetDecoder(w, resp.Body, Options{
		API: req.Model.API, Provider: req.Model.Provider, Model: req.Model.ID,
		MaxEventBytes: c.opts.MaxEventBytes, MaxArgBytes: c.opts.MaxArgBytes,
		Reasoning: req.Model.Reasoning,
	})
	d.SetContext(ctx)
	return &httpStream{d: d, body: resp.Body, c: c, buf: bp}, nil
}

// transportHeaders are the headers the transport owns: credentials,
// content negotiation (the body is JSON, the answer an uncompressed event
// stream the decoder reads) and the connection's own. A request's
// Options.Headers may not set them.
var transportHeaders = map[string]bool{
	"Authorization": true, "Proxy-Authorization": true, "X-Api-Key": true, "Api-Key": true, "Cookie": true,
	"Content-Type": true, "Content-Length": true, "Content-Encoding": true, "Transfer-Encoding": true,
	"Accept": true, "Accept-Encoding": true,
	"Host": true, "Connection": true, "Proxy-Connection": true, "Keep-Alive": true, "Te": true, "Trailer": true, "Upgrade": true,
}

// checkHeaders refuses a request header the transport owns and one that
// is not a valid HTTP field (its name a token, its value free of control
// characters but tab). Errors name the header, never its value.
func checkHeaders(w Wire, headers map[string]string) error {
	for k, v := range headers {
		if !headerName(k) {
			return invalid(w, "headers["+strconv.Quote(k)+"]", "not a valid header name")
		}
		if transportHeaders[http.CanonicalHeaderKey(k)] {
			return invalid(w, "headers["+k+"]", "the transport sets this header itself (credentials go in Request.APIKey)")
		}
		for i := 0; i < len(v); i++ {
			if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
				return invalid(w, "headers["+k+"]", "the value holds a control character")
			}
		}
	}
	return nil
}

// headerName reports whether s is an RFC 9110 token.
func headerName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			continue
		}
		if !strings.ContainsRune("!#$%&'*+-.^_`|~", rune(c)) {
			return false
		}
	}
	return true
}

// readHTTPError turns a refused request into an *HTTPError, reading a
// bounded part of the body. The request's key and the values of its own
// headers (which may be credentials of a gateway in between) are redacted
// from the body first: an excerpt cut through an echoed key would leave
// part of it that no later redaction recognises.
func readHTTPError(resp *http.Response, key string, headers map[string]string) *HTTPError {
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	secrets := []string{key}
	for _, v := range headers {
		secrets = append(secrets, v)
	}
	body = redact.New(secrets...).Bytes(body)
	e := &HTTPError{Status: resp.StatusCode, RetryAfter: retryAfter(resp.Header, time.Now())}
	if v, err := fastjson.ParseBytes(body); err == nil {
		ev := v.Get("error")
		if ev == nil {
			ev = v
		}
		if ev.Type() == fastjson.TypeString {
			b, _ := ev.StringBytes()
			e.Message = string(b)
		} else {
			e.Message = string(ev.GetStringBytes("message"))
			e.Type = string(ev.GetStringBytes("type"))
			if e.Type == "" {
				e.Type = string(ev.GetStringBytes("code"))
			}
		}
	}
	if e.Message == "" {
		e.Message = excerpt(bytes.TrimSpace(body))
	}
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	return e
}

// retryAfter reads retry-after-ms (OpenAI) or Retry-After (seconds or an
// HTTP date).
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("retry-after-ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// httpStream is a pooled decoder over a response body.
type httpStream struct {
	d      *Decoder
	body   io.ReadCloser
	c      *Client
	buf    *[]byte
	closed bool
	err    error // Err at Close
	empty  llm.Message
	noEv   llm.Event
}

var (
	_ llm.Stream           = (*httpStream)(nil)
	_ llm.Stepper          = (*httpStream)(nil)
	_ RawStopReasoner      = (*httpStream)(nil)
	_ llm.ActivityReporter = (*httpStream)(nil)
)

func (s *httpStream) Next() bool {
	if s.closed {
		return false
	}
	return s.d.Next()
}

// Step is Next, then Event and Message (llm.Stepper).
func (s *httpStream) Step() (*llm.Event, *llm.Message, bool) {
	if s.closed {
		return nil, &s.empty, false
	}
	return s.d.Step()
}

func (s *httpStream) Event() *llm.Event {
	if s.closed {
		return &s.noEv
	}
	return s.d.Event()
}

// Message returns the stream's message; after Close it returns an empty
// message (the decoder went back to the pool), so keep a Clone if needed.
func (s *httpStream) Message() *llm.Message {
	if s.closed {
		return &s.empty
	}
	return s.d.Message()
}

func (s *httpStream) Err() error {
	if s.closed {
		return s.err
	}
	return s.d.Err()
}

// ReportsActivity forwards the decoder's (llm.ActivityReporter).
func (s *httpStream) ReportsActivity() bool {
	return !s.closed && s.d.ReportsActivity()
}

func (s *httpStream) RawStopReason() []byte {
	if s.closed {
		return nil
	}
	return s.d.RawStopReason()
}

// Close drains a little of what is left of the body, so the connection
// can be reused, closes it and returns the decoder to the pool.
func (s *httpStream) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	s.err = s.d.Err()
	if s.d.state >= stateFinished && s.d.ctx.Err() == nil {
		// Read the rest of a finished body (the chunked terminator, a
		// trailing [DONE]) so the connection goes back to the pool.
		s.d.consume()
		_, _ = io.Copy(io.Discard, io.LimitReader(s.d.br, maxDrain))
	}
	err := s.body.Close()
	s.d.r = nil
	PutDecoder(s.d)
	s.d = nil
	s.c.bufPool.Put(s.buf)
	s.buf = nil
	return err
}
