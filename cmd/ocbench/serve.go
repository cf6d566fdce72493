package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/url"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ocbench/ocbench/engine"
	"github.com/ocbench/ocbench/gateway"
	"github.com/ocbench/ocbench/internal/redact"
	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/loadtest"
	"github.com/ocbench/ocbench/prompt"
	"github.com/ocbench/ocbench/provider"
	"github.com/ocbench/ocbench/provider/scripted"
	"github.com/ocbench/ocbench/transcript"
)

func init() {
	register("serve", "run the HTTP gateway (repairing proxy, runs, metrics)", runServe)
}

// defaultServeGOGC is the collector's percentage of ocbench serve (GOGC
// is 100). What a run of /v1/runs allocates (about 53 KB) dies with it,
// but every cycle marks the live heap, which the live sessions make large
// (hundreds of MiB after tens of thousands of runs): the mark work per run
// is about what a run allocates times 100/GOGC. Measured on /v1/runs, 256
// sessions, 20,000 runs at 1,000/s (GODEBUG=gctrace=1): marked per run
// 64.1 KB at 100, 41.5 KB at 200, 17.4 KB at 400; GC CPU per run 38, 30
// and 16 µs. The heap may reach 1+GOGC/100 times the live heap, which
// --memory-limit bounds (by default 9/10 of the cgroup's memory limit).
const defaultServeGOGC = 400

// cgroupMemoryLimit returns the memory limit of the process's cgroup (v2,
// else v1), or 0 when there is none or it cannot be read.
func cgroupMemoryLimit() int64 {
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || n <= 0 || n >= 1<<50 { // "max", or v1's page-rounded MaxInt64
			return 0
		}
		return n
	}
	return 0
}

// gcFlags defines serve's collector flags, --gogc and --memory-limit.
func gcFlags(fs *flag.FlagSet) (gogc *int, memLimit *int64) {
	gogc = fs.Int("gogc", defaultServeGOGC, "the collector's percentage, as GOGC (negative: off): the heap may grow this much over the live heap before the next collection. /v1/runs' live sessions make the live heap large and each collection marks all of it: at 400 a run costs about a quarter of the mark work it costs at GOGC's 100, for up to 5 times the live heap (GOGC in the environment is used when this flag is not given)")
	memLimit = fs.Int64("memory-limit", cgroupMemoryLimit()/10*9, "soft limit of the process's memory in bytes, as GOMEMLIMIT: the collector runs more often as the heap nears it, whatever --gogc (default: 9/10 of the cgroup's memory limit, if any; 0: none; GOMEMLIMIT in the environment is used when this flag is not given)")
	return gogc, memLimit
}

// setGCPolicy applies --gogc and --memory-limit; an environment's GOGC or
// GOMEMLIMIT stays in force where its flag was not given. The returned
// restore puts back what was in force before.
func setGCPolicy(fs *flag.FlagSet, gogc int, memLimit int64) (restore func()) {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	percent, limit := debug.SetGCPercent(-1), debug.SetMemoryLimit(-1)
	debug.SetGCPercent(percent)
	if given["gogc"] || os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gogc)
	}
	if given["memory-limit"] || memLimit > 0 && os.Getenv("GOMEMLIMIT") == "" {
		if memLimit <= 0 {
			memLimit = math.MaxInt64 // none
		}
		debug.SetMemoryLimit(memLimit)
	}
	return func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	}
}

