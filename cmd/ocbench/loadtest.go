package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/ocbench/ocbench/loadtest"
)

func init() {
	register("loadtest", "drive a gateway at a rate and report latency, first-event time and memory", runLoadtest)
}

// Request bodies per route. Runs get a fresh session per request, or with
// --sessions one of a pool no run in flight holds (loadtest.Config.Sessions),
// so that concurrent runs never meet on one session's lock.
const (
	chatLoadBody      = `{"model":"scripted-1","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"read AGENTS.md"}],"tools":[{"type":"function","function":{"name":"read","parameters":{"type":"object","properties":{"path":{"type":"string"}}}}}]}`
	messagesLoadBody  = `{"model":"scripted-1","max_tokens":512,"stream":true,"messages":[{"role":"user","content":"read AGENTS.md"}],"tools":[{"name":"read","input_schema":{"type":"object","properties":{"path":{"type":"string"}}}}]}`
	responsesLoadBody = `{"model":"scripted-1","stream":true,"input":"read AGENTS.md","tools":[{"type":"function","name":"read","parameters":{"type":"object","properties":{"path":{"type":"string"}}}}]}`
)

func runLoadtest(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	target := fs.String("target", "", "gateway base URL on loopback (default: start a gateway and a scripted upstream)")
	route := fs.String("route", "chat", "what to drive: chat, messages, responses, runs, or direct (the scripted upstream itself, for the proxy's overhead)")
	rate := fs.Float64("rate", 100, "requests per second")
	rampTo := fs.Float64("ramp-to", 0, "raise the rate linearly to this by the end")
	dur := fs.Duration("duration", 10*time.Second, "how long to attack (at most 1h)")
	conns := fs.Int("connections", 64, "open connections at most")
	findMax := fs.Bool("find-max", false, "step the rate up until p99 reaches 50ms or a request fails; report the highest rate held")
	vs := fs.String("vs", "", "with --find-max: search this route's highest rate too (direct: the scripted upstream itself), its steps alternating with --route's on the same gateway, and report the ratio of the two rates")
	maxStreams := fs.Int("max-streams", 4096, "the started gateway's concurrent stream limit")
	gatewayBin := fs.String("gateway-bin", "", "start this ocbench binary's serve as the gateway instead of this one's (to compare builds under one load generator)")
	serveFlags := fs.String("serve-flags", "", "more flags for the started gateway, space-separated (e.g. \"--sync none --cpuprofile gw.prof\")")
	sessions := fs.Int("sessions", 0, "--route runs: keep this many live sessions, each run continuing one that has no run in flight (taken per request, given back when its answer ends; when all are in flight, a run starts a fresh session and the report counts it; one whose answer was cut short is replaced by a fresh one). 0: a fresh session per run")
	jsonOut := fs.Bool("json", false, "print the report as JSON")
	htmlOut := fs.String("html", "", "write an HTML plot of the run to this file")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if extraArgs(fs, stderr) {
		return 2
	}
	// Outputs are opened before the attack; --html - takes stdout from the
	// table, as in every command.
	outs := &outputs{stdout: stdout}
	defer outs.closeAll()
	if *jsonOut {
		outs.claimStdout("--json")
	}
	htmlW := outs.open("--html", *htmlOut)
	if outs.err != nil {
		fmt.Fprintf(stderr, "ocbench loadtest: %v\n", outs.err)
		return 2
	}
	if _, _, _, err := routeRequest(*route); err != nil {
		fmt.Fprintf(stderr, "ocbench loadtest: %v\n", err)
		return 2
	}
	if *vs != "" {
		if _, _, _, err := routeRequest(*vs); err != nil {
			fmt.Fprintf(stderr, "ocbench loadtest: --vs: %v\n", err)
			return 2
		}
		if !*findMax {
			fmt.Fprintln(stderr, "ocbench loadtest: --vs compares two --find-max searches: add --find-max")
			return 2
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	base, upstream := *target, ""
	var probe func() (uint64, error)
	var failures func() (float64, error)
	var cpu func() (time.Duration, error)
	if base == "" {
		gw, err := startGatewayProcess(ctx, *gatewayBin, *maxStreams, strings.Fields(*serveFlags), stderr)
		if err != nil {
			fmt.Fprintf(stderr, "ocbench loadtest: %v\n", err)
			return 1
		}
		defer gw.stop()
		base, upstream = gw.url, gw.upstream
		client := &http.Client{Timeout: time.Second}
		// Memory is polled every 50 ms: from /proc where there is one, so
		// that the gateway does not spend its CPU (a fifth of a core at
		// high rates) serving /metrics pages to its own load test.
		pid := gw.cmd.Process.Pid
		probe = func() (uint64, error) { return loadtest.ScrapeRSS(client, gw.url+"/metrics") }
		if _, err := loadtest.ProcessRSS(pid); err == nil {
			probe = func() (uint64, error) { return loadtest.ProcessRSS(pid) }
		}
		failures = func() (float64, error) {
			return loadtest.ScrapeCounter(client, gw.url+"/metrics", "ocbench_gateway_stream_errors_total")
		}
		// With --route direct this is the scripted upstream's own cost: it
		// runs in the gateway's process.
		cpu = func() (time.Duration, error) { return loadtest.ProcessCPU(pid) }
	}
	configFor := func(route string) (loadtest.Config, bool) {
		path, body, bodyFunc, _ := routeRequest(route)
		c := loadtest.Config{Target: base, Path: path, Body: body, BodyFunc: bodyFunc, Rate: *rate, RampTo: *rampTo,
			Duration: *dur, Connections: *conns, Sessions: *sessions, MemoryProbe: probe, FailureProbe: failures, CPUProbe: cpu}
		if route == "direct" {
			if upstream == "" {
				fmt.Fprintln(stderr, "ocbench loadtest: --route direct needs the started gateway (no --target)")
				return c, false
			}
			c.Target, c.MemoryProbe, c.FailureProbe = upstream, nil, nil
		}
		return c, true
	}
	cfg, ok := configFor(*route)
	if !ok {
		return 2
	}

	var rep, vsRep *loadtest.Report
	var err error
	switch {
	case *vs != "":
		vsCfg, ok := configFor(*vs)
		if !ok {
			return 2
		}
		rep, vsRep, err = findMaxPair(ctx, cfg, vsCfg, *route, *vs, stderr)
	case *findMax:
		rep, err = findMaxRate(ctx, cfg, stderr)
	default:
		rep, err = loadtest.Run(ctx, cfg)
	}
	if err != nil && rep == nil {
		fmt.Fprintf(stderr, "ocbench loadtest: %v\n", err)
		return 1
	}
	if htmlW != nil {
		if err := rep.WriteHTML(htmlW); err != nil {
			fmt.Fprintf(stderr, "ocbench loadtest: %v\n", err)
			return 1
		}
	}
	switch {
	case *jsonOut && vsRep != nil:
		err = writePairJSON(stdout, rep, vsRep, *route, *vs)
	case *jsonOut:
		err = rep.WriteJSON(stdout)
	case htmlW != stdout && vsRep != nil:
		err = writePairTable(stdout, rep, vsRep, *route, *vs)
	case htmlW != stdout:
		err = rep.WriteTable(stdout)
	default:
		err = nil // as with the table: a partial run's error is in the report
	}
	if err == nil {
		err = outs.closeAll()
	}
	if err != nil {
		fmt.Fprintf(stderr, "ocbench loadtest: %v\n", err)
		return 1
	}
	return 0
}

func routeRequest(route string) (path string, body []byte, bodyFunc func(uint64) []byte, err error) {
	switch route {
	case "chat", "direct":
		return "/v1/chat/completions", []byte(chatLoadBody), nil, nil
	case "messages":
		return "/v1/messages", []byte(messagesLoadBody), nil, nil
	case "responses":
		return "/v1/responses", []byte(responsesLoadBody), nil, nil
	case "runs":
		prefix := "lt" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-"
		return "/v1/runs", nil, func(n uint64) []byte {
			return []byte(`{"session":"` + prefix + strconv.FormatUint(n, 10) + `","message":"read AGENTS.md"}`)
		}, nil
	}
	return "", nil, nil, fmt.Errorf("unknown --route %q (chat, messages, responses, runs, direct)", route)
}

// writePairTable prints both searches' best steps and the ratio of their
// rates.
func writePairTable(w io.Writer, a, b *loadtest.Report, nameA, nameB string) error {
	if err := a.WriteTable(w); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n--vs %s:\n", nameB)
	if err := b.WriteTable(w); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\nratio             %s/%s %.2f (%.0f/s vs %.0f/s held, steps alternated on one gateway)\n",
		nameA, nameB, a.Rate/b.Rate, a.Rate, b.Rate)
	if c, ok := pairCPU(a, b, nameB); ok && err == nil {
		_, err = fmt.Fprintf(w, "CPU per request   %s's gateway process %.0fµs, %s's %.0fµs: the proxy's own %.0fµs; with the load generator's, %s/%s %.2f\n",
			nameA, a.GatewayCPUUsPerReq, nameB, b.GatewayCPUUsPerReq, c.Own, nameA, nameB, c.Ratio)
	}
	return err
}

// cpuPair is what the two held steps' CPU per request say of the proxy,
// steadier than the held rates on a machine other work shares: its own
// CPU per stream (the route's gateway process minus the scripted
// upstream alone, which runs in it), and the two routes' CPU per request
// with the load generator's, in the ratio of the rates they allow where
// the load generator and the gateway share the cores.
type cpuPair struct {
	Own   float64 `json:"ownUs"`
	Ratio float64 `json:"ratio"`
}

// pairCPU returns the CPU figures of a --vs direct pair, when both held
// steps have them.
func pairCPU(a, b *loadtest.Report, nameB string) (cpuPair, bool) {
	if nameB != "direct" || a.GatewayCPUUsPerReq <= 0 || b.GatewayCPUUsPerReq <= 0 {
		return cpuPair{}, false
	}
	ta, tb := a.GatewayCPUUsPerReq+a.LoadgenCPUUsPerReq, b.GatewayCPUUsPerReq+b.LoadgenCPUUsPerReq
	return cpuPair{Own: a.GatewayCPUUsPerReq - b.GatewayCPUUsPerReq, Ratio: tb / ta}, true
}

// writePairJSON prints both searches' best steps and the ratio as one
// object.
func writePairJSON(w io.Writer, a, b *loadtest.Report, nameA, nameB string) error {
	var cpu *cpuPair
	if c, ok := pairCPU(a, b, nameB); ok {
		cpu = &c
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Route  string           `json:"route"`
		Held   *loadtest.Report `json:"held"`
		Vs     string           `json:"vs"`
		VsHeld *loadtest.Report `json:"vsHeld"`
		Ratio  float64          `json:"ratio"`
		CPU    *cpuPair         `json:"cpu,omitempty"`
	}{nameA, a, nameB, b, a.Rate / b.Rate, cpu})
}

