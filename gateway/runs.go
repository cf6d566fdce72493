package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ocbench/ocbench/llm"
)

// models answers GET /v1/models in OpenAI's list shape. With configured
// Models it lists them; otherwise it asks the upstream and relays its list.
func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	if len(s.cfg.Models) == 0 {
		if s.cfg.Upstream == "" {
			writeError(w, http.StatusNotFound, "not_found", "no models configured and no upstream")
			return
		}
		req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, UpstreamBase(s.cfg.Upstream)+"/models", nil)
		if err != nil {
			writeError(w, http.StatusInternalServerError, "server_error", "bad upstream URL")
			return
		}
		s.relayGet(w, r, req)
		return
	}
	b := []byte(`{"object":"list","data":[`)
	for i, id := range s.cfg.Models {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = llm.AppendJSONString(b, id)
		b = append(b, `,"object":"model","owned_by":"ocbench"}`...)
	}
	b = append(b, "]}\n"...)
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

// model answers GET /v1/models/{id}: with configured Models the model's
// object (404 for others), in Anthropic's shape when the client sends
// anthropic-version, else OpenAI's; without, the upstream's answer.
func (s *Server) model(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	anth := r.Header.Get("Anthropic-Version") != ""
	if len(s.cfg.Models) == 0 {
		if s.cfg.Upstream == "" {
			writeError(w, http.StatusNotFound, "not_found_error", "no models configured and no upstream")
			return
		}
		req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, UpstreamBase(s.cfg.Upstream)+"/models/"+url.PathEscape(id), nil)
		if err != nil {
			writeError(w, http.StatusBadRequest, "invalid_request_error", "bad model id")
			return
		}
		s.relayGet(w, r, req)
		return
	}
	if !slices.Contains(s.cfg.Models, id) {
		wr := wireChat
		if anth {
			wr = wireAnthropic
		}
		writeWireError(w, wr, http.StatusNotFound, "not_found_error", "unknown model "+id)
		return
	}
	var b []byte
	if anth {
		b = append(b, `{"type":"model","id":`...)
		b = llm.AppendJSONString(b, id)
		b = append(b, `,"display_name":`...)
		b = llm.AppendJSONString(b, id)
		b = append(b, `,"created_at":"1970-01-01T00:00:00Z"}`...)
	} else {
		b = append(b, `{"id":`...)
		b = llm.AppendJSONString(b, id)
		b = append(b, `,"object":"model","created":0,"owned_by":"ocbench"}`...)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(append(b, '\n'))
}

// relayGet sends req to the upstream with the client's credentials and
// relays the answer, bounded and with secrets redacted.
func (s *Server) relayGet(w http.ResponseWriter, r *http.Request, req *http.Request) {
	s.upstreamAuth(req.Header, r.Header, wireChat)
	resp, err := s.cfg.HTTPClient.Do(req)
	if err != nil {
		s.m.upstreamErrors.WithLabelValues("models", "connect").Inc()
		writeError(w, http.StatusBadGateway, "upstream_unreachable", "the upstream could not be reached")
		return
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, s.cfg.MaxBodyBytes))
	if err != nil {
		writeError(w, http.StatusBadGateway, "upstream_unreachable", "the upstream's answer could not be read")
		return
	}
	if id := upstreamRequestID(resp.Header); id != "" {
		w.Header().Set("X-Request-Id", id)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(resp.StatusCode)
	sc := s.requestSecrets(r)
	w.Write(sc.bytes(b))
}