func runServe(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "listen address")
	upstream := fs.String("upstream", "", "provider base URL, OpenAI-style ending in /v1 (http://host:port gets /v1); default: a built-in scripted upstream on loopback")
	models := fs.String("models", "", "comma-separated model ids to accept and list (default: any)")
	runsModel := fs.String("runs-model", "", "model id /v1/runs sends to --upstream (default: the request's \"model\", else \"default\")")
	runsWire := fs.String("runs-wire", "chat", "wire /v1/runs speaks to --upstream: chat, responses or messages")
	maxBody := fs.Int64("max-body", 10<<20, "request body limit in bytes")
	maxStreams := fs.Int("max-streams", 512, "concurrent streams; past it requests get 429")
	maxAnswer := fs.Int("max-answer", 8<<20, "answer bytes held per stream (a non-streaming answer whole); past it the answer fails")
	idle := fs.Duration("idle-timeout", 60*time.Second, "longest silence between upstream events")
	reqTimeout := fs.Duration("request-timeout", 10*time.Minute, "longest request")
	headerTimeout := fs.Duration("header-timeout", 10*time.Second, "longest wait for a request's headers")
	bodyTimeout := fs.Duration("body-timeout", 30*time.Second, "longest wait for a request's body (no stream slot is held meanwhile)")
	writeTimeout := fs.Duration("write-timeout", 30*time.Second, "longest a write to a client may block (a client that stops reading loses its slot)")
	keepAlive := fs.Duration("keepalive-timeout", 60*time.Second, "idle keep-alive connections are closed after this")
	grace := fs.Duration("grace", 30*time.Second, "on SIGTERM/SIGINT, how long streams in flight may run before connections are closed")
	drainDelay := fs.Duration("drain-delay", 5*time.Second, "on SIGTERM, within --grace: how long to answer 503 (and /healthz 503) before closing the listener, so that load balancers see the gateway leave (SIGINT skips it)")
	cors := fs.String("cors", "", "comma-separated browser origins allowed (\"*\" for any); default: browser origins are refused")
	allowHosts := fs.String("allow-host", "", "comma-separated Host names accepted besides localhost and IP literals (when listening on loopback)")
	authKey := fs.String("auth-key", "", "the gateway's own API key (prefer $OCBENCH_AUTH_KEY); clients send it as Bearer or x-api-key, and the upstream gets $OCBENCH_UPSTREAM_KEY")
	maxSession := fs.Int64("max-session-bytes", 128<<20, "limit of one session's stored size; a run past it answers 413 (0: no limit)")
	sessions := fs.String("sessions", "", "where /v1/runs keeps sessions: a directory of JSONL files, sqlite:PATH (OpenClaw's database) or postgres://... (shared by several gateways; needs an ocbench built with -tags postgres) (default: a temporary directory)")
	workspace := fs.String("workspace", "", "workspace of /v1/runs (default: the built-in sample workspace)")
	upCompat := fs.String("upstream-compat", "auto", "what --upstream's chat endpoint accepts: auto (OpenAI's own host or not), openai, or generic (max_tokens, no prompt_cache_key); add ,no-stream-options for a server that refuses stream_options")
	syncPolicy := fs.String("sync", "entry", "when /v1/runs flushes session entries to stable storage: entry (before each append returns), turn (after each turn), none (never: a crash of the process loses nothing, one of the machine may)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the gateway to this file until it stops")
	relayAddr := fs.String("relay-addr", "", "with the built-in upstream: also serve on this loopback address a plain TCP relay to it, the floor of any proxy (ocbench loadtest --vs relay)")
	heapFloor := fs.Int64("heap-floor", 64<<20, "bytes the Go heap may grow to before the collector runs, however small the live heap (--gogc still sets the goal above it; 0: --gogc alone)")
	gogc, memLimit := gcFlags(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if extraArgs(fs, stderr) {
		return 2
	}
	// The profile's file is created before anything starts, so that a bad
	// path is a usage error (exit 2), as every command's outputs are.
	var profFile *os.File
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "ocbench serve: --cpuprofile: %v\n", err)
			return 2
		}
		profFile = f
		defer f.Close()
	}
	// SIGTERM (an orchestrator) drains with --drain-delay; SIGINT (Ctrl-C
	// at a terminal) skips the delay.
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	var srvRef atomic.Pointer[gateway.Server]
	go func() {
		var sig os.Signal
		select {
		case sig = <-sigs:
		case <-ctx.Done():
			return
		}
		delay := min(*drainDelay, *grace)
		if sig == os.Interrupt {
			delay = 0
			if s := srvRef.Load(); s != nil {
				s.SetDrainDelay(0)
			}
		}
		fmt.Fprintf(stderr, "ocbench serve: %v: draining: 503 for %v, streams in flight get until %v after the signal\n", sig, delay, *grace)
		stop()
	}()

	if *authKey == "" {
		*authKey = os.Getenv("OCBENCH_AUTH_KEY")
	}
	cfg := gateway.Config{Upstream: *upstream, MaxBodyBytes: *maxBody, MaxStreams: *maxStreams, MaxAnswerBytes: *maxAnswer,
		IdleTimeout: *idle, RequestTimeout: *reqTimeout, HeaderTimeout: *headerTimeout, BodyTimeout: *bodyTimeout,
		WriteTimeout: *writeTimeout, KeepAliveTimeout: *keepAlive, DrainDelay: *drainDelay,
		CORSOrigins: splitList(*cors), AllowedHosts: splitList(*allowHosts),
		AuthKey: *authKey, UpstreamKey: os.Getenv("OCBENCH_UPSTREAM_KEY"),
		// The keys in the environment (those runs use) are never echoed
		// to a client or a log.
		Secrets: redact.FromEnviron(os.Environ()),
		Logf:    func(f string, a ...any) { fmt.Fprintf(stderr, f+"\n", a...) }}
	if *authKey != "" && cfg.UpstreamKey == "" && *upstream != "" {
		fmt.Fprintln(stderr, "ocbench serve: with a gateway key the clients' credentials are not forwarded: set $OCBENCH_UPSTREAM_KEY for the upstream")
	}
	cfg.Models = splitList(*models)
	if c, err := parseCompat(*upCompat, *upstream); err != nil {
		fmt.Fprintf(stderr, "ocbench serve: %v\n", err)
		return 2
	} else if c != nil {
		cfg.UpstreamCompat = c
		// /v1/runs encodes its requests for the same endpoint.
		provider.SetCompat(gateway.UpstreamBase(*upstream), *c)
	}
	rw, err := runsWireOf(*runsWire)
	if err != nil {
		fmt.Fprintf(stderr, "ocbench serve: %v\n", err)
		return 2
	}
	// The scripted upstream answers both the proxy (over loopback HTTP) and
	// the runs (in process) when no upstream is given.
	sp, err := scripted.New(scripted.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "ocbench serve: %v\n", err)
		return 1
	}
	runs := &gateway.EngineRuns{Model: llm.Model{ID: "scripted-1", API: "openai-completions", Provider: "scripted"}, StreamFunc: sp.Stream, StreamBuffered: true, ModelFromRequest: true}
	relayed := "" // the relay's part of the first line
	if cfg.Upstream == "" {
		up, err := sp.Start()
		if err != nil {
			fmt.Fprintf(stderr, "ocbench serve: %v\n", err)
			return 1
		}
		defer up.Close()
		cfg.Upstream = up.URL
		if *relayAddr != "" {
			r, err := startRelay(*relayAddr, up.URL)
			if err != nil {
				fmt.Fprintf(stderr, "ocbench serve: --relay-addr: %v\n", err)
				return 1
			}
			defer r.Close()
			relayed = " relay http://" + r.Addr().String()
		}
	} else {
		if *relayAddr != "" {
			fmt.Fprintln(stderr, "ocbench serve: --relay-addr relays only to the built-in upstream (no --upstream)")
			return 2
		}
		id := *runsModel
		if id == "" {
			id = "default"
		}
		provName := "openai-compatible"
		if rw == provider.WireAnthropic {
			provName = "anthropic"
		}
		runs.Model = llm.Model{ID: id, API: rw.API(), Provider: provName, BaseURL: gateway.UpstreamBase(cfg.Upstream)}
		runs.ModelFromRequest = *runsModel == ""
		// Package provider's client, key from the environment, through a
		// transport that lets a run's events be written one upstream read
		// at a time.
		if err := runs.UseUpstreamClient(nil); err != nil {
			fmt.Fprintf(stderr, "ocbench serve: %v\n", err)
			return 1
		}
	}
	if strings.HasPrefix(*sessions, "sqlite:") || strings.Contains(*sessions, "://") {
		st, code := openNamedStore("serve", "--sessions", *sessions, stderr)
		if st == nil {
			return code
		}
		defer st.Close()
		runs.Store, *sessions = st, "" // the (unused) JSONL directory is a temporary one
	}
	if runs.SessionsDir = *sessions; runs.SessionsDir == "" {
		dir, err := os.MkdirTemp("", "ocbench-sessions-")
		if err != nil {
			fmt.Fprintf(stderr, "ocbench serve: %v\n", err)
			return 1
		}
		defer os.RemoveAll(dir)
		runs.SessionsDir = dir
	}
	if runs.Workspace = *workspace; runs.Workspace == "" {
		dir, cleanup, err := prompt.SampleDir()
		if err != nil {
			fmt.Fprintf(stderr, "ocbench serve: %v\n", err)
			return 1
		}
		defer cleanup()
		runs.Workspace = dir
	}
	runs.Stream = engine.StreamOptions{IdleTimeout: *idle}
	runs.MaxSessionBytes = *maxSession
	switch *syncPolicy {
	case "entry":
		runs.Durability = transcript.SyncEntry
	case "turn":
		runs.Durability = transcript.SyncTurn
	case "none":
		runs.Durability = transcript.SyncNone
	default:
		fmt.Fprintf(stderr, "ocbench serve: --sync %q: entry, turn or none\n", *syncPolicy)
		return 2
	}
	defer runs.Close()
	runs.Secrets = append([]string{cfg.AuthKey, cfg.UpstreamKey}, cfg.Secrets...)
	cfg.Runs = runs

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "ocbench serve: %v\n", err)
		return 1
	}
	if ta, ok := ln.Addr().(*net.TCPAddr); ok && ta.IP.IsLoopback() {
		// On loopback only a local page can reach the gateway, through
		// DNS rebinding: refuse Host names that are not ours.
		cfg.CheckHost = true
	}
	srv, err := gateway.New(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "ocbench serve: %v\n", err)
		return 2
	}
	srvRef.Store(srv)
	defer setGCPolicy(fs, *gogc, *memLimit)()
	if *heapFloor > 0 {
		// The gateway's per-request garbage dies with the request: with
		// the default GOGC over its few MiB of live heap the collector
		// would run tens of times a second.
		defer gateway.SetHeapFloor(uint64(*heapFloor))()
	}
	if profFile != nil {
		if err := pprof.StartCPUProfile(profFile); err != nil {
			fmt.Fprintf(stderr, "ocbench serve: %v\n", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	// The first line is read by `ocbench loadtest` when it starts a gateway.
	fmt.Fprintf(stdout, "ocbench gateway on http://%s upstream %s%s\n", ln.Addr(), cfg.Upstream, relayed)
	if f, ok := stdout.(*os.File); ok {
		f.Sync()
	}
	if err := srv.Serve(ctx, ln, *grace); err != nil {
		fmt.Fprintf(stderr, "ocbench serve: %v\n", err)
		return 1
	}
	fmt.Fprintln(stderr, "ocbench serve: drained and stopped")
	return 0
}

func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

func runsWireOf(name string) (provider.Wire, error) {
	switch name {
	case "chat", "":
		return provider.WireOpenAIChat, nil
	case "responses":
		return provider.WireOpenAIResponses, nil
	case "messages", "anthropic":
		return provider.WireAnthropic, nil
	}
	return 0, fmt.Errorf("unknown --runs-wire %q (chat, responses, messages)", name)
}

// parseCompat reads --upstream-compat: nil for "auto" (detection).
func parseCompat(v, upstream string) (*provider.Compat, error) {
	parts := splitList(v)
	if len(parts) == 0 || parts[0] == "auto" && len(parts) == 1 {
		return nil, nil
	}
	var c provider.Compat
	switch parts[0] {
	case "auto":
		c = provider.DetectCompat(gateway.UpstreamBase(upstream), "")
	case "openai":
		c = provider.CompatOpenAI
	case "generic":
		c = provider.CompatGeneric
	default:
		return nil, fmt.Errorf("unknown compat setting %q (auto, openai, generic[,no-stream-options])", v)
	}
	for _, p := range parts[1:] {
		switch p {
		case "no-stream-options":
			c.StreamOptions = false
		default:
			return nil, fmt.Errorf("unknown compat option %q", p)
		}
	}
	return &c, nil
}

// startRelay listens on addr, which must be a loopback address, and relays
// each connection to the upstream at upstreamURL.
func startRelay(addr, upstreamURL string) (*loadtest.Relay, error) {
	u, err := url.Parse(upstreamURL)
	if err != nil {
		return nil, err
	}
	if err := loadtest.CheckLoopback("http://" + addr); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	r, err := loadtest.NewRelay(ln, u.Host)
	if err != nil {
		ln.Close()
		return nil, err
	}
	return r, nil
}
