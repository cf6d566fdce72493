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

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fastjson"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider"
	"github.com/ocbench/ocbench/provider/wireenc"
	"github.com/ocbench/ocbench/streamwrap"
)

// wire is a client-facing wire the proxy speaks: the upstream speaks the
// same one, on the same path.
type wire = provider.Wire

const (
	wireChat      = provider.WireOpenAIChat
	wireAnthropic = provider.WireAnthropic
	wireResponses = provider.WireOpenAIResponses
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
	// Chat fields the endpoint's Compat may rename or drop.
	includeUsage                                                  bool // stream_options.include_usage
	hasStreamOptions, hasMaxTokens, hasMaxCompletion, hasCacheKey bool
}

var parserPool = new(fastjson.ParserPool)

// parseProxyRequest reads body. When ps has the model or tool list of the
// connection's previous request and they repeat, its strings are reused.
// The body is walked in place (scanObject); only the members read are
// parsed.
func parseProxyRequest(w wire, body []byte, ps *proxyState) (proxyRequest, error) {
	// The top-level members in one pass; the first of a repeated key
	// counts, as with fastjson's Get.
	var m [len(requestMembers)][]byte
	if !scanObject(body, func(k, v []byte) {
		if i := requestMemberTable.index(k); i >= 0 && m[i] == nil {
			m[i] = v
		}
	}) {
		// What fastjson says of it (the same bodies fail there).
		var p fastjson.Parser
		if _, err := p.ParseBytes(body); err != nil {
			return proxyRequest{}, fmt.Errorf("body is not valid JSON: %w", err)
		}
		return proxyRequest{}, errors.New("body is not a JSON object")
	}
	p := parserPool.Get()
	defer parserPool.Put(p)
	// member parses the bytes of a member read, m[i] (nil: absent).
	member := func(i int) *fastjson.Value {
		if m[i] == nil {
			return nil
		}
		v, err := p.ParseBytes(m[i])
		if err != nil {
			return nil // not reached: scanObject took it as a value
		}
		return v
	}
	var pr proxyRequest
	// One member parsed at a time: each parse ends the last one's values.
	// A model id without escapes is the bytes between its quotes.
	mb := m[0]
	if len(mb) >= 2 && mb[0] == '"' && bytes.IndexByte(mb, '\\') < 0 {
		mb = mb[1 : len(mb)-1]
	} else if mv := member(0); mv != nil && mv.Type() == fastjson.TypeString {
		mb = mv.GetStringBytes()
	} else {
		mb = nil
	}
	if len(mb) == 0 {
		return proxyRequest{}, errors.New(`"model" is required`)
	}
	if ps != nil && string(mb) == ps.model {
		pr.model = ps.model
	} else {
		pr.model = string(mb)
		if ps != nil {
			ps.model = pr.model
		}
	}
	pr.stream = string(m[1]) == "true"
	if w == provider.WireOpenAIChat {
		pr.includeUsage = m[2] != nil && member(2).GetBool("include_usage")
		pr.hasStreamOptions = m[2] != nil
		pr.hasMaxTokens, pr.hasMaxCompletion, pr.hasCacheKey = m[6] != nil, m[7] != nil, m[8] != nil
	}
	msgs, input := m[4], m[5]
	var tools []*fastjson.Value
	if tv := member(3); tv != nil && tv.Type() == fastjson.TypeArray {
		tools, _ = tv.Array()
	}
	toolName := func(t *fastjson.Value) []byte {
		if w == provider.WireOpenAIChat {
			return t.GetStringBytes("function", "name")
		}
		return t.GetStringBytes("name") // Anthropic, Responses
	}
	if ps != nil && sameTools(tools, toolName, ps.tools) {
		pr.tools = ps.tools
	} else {
		for _, t := range tools {
			if name := toolName(t); len(name) > 0 {
				pr.tools = append(pr.tools, string(name))
			}
		}
	}
	switch {
	case w == provider.WireOpenAIResponses && input == nil:
		return pr, errors.New(`"input" is required`)
	case w != provider.WireOpenAIResponses && msgs == nil:
		return pr, errors.New(`"messages" is required`)
	}
	return pr, nil
}

// requestMembers are the top-level members of a request the proxy reads,
// in the order parseProxyRequest takes them.
var (
	requestMembers = [...]string{"model", "stream", "stream_options", "tools", "messages", "input",
		"max_tokens", "max_completion_tokens", "prompt_cache_key"}
	requestMemberTable = newNameTable(requestMembers[:]...)
)

