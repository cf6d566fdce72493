package gateway

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ocbench/ocbench/internal/redact"
	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider"
)

// Config is what a Server needs. Zero values take the defaults in
// setDefaults.
type Config struct {
	// Upstream is the base URL of the provider the proxy forwards to (an
	// OpenAI-compatible or Anthropic endpoint), OpenAI-style with /v1 (see
	// UpstreamBase). Required for the proxy routes; the serve command
	// points it at the built-in scripted upstream when the user gives none.
	Upstream string
	// UpstreamCompat, when set, replaces the detected chat compatibility
	// settings of Upstream (provider.CompatFor).
	UpstreamCompat *provider.Compat
	// Models, when non-empty, is the list /v1/models reports and the only
	// model ids the proxy accepts (others get 404). Empty: any id is
	// passed through and /v1/models asks the upstream.
	Models []string

	MaxBodyBytes int64 // request body limit; default 10 MiB
	MaxStreams   int   // concurrent streams; default 512; past it: 429
	// RequestTimeout bounds a whole request (default 10 minutes); IdleTimeout
	// the silence between upstream events (default 60 s; OpenClaw's text on
	// expiry).
	RequestTimeout time.Duration
	IdleTimeout    time.Duration
	// RetryAfter is what overloaded answers tell clients to wait (default 1 s).
	RetryAfter time.Duration

	// Slow and absent clients. HeaderTimeout bounds reading a request's
	// headers (default 10 s) and BodyTimeout its body (default 30 s); a
	// request holds no stream slot until its body is read. WriteTimeout
	// bounds each write to a client (default 30 s), so that a client that
	// stops reading loses its slot by then. KeepAliveTimeout closes
	// keep-alive connections idle that long (default 60 s), at most an
	// eighth of the shortest of the three read waits later: the gateway's
	// own server moves a connection's read timer only that often.
	HeaderTimeout    time.Duration
	BodyTimeout      time.Duration
	WriteTimeout     time.Duration
	KeepAliveTimeout time.Duration
	// DrainDelay is how long, after shutdown begins, the gateway keeps its
	// listener open answering 503 (and /healthz 503) so that a load
	// balancer sees it leave before connections are refused. It is spent
	// inside the grace given to Serve. Default 0.
	DrainDelay time.Duration

	// MaxAnswerBytes bounds the answer content the gateway holds for one
	// stream (default 8 MiB): the whole answer of a non-streaming request,
	// and on the streaming path what the decorator chain keeps back (text
	// already sent to the client is not kept). Past it the answer ends
	// with an AnswerTooLargeError (502, or an in-band error when
	// streaming).
	MaxAnswerBytes int

	// HTTPClient reaches the upstream; nil uses one with keep-alives tuned
	// for many concurrent streams.
	HTTPClient *http.Client

	// Runs serves /v1/runs and /v1/sessions; nil disables those routes.
	Runs RunService

	// Browser and network boundary (see guard): CORSOrigins are the
	// browser origins allowed ("*" for any; none by default). CheckHost
	// refuses Host names other than localhost, IP literals and
	// AllowedHosts (set it when listening on loopback: DNS rebinding).
	CORSOrigins  []string
	CheckHost    bool
	AllowedHosts []string
	// AuthKey, when set, is the gateway's own API key: /v1/ requests must
	// send it (Authorization: Bearer or x-api-key), and then the client's
	// credentials are not forwarded; the upstream gets UpstreamKey.
	AuthKey string
	// UpstreamKey, when set, is sent to the upstream instead of the
	// client's credentials (Authorization: Bearer on OpenAI wires,
	// x-api-key on Anthropic).
	UpstreamKey string
	// Secrets are further literal values (API keys of runs) redacted from
	// everything the gateway sends or logs (internal/redact, which also
	// catches key-shaped tokens); AuthKey and UpstreamKey are always
	// redacted, and so are the credentials a request carries.
	Secrets []string

	// Logf receives one line per failure worth an operator's look. Request
	// bodies and API keys are never passed to it.
	Logf func(format string, args ...any)
}

