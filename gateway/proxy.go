package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fastjson"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider"
	"github.com/ocbench/ocbench/provider/wireenc"
)

// wire is a client-facing wire the proxy speaks: the upstream speaks the
// same one, on the same path.
type wire = provider.Wire

const (
	wireChat      = provider.WireOpenAIChat
	wireAnthropic = provider.WireAnthropic
)

// UpstreamError is an upstream's non-2xx answer, relayed to the client with
// its status and body.
type UpstreamError struct {
	Status     int
	RetryAfter string
	Body       []byte
}

func (e *UpstreamError) Error() string {
	return fmt.Sprintf("upstream answered %d: %.200s", e.Status, e.Body)
}

// proxyRequest is what the proxy reads from a client's body: only the
// fields it acts on. The body itself is forwarded unchanged, so fields the
// proxy does not know survive.
type proxyRequest struct {
	model  string
	stream bool
	tools  []string
}

var parserPool fastjson.ParserPool

func parseProxyRequest(w wire, body []byte) (proxyRequest, error) {
	p := parserPool.Get()
	defer parserPool.Put(p)
	v, err := p.ParseBytes(body)
	if err != nil {
		return proxyRequest{}, fmt.Errorf("body is not valid JSON: %w", err)
	}
	if v.Type() != fastjson.TypeObject {
		return proxyRequest{}, errors.New("body is not a JSON object")
	}
	var pr proxyRequest
	mv := v.Get("model")
	if mv == nil || mv.Type() != fastjson.TypeString || len(mv.GetStringBytes()) == 0 {
		return pr, errors.New(`"model" is required`)
	}
	pr.model = string(mv.GetStringBytes())
	pr.stream = v.GetBool("stream")
	for _, t := range v.GetArray("tools") {
		name := t.GetStringBytes("name") // Anthropic
		if w == provider.WireOpenAIChat {
			name = t.GetStringBytes("function", "name")
		}
		if len(name) > 0 {
			pr.tools = append(pr.tools, string(name))
		}
	}
	if w == provider.WireOpenAIChat && v.Get("messages") == nil {
		return pr, errors.New(`"messages" is required`)
	}
	return pr, nil
}

// upstreamBody returns the body to send upstream. The proxy always streams
// from the upstream, so that the decorator chain sees the events; a
// non-streaming client request is switched to streaming (with usage) and
// answered with one assembled object.
func upstreamBody(w wire, body []byte, pr proxyRequest) ([]byte, error) {
	if pr.stream {
		return body, nil
	}
	var a fastjson.Arena
	var p fastjson.Parser
	v, err := p.ParseBytes(body)
	if err != nil {
		return nil, err
	}
	v.Set("stream", a.NewTrue())
	if w == provider.WireOpenAIChat {
		so := a.NewObject()
		so.Set("include_usage", a.NewTrue())
		v.Set("stream_options", so)
	}
	return v.MarshalTo(nil), nil
}

// proxy forwards a client's request to the upstream, runs the upstream's
// stream through the decorator chain, and answers in the client's wire:
// streamed, with tool calls sent whole once repaired, or as one object.
func (s *Server) proxy(w wire) streamHandler {
	return func(rw http.ResponseWriter, r *http.Request, body []byte) {
		start := time.Now()
		pr, err := parseProxyRequest(w, body)
		if err != nil {
			writeError(rw, http.StatusBadRequest, "invalid_request_error", err.Error())
			return
		}
		if len(s.cfg.Models) > 0 && !slices.Contains(s.cfg.Models, pr.model) {
			writeError(rw, http.StatusNotFound, "not_found_error", "unknown model "+pr.model)
			return
		}
		up, err := upstreamBody(w, body, pr)
		if err != nil {
			writeError(rw, http.StatusBadRequest, "invalid_request_error", err.Error())
			return
		}
		base := s.upstreamStreamFunc(w, up, r.Header)
		fn := s.wrap(base, w, pr)
		req := &llm.Request{Model: llm.Model{ID: pr.model, API: w.API(), Provider: "openai-compatible"}}
		if w == provider.WireAnthropic {
			req.Model.Provider = "anthropic"
		}
		st, err := fn(r.Context(), req)
		if err != nil {
			s.upstreamFailed(rw, err)
			return
		}
		defer st.Close()

		enc := encoderPool.Get().(*wireenc.Encoder)
		defer encoderPool.Put(enc)
		enc.Reset(w, wireenc.Meta{ID: responseID(w), Model: pr.model, Created: time.Now().Unix()},
			wireenc.Options{ToolArgs: wireenc.BufferArgs, Ping: w == provider.WireAnthropic})
		route := strings.TrimPrefix(w.Path(), "/v1/")
		if !pr.stream {
			m, _ := llm.Drain(st)
			s.countRepairs(m)
			rw.Header().Set("Content-Type", "application/json")
			rw.Write(enc.AppendMessage(nil, m, rawStop(st)))
			return
		}
		sse := newSSEWriter(rw)
		bp := bufPool.Get().(*[]byte)
		defer bufPool.Put(bp)
		buf := *bp
		first := true
		for st.Next() {
			ev := st.Event()
			m := st.Message()
			if ev.Type == llm.EventDone && rawStop(st) != "" {
				buf = enc.AppendDoneRaw(buf[:0], m, mapRawStop(w, rawStop(st), m))
			} else {
				buf = enc.AppendEvent(buf[:0], ev, m)
			}
			if len(buf) == 0 {
				continue
			}
			if first {
				first = false
				s.m.timeToFirstEvent.WithLabelValues(route).Observe(time.Since(start).Seconds())
			}
			s.m.events.WithLabelValues(route).Inc()
			if err := sse.write(buf); err != nil {
				// The client went away; cancelling the request context
				// (done by net/http) has already stopped the upstream.
				break
			}
		}
		*bp = buf[:0]
		s.countRepairs(st.Message())
		if err := st.Err(); err != nil && !errors.Is(err, context.Canceled) {
			s.cfg.Logf("gateway: %s stream ended: %v", route, err)
		}
	}
}