// sameTools reports whether the named tools of list are known, in order.
func sameTools(list []*fastjson.Value, name func(*fastjson.Value) []byte, known []string) bool {
	i := 0
	for _, t := range list {
		n := name(t)
		if len(n) == 0 {
			continue
		}
		if i >= len(known) || string(n) != known[i] {
			return false
		}
		i++
	}
	return i == len(known)
}

// upstreamBody returns the body to send upstream. The proxy always streams
// from the upstream, so that the decorator chain sees the events; a
// non-streaming client request is switched to streaming (asking for usage
// on chat where the endpoint accepts stream_options) and answered with one
// assembled object. On chat, what the endpoint's Compat does not accept is
// adapted: max_tokens and max_completion_tokens are renamed to the one it
// knows, prompt_cache_key and stream_options are dropped where refused.
// The body is forwarded byte for byte when nothing needs changing.
func upstreamBody(w wire, body []byte, pr proxyRequest, c provider.Compat) ([]byte, error) {
	chat := w == provider.WireOpenAIChat
	rename := chat && (c.MaxTokensField == "max_tokens" && pr.hasMaxCompletion && !pr.hasMaxTokens ||
		c.MaxTokensField == "max_completion_tokens" && pr.hasMaxTokens && !pr.hasMaxCompletion)
	drop := chat && (!c.PromptCacheKey && pr.hasCacheKey || !c.StreamOptions && pr.hasStreamOptions)
	if pr.stream && !rename && !drop {
		return body, nil
	}
	var a fastjson.Arena
	var p fastjson.Parser
	v, err := p.ParseBytes(body)
	if err != nil {
		return nil, err
	}
	if !pr.stream {
		v.Set("stream", a.NewTrue())
		if chat && c.StreamOptions {
			so := a.NewObject()
			so.Set("include_usage", a.NewTrue())
			v.Set("stream_options", so)
		}
	}
	if rename {
		from := "max_tokens"
		if c.MaxTokensField == "max_tokens" {
			from = "max_completion_tokens"
		}
		v.Set(c.MaxTokensField, v.Get(from))
		v.Del(from)
	}
	if chat && !c.PromptCacheKey {
		v.Del("prompt_cache_key")
	}
	if chat && !c.StreamOptions {
		v.Del("stream_options")
	}
	return llm.AppendJSONValue(nil, v), nil
}

