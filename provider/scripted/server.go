package scripted

import (
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider/wireenc"
)

// MaxRequestBytes bounds a request body the HTTP endpoints read.
const MaxRequestBytes = 64 << 20

// Handler returns the HTTP face of p: POST /v1/chat/completions,
// /v1/responses and /v1/messages answer in their wire format (streamed
// when the body says "stream": true, else one JSON object), and GET
// /v1/models lists the model. The same paths without the /v1 prefix are
// served too, so base URLs with or without it both work. No key is
// checked. A scripted HTTP error is sent as its status, Retry-After and
// body; a request body that cannot be read gets 400 in the wire's error
// shape.
func (p *Provider) Handler() http.Handler { return http.HandlerFunc(p.serveHTTP) }

func (p *Provider) serveHTTP(rw http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, "/v1")
	var w wireenc.Wire
	switch path {
	case "/models":
		p.serveModels(rw, r)
		return
	case "/chat/completions":
		w = wireenc.OpenAIChat
	case "/responses":
		w = wireenc.OpenAIResponses
	case "/messages":
		w = wireenc.Anthropic
	default:
		writeError(rw, wireenc.OpenAIChat, http.StatusNotFound, "not_found_error", "scripted: no endpoint at "+r.URL.Path, 0)
		return
	}
	if r.Method != http.MethodPost {
		writeError(rw, w, http.StatusMethodNotAllowed, "invalid_request_error", "scripted: use POST", 0)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(rw, r.Body, MaxRequestBytes))
	if err != nil {
		writeError(rw, w, http.StatusRequestEntityTooLarge, "request_too_large", "scripted: "+err.Error(), 0)
		return
	}
	req, info, err := parseRequest(w, body)
	if err != nil {
		writeError(rw, w, http.StatusBadRequest, "invalid_request_error", err.Error(), 0)
		return
	}
	s, t, herr := p.choose(req)
	if herr != nil {
		if t != nil {
			// A zero wait means none here (sleepCtx reads it as a stall).
			if d := latencyOf(s, t).FirstEvent; d > 0 && sleepCtx(r.Context(), nil, d) != nil {
				return
			}
			if t.HTTPError.Body != "" {
				writeRaw(rw, herr.Status, t.HTTPError.Body, herr.RetryAfter)
				return
			}
		}
		writeError(rw, w, herr.Status, herr.Type, herr.Message, herr.RetryAfter)
		return
	}
	pl, _ := p.players.Get().(*player)
	if pl == nil {
		pl = &player{}
	}
	defer func() { pl.release(); p.players.Put(pl) }()
	opts := wireenc.Options{NoUsage: w == wireenc.OpenAIChat && !info.includeUsage, Ping: w == wireenc.Anthropic}
	pl.reset(w, p.meta(w, req), opts, s, t, estimateInput(req))
	if info.stream {
		p.serveStream(rw, r, pl)
	} else {
		p.serveWhole(rw, r, pl)
	}
}

func (p *Provider) serveStream(rw http.ResponseWriter, r *http.Request, pl *player) {
	h := rw.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	rw.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(rw)
	ctx := r.Context()
	var timer *time.Timer
	written, cutAt := 0, pl.turn.CutAt
	for {
		pl.buf = pl.buf[:0]
		act, d := pl.next()
		switch act {
		case actEOF:
			rc.Flush()
			return
		case actPause:
			rc.Flush()
			if sleepCtx(ctx, &timer, d) != nil {
				return
			}
			continue
		}
		if d > 0 {
			rc.Flush()
			if sleepCtx(ctx, &timer, d) != nil {
				return
			}
		}
		out := pl.buf
		if cutAt > 0 && written+len(out) >= cutAt {
			rw.Write(out[:cutAt-written])
			rc.Flush()
			return
		}
		if _, err := rw.Write(out); err != nil {
			return
		}
		written += len(out)
	}
}

// serveWhole plays the turn to its end (sleeping as scripted) and answers
// with the wire's JSON object; an in-band error becomes an HTTP 500 and a
// scripted end of body a dropped connection.
func (p *Provider) serveWhole(rw http.ResponseWriter, r *http.Request, pl *player) {
	var timer *time.Timer
	for {
		pl.buf = pl.buf[:0]
		act, d := pl.next()
		if act == actEOF {
			break
		}
		if d > 0 || act == actPause {
			if sleepCtx(r.Context(), &timer, d) != nil {
				return
			}
		}
	}
	t := pl.turn
	switch pl.end {
	case endError:
		st := &t.Steps[pl.step]
		writeError(rw, pl.wire, http.StatusInternalServerError, st.ErrType, st.Message, 0)
		return
	case endEOF:
		panic(http.ErrAbortHandler)
	}
	out := pl.enc.AppendMessage(pl.buf[:0], &pl.msg, t.RawStop)
	pl.buf = out
	if t.CutAt > 0 && t.CutAt < len(out) {
		out = out[:t.CutAt]
	}
	rw.Header().Set("Content-Type", "application/json")
	rw.Header().Set("Content-Length", strconv.Itoa(len(out)))
	rw.WriteHeader(http.StatusOK)
	rw.Write(out)
}

