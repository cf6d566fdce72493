package gateway

import (
	"context"
	"net/http"
	"time"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider/wireenc"
)

// connState is what the requests of one client connection of the
// gateway's own server reuse, one after the other (a connection serves
// one request at a time): the instrumented writer, and per wire the
// proxy's decorator chain with the upstream call it drives. A stream then
// builds no chain, no idle-timeout state or timer, no call: they are made
// once per connection, and the chain again only when a request declares
// other tools than the previous one. Under net/http (Server.Handler) there
// is none and each request makes its own.
type connState struct {
	rw    http.ResponseWriter // the writer rc controls
	rc    *http.ResponseController
	sw    statusWriter
	idv   [1]string // the request-id header's value slice
	start time.Time // the clock read when the request being served arrived
	proxy [3]proxyState
}

// proxyState is the proxy's per-connection state of one wire.
type proxyState struct {
	fn    llm.StreamFunc // the chain, built for tools
	tools []string
	model string // the last request's model, reused when it repeats
	// The request being served: the chain's base reads body, hdr and
	// call (cleared when the request ends, so that an idle connection
	// holds no body).
	body []byte
	hdr  http.Header
	call upstreamCall
	req  llm.Request
	// watch is the lean client's watch of the chain's context, kept
	// across the connection's requests.
	watch ctxWatch
	// What a stream would take from pools, kept with the connection
	// (buffers past connKeep are dropped when the stream ends).
	enc wireenc.Encoder
	sse sseWriter
	buf []byte
	ur  upRequest
}

// connKeep bounds a buffer a connection keeps from one request to the
// next.
const connKeep = 16 << 10

type connStateKey struct{}

// connStateOf returns the connection state ctx carries, or nil.
func connStateOf(ctx context.Context) *connState {
	cs, _ := ctx.Value(connStateKey{}).(*connState)
	return cs
}

// controller returns the ResponseController of w, made once per
// connection (its writer does not change).
func (cs *connState) controller(w http.ResponseWriter) *http.ResponseController {
	if cs.rc == nil || cs.rw != w {
		cs.rw, cs.rc = w, http.NewResponseController(w)
	}
	return cs.rc
}

// chain returns the connection's chain of wire w for pr's tools, built
// when the tools differ from the last request's.
func (s *Server) connChain(ps *proxyState, w wire, pr proxyRequest) llm.StreamFunc {
	if ps.fn == nil || !equalStrings(ps.tools, pr.tools) {
		ps.tools = pr.tools
		ps.fn = s.wrap(func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
			return s.openUpstream(ctx, w, ps.body, ps.hdr, &ps.call, req)
		}, w, pr, true)
	}
	return ps.fn
}

// end clears what the request lent the state.
func (ps *proxyState) end() {
	ps.body, ps.hdr = nil, nil
	ps.call = upstreamCall{}
	ps.req = llm.Request{}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