// proxy forwards a client's request to the upstream, runs the upstream's
// stream through the decorator chain, and answers in the client's wire:
// streamed, with tool calls sent whole once repaired, or as one object.
func (s *Server) proxy(w wire) streamHandler {
	// The route's event counter and first-event latency, looked up once,
	// when first used (a series appears only once it has a value).
	var seriesOnce sync.Once
	var events prometheus.Counter
	var firstEvent prometheus.Observer
	return func(rw http.ResponseWriter, r *http.Request, body []byte) {
		var start time.Time
		var ps *proxyState
		if cs := connStateOf(r.Context()); cs != nil {
			ps = &cs.proxy[wireIndex(w)]
			defer ps.end()
			start = cs.start // the request's, taken by instrument
		}
		if start.IsZero() {
			start = time.Now()
		}
		pr, err := parseProxyRequest(w, body, ps)
		if err != nil {
			writeError(rw, http.StatusBadRequest, "invalid_request_error", err.Error())
			return
		}
		if len(s.cfg.Models) > 0 && !slices.Contains(s.cfg.Models, pr.model) {
			writeError(rw, http.StatusNotFound, "not_found_error", "unknown model "+pr.model)
			return
		}
		up, err := upstreamBody(w, body, pr, s.compat)
		if err != nil {
			writeError(rw, http.StatusBadRequest, "invalid_request_error", err.Error())
			return
		}
		sc := s.requestSecrets(r)
		var call *upstreamCall
		var fn llm.StreamFunc
		var req *llm.Request
		if ps != nil {
			// The connection's chain, its base reading this request.
			ps.body, ps.hdr = up, r.Header
			call, req = &ps.call, &ps.req
			call.watch, call.ur = &ps.watch, &ps.ur
			fn = s.connChain(ps, w, pr)
		} else {
			call, req = &upstreamCall{}, &llm.Request{}
			fn = s.wrap(s.upstreamStreamFunc(w, up, r.Header, call), w, pr, false)
		}
		req.Model = llm.Model{ID: pr.model, API: w.API(), Provider: "openai-compatible"}
		switch w {
		case provider.WireAnthropic:
			req.Model.Provider = "anthropic"
		case provider.WireOpenAIResponses:
			req.Model.Provider = "openai"
		}
		route := routeName(w)
		st, err := fn(r.Context(), req)
		setRequestID(rw, w, call.requestID)
		if err != nil {
			s.upstreamFailed(rw, w, err, &sc)
			return
		}
		closed := false
		closeStream := func() {
			if !closed {
				closed = true
				st.Close()
			}
		}
		defer closeStream()

		// The connection's encoder, writer and buffer where there is one
		// (its requests come one after the other), else pooled ones.
		var enc *wireenc.Encoder
		if ps != nil {
			enc = &ps.enc
		} else {
			enc = encoderPool.Get().(*wireenc.Encoder)
			defer encoderPool.Put(enc)
		}
		meta := wireenc.Meta{ID: responseID(w), Model: pr.model, Created: start.Unix()}
		// Usage only where the client asked for it (chat streams without
		// stream_options.include_usage carry none, as OpenAI's do).
		enc.Reset(w, meta, wireenc.Options{ToolArgs: wireenc.BufferArgs, Ping: w == provider.WireAnthropic,
			NoUsage: w == provider.WireOpenAIChat && !pr.includeUsage})
		lim := answerLimit{max: s.cfg.MaxAnswerBytes, call: call}
		if !pr.stream {
			// The whole answer is held: a failure anywhere in it (an in-band
			// error, a cut, an idle timeout, the size limit) answers with the
			// provider's own error status and body, never a partial 200.
			for st.Next() {
				if lim.exceeded(st.Message()) {
					break
				}
			}
			m := st.Message()
			s.countRepairs(route, m)
			s.addTokens(route, pr.model, &m.Usage)
			ferr := lim.err
			if ferr == nil {
				ferr = st.Err()
			}
			if ferr != nil || failed(m) {
				s.answerFailed(rw, w, route, ferr, m, &sc)
				return
			}
			out := enc.AppendMessage(nil, m, rawStop(st))
			if w == provider.WireOpenAIChat && m.Usage == (llm.Usage{}) {
				out = dropChatUsage(out) // the upstream sent none: absent stays absent
			}
			rw.Header().Set("Content-Type", "application/json")
			rw.Write(out)
			return
		}
		var sse *sseWriter
		var bp *[]byte
		keepBuf := 1 << 20
		if ps != nil {
			sse, bp, keepBuf = &ps.sse, &ps.buf, connKeep
			sse.use(rw)
			defer sse.release(connKeep)
		} else {
			sse, bp = getSSEWriter(rw), bufPool.Get().(*[]byte)
			defer putSSEWriter(sse)
			defer bufPool.Put(bp)
		}
		sse.coalesce = true
		// Before each upstream read, what the previous one produced goes
		// out in one write.
		call.flushTo = sse
		buf := *bp
		first := true
		sent := 0 // events written
		// Text already sent is not kept: on these wires nothing later in
		// the stream repeats it, so a long answer costs no memory.
		dropSent := w == provider.WireOpenAIChat || w == provider.WireAnthropic
		// Anthropic's message_start carries the input and cache usage, which
		// the upstream's own message_start has given only once the next
		// event is decoded: it is written then.
		holdStart := w == provider.WireAnthropic
		pendingStart := false
		// The chain's stream steps (one dynamic call per event, not the
		// three of Next, Event and Message) where it can.
		stepper := llm.Stepping(st)
		for {
			ev, m, ok := stepper.Step()
			if !ok {
				break
			}
			if holdStart && ev.Type == llm.EventStart {
				holdStart, pendingStart = false, true
				continue
			}
			buf = buf[:0]
			if pendingStart {
				pendingStart = false
				final := m.Usage
				if call.dec != nil {
					m.Usage = call.dec.UsageSoFar()
				}
				buf = enc.AppendEvent(buf, &llm.Event{Type: llm.EventStart}, m)
				m.Usage = final
			}
			switch {
			case lim.exceeded(m):
				buf = s.appendStreamError(enc, buf, route, lim.err, m, &sc)
			case ev.Type == llm.EventError:
				buf = s.appendStreamError(enc, buf, route, st.Err(), m, &sc)
			case ev.Type == llm.EventDone:
				buf = s.appendDone(enc, buf, pr, m, rawStop(st))
			default:
				buf = enc.AppendEvent(buf, ev, m)
			}
			if dropSent && (ev.Type == llm.EventTextDelta || ev.Type == llm.EventThinkingDelta) {
				if b := m.Block(ev.ContentIndex); b != nil {
					b.Text = b.Text[:0]
				}
			}
			if len(buf) == 0 {
				continue
			}
			if first {
				first = false
				seriesOnce.Do(func() {
					events, firstEvent = s.m.events.WithLabelValues(route), s.m.timeToFirstEvent.WithLabelValues(route)
				})
				firstEvent.Observe(time.Since(start).Seconds())
			}
			sent++
			if err := sse.write(buf); err != nil {
				// The client went away or stopped reading; returning
				// closes the upstream body.
				break
			}
			if lim.err != nil {
				break
			}
		}
		call.flushTo = nil
		if sent > 0 {
			// Once per stream: an atomic add per event on a counter every
			// stream shares costs more than the count.
			events.Add(float64(sent))
		}
		if cap(buf) <= keepBuf {
			*bp = buf[:0]
		} else {
			*bp = nil
		}
		s.countRepairs(route, st.Message())
		s.addTokens(route, pr.model, &st.Message().Usage)
		if err := st.Err(); err != nil && !errors.Is(err, context.Canceled) {
			s.cfg.Logf("gateway: %s stream ended: %v", route, sc.string(errText(err)))
		}
		// The upstream body is finished first (drained, so that its
		// connection is reused), then the last events are written without
		// a flush: net/http's final flush sends them with the end of the
		// chunked body in one write, under the write deadline that
		// statusWriter set.
		closeStream()
		sse.writePending()
	}
}