// RunService runs turn loops for /v1/runs and reads sessions back for
// /v1/sessions/{id}. The engine implements it (see engine.Service); the
// gateway knows only this interface, so that it stays a thin HTTP layer.
type RunService interface {
	// Run runs one turn loop for a session and calls emit for every event
	// as it happens (the message is the stream's live message). It returns
	// when the run ends.
	Run(ctx context.Context, req RunRequest, emit func(ev *llm.Event, m *llm.Message) error) (RunResult, error)
	// OpenSession opens a session's transcript (JSONL) for reading and
	// returns it with its size; ErrNoSession when there is no such
	// session. The gateway streams it to the client and closes it.
	OpenSession(id string) (io.ReadCloser, int64, error)
}

// ErrNoSession is returned by RunService.OpenSession for an id with no
// session (or a name in the sessions directory that is not a regular
// file: a link, a FIFO, a device).
var ErrNoSession = errors.New("gateway: no such session")

// RequestError is a run refused before it started (a workspace not
// allowed, a session over its size limit): the client gets Status and
// Message as an HTTP error instead of a 200 stream.
type RequestError struct {
	Status  int
	Type    string
	Message string
}

func (e *RequestError) Error() string { return e.Message }

// RunRequest is the body of POST /v1/runs.
type RunRequest struct {
	SessionID string `json:"session"`
	Workspace string `json:"workspace,omitempty"`
	Message   string `json:"message"`
	Model     string `json:"model,omitempty"`
}

// RunResult is the summary sent as the last SSE event of a run.
type RunResult struct {
	SessionID  string `json:"session"`
	Turns      int    `json:"turns"`
	ToolCalls  int    `json:"toolCalls"`
	StopReason string `json:"stopReason"`
	Error      string `json:"error,omitempty"`
}

func (c *Config) setDefaults() {
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = 10 << 20
	}
	if c.MaxStreams <= 0 {
		c.MaxStreams = 512
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = 10 * time.Minute
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = 60 * time.Second
	}
	if c.RetryAfter <= 0 {
		c.RetryAfter = time.Second
	}
	if c.HeaderTimeout <= 0 {
		c.HeaderTimeout = 10 * time.Second
	}
	if c.BodyTimeout <= 0 {
		c.BodyTimeout = 30 * time.Second
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = 30 * time.Second
	}
	if c.KeepAliveTimeout <= 0 {
		c.KeepAliveTimeout = 60 * time.Second
	}
	if c.MaxAnswerBytes <= 0 {
		c.MaxAnswerBytes = 8 << 20
	}
	if c.HTTPClient == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConns = 1024
		tr.MaxIdleConnsPerHost = 1024
		c.HTTPClient = &http.Client{Transport: tr}
	}
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
}

// Server is the HTTP gateway. Create it with New; it is safe for
// concurrent use and holds no lock on the per-request path.
type Server struct {
	cfg        Config
	urls       [3]string         // the upstream's chat, messages and responses endpoints
	upstreamRT http.RoundTripper // the transport of the gateway's own upstream client; nil when Config.HTTPClient was given
	// up is the gateway's own HTTP/1.1 client for a plain-http upstream
	// (nil: net/http serves it), upTargets the request targets of urls.
	up        *upstreamClient
	upTargets [3]string
	m         *metrics
	// streams is how many streams are being served, at most maxStreams:
	// a counter taken by compare-and-swap, where a channel of tokens cost
	// a locked send and receive per stream.
	streams    atomic.Int64
	maxStreams int64
	drain      atomic.Bool // set by Serve on shutdown: new work is refused with 503
	handler    http.Handler
	authKey    []byte           // SHA-256 of Config.AuthKey; nil: no gateway key
	drainDelay atomic.Int64     // Config.DrainDelay, until SetDrainDelay
	compat     provider.Compat  // what the upstream's chat endpoint accepts
	redactor   *redact.Redactor // configured secrets, never sent or logged
	secretList []string
}

