// Package loadtest drives an ocbench gateway (or any OpenAI-compatible
// endpoint on this machine) at a constant or ramped rate and reports what
// it holds: throughput, success rate, latency percentiles, time to first
// event and the gaps between events, and the gateway's memory.
//
// Rate and latency come from vegeta. What vegeta cannot see inside a
// stream (when the first event arrives, the silence between events) comes
// from a streaming client of this package that samples requests beside the
// attack. Traffic goes only to loopback addresses: a target elsewhere is
// refused before anything is sent.
//
// It does not start servers itself: the caller (the loadtest command) hands
// it a target, its own in-process gateway and scripted upstream by default.
package loadtest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Config describes one load run.
type Config struct {
	// Target is the base URL (e.g. http://127.0.0.1:8080). It must resolve
	// to a loopback address.
	Target string
	// Path and Body are the request each hit sends (POST, JSON). BodyFunc,
	// when set, makes the n-th request's body instead (a fresh session id
	// per run, say).
	Path     string
	Body     []byte
	BodyFunc func(n uint64) []byte
	// Sessions, with BodyFunc, makes n a session number in [0, Sessions)
	// that no other request in flight has: it is taken per request and
	// given back when the answer ends, so that the load never sends two
	// runs on one session at once (a gateway answers the second with 409).
	// When all are out, a request gets a fresh number >= Sessions
	// (Report.FreshSessions counts them).
	Sessions int
	// Header is added to every request (an API key, say).
	Header http.Header
	// Rate is hits per second; with RampTo > Rate the rate rises linearly
	// from Rate to RampTo over Duration.
	Rate     float64
	RampTo   float64
	Duration time.Duration
	// Connections caps the open connections (and vegeta's workers).
	Connections int
	// Timeout bounds each request (default 30 s).
	Timeout time.Duration
	// SampleRate is how many streams per second the streaming sampler sends
	// beside the attack (default 5).
	SampleRate float64
	// MemoryProbe, when set, is polled during the run for the gateway's
	// resident memory in bytes (the in-process gateway reads its own;
	// otherwise ScrapeRSS reads the gateway's /metrics).
	MemoryProbe func() (uint64, error)
	// FailureProbe, when set, reads the gateway's count of answers that
	// failed after a 200 (ScrapeCounter of
	// ocbench_gateway_stream_errors_total) before and after the run: the
	// failures vegeta cannot see, since it reads only status codes.
	FailureProbe func() (float64, error)
	// CPUProbe, when set, reads the gateway process's CPU time (user and
	// system, all threads; ProcessCPU) before and after the attack: the
	// gateway's cost per request, which unlike a rate holds when other
	// work shares the machine.
	CPUProbe func() (time.Duration, error)
}

// Report is the outcome of a run. Durations are in milliseconds, with the
// names a dashboard can read as they are.
type Report struct {
	Target         string  `json:"target"`
	Path           string  `json:"path"`
	Rate           float64 `json:"rate"`
	RampTo         float64 `json:"rampTo,omitempty"`
	DurationS      float64 `json:"durationS"`
	Requests       uint64  `json:"requests"`
	Throughput     float64 `json:"throughputPerS"`
	SuccessRate    float64 `json:"successRate"`
	LatencyP50Ms   float64 `json:"latencyP50Ms"`
	LatencyP90Ms   float64 `json:"latencyP90Ms"`
	LatencyP99Ms   float64 `json:"latencyP99Ms"`
	LatencyMaxMs   float64 `json:"latencyMaxMs"`
	LatencyMeanMs  float64 `json:"latencyMeanMs"`
	TTFEP50Ms      float64 `json:"ttfeP50Ms"`
	TTFEP99Ms      float64 `json:"ttfeP99Ms"`
	GapP50Ms       float64 `json:"gapP50Ms"`
	GapP99Ms       float64 `json:"gapP99Ms"`
	GapMaxMs       float64 `json:"gapMaxMs"`
	Streams        int     `json:"sampledStreams"`
	StreamErrors   int     `json:"sampledStreamErrors"`
	EventsPerSteam float64 `json:"eventsPerStream"`
	PeakRSSBytes   uint64  `json:"gatewayPeakRssBytes,omitempty"`
	// InBandFailures is what FailureProbe counted during the run: answers
	// (streams, runs) that failed after their 200; -1 when not probed.
	InBandFailures int `json:"inBandFailures"`
	// FreshSessions is how many requests found every one of
	// Config.Sessions in flight and went to a fresh session instead.
	FreshSessions uint64 `json:"freshSessions,omitempty"`
	// GatewayCPUUsPerReq is the gateway process's CPU time during the
	// run over the requests sent (vegeta's and the sampler's), in
	// microseconds; LoadgenCPUUsPerReq the same for this process, the
	// load generator. Zero when not measured.
	GatewayCPUUsPerReq float64        `json:"gatewayCpuUsPerRequest,omitempty"`
	LoadgenCPUUsPerReq float64        `json:"loadgenCpuUsPerRequest,omitempty"`
	StatusCodes        map[string]int `json:"statusCodes"`
	Errors             []string       `json:"errors,omitempty"`
	// Timeline is latency per second of the run, for the HTML plot.
	Timeline []Point `json:"timeline"`
}