// appendDone appends the events that end a successful stream: the
// upstream's own stop reason where the chain kept the outcome, and on chat
// the usage chunk only when the client asked for it and the upstream sent
// usage (no fabricated zeros).
func (s *Server) appendDone(enc *wireenc.Encoder, dst []byte, pr proxyRequest, m *llm.Message, raw string) []byte {
	if raw != "" {
		raw = mapRawStop(enc.Wire(), raw, m)
	}
	if enc.Wire() == provider.WireOpenAIChat && pr.includeUsage && m.Usage == (llm.Usage{}) {
		alt := encoderPool.Get().(*wireenc.Encoder)
		defer encoderPool.Put(alt)
		alt.Reset(enc.Wire(), enc.Meta(), wireenc.Options{NoUsage: true})
		return alt.AppendDoneRaw(dst, m, raw)
	}
	return enc.AppendDoneRaw(dst, m, raw)
}

// dropChatUsage cuts the usage member that ends a chat.completion object.
func dropChatUsage(b []byte) []byte {
	i := bytes.LastIndex(b, []byte(`,"usage":`))
	if i < 0 {
		return b
	}
	return append(b[:i], '}')
}

// setRequestID returns the upstream's request id to the client, in the
// header its SDK reads (request-id for Anthropic, x-request-id for
// OpenAI); without one the gateway's own id, set by instrument, stays.
func setRequestID(rw http.ResponseWriter, w wire, id string) {
	if id == "" {
		return
	}
	rw.Header().Set(requestIDHeader(w), id)
}

func requestIDHeader(w wire) string {
	if w == provider.WireAnthropic {
		return "Request-Id"
	}
	return "X-Request-Id"
}

// routeName is the route label of a wire's endpoint.
func routeName(w wire) string {
	switch w {
	case provider.WireAnthropic:
		return "messages"
	case provider.WireOpenAIResponses:
		return "responses"
	}
	return "chat"
}

// failed reports whether a finished message is a failure: an error or an
// abort, whatever content came before it.
func failed(m *llm.Message) bool {
	return m.StopReason == llm.StopError || m.StopReason == llm.StopAborted
}

// AnswerTooLargeError ends an answer whose content held by the gateway
// passed Config.MaxAnswerBytes.
type AnswerTooLargeError struct{ Limit int }

func (e *AnswerTooLargeError) Error() string {
	return "gateway: the upstream's answer exceeds the limit of " + strconv.Itoa(e.Limit) + " bytes held per stream"
}