func (p *Provider) serveModels(rw http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		writeError(rw, wireenc.OpenAIChat, http.StatusMethodNotAllowed, "invalid_request_error", "scripted: use GET", 0)
		return
	}
	var b []byte
	b = append(b, `{"object":"list","data":[{"id":`...)
	b = llm.AppendJSONString(b, p.model)
	b = append(b, `,"object":"model","type":"model","display_name":`...)
	b = llm.AppendJSONString(b, p.model)
	b = append(b, `,"created":`...)
	b = strconv.AppendInt(b, p.created, 10)
	b = append(b, `,"created_at":"`...)
	b = time.Unix(p.created, 0).UTC().AppendFormat(b, time.RFC3339)
	b = append(b, `","owned_by":"ocbench"}],"has_more":false,"first_id":`...)
	b = llm.AppendJSONString(b, p.model)
	b = append(b, `,"last_id":`...)
	b = llm.AppendJSONString(b, p.model)
	b = append(b, '}')
	rw.Header().Set("Content-Type", "application/json")
	rw.Write(b)
}

// errType returns the error type of a scripted refusal: its own, or the
// provider's usual one for the status.
func errType(h *HTTPError) string {
	if h.Type != "" {
		return h.Type
	}
	switch h.Status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	return "api_error"
}

func errMessage(h *HTTPError) string {
	if h.Message != "" {
		return h.Message
	}
	if t := http.StatusText(h.Status); t != "" {
		return t
	}
	if h.Status == 529 {
		return "Overloaded"
	}
	return "HTTP " + strconv.Itoa(h.Status)
}

func setRetryAfter(rw http.ResponseWriter, d time.Duration) {
	if d <= 0 {
		return
	}
	rw.Header().Set("Retry-After", strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10))
	rw.Header().Set("Retry-After-Ms", strconv.FormatInt(d.Milliseconds(), 10))
}

func writeRaw(rw http.ResponseWriter, status int, body string, retry time.Duration) {
	setRetryAfter(rw, retry)
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(status)
	io.WriteString(rw, body)
}

// writeError writes an error body in the wire's shape.
func writeError(rw http.ResponseWriter, w wireenc.Wire, status int, typ, msg string, retry time.Duration) {
	var b []byte
	if w == wireenc.Anthropic {
		b = append(b, `{"type":"error","error":{"type":`...)
		b = llm.AppendJSONString(b, typ)
		b = append(b, `,"message":`...)
		b = llm.AppendJSONString(b, msg)
		b = append(b, "}}"...)
	} else {
		b = append(b, `{"error":{"message":`...)
		b = llm.AppendJSONString(b, msg)
		b = append(b, `,"type":`...)
		b = llm.AppendJSONString(b, typ)
		b = append(b, `,"param":null,"code":null}}`...)
	}
	writeRaw(rw, status, string(b), retry)
}

// Server is a Provider's Handler listening on a loopback port.
type Server struct {
	// URL is the base URL, "http://127.0.0.1:<port>"; the endpoints are
	// served under it with and without "/v1".
	URL string
	srv *http.Server
	ln  net.Listener
}

// Start serves p.Handler on 127.0.0.1 at a free port until Close.
func (p *Provider) Start() (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{URL: "http://" + ln.Addr().String(), ln: ln,
		srv: &http.Server{Handler: p.Handler(), ReadHeaderTimeout: 10 * time.Second}}
	go s.srv.Serve(ln) // returns http.ErrServerClosed on Close
	return s, nil
}

// Start is New followed by Provider.Start.
func Start(o Options) (*Provider, *Server, error) {
	p, err := New(o)
	if err != nil {
		return nil, nil, err
	}
	s, err := p.Start()
	if err != nil {
		return nil, nil, err
	}
	return p, s, nil
}

// Close stops the server and closes its connections; streams in flight
// end.
func (s *Server) Close() error { return s.srv.Close() }