// New validates cfg and returns a Server.
func New(cfg Config) (*Server, error) {
	ownClient := cfg.HTTPClient == nil
	cfg.setDefaults()
	s := &Server{cfg: cfg, maxStreams: int64(cfg.MaxStreams)}
	s.m = newMetrics(func() float64 { return float64(s.streams.Load()) })
	if ownClient {
		s.upstreamRT = cfg.HTTPClient.Transport
	}
	if cfg.Upstream != "" {
		s.urls = [3]string{upstreamURL(cfg.Upstream, wireChat), upstreamURL(cfg.Upstream, wireAnthropic), upstreamURL(cfg.Upstream, wireResponses)}
		if ownClient {
			s.up, s.upTargets = leanClientFor(s.urls)
		}
	}
	if cfg.AuthKey != "" {
		sum := sha256.Sum256([]byte(cfg.AuthKey))
		s.authKey = sum[:]
	}
	s.drainDelay.Store(int64(cfg.DrainDelay))
	s.compat = provider.CompatFor(&llm.Model{BaseURL: UpstreamBase(cfg.Upstream), Provider: "openai-compatible"})
	if cfg.UpstreamCompat != nil {
		s.compat = *cfg.UpstreamCompat
	}
	s.secretList = append([]string{cfg.AuthKey, cfg.UpstreamKey}, cfg.Secrets...)
	s.redactor = redact.New(s.secretList...)
	logf := cfg.Logf
	s.cfg.Logf = func(f string, a ...any) { logf("%s", s.redactor.String(fmt.Sprintf(f, a...))) }
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.m.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /v1/models", s.instrument("models", s.models))
	mux.HandleFunc("GET /v1/models/{id}", s.instrument("models", s.model))
	mux.HandleFunc("POST /v1/messages/count_tokens", s.instrument("count_tokens", s.stream("count_tokens", s.countTokens)))
	hot := map[string]http.HandlerFunc{
		"/v1/chat/completions": s.instrument("chat", s.stream("chat", s.proxy(wireChat))),
		"/v1/messages":         s.instrument("messages", s.stream("messages", s.proxy(wireAnthropic))),
		"/v1/responses":        s.instrument("responses", s.stream("responses", s.proxy(wireResponses))),
	}
	if cfg.Runs != nil {
		hot["/v1/runs"] = s.instrument("runs", s.stream("runs", s.runs))
		mux.HandleFunc("GET /v1/sessions/{id}", s.instrument("sessions", s.session))
	}
	for path, h := range hot {
		mux.HandleFunc("POST "+path, h)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", "no route for "+r.Method+" "+r.URL.Path)
	})
	s.handler = s.guard(hotRoutes(hot, mux))
	return s, nil
}

// hotRoutes serves a POST to one of the streaming routes' paths, written
// plainly (no escapes), by its handler directly, and everything else
// through mux, which routes those the same: the mux's path cleaning and
// pattern match are then not paid per stream.
func hotRoutes(hot map[string]http.HandlerFunc, mux *http.ServeMux) http.Handler {
	chat, messages, responses, runs := hot["/v1/chat/completions"], hot["/v1/messages"], hot["/v1/responses"], hot["/v1/runs"]
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.RawPath == "" {
			var h http.HandlerFunc
			switch r.URL.Path {
			case "/v1/chat/completions":
				h = chat
			case "/v1/messages":
				h = messages
			case "/v1/responses":
				h = responses
			case "/v1/runs":
				h = runs
			}
			if h != nil {
				h(w, r)
				return
			}
		}
		mux.ServeHTTP(w, r)
	})
}

// leanClientFor returns the lean client for the upstream's endpoints and
// their request targets, or nil when net/http must reach them.
func leanClientFor(urls [3]string) (*upstreamClient, [3]string) {
	var targets [3]string
	var c *upstreamClient
	for i, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil {
			return nil, targets
		}
		if c == nil {
			if c = newUpstreamClient(u); c == nil {
				return nil, targets
			}
		} else if u.Host != c.host || u.Scheme != "http" {
			return nil, targets
		}
		targets[i] = u.RequestURI()
	}
	return c, targets
}