// findMaxRate doubles the rate from cfg.Rate, then bisects, each step for
// cfg.Duration, keeping the highest rate with no failure and p99 under
// 50 ms. A step that misses the bar is run once more before it counts as
// missed: on a machine other work shares, one burst of that work can push
// a step's p99 over the bar at any rate, and a single miss would end the
// doubling there. The returned report is that of the best held step.
func findMaxRate(ctx context.Context, cfg loadtest.Config, log io.Writer) (*loadtest.Report, error) {
	s := &rateSearch{cfg: cfg, rate: cfg.Rate}
	for !s.done() {
		if err := s.step(ctx, log, ""); err != nil {
			return s.best, err
		}
	}
	return s.result()
}

// findMaxPair runs the searches of a and b with their steps alternating,
// on the same gateway, so that whatever else the machine does meanwhile
// weighs on both alike: their ratio is the proxy's overhead, measured in
// one run.
func findMaxPair(ctx context.Context, a, b loadtest.Config, nameA, nameB string, log io.Writer) (ra, rb *loadtest.Report, err error) {
	sa := &rateSearch{cfg: a, rate: a.Rate}
	sb := &rateSearch{cfg: b, rate: b.Rate}
	for !sa.done() || !sb.done() {
		for _, x := range [...]struct {
			s    *rateSearch
			name string
		}{{sa, nameA}, {sb, nameB}} {
			if x.s.done() {
				continue
			}
			if err := x.s.step(ctx, log, x.name+" "); err != nil {
				return sa.best, sb.best, err
			}
		}
	}
	if ra, err = sa.result(); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", nameA, err)
	}
	if rb, err = sb.result(); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", nameB, err)
	}
	return ra, rb, nil
}