// answerLimit polices the content one answer holds. The exact size is
// summed over the message's blocks only after each MiB (or eighth of the
// limit) read from the upstream, so the check costs nothing per event and
// cannot go quadratic.
type answerLimit struct {
	max     int
	call    *upstreamCall
	checked int64 // upstream bytes read at the last exact check
	err     error
}

const limitCheckEvery = 1 << 20

func (l *answerLimit) exceeded(m *llm.Message) bool {
	if l.err != nil {
		return true
	}
	if l.call.read-l.checked < min(limitCheckEvery, int64(l.max)/8) {
		return false
	}
	l.checked = l.call.read
	n := 0
	for i := range m.Content {
		b := &m.Content[i]
		n += len(b.Text) + len(b.RawArgs) + len(b.Arguments) + len(b.Signature)
	}
	if n > l.max {
		l.err = &AnswerTooLargeError{Limit: l.max}
		return true
	}
	return false
}

// failure is how one failed answer is reported to a client: the HTTP
// status and error type the provider itself uses for it.
type failure struct {
	status int
	typ    string
	msg    string
}

// classify maps a failed stream's error to the provider's status and
// error type on wire w. An in-band provider error keeps its own type
// (overloaded_error stays overloaded_error).
func classify(w wire, err error, m *llm.Message) failure {
	msg := ""
	if m != nil {
		msg = m.ErrorMessage
	}
	if msg == "" && err != nil {
		msg = err.Error()
	}
	if msg == "" {
		msg = "the upstream stream failed"
	}
	anth := w == provider.WireAnthropic
	pick := func(status int, anthropicType, openaiType string) failure {
		if anth {
			return failure{status, anthropicType, msg}
		}
		return failure{status, openaiType, msg}
	}
	var pe *provider.ProviderError
	var tl *AnswerTooLargeError
	var le *provider.LimitError
	switch {
	case errors.As(err, &pe) && pe.Type != "":
		return failure{providerErrorStatus(pe.Type), pe.Type, msg}
	case errors.As(err, &pe):
		return pick(500, "api_error", "server_error")
	case errors.Is(err, streamwrap.ErrIdleTimeout), errors.Is(err, context.DeadlineExceeded):
		return pick(504, "timeout_error", "timeout")
	case errors.As(err, &tl), errors.As(err, &le):
		return pick(502, "api_error", "upstream_answer_too_large")
	case m != nil && m.StopReason == llm.StopAborted, errors.Is(err, context.Canceled):
		return pick(499, "api_error", "aborted")
	}
	return pick(502, "api_error", "server_error")
}

// providerErrorStatus is the HTTP status a provider sends with an error
// of type typ (Anthropic's types and OpenAI's codes); 500 for the rest.
func providerErrorStatus(typ string) int {
	switch typ {
	case "invalid_request_error":
		return 400
	case "authentication_error", "invalid_api_key":
		return 401
	case "permission_error":
		return 403
	case "not_found_error", "model_not_found":
		return 404
	case "request_too_large":
		return 413
	case "rate_limit_error", "rate_limit_exceeded", "insufficient_quota":
		return 429
	case "overloaded_error":
		return 529
	case "timeout_error":
		return 504
	}
	return 500
}

// answerFailed answers a non-streaming request whose upstream stream
// failed, in the provider's error shape, and counts it.
func (s *Server) answerFailed(rw http.ResponseWriter, w wire, route string, err error, m *llm.Message, sc *secrets) {
	f := classify(w, err, m)
	f.msg = sc.string(f.msg)
	if errors.Is(err, context.Canceled) && m.StopReason != llm.StopError {
		s.m.streamErrors.WithLabelValues(route, "aborted").Inc()
		return // the client is gone
	}
	s.m.streamErrors.WithLabelValues(route, f.typ).Inc()
	writeWireError(rw, w, f.status, f.typ, f.msg)
}

// appendStreamError appends the in-band error event that ends a stream
// after its 200, with the provider's error type kept, and counts it.
func (s *Server) appendStreamError(enc *wireenc.Encoder, dst []byte, route string, err error, m *llm.Message, sc *secrets) []byte {
	f := classify(enc.Wire(), err, m)
	f.msg = sc.string(f.msg)
	s.m.streamErrors.WithLabelValues(route, f.typ).Inc()
	if enc.Wire() == wireenc.OpenAIResponses {
		m.StopReason, m.ErrorMessage = llm.StopError, f.msg
		return enc.AppendEvent(dst, &llm.Event{Type: llm.EventError}, m)
	}
	return enc.AppendError(dst, f.typ, f.msg)
}