// runs answers POST /v1/runs: it runs a turn loop and streams its events
// as SSE, one "data:" line per event in the replay event format, then a
// final "event: result" with the run's summary.
func (s *Server) runs(w http.ResponseWriter, r *http.Request, body []byte) {
	var req RunRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "body is not a run request: "+err.Error())
		return
	}
	if req.SessionID == "" || req.Message == "" {
		writeError(w, http.StatusBadRequest, "invalid_request_error", `"session" and "message" are required`)
		return
	}
	if !validSessionID(req.SessionID) {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "session ids are 1-128 characters of [A-Za-z0-9._-]")
		return
	}
	// A client that leaves or stops reading ends the run: its context is
	// cancelled at the first failed write.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	sse := getSSEWriter(w)
	defer putSSEWriter(sse)
	holdLast := false
	if c, ok := s.cfg.Runs.(RunCoalescer); ok && c.CoalescesRuns() {
		sse.coalesce = true
		ctx = withFlushHook(ctx, sse.hook)
		if e, ok := s.cfg.Runs.(RunEnder); ok {
			holdLast = e.EndsWithoutWait()
		}
	}
	start := time.Now()
	first := true
	res, err := s.cfg.Runs.Run(ctx, req, func(ev *llm.Event, m *llm.Message) error {
		if first {
			first = false
			s.m.timeToFirstEvent.WithLabelValues("runs").Observe(time.Since(start).Seconds())
			// A coalescing run's first event goes out with the rest of
			// what its provider gives before it waits (the flush hook, or
			// the model call's end for a provider that never waits), not
			// in a write of its own; nothing is held across a wait.
			if err := sse.writeEvent(ev, m, !sse.coalesce); err != nil {
				cancel()
				return err
			}
			s.m.runEvents.Inc()
			return nil
		}
		s.m.runEvents.Inc()
		// A model call's last event is written before the run goes on to
		// its tools or its end; the last call's goes out with the result
		// when nothing waits in between.
		flush := ev.Type.IsTerminal() && !(holdLast && ev.Type == llm.EventDone && !hasToolCall(m))
		if err := sse.writeEvent(ev, m, flush); err != nil {
			cancel()
			return err
		}
		return nil
	})
	var re *RequestError
	if first && errors.As(err, &re) {
		writeError(w, re.Status, re.Type, re.Message)
		return
	}
	if err != nil && res.Error == "" {
		res.Error = err.Error()
	}
	if res.Error != "" {
		sc := s.requestSecrets(r)
		res.Error = sc.string(res.Error)
	}
	if res.Error != "" && !errors.Is(err, context.Canceled) {
		s.m.streamErrors.WithLabelValues("runs", "run_error").Inc()
	}
	res.SessionID = req.SessionID
	sse.writeResult(&res)
}

// session answers GET /v1/sessions/{id} with the session's JSONL,
// streamed from the file in constant memory whatever its size.
func (s *Server) session(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !validSessionID(id) {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "session ids are 1-128 characters of [A-Za-z0-9._-]")
		return
	}
	f, size, err := s.cfg.Runs.OpenSession(id)
	switch {
	case errors.Is(err, ErrNoSession):
		writeError(w, http.StatusNotFound, "not_found", "no session "+id)
		return
	case err != nil:
		// The error names the file; the client is not told where it lives.
		s.cfg.Logf("gateway: reading session %s: %v", id, errText(err))
		writeError(w, http.StatusInternalServerError, "server_error", "the session could not be read")
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	bp := copyPool.Get().(*[]byte)
	defer copyPool.Put(bp)
	// Only the bytes the file had when opened: a run appending meanwhile
	// cannot make the body disagree with its length.
	if _, err := io.CopyBuffer(writerOnly{w}, io.LimitReader(f, size), *bp); err != nil && !errors.Is(err, context.Canceled) {
		s.cfg.Logf("gateway: sending session %s: %v", id, errText(err))
	}
}

var copyPool = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// writerOnly hides everything but Write, so that io.CopyBuffer writes
// through the deadline-setting writer in bounded chunks.
type writerOnly struct{ w io.Writer }

func (w writerOnly) Write(b []byte) (int, error) { return w.w.Write(b) }

