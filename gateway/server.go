package gateway

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ocbench/ocbench/llm"
)

// Config is what a Server needs. Zero values take the defaults in
// setDefaults.
type Config struct {
	// Upstream is the base URL of the provider the proxy forwards to (an
	// OpenAI-compatible or Anthropic endpoint). Required for the proxy
	// routes; the serve command points it at the built-in scripted
	// upstream when the user gives none.
	Upstream string
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

	// HTTPClient reaches the upstream; nil uses one with keep-alives tuned
	// for many concurrent streams.
	HTTPClient *http.Client

	// Runs serves /v1/runs and /v1/sessions; nil disables those routes.
	Runs RunService

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
	// Session appends the session's transcript (JSONL) to dst; ok is false
	// when there is no such session.
	Session(id string, dst []byte) (out []byte, ok bool, err error)
}

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
	cfg     Config
	m       *metrics
	slots   chan struct{} // one token per stream being served
	drain   atomic.Bool   // set by Shutdown: new work is refused with 503
	active  sync.WaitGroup
	handler http.Handler
}

// New validates cfg and returns a Server.
func New(cfg Config) (*Server, error) {
	cfg.setDefaults()
	s := &Server{cfg: cfg, m: newMetrics(), slots: make(chan struct{}, cfg.MaxStreams)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.m.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /v1/models", s.instrument("models", s.models))
	mux.HandleFunc("POST /v1/chat/completions", s.instrument("chat", s.admit(s.proxy(wireChat))))
	mux.HandleFunc("POST /v1/messages", s.instrument("messages", s.admit(s.proxy(wireAnthropic))))
	if cfg.Runs != nil {
		mux.HandleFunc("POST /v1/runs", s.instrument("runs", s.admit(s.runs)))
		mux.HandleFunc("GET /v1/sessions/{id}", s.instrument("sessions", s.session))
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", "no route for "+r.Method+" "+r.URL.Path)
	})
	s.handler = mux
	return s, nil
}

// Handler returns the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.handler }

// Serve serves on ln until ctx is cancelled, then shuts down gracefully:
// new requests get 503, streams in flight run to their end (at most
// grace), and Serve returns.
func (s *Server) Serve(ctx context.Context, ln net.Listener, grace time.Duration) error {
	hs := &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.drain.Store(true)
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err := hs.Shutdown(sctx) // stops accepting; waits for handlers in flight
	s.active.Wait()
	if errors.Is(err, context.DeadlineExceeded) {
		hs.Close()
	}
	if e := <-errc; err == nil && !errors.Is(e, http.ErrServerClosed) {
		err = e
	}
	return err
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	if s.drain.Load() {
		writeError(w, http.StatusServiceUnavailable, "draining", "the gateway is shutting down")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"status":"ok","streams":` + strconv.Itoa(len(s.slots)) + `}`))
}

// admit refuses work the gateway cannot take now instead of queueing it:
// 503 while draining, 429 with Retry-After when every stream slot is busy.
func (s *Server) admit(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.drain.Load() {
			s.m.rejected.WithLabelValues("draining").Inc()
			w.Header().Set("Retry-After", s.retryAfter())
			writeError(w, http.StatusServiceUnavailable, "draining", "the gateway is shutting down")
			return
		}
		select {
		case s.slots <- struct{}{}:
		default:
			s.m.rejected.WithLabelValues("overload").Inc()
			w.Header().Set("Retry-After", s.retryAfter())
			writeError(w, http.StatusTooManyRequests, "overloaded", "too many concurrent streams; retry later")
			return
		}
		s.active.Add(1)
		s.m.inFlight.Inc()
		defer func() {
			s.m.inFlight.Dec()
			s.active.Done()
			<-s.slots
		}()
		ctx, cancel := context.WithTimeout(r.Context(), s.cfg.RequestTimeout)
		defer cancel()
		next(w, r.WithContext(ctx))
	}
}

func (s *Server) retryAfter() string {
	return strconv.Itoa(int((s.cfg.RetryAfter + time.Second - 1) / time.Second))
}

// statusWriter remembers the status code for the request counter and
// keeps Flush reachable through Unwrap (http.ResponseController).
type statusWriter struct {
	http.ResponseWriter
	code int
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
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (s *Server) instrument(route string, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		next(sw, r)
		if sw.code == 0 {
			sw.code = http.StatusOK
		}
		s.m.requests.WithLabelValues(route, strconv.Itoa(sw.code)).Inc()
		s.m.latency.WithLabelValues(route).Observe(time.Since(start).Seconds())
	}
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