// Point is one second of the run.
type Point struct {
	Second   int     `json:"s"`
	Requests int     `json:"requests"`
	P50Ms    float64 `json:"p50Ms"`
	P99Ms    float64 `json:"p99Ms"`
	Errors   int     `json:"errors"`
}

// ErrNotLoopback is returned for a target outside this machine's loopback
// range: the load test never sends traffic elsewhere.
var ErrNotLoopback = errors.New("loadtest: target is not a loopback address")

// CheckLoopback resolves target's host and fails unless every address is
// loopback (127.0.0.0/8 or ::1).
func CheckLoopback(target string) error {
	u, err := url.Parse(target)
	if err != nil || u.Host == "" {
		return fmt.Errorf("loadtest: bad target %q", target)
	}
	host := u.Hostname()
	ips, err := net.DefaultResolver.LookupIPAddr(context.Background(), host)
	if err != nil {
		return fmt.Errorf("loadtest: resolving %q: %w", host, err)
	}
	for _, ip := range ips {
		if !ip.IP.IsLoopback() {
			return fmt.Errorf("%w: %s is %s", ErrNotLoopback, host, ip.IP)
		}
	}
	if len(ips) == 0 {
		return fmt.Errorf("%w: %s has no address", ErrNotLoopback, host)
	}
	return nil
}

func (c *Config) setDefaults() error {
	if c.Path == "" {
		c.Path = "/v1/chat/completions"
	}
	if c.Rate <= 0 {
		return errors.New("loadtest: rate must be positive")
	}
	if c.Duration <= 0 {
		return errors.New("loadtest: duration must be positive")
	}
	if c.Duration > time.Hour {
		return errors.New("loadtest: duration over an hour refused; runs stop by themselves")
	}
	if c.Connections <= 0 {
		c.Connections = 64
	}
	if c.Timeout <= 0 {
		c.Timeout = 30 * time.Second
	}
	if c.SampleRate <= 0 {
		c.SampleRate = 5
	}
	return nil
}

// Run attacks cfg.Target for cfg.Duration and returns the report. It stops
// by itself; cancelling ctx stops it early.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	if err := CheckLoopback(cfg.Target); err != nil {
		return nil, err
	}
	url := strings.TrimRight(cfg.Target, "/") + cfg.Path
	hdr := cfg.Header.Clone()
	if hdr == nil {
		hdr = http.Header{}
	}
	hdr.Set("Content-Type", "application/json")
	var seq atomic.Uint64
	body := func() []byte {
		if cfg.BodyFunc != nil {
			return cfg.BodyFunc(seq.Add(1))
		}
		return cfg.Body
	}
	targeter := vegeta.Targeter(func(t *vegeta.Target) error {
		*t = vegeta.Target{Method: http.MethodPost, URL: url, Body: body(), Header: hdr}
		return nil
	})
	// The transport vegeta's Connections, MaxConnections and KeepAlive
	// options would build, made here because those options need vegeta's
	// own *http.Transport where --sessions wraps it; its connections are
	// closed with the run.
	tr := &http.Transport{
		DialContext:         (&net.Dialer{KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost: cfg.Connections,
		MaxConnsPerHost:     cfg.Connections,
	}
	defer tr.CloseIdleConnections()
	var attackRT, sampleRT http.RoundTripper = tr, http.DefaultTransport
	var pool *sessionPool
	if cfg.Sessions > 0 && cfg.BodyFunc != nil {
		// The session is taken where the request is sent, so that it is
		// out for exactly the request's life; the body the targeter made
		// is replaced.
		pool = newSessionPool(cfg.Sessions)
		body = func() []byte { return nil }
		attackRT = &sessionTransport{base: tr, pool: pool, body: cfg.BodyFunc}
		sampleRT = &sessionTransport{base: http.DefaultTransport, pool: pool, body: cfg.BodyFunc}
	}
	var pacer vegeta.Pacer = vegeta.ConstantPacer{Freq: int(cfg.Rate + 0.5), Per: time.Second}
	if cfg.RampTo > cfg.Rate {
		pacer = vegeta.LinearPacer{
			StartAt: vegeta.Rate{Freq: int(cfg.Rate + 0.5), Per: time.Second},
			Slope:   (cfg.RampTo - cfg.Rate) / cfg.Duration.Seconds(),
		}
	}
	atk := vegeta.NewAttacker(vegeta.MaxWorkers(uint64(cfg.Connections)),
		vegeta.Client(&http.Client{Timeout: cfg.Timeout, Transport: attackRT}))

	runCtx, cancel := context.WithTimeout(ctx, cfg.Duration+cfg.Timeout)
	defer cancel()

	var wg sync.WaitGroup
	var samples sampleSet
	wg.Add(1)
	go func() {
		defer wg.Done()
		samples = sampleStreams(runCtx, &http.Client{Timeout: cfg.Timeout, Transport: sampleRT}, url, body, hdr, cfg.SampleRate, cfg.Duration)
	}()
	var peak uint64
	memDone := make(chan struct{})
	if cfg.MemoryProbe != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(50 * time.Millisecond)
			defer t.Stop()
			for {
				if v, err := cfg.MemoryProbe(); err == nil && v > peak {
					peak = v
				}
				select {
				case <-t.C:
				case <-memDone:
					return
				}
			}
		}()
	}

	failuresBefore := -1.0
	if cfg.FailureProbe != nil {
		if v, err := cfg.FailureProbe(); err == nil {
			failuresBefore = v
		}
	}
	cpuBefore, cpuErr := time.Duration(0), errors.New("not probed")
	if cfg.CPUProbe != nil {
		cpuBefore, cpuErr = cfg.CPUProbe()
	}
	selfBefore, selfErr := selfCPU()
	var m vegeta.Metrics
	started := time.Now()
	var timeline []perSecond
	results := atk.Attack(targeter, pacer, cfg.Duration, "ocbench")