var (
	encoderPool = sync.Pool{New: func() any { return new(wireenc.Encoder) }}
	bufPool     = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}
)

// responseID returns a fresh id for one answer: a per-process random
// prefix and a counter, so ids never repeat across answers or replicas.
func responseID(w wire) string {
	n := strconv.FormatUint(idSeq.Add(1), 36)
	if w == provider.WireAnthropic {
		return "msg_" + idPrefix + n
	}
	return "chatcmpl-" + idPrefix + n
}

var (
	idSeq    atomic.Uint64
	idPrefix = strconv.FormatUint(rand.Uint64()>>16, 36) + "x"
)

// rawStop is the upstream's own stop reason, when the stream keeps it.
func rawStop(st llm.Stream) string {
	if rs, ok := st.(provider.RawStopReasoner); ok {
		return string(rs.RawStopReason())
	}
	return ""
}

// mapRawStop keeps the upstream's stop reason on the way back, unless the
// chain changed the outcome (a refused tool call, a guard): then the
// message's own stop reason is written.
func mapRawStop(w wire, raw string, m *llm.Message) string {
	switch m.StopReason {
	case llm.StopToolUse:
		if raw == "tool_calls" || raw == "tool_use" {
			return raw
		}
		return ""
	case llm.StopStop:
		if raw == "stop" || raw == "end_turn" || raw == "stop_sequence" || raw == "pause_turn" {
			return raw
		}
		return ""
	}
	return ""
}

// upstreamFailed answers a request whose upstream call failed before
// streaming: the upstream's own status and body when it answered, 502 when
// it could not be reached.
func (s *Server) upstreamFailed(rw http.ResponseWriter, err error) {
	var ue *UpstreamError
	if errors.As(err, &ue) {
		s.m.upstreamErrors.WithLabelValues("status_" + itoa(int64(ue.Status))).Inc()
		if ue.RetryAfter != "" {
			rw.Header().Set("Retry-After", ue.RetryAfter)
		}
		rw.Header().Set("Content-Type", "application/json")
		rw.WriteHeader(ue.Status)
		rw.Write(ue.Body)
		return
	}
	if errors.Is(err, context.Canceled) {
		return
	}
	if errors.Is(err, context.DeadlineExceeded) {
		s.m.upstreamErrors.WithLabelValues("timeout").Inc()
		writeError(rw, http.StatusGatewayTimeout, "upstream_timeout", "upstream: "+errText(err))
		return
	}
	s.m.upstreamErrors.WithLabelValues("connect").Inc()
	writeError(rw, http.StatusBadGateway, "upstream_unreachable", "upstream: "+errText(err))
}

// upstreamStreamFunc is the base of the proxy's chain: it posts body to the
// upstream and decodes the answer with a pooled decoder.
func (s *Server) upstreamStreamFunc(w wire, body []byte, hdr http.Header) llm.StreamFunc {
	return func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		if s.cfg.Upstream == "" {
			return nil, errors.New("no upstream configured")
		}
		hr, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(s.cfg.Upstream, "/")+w.Path(), bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		hr.Header.Set("Content-Type", "application/json")
		hr.Header.Set("Accept", "text/event-stream")
		copyAuth(hr.Header, hdr)
		resp, err := s.cfg.HTTPClient.Do(hr)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode/100 != 2 {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			return nil, &UpstreamError{Status: resp.StatusCode, RetryAfter: resp.Header.Get("Retry-After"), Body: b}
		}
		d := provider.GetDecoder(w, resp.Body, provider.Options{API: req.Model.API, Provider: req.Model.Provider, Model: req.Model.ID})
		d.SetContext(ctx)
		return &upstreamStream{Decoder: d}, nil
	}
}

// upstreamStream is a pooled decoder over an upstream body; Close closes
// the body and returns the decoder to the pool.
type upstreamStream struct {
	*provider.Decoder
	closed bool
}

func (u *upstreamStream) Close() error {
	if u.closed {
		return nil
	}
	u.closed = true
	err := u.Decoder.Close()
	provider.PutDecoder(u.Decoder)
	return err
}