var (
	encoderPool = sync.Pool{New: func() any { return new(wireenc.Encoder) }}
	bufPool     = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}
)

// responseID returns a fresh id for one answer: a per-process random
// prefix and a counter, so ids never repeat across answers or replicas.
func responseID(w wire) string {
	var b [64]byte
	id := append(b[:0], "chatcmpl-"...)
	switch w {
	case provider.WireAnthropic:
		id = append(b[:0], "msg_"...)
	case provider.WireOpenAIResponses:
		id = append(b[:0], "resp_"...)
	}
	id = strconv.AppendUint(append(id, idPrefix...), idSeq.Add(1), 36)
	return string(id) // one allocation
}

var (
	idSeq    atomic.Uint64
	idPrefix = strconv.FormatUint(rand.Uint64()>>16, 36) + "x"
)

var commonStops = [...]string{"stop", "tool_calls", "length", "end_turn", "tool_use", "max_tokens", "completed"}

// rawStop is the upstream's own stop reason, when the stream keeps it.
func rawStop(st llm.Stream) string {
	rs, ok := st.(provider.RawStopReasoner)
	if !ok {
		return ""
	}
	r := rs.RawStopReason()
	for _, k := range commonStops { // the usual reasons without an allocation
		if string(r) == k {
			return k
		}
	}
	return string(r)
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
func (s *Server) upstreamFailed(rw http.ResponseWriter, w wire, err error, sc *secrets) {
	var ue *UpstreamError
	if errors.As(err, &ue) {
		s.m.upstreamErrors.WithLabelValues(routeName(w), "status_"+itoa(int64(ue.Status))).Inc()
		if ue.RetryAfter != "" {
			rw.Header().Set("Retry-After", ue.RetryAfter)
		}
		rw.Header().Set("Content-Type", "application/json")
		rw.WriteHeader(ue.Status)
		rw.Write(sc.bytes(ue.Body)) // an upstream may echo the key it was sent
		return
	}
	if errors.Is(err, context.Canceled) {
		return
	}
	if errors.Is(err, context.DeadlineExceeded) {
		s.m.upstreamErrors.WithLabelValues(routeName(w), "timeout").Inc()
		writeWireError(rw, w, http.StatusGatewayTimeout, "timeout_error", "the upstream did not answer in time")
		return
	}
	s.m.upstreamErrors.WithLabelValues(routeName(w), "connect").Inc()
	s.cfg.Logf("gateway: upstream unreachable: %v", sc.string(errText(err)))
	// The upstream's address stays in the log: clients learn only that it
	// could not be reached.
	writeWireError(rw, w, http.StatusBadGateway, "upstream_unreachable", "the upstream could not be reached")
}

// UpstreamBase normalises an upstream URL to the one convention the
// gateway and the engine share: the OpenAI-style base that ends in /v1
// (what users paste: https://api.openai.com/v1, http://127.0.0.1:8000/v1,
// https://openrouter.ai/api/v1). A URL with no path gets /v1; any other
// path is kept as given. Requests go to base + "/chat/completions",
// "/responses", "/messages" or "/models".
func UpstreamBase(u string) string {
	u = strings.TrimRight(u, "/")
	if i := strings.Index(u, "://"); i >= 0 && !strings.Contains(u[i+3:], "/") {
		u += "/v1"
	}
	return u
}

// upstreamURL is the endpoint of wire w on the configured upstream, made
// once per wire (the upstream does not change after New).
func (s *Server) upstreamURL(w wire) string { return s.urls[wireIndex(w)] }

// wireIndex orders the wires in Server.urls and Server.upTargets.
func wireIndex(w wire) int {
	switch w {
	case provider.WireAnthropic:
		return 1
	case provider.WireOpenAIResponses:
		return 2
	}
	return 0
}

// upstreamURL is the endpoint of wire w on the upstream base.
func upstreamURL(base string, w wire) string {
	return provider.Endpoint(w, &llm.Model{BaseURL: UpstreamBase(base)})
}

// upstreamStreamFunc is the base of the proxy's chain: it posts body to the
// upstream and decodes the answer with a pooled decoder.
func (s *Server) upstreamStreamFunc(w wire, body []byte, hdr http.Header, call *upstreamCall) llm.StreamFunc {
	return func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		return s.openUpstream(ctx, w, body, hdr, call, req)
	}
}

