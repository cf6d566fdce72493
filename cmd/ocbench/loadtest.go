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
	"slices"
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
	route := fs.String("route", "chat", "what to drive: chat, messages, responses, runs, direct (the scripted upstream itself, for the proxy's overhead), or relay (chat through a byte relay to it in the gateway's process: the floor of any proxy)")
	rate := fs.Float64("rate", 100, "requests per second")
	rampTo := fs.Float64("ramp-to", 0, "raise the rate linearly to this by the end")
	dur := fs.Duration("duration", 10*time.Second, "how long to attack (at most 1h)")
	conns := fs.Int("connections", 64, "open connections at most")
	findMax := fs.Bool("find-max", false, "step the rate up until p99 reaches 50ms or a request fails; report the highest rate held")
	vs := fs.String("vs", "", "with --find-max: search these routes' highest rates too, comma-separated (direct: the scripted upstream itself; relay: a byte relay to it), their steps alternating with --route's on the same gateway, and report the ratios of the rates")
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
	var vsRoutes []string
	if *vs != "" {
		vsRoutes = strings.Split(*vs, ",")
		for i, r := range vsRoutes {
			if _, _, _, err := routeRequest(r); err != nil {
				fmt.Fprintf(stderr, "ocbench loadtest: --vs: %v\n", err)
				return 2
			}
			if r == *route || slices.Index(vsRoutes, r) != i {
				fmt.Fprintf(stderr, "ocbench loadtest: --vs: %s twice\n", r)
				return 2
			}
		}
		if !*findMax {
			fmt.Fprintln(stderr, "ocbench loadtest: --vs compares --find-max searches: add --find-max")
			return 2
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	base, upstream, relay := *target, "", ""
	var probe func() (uint64, error)
	var failures func() (float64, error)
	var cpu func() (time.Duration, error)
	if base == "" {
		flags := strings.Fields(*serveFlags)
		if *route == "relay" || slices.Contains(vsRoutes, "relay") {
			flags = append(flags, "--relay-addr", "127.0.0.1:0")
		}
		gw, err := startGatewayProcess(ctx, *gatewayBin, *maxStreams, flags, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "ocbench loadtest: %v\n", err)
			return 1
		}
		defer gw.stop()
		base, upstream, relay = gw.url, gw.upstream, gw.relay
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
		if route == "direct" || route == "relay" {
			to := upstream
			if route == "relay" {
				to = relay
			}
			if to == "" {
				fmt.Fprintf(stderr, "ocbench loadtest: --route %s needs the started gateway (no --target)\n", route)
				return c, false
			}
			c.Target, c.MemoryProbe, c.FailureProbe = to, nil, nil
		}
		return c, true
	}
	cfg, ok := configFor(*route)
	if !ok {
		return 2
	}

	var rep *loadtest.Report
	var held []*loadtest.Report // with --vs: --route's and each --vs route's
	names := append([]string{*route}, vsRoutes...)
	var err error
	switch {
	case len(vsRoutes) > 0:
		cfgs := []loadtest.Config{cfg}
		for _, r := range vsRoutes {
			c, ok := configFor(r)
			if !ok {
				return 2
			}
			cfgs = append(cfgs, c)
		}
		held, err = findMaxSet(ctx, cfgs, names, stderr)
		if len(held) > 0 {
			rep = held[0]
		}
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
	case *jsonOut && held != nil:
		err = writeSetJSON(stdout, held, names)
	case *jsonOut:
		err = rep.WriteJSON(stdout)
	case htmlW != stdout && held != nil:
		err = writeSetTable(stdout, held, names)
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
	case "chat", "direct", "relay":
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
	return "", nil, nil, fmt.Errorf("unknown --route %q (chat, messages, responses, runs, direct, relay)", route)
}

// writeSetTable prints each search's best step, then the ratios of their
// rates: --route's to each --vs route's, and each other's to direct's.
func writeSetTable(w io.Writer, held []*loadtest.Report, names []string) error {
	if err := held[0].WriteTable(w); err != nil {
		return err
	}
	for i := 1; i < len(held); i++ {
		fmt.Fprintf(w, "\n--vs %s:\n", names[i])
		if err := held[i].WriteTable(w); err != nil {
			return err
		}
	}
	fmt.Fprintln(w)
	for _, p := range setPairs(names) {
		a, b := held[p[0]], held[p[1]]
		if _, err := fmt.Fprintf(w, "ratio             %s/%s %.2f (%.0f/s vs %.0f/s held, steps alternated on one gateway)\n",
			names[p[0]], names[p[1]], a.Rate/b.Rate, a.Rate, b.Rate); err != nil {
			return err
		}
	}
	for _, p := range setPairs(names) {
		c, ok := pairCPU(held[p[0]], held[p[1]], names[p[1]])
		if !ok {
			continue
		}
		whose := "the proxy's"
		if names[p[0]] == "relay" {
			whose = "the relay's"
		}
		if _, err := fmt.Fprintf(w, "CPU per request   %s's gateway process %.0fµs, %s's %.0fµs: %s own %.0fµs; with the load generator's, %s/%s %.2f\n",
			names[p[0]], held[p[0]].GatewayCPUUsPerReq, names[p[1]], held[p[1]].GatewayCPUUsPerReq, whose, c.Own,
			names[p[0]], names[p[1]], c.Ratio); err != nil {
			return err
		}
	}
	return nil
}

// setPairs are the index pairs a --vs comparison reports: --route against
// each --vs route, then each other --vs route against direct (a relay's
// floor beside the proxy's rate).
func setPairs(names []string) [][2]int {
	var ps [][2]int
	for i := 1; i < len(names); i++ {
		ps = append(ps, [2]int{0, i})
	}
	if d := slices.Index(names, "direct"); d > 0 {
		for i := 1; i < len(names); i++ {
			if i != d {
				ps = append(ps, [2]int{i, d})
			}
		}
	}
	return ps
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

// pairCPU returns the CPU figures of a pair against direct, when both held
// steps have them.
func pairCPU(a, b *loadtest.Report, nameB string) (cpuPair, bool) {
	if nameB != "direct" || a.GatewayCPUUsPerReq <= 0 || b.GatewayCPUUsPerReq <= 0 {
		return cpuPair{}, false
	}
	ta, tb := a.GatewayCPUUsPerReq+a.LoadgenCPUUsPerReq, b.GatewayCPUUsPerReq+b.LoadgenCPUUsPerReq
	return cpuPair{Own: a.GatewayCPUUsPerReq - b.GatewayCPUUsPerReq, Ratio: tb / ta}, true
}

// setPair is one ratio of a --vs comparison in JSON.
type setPair struct {
	Route string   `json:"route"`
	Vs    string   `json:"vs"`
	Ratio float64  `json:"ratio"`
	CPU   *cpuPair `json:"cpu,omitempty"`
}

// writeSetJSON prints the searches' best steps and their ratios as one
// object. With one --vs route its first members are those of the pair
// alone (route, held, vs, vsHeld, ratio, cpu).
func writeSetJSON(w io.Writer, held []*loadtest.Report, names []string) error {
	var pairs []setPair
	for _, p := range setPairs(names) {
		sp := setPair{Route: names[p[0]], Vs: names[p[1]], Ratio: held[p[0]].Rate / held[p[1]].Rate}
		if c, ok := pairCPU(held[p[0]], held[p[1]], names[p[1]]); ok {
			sp.CPU = &c
		}
		pairs = append(pairs, sp)
	}
	type vsHeld struct {
		Vs   string           `json:"vs"`
		Held *loadtest.Report `json:"held"`
	}
	var more []vsHeld
	for i := 2; i < len(held); i++ {
		more = append(more, vsHeld{names[i], held[i]})
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
		More   []vsHeld         `json:"moreVs,omitempty"`
		Ratios []setPair        `json:"ratios,omitempty"`
	}{names[0], held[0], names[1], held[1], pairs[0].Ratio, pairs[0].CPU, more, pairsIfMore(pairs)})
}

// pairsIfMore lists the ratios only where there are more than the first.
func pairsIfMore(ps []setPair) []setPair {
	if len(ps) < 2 {
		return nil
	}
	return ps
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

// findMaxSet runs the searches of cfgs with their steps taking turns, on
// the same gateway, so that whatever else the machine does meanwhile
// weighs on all alike: their ratios are the proxy's overhead, measured in
// one run. It returns each search's best step.
func findMaxSet(ctx context.Context, cfgs []loadtest.Config, names []string, log io.Writer) ([]*loadtest.Report, error) {
	ss := make([]*rateSearch, len(cfgs))
	for i, c := range cfgs {
		ss[i] = &rateSearch{cfg: c, rate: c.Rate}
	}
	for more := true; more; {
		more = false
		for i, s := range ss {
			if s.done() {
				continue
			}
			if err := s.step(ctx, log, names[i]+" "); err != nil {
				return nil, err
			}
			more = more || !s.done()
		}
	}
	held := make([]*loadtest.Report, len(ss))
	for i, s := range ss {
		r, err := s.result()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", names[i], err)
		}
		held[i] = r
	}
	return held, nil
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
	relay         string // with --relay-addr
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
	// "ocbench gateway on http://ADDR upstream URL [relay URL]"
	f := strings.Fields(line)
	if len(f) != 6 && (len(f) != 8 || f[6] != "relay") {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("gateway said %q", line)
	}
	g := &gatewayProcess{url: f[3], upstream: f[5], cmd: cmd}
	if len(f) == 8 {
		g.relay = f[7]
	}
	return g, nil
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