// Handler returns the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.handler }

// Serve serves on ln until ctx is cancelled, then shuts down within grace:
// /healthz and new requests get 503 for Config.DrainDelay (load balancers
// see the gateway leave), then the listener closes and streams in flight
// run to their end until grace is spent; connections still open then are
// closed, which cancels their upstream calls and runs. Serve returns at
// most about a second after grace.
func (s *Server) Serve(ctx context.Context, ln net.Listener, grace time.Duration) error {
	hs := newHTTPServer(s)
	errc := make(chan error, 1)
	go func() { errc <- hs.serve(ln) }()
	select {
	case err := <-errc:
		hs.closeAll()
		hs.wg.Wait()
		return err
	case <-ctx.Done():
	}
	deadline := time.Now().Add(grace)
	s.drain.Store(true)
	if d := min(time.Duration(s.drainDelay.Load()), grace); d > 0 {
		time.Sleep(d)
	}
	hs.closing.Store(true)
	err := ln.Close() // stops accepting
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	if e := <-errc; e != nil && err == nil {
		err = e
	}
	// Idle connections are closed at once, busy ones when their answer
	// ends; past the grace what is left is closed: writes to those
	// clients fail and their request contexts are cancelled, so handlers
	// return.
	if !hs.shutdown(deadline) {
		hs.closeAll()
	}
	if !s.waitStreams(time.Second) {
		s.cfg.Logf("gateway: handlers still running a second after the grace period; stopping anyway")
	}
	if s.up != nil {
		s.up.closeIdle()
	}
	return err
}

// SetDrainDelay replaces Config.DrainDelay for a shutdown not yet begun
// (the serve command skips it on an interactive Ctrl-C).
func (s *Server) SetDrainDelay(d time.Duration) { s.drainDelay.Store(int64(d)) }

// waitStreams waits at most d for the streams being served to end, and
// reports whether they did. (The slot count it reads is the one each
// stream takes anyway: a WaitGroup beside it cost two more atomic writes
// per stream.)
func (s *Server) waitStreams(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for s.streams.Load() > 0 {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}

// healthz answers 200 while the gateway takes new streams; 503 with
// "draining" once shutdown has begun and 503 with "saturated" while every
// stream slot is busy (a new stream would get 429), so that a load
// balancer sends the next request elsewhere.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	busy := int(s.streams.Load())
	status, code := "ok", http.StatusOK
	switch {
	case s.drain.Load():
		status, code = "draining", http.StatusServiceUnavailable
	case int64(busy) >= s.maxStreams:
		status, code = "saturated", http.StatusServiceUnavailable
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	w.Write([]byte(`{"status":"` + status + `","streams":` + strconv.Itoa(busy) + `,"max_streams":` + strconv.FormatInt(s.maxStreams, 10) + "}\n"))
}

// streamHandler is a route that serves one stream: it gets the request
// body already read.
type streamHandler func(w http.ResponseWriter, r *http.Request, body []byte)

// stream admits a streaming route's request without queueing it: 503
// while draining, then the body is read under BodyTimeout (holding no
// slot, so clients trickling bodies cannot lock others out), then a
// stream slot is taken or the request gets 429 with Retry-After. The
// handler runs under RequestTimeout.
func (s *Server) stream(route string, next streamHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.refuseDraining(w, route) {
			return
		}
		body, ok := s.readBody(w, r)
		if !ok {
			return
		}
		if s.refuseDraining(w, route) {
			return
		}
		if !s.takeSlot() {
			s.m.rejected.WithLabelValues(route, "overload").Inc()
			w.Header().Set("Retry-After", s.retryAfter())
			// Each wire's own rate-limit type, so that SDKs raise their
			// rate-limit error class and honour Retry-After.
			typ := "rate_limit_exceeded"
			if route == "messages" || route == "count_tokens" {
				typ = "rate_limit_error"
			}
			writeWireError(w, routeWire(route), http.StatusTooManyRequests, typ, "too many concurrent streams; retry later")
			return
		}
		defer s.streams.Add(-1)
		if boundedBy(r.Context(), s.cfg.RequestTimeout) {
			// The gateway's own server bounds the request already.
			next(w, r, body)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), s.cfg.RequestTimeout)
		defer cancel()
		next(w, r.WithContext(ctx), body)
	}
}