// openUpstream posts body to the upstream and returns its answer's stream.
func (s *Server) openUpstream(ctx context.Context, w wire, body []byte, hdr http.Header, call *upstreamCall, req *llm.Request) (llm.Stream, error) {
	if s.cfg.Upstream == "" {
		return nil, errors.New("no upstream configured")
	}
	if s.up != nil {
		// The lean client bounds the wait for the end of the body on
		// the connection itself (see upBody.drain).
		if err := s.postLean(ctx, w, body, hdr, call); err != nil {
			return nil, err
		}
	} else {
		// The call's own context lets Close bound the wait for the
		// end of the body (see upstreamCall.drain).
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		if err := s.postHTTP(ctx, w, body, hdr, call); err != nil {
			cancel()
			return nil, err
		}
		call.cancel = cancel
	}
	// A pass-through proxy keeps the reasoning the upstream sends: the
	// client asked that model, whatever ocbench knows of it.
	d := provider.GetDecoder(w, call, provider.Options{API: req.Model.API, Provider: req.Model.Provider, Model: req.Model.ID, Reasoning: true})
	d.SetContext(ctx)
	call.dec = d
	call.st = upstreamStream{Decoder: d, call: call}
	return &call.st, nil
}

// postLean posts through the gateway's own HTTP/1.1 client. A redirect,
// rare from an upstream, is followed by net/http's client.
func (s *Server) postLean(ctx context.Context, w wire, body []byte, hdr http.Header, call *upstreamCall) error {
	ur, own := call.ur, false // the connection's, or one from the pool
	if ur == nil {
		ur, own = upRequestPool.Get().(*upRequest), true
	}
	defer func() {
		if cap(ur.head) > 64<<10 {
			ur.head = nil
		}
		ur.head, ur.body, ur.watch = ur.head[:0], nil, nil
		if own {
			upRequestPool.Put(ur)
		}
	}()
	ur.target, ur.body, ur.watch = s.upTargets[wireIndex(w)], body, call.watch
	ur.head = append(ur.head[:0], "Content-Type: application/json\r\nAccept: text/event-stream\r\n"...)
	if err := s.eachUpstreamHeader(hdr, w, ur.addHeader); err != nil {
		return err
	}
	head, err := s.up.post(ctx, ur)
	if err != nil {
		return err
	}
	resp := *head // the connection's: gone once the body is closed
	call.requestID = saneRequestID(resp.requestID)
	switch {
	case resp.status/100 == 3:
		resp.body.Close()
		return s.postHTTP(ctx, w, body, hdr, call)
	case resp.status/100 != 2:
		b, _ := io.ReadAll(io.LimitReader(resp.body, 64<<10))
		resp.body.Close()
		return &UpstreamError{Status: resp.status, RetryAfter: resp.retryAfter, Body: b}
	}
	resp.body.onBlock = call
	call.body, call.hooked = resp.body, true
	return nil
}

var upRequestPool = sync.Pool{New: func() any { return new(upRequest) }}

// postHTTP posts through net/http: Config.HTTPClient, or the transport of
// the gateway's own client directly for an upstream the lean client does
// not serve (HTTPS, a proxy).
func (s *Server) postHTTP(ctx context.Context, w wire, body []byte, hdr http.Header, call *upstreamCall) error {
	newRequest := func() (*http.Request, error) {
		hr, err := http.NewRequestWithContext(ctx, http.MethodPost, s.upstreamURL(w), bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		hr.Header.Set("Content-Type", "application/json")
		hr.Header.Set("Accept", "text/event-stream")
		s.upstreamAuth(hr.Header, hdr, w)
		return hr, nil
	}
	hr, err := newRequest()
	if err != nil {
		return err
	}
	var resp *http.Response
	if s.upstreamRT != nil {
		// The gateway's own client: its transport directly, without
		// the client's per-request redirect machinery (a copy of the
		// headers, a redirect closure). A redirect, rare from an
		// upstream, is still followed, by the client as before.
		resp, err = s.upstreamRT.RoundTrip(hr)
		if err == nil && resp.StatusCode/100 == 3 {
			resp.Body.Close()
			if hr, err = newRequest(); err == nil {
				resp, err = s.cfg.HTTPClient.Do(hr)
			}
		}
	} else {
		resp, err = s.cfg.HTTPClient.Do(hr)
	}
	if err != nil {
		return err
	}
	call.requestID = upstreamRequestID(resp.Header)
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		return &UpstreamError{Status: resp.StatusCode, RetryAfter: resp.Header.Get("Retry-After"), Body: b}
	}
	call.body = resp.Body
	return nil
}