loop:
	for {
		select {
		case res, ok := <-results:
			if !ok {
				break loop
			}
			m.Add(res)
			sec := int(res.Timestamp.Sub(started) / time.Second)
			for len(timeline) <= sec {
				timeline = append(timeline, perSecond{})
			}
			timeline[sec].lat = append(timeline[sec].lat, res.Latency)
			if res.Error != "" || res.Code/100 != 2 {
				timeline[sec].errors++
			}
		case <-runCtx.Done():
			atk.Stop()
		}
	}
	m.Close()
	close(memDone)
	wg.Wait()

	rep := &Report{
		Target: cfg.Target, Path: cfg.Path, Rate: cfg.Rate, RampTo: cfg.RampTo, DurationS: cfg.Duration.Seconds(),
		Requests: m.Requests, Throughput: m.Throughput, SuccessRate: m.Success,
		LatencyP50Ms: ms(m.Latencies.P50), LatencyP90Ms: ms(m.Latencies.P90), LatencyP99Ms: ms(m.Latencies.P99),
		LatencyMaxMs: ms(m.Latencies.Max), LatencyMeanMs: ms(m.Latencies.Mean),
		StatusCodes: m.StatusCodes, Errors: m.Errors, PeakRSSBytes: peak, InBandFailures: -1,
	}
	if failuresBefore >= 0 {
		if v, err := cfg.FailureProbe(); err == nil {
			rep.InBandFailures = int(v - failuresBefore)
		}
	}
	samples.fill(rep)
	if pool != nil {
		rep.FreshSessions = pool.fresh.Load()
	}
	if sent := float64(m.Requests + uint64(samples.streams)); sent > 0 {
		if cpuErr == nil {
			if v, err := cfg.CPUProbe(); err == nil {
				rep.GatewayCPUUsPerReq = float64(v-cpuBefore) / 1e3 / sent
			}
		}
		if selfErr == nil {
			if v, err := selfCPU(); err == nil {
				rep.LoadgenCPUUsPerReq = float64(v-selfBefore) / 1e3 / sent
			}
		}
	}
	for i, s := range timeline {
		p := Point{Second: i, Requests: len(s.lat), Errors: s.errors}
		if len(s.lat) > 0 {
			slices.Sort(s.lat)
			p.P50Ms = ms(pct(s.lat, .5))
			p.P99Ms = ms(pct(s.lat, .99))
		}
		rep.Timeline = append(rep.Timeline, p)
	}
	return rep, ctx.Err()
}