// takeSlot takes a stream slot, if one is free.
func (s *Server) takeSlot() bool {
	for {
		n := s.streams.Load()
		if n >= s.maxStreams {
			return false
		}
		if s.streams.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

func (s *Server) refuseDraining(w http.ResponseWriter, route string) bool {
	if !s.drain.Load() {
		return false
	}
	s.m.rejected.WithLabelValues(route, "draining").Inc()
	w.Header().Set("Retry-After", s.retryAfter())
	w.Header().Set("Connection", "close")
	typ := "server_error"
	if routeWire(route) == wireAnthropic {
		typ = "overloaded_error"
	}
	writeWireError(w, routeWire(route), http.StatusServiceUnavailable, typ, "the gateway is shutting down")
	return true
}

// routeOf is the route label of a request path: one value per route on
// every metric, the same the route's handler is instrumented with.
func routeOf(path string) string {
	switch {
	case path == "/v1/chat/completions":
		return "chat"
	case path == "/v1/messages":
		return "messages"
	case path == "/v1/messages/count_tokens":
		return "count_tokens"
	case path == "/v1/responses":
		return "responses"
	case path == "/v1/runs":
		return "runs"
	case strings.HasPrefix(path, "/v1/sessions/"):
		return "sessions"
	case path == "/v1/models" || strings.HasPrefix(path, "/v1/models/"):
		return "models"
	case path == "/healthz":
		return "healthz"
	case path == "/metrics":
		return "metrics"
	}
	return "other"
}

// routeWire is the wire whose error shape a route answers in.
func routeWire(route string) wire {
	switch route {
	case "messages", "count_tokens":
		return wireAnthropic
	case "responses":
		return wireResponses
	}
	return wireChat
}

func (s *Server) retryAfter() string {
	return strconv.Itoa(int((s.cfg.RetryAfter + time.Second - 1) / time.Second))
}

// statusWriter remembers the status code for the request counter, sets a
// write deadline before every write (a client that stops reading fails
// the write by WriteTimeout instead of holding its slot forever) and keeps
// Flush reachable through Unwrap (http.ResponseController).
type statusWriter struct {
	http.ResponseWriter
	rc       *http.ResponseController
	timeout  time.Duration
	deadline time.Time // the write deadline last set
	code     int
	failed   bool // a write failed: the client is gone or too slow
}

// refresh moves the write deadline to now+timeout, unless the one set is
// still at least 7/8 of timeout away: the deadline is always between 7/8
// and all of timeout from the write, for one timer update per eighth of
// the timeout instead of one per write.
func (w *statusWriter) refresh() {
	d := time.Now().Add(w.timeout)
	if d.Sub(w.deadline) > w.timeout/8 {
		w.deadline = d
		w.rc.SetWriteDeadline(d)
	}
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	w.refresh()
	n, err := w.ResponseWriter.Write(b)
	if err != nil {
		w.failed = true
	}
	return n, err
}

func (w *statusWriter) Flush() { w.FlushError() }

// FlushError is what http.ResponseController.Flush calls.
func (w *statusWriter) FlushError() error {
	w.refresh()
	err := w.rc.Flush()
	if err != nil {
		w.failed = true
	}
	return err
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// controller is the ResponseController of w: the one instrument made for
// its statusWriter, or a new one for any other writer.
func controller(w http.ResponseWriter) *http.ResponseController {
	if sw, ok := w.(*statusWriter); ok {
		return sw.rc
	}
	return http.NewResponseController(w)
}

// instrument counts a route's requests by status and their latency, and
// turns a panic into a counted 500 (or a cut connection once the answer
// has begun) instead of a silent connection reset.
func (s *Server) instrument(route string, next http.HandlerFunc) http.HandlerFunc {
	idHeader := requestIDHeader(routeWire(route))
	// The series of the route's successes and of its latency, looked up
	// once, when first used (a series appears only once it has a value).
	var okOnce, latencyOnce sync.Once
	var okCount prometheus.Counter
	var latency prometheus.Observer
	return func(w http.ResponseWriter, r *http.Request) {
		cs := connStateOf(r.Context())
		var start time.Time
		if cs != nil {
			start = cs.start // the gateway's own server read the clock for the request
		}
		if start.IsZero() {
			start = time.Now()
		}
		// Every answer has a request id; the proxy replaces it with the
		// upstream's when there is one.
		var idb [48]byte
		id := strconv.AppendUint(append(append(idb[:0], "req_"...), idPrefix...), idSeq.Add(1), 36)
		var sw *statusWriter
		if cs != nil {
			// The connection's writer and header slice: its requests
			// come one after the other.
			sw = &cs.sw
			*sw = statusWriter{ResponseWriter: w, rc: cs.controller(w), timeout: s.cfg.WriteTimeout}
			cs.start = start // for the proxy's first-event latency
			cs.idv[0] = string(id)
			w.Header()[idHeader] = cs.idv[:]
		} else {
			sw = &statusWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeout: s.cfg.WriteTimeout}
			w.Header()[idHeader] = []string{string(id)}
		}
		defer func() {
			p := recover()
			if p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.m.panics.WithLabelValues(route).Inc()
				s.cfg.Logf("gateway: %s handler panicked: %v\n%s", route, p, debug.Stack())
			}
			if sw.code == 0 {
				if p != nil {
					writeError(sw, http.StatusInternalServerError, "server_error", "internal error")
				} else {
					sw.code = http.StatusOK
				}
			} else if !sw.failed {
				// The last bytes go out in net/http's final flush (with the
				// end of a chunked body, or whole with a Content-Length:
				// one write), which runs before net/http clears the
				// connection's write deadline: the deadline is moved on
				// for it here, so that a client that stops reading still
				// fails it by WriteTimeout.
				sw.refresh()
			}
			if sw.code == http.StatusOK {
				okOnce.Do(func() { okCount = s.m.requests.WithLabelValues(route, "200") })
				okCount.Inc()
			} else {
				s.m.requests.WithLabelValues(route, strconv.Itoa(sw.code)).Inc()
			}
			latencyOnce.Do(func() { latency = s.m.latency.WithLabelValues(route) })
			latency.Observe(time.Since(start).Seconds())
			if p != nil && sw.code != http.StatusInternalServerError {
				panic(http.ErrAbortHandler) // the answer had begun: cut it
			}
		}()
		next(sw, r)
	}
}

// writeWireError writes an error body in the shape of wire w's provider:
// OpenAI's {"error":{"message","type","param","code"}} or Anthropic's
// {"type":"error","error":{"type","message"}}, so that each SDK raises
// its own error class with the type intact.
func writeWireError(rw http.ResponseWriter, w wire, code int, typ, msg string) {
	if w == wireAnthropic {
		writeError(rw, code, typ, msg)
		return
	}
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(code)
	b := append([]byte(`{"error":{"message":`), llm.AppendJSONString(nil, msg)...)
	b = append(b, `,"type":`...)
	b = llm.AppendJSONString(b, typ)
	b = append(b, `,"param":null,"code":`...)
	b = llm.AppendJSONString(b, typ)
	b = append(b, "}}\n"...)
	rw.Write(b)
}

// writeError writes an error body that both OpenAI and Anthropic clients
// read: {"error":{"type":...,"message":...}}.
func writeError(w http.ResponseWriter, code int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	b := append([]byte(`{"type":"error","error":{"type":`), llm.AppendJSONString(nil, typ)...)
	b = append(b, `,"message":`...)
	b = llm.AppendJSONString(b, msg)
	b = append(b, "}}\n"...)
	w.Write(b)
}
