package gateway

import (
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	dto "github.com/prometheus/client_model/go"
)

// metrics are the gateway's Prometheus series. Each Server has its own
// registry, so that several servers (tests, replicas in one process) never
// share or clash on global state.
type metrics struct {
	reg              *prometheus.Registry
	requests         *prometheus.CounterVec   // route, code
	inFlight         prometheus.GaugeFunc     // streams being served
	events           *prometheus.CounterVec   // route
	runEvents        prometheus.Counter       // events{route="runs"}
	repairs          *prometheus.CounterVec   // route, kind
	idleTimeouts     *prometheus.CounterVec   // route
	upstreamErrors   *prometheus.CounterVec   // route, reason
	rejected         *prometheus.CounterVec   // route, reason: overload, draining, body_timeout, auth, ...
	panics           *prometheus.CounterVec   // route
	streamErrors     *prometheus.CounterVec   // route, type
	tokens           *prometheus.CounterVec   // route, model, kind
	latency          *prometheus.HistogramVec // route
	timeToFirstEvent *prometheus.HistogramVec // route

	models  sync.Map // model label values in use
	nModels atomic.Int32
	// tokenSeries holds a route's and a labelled model's token counters
	// (tokenKey -> *tokenSeries), so that a stream's usage costs one
	// lookup instead of one per kind; it holds at most maxModelLabels
	// models per route ("other" is not cached).
	tokenSeries sync.Map
}

type tokenKey struct{ route, model string }

// tokenKinds are the kind label values of the token counters, in the
// order of tokenSeries.c.
var tokenKinds = [...]string{"input", "output", "cache_read", "cache_write"}

// tokenSeries are one route's and model's token counters, each looked
// up when first used (a series appears only once it has a value).
type tokenSeries struct {
	once [len(tokenKinds)]sync.Once
	c    [len(tokenKinds)]prometheus.Counter
}

// addTokens adds n tokens of each kind (in tokenKinds' order) to the
// counters of route and model; zero kinds are not touched.
func (m *metrics) addTokens(route, model string, n [len(tokenKinds)]int64) {
	var ts *tokenSeries
	if v, ok := m.tokenSeries.Load(tokenKey{route, model}); ok {
		ts = v.(*tokenSeries)
	} else if label := m.modelLabel(model); label == model {
		v, _ := m.tokenSeries.LoadOrStore(tokenKey{route, model}, new(tokenSeries))
		ts = v.(*tokenSeries)
	} else {
		for i, k := range n {
			if k > 0 {
				m.tokens.WithLabelValues(route, label, tokenKinds[i]).Add(float64(k))
			}
		}
		return
	}
	for i, k := range n {
		if k > 0 {
			ts.once[i].Do(func() { ts.c[i] = m.tokens.WithLabelValues(route, model, tokenKinds[i]) })
			ts.c[i].Add(float64(k))
		}
	}
}

// newMetrics makes the series; inFlight reads the streams being served
// (the server's slot count: the gauge costs a stream nothing).
func newMetrics(inFlight func() float64) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ocbench_gateway_requests_total", Help: "HTTP requests by route and status code.",
	}, []string{"route", "code"})
	m.inFlight = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "ocbench_gateway_streams_in_flight", Help: "Streams being served now.",
	}, inFlight)
	m.events = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ocbench_gateway_events_total", Help: "Stream events sent to clients.",
	}, []string{"route"})
	m.runEvents = m.events.WithLabelValues("runs")
	m.repairs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ocbench_gateway_repairs_total", Help: "Tool calls changed by the decorator chain, by kind.",
	}, []string{"route", "kind"})
	m.idleTimeouts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ocbench_gateway_idle_timeouts_total", Help: "Upstream streams ended by the idle timeout.",
	}, []string{"route"})
	m.upstreamErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ocbench_gateway_upstream_errors_total", Help: "Upstream failures before streaming, by route and reason.",
	}, []string{"route", "reason"})
	m.rejected = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ocbench_gateway_rejected_total", Help: "Requests refused before any work, by route and reason.",
	}, []string{"route", "reason"})
	m.panics = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ocbench_gateway_panics_total", Help: "Requests whose handler panicked, by route.",
	}, []string{"route"})
	m.streamErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ocbench_gateway_stream_errors_total", Help: "Answers that failed after the request was accepted (in-band errors, cuts, timeouts, limits), by route and error type.",
	}, []string{"route", "type"})
	// Up to 10 minutes: a long agent turn is a normal request.
	m.tokens = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ocbench_gateway_tokens_total", Help: "Tokens the upstream reported in answers, by route, model and kind (input, output, cache_read, cache_write).",
	}, []string{"route", "model", "kind"})
	buckets := []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "ocbench_gateway_request_duration_seconds", Help: "Time from request to the end of the response.", Buckets: buckets,
	}, []string{"route"})
	m.timeToFirstEvent = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "ocbench_gateway_time_to_first_event_seconds", Help: "Time from request to the first event sent.", Buckets: buckets,
	}, []string{"route"})
	m.reg.MustRegister(m.requests, m.inFlight, m.events, m.repairs, m.idleTimeouts, m.upstreamErrors,
		m.rejected, m.panics, m.streamErrors, m.tokens, m.latency, m.timeToFirstEvent,
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), collectors.NewGoCollector())
	return m
}

// inFlightValue reads the streams-in-flight gauge (tests and /healthz).
func (m *metrics) inFlightValue() float64 {
	var d dto.Metric
	if err := m.inFlight.Write(&d); err != nil {
		return 0
	}
	return d.GetGauge().GetValue()
}

// maxModelLabels bounds the model label values of the token counters: a
// client naming random models must not grow the series without limit.
const maxModelLabels = 64

// modelLabel is model while fewer than maxModelLabels models were seen,
// then "other" for new ones.
func (m *metrics) modelLabel(model string) string {
	if _, ok := m.models.Load(model); ok {
		return model
	}
	if m.nModels.Add(1) > maxModelLabels {
		m.nModels.Add(-1)
		return "other"
	}
	if _, loaded := m.models.LoadOrStore(model, struct{}{}); loaded {
		m.nModels.Add(-1)
	}
	return model
}