// validSessionID keeps session ids to names that are safe as file names:
// no separators, no "..", nothing hidden.
func validSessionID(id string) bool {
	if id == "" || len(id) > 128 || id[0] == '.' {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// readBody reads the request body under the size limit and BodyTimeout,
// answering 413 past the limit (at once when Content-Length says so), 408
// when the body does not arrive in time and 400 on a broken body. The read
// deadline is cleared afterwards, so that it cannot end a long stream.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if r.ContentLength > s.cfg.MaxBodyBytes {
		w.Header().Set("Connection", "close")
		writeError(w, http.StatusRequestEntityTooLarge, "request_too_large",
			"request body exceeds "+itoa(s.cfg.MaxBodyBytes)+" bytes")
		return nil, false
	}
	if sb, ok := r.Body.(*srvBody); ok && sb.buffered(r.ContentLength) || r.ContentLength == 0 {
		// All of it came with the head (the usual small request): its
		// read cannot wait, so no deadline is set and cleared for it.
		body := make([]byte, r.ContentLength)
		if _, err := io.ReadFull(r.Body, body); err != nil {
			writeError(w, http.StatusBadRequest, "invalid_request_error", "reading body: "+errText(err))
			return nil, false
		}
		return body, true
	}
	rc := controller(w)
	rc.SetReadDeadline(time.Now().Add(s.cfg.BodyTimeout))
	var body []byte
	var err error
	if n := r.ContentLength; n >= 0 {
		// net/http ends r.Body at Content-Length, which is within the
		// limit: the body is read into a slice of its size, in one read
		// when it came with the headers (a short body is an
		// io.ErrUnexpectedEOF).
		body = make([]byte, n)
		_, err = io.ReadFull(r.Body, body)
	} else {
		var buf bytes.Buffer
		_, err = buf.ReadFrom(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
		body = buf.Bytes()
	}
	rc.SetReadDeadline(time.Time{})
	if err != nil {
		var mbe *http.MaxBytesError
		var ne net.Error
		switch {
		case errors.As(err, &mbe):
			writeError(w, http.StatusRequestEntityTooLarge, "request_too_large",
				"request body exceeds "+itoa(mbe.Limit)+" bytes")
		case errors.As(err, &ne) && ne.Timeout():
			s.m.rejected.WithLabelValues(routeOf(r.URL.Path), "body_timeout").Inc()
			w.Header().Set("Connection", "close")
			writeError(w, http.StatusRequestTimeout, "request_timeout",
				"the request body did not arrive within "+s.cfg.BodyTimeout.String())
		default:
			writeError(w, http.StatusBadRequest, "invalid_request_error", "reading body: "+errText(err))
		}
		return nil, false
	}
	return body, true
}

// sseWriter writes Server-Sent Events. By default it flushes each event,
// so that a client sees it as it happens. Coalescing (the proxy) gathers
// the events one upstream read produced and writes them in one write and
// one flush, when the upstream has nothing more buffered (flushPending,
// called before the next upstream read) — never later than the next
// event could arrive, and with one system call instead of one per event.
type sseWriter struct {
	w        http.ResponseWriter
	fl       errFlusher
	started  bool
	coalesce bool
	pending  []byte
	err      error // the first write or flush failure

	// The runs' writer: mu orders the events and the flush hook (hook,
	// made once per writer); ev is the event being encoded.
	mu   sync.Mutex
	hook func()
	ev   []byte
}

// maxPending bounds what a coalescing writer gathers before writing.
const maxPending = 64 << 10

// errFlusher is what an sseWriter flushes through: instrument's
// statusWriter (which moves the write deadline on) or net/http's own
// writer; a ResponseController for any other.
type errFlusher interface{ FlushError() error }

type rcFlusher struct{ rc *http.ResponseController }

func (f rcFlusher) FlushError() error { return f.rc.Flush() }

func flusherOf(w http.ResponseWriter) errFlusher {
	if f, ok := w.(errFlusher); ok {
		return f
	}
	return rcFlusher{http.NewResponseController(w)}
}

// The writers are pooled with their buffers, so that a stream's or a
// run's writing allocates nothing that grows with the answers served.
var ssePool = sync.Pool{New: func() any {
	s := new(sseWriter)
	s.hook = s.hookFunc
	return s
}}

func getSSEWriter(w http.ResponseWriter) *sseWriter {
	s := ssePool.Get().(*sseWriter)
	s.use(w)
	return s
}

func putSSEWriter(s *sseWriter) {
	if cap(s.pending) > maxPending || cap(s.ev) > maxPending {
		return // one huge event: not kept
	}
	s.release(maxPending)
	ssePool.Put(s)
}

// use makes s write to w.
func (s *sseWriter) use(w http.ResponseWriter) { s.w, s.fl = w, flusherOf(w) }

// release clears s for its next answer, keeping its buffers up to keep
// bytes.
func (s *sseWriter) release(keep int) {
	pending, ev := s.pending[:0], s.ev[:0]
	if cap(pending) > keep {
		pending = nil
	}
	if cap(ev) > keep {
		ev = nil
	}
	*s = sseWriter{pending: pending, ev: ev, hook: s.hook}
}

// hookFunc is the run's flush hook: the run is about to wait.
func (s *sseWriter) hookFunc() {
	s.mu.Lock()
	s.flushPending()
	s.mu.Unlock()
}

// writeEvent writes one run event as an SSE data line; flush says the run
// goes on to something that may take time (or that it is the first
// event), so that what is gathered goes out now.
func (s *sseWriter) writeEvent(ev *llm.Event, m *llm.Message, flush bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ev = append(s.ev[:0], "data: "...)
	s.ev = llm.AppendEventJSON(s.ev, ev, m)
	s.ev = append(s.ev, "\n\n"...)
	if err := s.write(s.ev); err != nil {
		return err
	}
	if flush {
		return s.flushPending()
	}
	return nil
}

// writeResult writes the run's closing "event: result" without a flush:
// it goes out with what is still gathered and the end of the chunked body
// in net/http's final flush, one write, under the write deadline that
// instrument moves on for it.
func (s *sseWriter) writeResult(res *RunResult) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out, _ := json.Marshal(res)
	s.ev = append(append(append(s.ev[:0], "event: result\ndata: "...), out...), "\n\n"...)
	s.coalesce = true
	if s.write(s.ev) == nil {
		s.writePending()
	}
}