// rateSearch is one --find-max search: the rate doubles until a step
// misses the bar, then up to three bisections while the gap is over a
// tenth of the rate held.
type rateSearch struct {
	cfg      loadtest.Config
	best     *loadtest.Report
	lo, hi   float64
	rate     float64 // the next step's rate
	bisected int
}

const p99Limit = 50.0

func (s *rateSearch) done() bool {
	if s.hi == 0 {
		return s.rate > 100000
	}
	return s.bisected >= 3 || s.hi-s.lo <= s.lo/10
}

// step runs the next rate (twice when its first try misses the bar on
// latency alone) and moves the search on.
func (s *rateSearch) step(ctx context.Context, log io.Writer, label string) error {
	rate := s.rate
	if s.hi > 0 {
		rate = (s.lo + s.hi) / 2
		s.bisected++
	}
	// Held means: every request succeeded, p99 under the limit, and the
	// attack really sent the rate (vegeta falls behind when the gateway
	// cannot keep up, which would otherwise pass for low latency).
	ok := func(r *loadtest.Report) bool {
		sent := float64(r.Requests) / r.DurationS
		return r.SuccessRate == 1 && r.LatencyP99Ms < p99Limit && r.StreamErrors == 0 && r.InBandFailures <= 0 && sent >= 0.95*r.Rate
	}
	held := false
	for try := 0; try < 2; try++ {
		c := s.cfg
		c.Rate = rate
		r, err := loadtest.Run(ctx, c)
		if err != nil {
			return err
		}
		logStep(log, label, rate, r)
		if held = ok(r); held {
			s.best = r
			break
		}
		if r.SuccessRate < 1 || r.InBandFailures > 0 || r.StreamErrors > 0 {
			break // failed requests are not noise
		}
	}
	switch {
	case held:
		s.lo = rate
		if s.hi == 0 {
			s.rate = rate * 2
		}
	default:
		s.hi = rate
	}
	return nil
}