type perSecond struct {
	lat    []time.Duration
	errors int
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func pct(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// sampleSet is what the streaming sampler saw.
type sampleSet struct {
	ttfe, gaps []time.Duration
	streams    int
	errors     int
	events     int
}

func (s *sampleSet) fill(r *Report) {
	slices.Sort(s.ttfe)
	slices.Sort(s.gaps)
	r.TTFEP50Ms, r.TTFEP99Ms = ms(pct(s.ttfe, .5)), ms(pct(s.ttfe, .99))
	r.GapP50Ms, r.GapP99Ms = ms(pct(s.gaps, .5)), ms(pct(s.gaps, .99))
	if len(s.gaps) > 0 {
		r.GapMaxMs = ms(s.gaps[len(s.gaps)-1])
	}
	r.Streams, r.StreamErrors = s.streams, s.errors
	if s.streams > 0 {
		r.EventsPerSteam = float64(s.events) / float64(s.streams)
	}
}

// sampleStreams sends rate streaming requests per second for d and times
// every SSE event of each: the first after the request was sent, then the
// gaps between consecutive events.
func sampleStreams(ctx context.Context, client *http.Client, url string, body func() []byte, hdr http.Header, rate float64, d time.Duration) sampleSet {
	var mu sync.Mutex
	var set sampleSet
	var wg sync.WaitGroup
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	defer tick.Stop()
	end := time.After(d)
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-end:
			break loop
		case <-tick.C:
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ttfe, gaps, n, err := timeStream(ctx, client, url, body(), hdr)
			mu.Lock()
			defer mu.Unlock()
			set.streams++
			if err != nil {
				set.errors++
				return
			}
			set.ttfe = append(set.ttfe, ttfe)
			set.gaps = append(set.gaps, gaps...)
			set.events += n
		}()
	}
	wg.Wait()
	return set
}

// timeStream sends one request and reads its SSE answer, returning the
// time to the first event, the gaps between events and the event count.
func timeStream(ctx context.Context, client *http.Client, url string, body []byte, hdr http.Header) (time.Duration, []time.Duration, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, 0, err
	}
	req.Header = hdr.Clone()
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		io.Copy(io.Discard, resp.Body)
		return 0, nil, 0, fmt.Errorf("status %d", resp.StatusCode)
	}
	var ttfe time.Duration
	var gaps []time.Duration
	failed := false
	last := start
	n := 0
	br := bufio.NewReaderSize(resp.Body, 16<<10)
	for {
		line, err := br.ReadSlice('\n')
		if inBandFailure(line) {
			failed = true
		}
		if len(line) > 0 && (line[0] == '\n' || (line[0] == '\r' && len(line) > 1 && line[1] == '\n')) {
			// A blank line ends an event.
			now := time.Now()
			if n == 0 {
				ttfe = now.Sub(start)
			} else {
				gaps = append(gaps, now.Sub(last))
			}
			last = now
			n++
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return ttfe, gaps, n, err
		}
	}
	if n == 0 {
		return 0, nil, 0, errors.New("no event in the answer")
	}
	if failed {
		return ttfe, gaps, n, errors.New("the answer failed after its 200 (an in-band error)")
	}
	return ttfe, gaps, n, nil
}

// inBandFailure reports an SSE line that says the answer failed: an
// Anthropic or Responses error event, a chat {"error":...} chunk, a
// Responses response.failed, or a /v1/runs result carrying an error.
func inBandFailure(line []byte) bool {
	switch {
	case bytes.HasPrefix(line, []byte("event: error")),
		bytes.HasPrefix(line, []byte(`data: {"error":`)),
		bytes.HasPrefix(line, []byte("event: response.failed")),
		bytes.HasPrefix(line, []byte("data: {")) && bytes.Contains(line, []byte(`"type":"response.failed"`)):
		return true
	case bytes.HasPrefix(line, []byte(`data: {"session":`)):
		// The runs result: {"session":..,"stopReason":..,"error":".."}.
		return bytes.Contains(line, []byte(`"error":"`)) || bytes.Contains(line, []byte(`"stopReason":"error"`))
	}
	return false
}

// ScrapeCounter sums every sample of the counter name on a Prometheus
// /metrics page.
func ScrapeCounter(client *http.Client, metricsURL, name string) (float64, error) {
	resp, err := client.Get(metricsURL)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sum := 0.0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, name)
		if !ok || rest == "" || rest[0] != '{' && rest[0] != ' ' {
			continue
		}
		i := strings.LastIndexByte(rest, ' ')
		if v, err := strconv.ParseFloat(rest[i+1:], 64); err == nil {
			sum += v
		}
	}
	return sum, sc.Err()
}

// ScrapeRSS reads process_resident_memory_bytes from a Prometheus /metrics
// page (the gateway exports its process metrics there).
func ScrapeRSS(client *http.Client, metricsURL string) (uint64, error) {
	resp, err := client.Get(metricsURL)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "process_resident_memory_bytes "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return uint64(f), err
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("loadtest: no process_resident_memory_bytes in metrics")
}