var (
	sseContentType = []string{"text/event-stream"}
	sseNoCache     = []string{"no-cache"}
	sseNoBuffering = []string{"no"}
)

func (s *sseWriter) start() {
	if !s.started {
		s.started = true
		// Shared value slices: net/http only reads them, and a later
		// Set or Add replaces or copies them.
		h := s.w.Header()
		h["Content-Type"] = sseContentType
		h["Cache-Control"] = sseNoCache
		h["X-Accel-Buffering"] = sseNoBuffering
		s.w.WriteHeader(http.StatusOK)
	}
}

func (s *sseWriter) write(b []byte) error {
	if s.err != nil {
		return s.err
	}
	s.start()
	if s.coalesce {
		s.pending = append(s.pending, b...)
		if len(s.pending) >= maxPending {
			return s.flushPending()
		}
		return nil
	}
	if _, err := s.w.Write(b); err != nil {
		s.err = err
		return err
	}
	if err := s.fl.FlushError(); err != nil {
		s.err = err
	}
	return s.err
}

// writePending writes what a coalescing writer gathered, without a flush:
// the answer's end, which net/http flushes with its own last bytes.
func (s *sseWriter) writePending() {
	if s.err != nil || len(s.pending) == 0 {
		return
	}
	_, s.err = s.w.Write(s.pending)
	s.pending = s.pending[:0]
}

// flushPending writes and flushes what a coalescing writer gathered.
func (s *sseWriter) flushPending() error {
	if s.err != nil || len(s.pending) == 0 {
		return s.err
	}
	_, err := s.w.Write(s.pending)
	s.pending = s.pending[:0]
	if err == nil {
		err = s.fl.FlushError()
	}
	s.err = err
	return err
}

// upstreamAuth sets the upstream request's credentials: the configured
// UpstreamKey, or else (without a gateway key of its own) the client's.
// Version and organisation headers always pass. Credentials are never
// logged.
func (s *Server) upstreamAuth(dst, src http.Header, w wire) {
	s.eachUpstreamHeader(src, w, func(k, v string) error { dst.Add(k, v); return nil })
}

// eachUpstreamHeader calls add with every header upstreamAuth sets, and
// stops at add's first error.
func (s *Server) eachUpstreamHeader(src http.Header, w wire, add func(k, v string) error) error {
	// Which of the passed names src holds: one pass over a small header
	// (a client's usual few) instead of a lookup per name.
	present := uint8(1<<len(passedHeaders) - 1)
	if len(src) <= len(passedHeaders) {
		present = 0
		for k := range src {
			if i := passedHeaderTable.index([]byte(k)); i >= 0 {
				present |= 1 << i
			}
		}
	}
	if present == 0 && s.cfg.UpstreamKey == "" {
		return nil
	}
	switch {
	case s.cfg.UpstreamKey != "" && w == wireAnthropic:
		if err := add("X-Api-Key", s.cfg.UpstreamKey); err != nil {
			return err
		}
	case s.cfg.UpstreamKey != "":
		if err := add("Authorization", "Bearer "+s.cfg.UpstreamKey); err != nil {
			return err
		}
	case s.cfg.AuthKey == "":
		if err := copyHeaders(add, src, present, 0, 2); err != nil {
			return err
		}
	}
	return copyHeaders(add, src, present, 2, len(passedHeaders))
}

// passedHeaders are the client headers the upstream may get: the
// credentials first, then the version and organisation ones.
var (
	passedHeaders     = [...]string{"Authorization", "X-Api-Key", "Anthropic-Version", "Anthropic-Beta", "Openai-Organization", "Openai-Project"}
	passedHeaderTable = newNameTable(passedHeaders[:]...)
)

// copyHeaders adds src's values of passedHeaders[from:to], those present.
func copyHeaders(add func(k, v string) error, src http.Header, present uint8, from, to int) error {
	for i, k := range passedHeaders[from:to] {
		if present&(1<<(from+i)) == 0 {
			continue
		}
		for _, v := range src[k] {
			if err := add(k, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// errText is err's message with anything after a newline cut, so that an
// upstream's multi-line error cannot forge lines in a log or a header.
func errText(err error) string {
	s := err.Error()
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	return s
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