func (s *rateSearch) result() (*loadtest.Report, error) {
	if s.best == nil {
		return nil, errors.New("even the starting rate failed the 50ms p99 / no-error bar; lower --rate")
	}
	return s.best, nil
}

func logStep(log io.Writer, label string, rate float64, r *loadtest.Report) {
	cpu := ""
	if r.GatewayCPUUsPerReq > 0 {
		cpu = fmt.Sprintf(", CPU/req gateway %.0fµs loadgen %.0fµs", r.GatewayCPUUsPerReq, r.LoadgenCPUUsPerReq)
	}
	if r.FreshSessions > 0 {
		cpu += fmt.Sprintf(", %d runs on fresh sessions (all in flight)", r.FreshSessions)
	}
	fmt.Fprintf(log, "%srate %6.4g/s: sent %.3g/s, p50 %.2fms, p99 %.2fms, success %.2f%%, failed after 200: %d%s\n",
		label, rate, float64(r.Requests)/r.DurationS, r.LatencyP50Ms, r.LatencyP99Ms, 100*r.SuccessRate, r.InBandFailures, cpu)
}

// gatewayProcess is `ocbench serve` started as a child process, so that its
// memory is its own and not the load generator's.
type gatewayProcess struct {
	url, upstream string
	cmd           *exec.Cmd
}

func startGatewayProcess(ctx context.Context, exe string, maxStreams int, flags []string, stderr io.Writer) (*gatewayProcess, error) {
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, err
		}
	}
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--max-streams", strconv.Itoa(maxStreams)}, flags...)
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("gateway did not start: %w", err)
	}
	// "ocbench gateway on http://ADDR upstream URL"
	f := strings.Fields(line)
	if len(f) != 6 {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("gateway said %q", line)
	}
	return &gatewayProcess{url: f[3], upstream: f[5], cmd: cmd}, nil
}

func (g *gatewayProcess) stop() {
	g.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { g.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		g.cmd.Process.Kill()
		<-done
	}
}