// upstreamCall is one request's upstream body, counting the bytes read
// for the answer limit.
type upstreamCall struct {
	body      io.ReadCloser
	cancel    context.CancelFunc // ends a net/http upstream request; nil for the lean client
	read      int64
	requestID string // the upstream's x-request-id / request-id
	dec       *provider.Decoder
	// flushTo is flushed before each read of the body that may wait (on
	// the goroutine that drives the stream): the proxy's events gathered
	// so far go out. A body of the lean client says when it is about to
	// wait (hooked); a net/http body is assumed to wait on every read.
	flushTo *sseWriter
	hooked  bool
	st      upstreamStream // the call's stream, made with it
	// watch is the connection's watch of the request context for the
	// lean client (proxyState.watch); nil: one per request.
	watch *ctxWatch
	// ur is the connection's upstream request (proxyState.ur); nil: one
	// from the pool.
	ur *upRequest
}

// blocking is the lean body's hook: it is about to wait on the upstream.
func (c *upstreamCall) blocking() {
	if c.flushTo != nil && c.read > 0 {
		c.flushTo.flushPending()
	}
}

// upstreamRequestID is the id an upstream gave its answer, if a
// printable token of sane length.
func upstreamRequestID(h http.Header) string {
	id := h.Get("X-Request-Id")
	if id == "" {
		id = h.Get("Request-Id")
	}
	return saneRequestID(id)
}

// saneRequestID is id when it is a printable token of sane length.
func saneRequestID(id string) string {
	if len(id) > 128 || strings.ContainsFunc(id, func(r rune) bool { return r <= ' ' || r > '~' }) {
		return ""
	}
	return id
}

func (c *upstreamCall) Close() error {
	err := c.body.Close()
	if c.cancel != nil {
		c.cancel()
	}
	return err
}

// Draining the end of an upstream body, so that its connection goes back
// to the Transport's idle pool: an upstream writes its last event and the
// end of the body (the chunked terminator) apart, so a stream that
// stopped at its terminal event has not read the body's EOF, and closing
// a body before EOF closes its connection: every stream would then pay a
// new TCP connection (connect, accept, two Transport goroutines) on both
// sides. The wait is bounded: an upstream that stalls after its last event
// costs at most drainWait, then its connection is dropped.
const (
	drainWait  = 20 * time.Millisecond
	drainBytes = 64 << 10
)

// drain reads what is left of the body, up to drainBytes and drainWait.
// A lean client's body whose end is already buffered (the usual case: the
// upstream's last event and its end arrive together) is finished without
// arming a timer; otherwise its connection's read deadline bounds the wait.
func (c *upstreamCall) drain() {
	if b, ok := c.body.(*upBody); ok {
		if !b.finishBuffered() {
			b.drain(drainWait, drainBytes)
		}
		return
	}
	t := time.AfterFunc(drainWait, c.cancel)
	defer t.Stop()
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	b := (*bp)[:cap(*bp)]
	for n := 0; n < drainBytes; {
		k, err := c.body.Read(b)
		n += k
		if err != nil {
			return
		}
	}
}

func (c *upstreamCall) Read(p []byte) (int, error) {
	// Not before the first read: what is gathered then is only the
	// stream's opening event, made before any upstream byte; it goes out
	// with the first events the upstream sends, in the same write as the
	// headers, instead of in a write (and a client wake-up) of its own.
	if c.flushTo != nil && c.read > 0 && !c.hooked {
		c.flushTo.flushPending()
	}
	n, err := c.body.Read(p)
	c.read += int64(n)
	return n, err
}

// upstreamStream is a pooled decoder over an upstream body; Close closes
// the body and returns the decoder to the pool.
type upstreamStream struct {
	*provider.Decoder
	call   *upstreamCall
	closed bool
}

func (u *upstreamStream) Close() error {
	if u.closed {
		return nil
	}
	u.closed = true
	if u.Decoder.Err() == nil && u.Decoder.Event().Type == llm.EventDone && !failed(u.Decoder.Message()) {
		// A stream that ended cleanly: its connection is worth keeping.
		u.call.flushTo = nil
		u.call.drain()
	}
	err := u.Decoder.Close()
	provider.PutDecoder(u.Decoder)
	return err
}
