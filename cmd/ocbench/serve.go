package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/ocbench/ocbench/engine"
	"github.com/ocbench/ocbench/gateway"
	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/prompt"
	"github.com/ocbench/ocbench/provider/scripted"
)

func init() {
	register("serve", "run the HTTP gateway (repairing proxy, runs, metrics)", runServe)
}

func runServe(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "listen address")
	upstream := fs.String("upstream", "", "provider base URL to proxy to (default: a built-in scripted upstream on loopback)")
	models := fs.String("models", "", "comma-separated model ids to accept and list (default: any)")
	maxBody := fs.Int64("max-body", 10<<20, "request body limit in bytes")
	maxStreams := fs.Int("max-streams", 512, "concurrent streams; past it requests get 429")
	idle := fs.Duration("idle-timeout", 60*time.Second, "longest silence between upstream events")
	reqTimeout := fs.Duration("request-timeout", 10*time.Minute, "longest request")
	grace := fs.Duration("grace", 30*time.Second, "how long shutdown waits for streams in flight")
	sessions := fs.String("sessions", "", "directory of /v1/runs session files (default: a temporary directory)")
	workspace := fs.String("workspace", "", "workspace of /v1/runs (default: the built-in sample workspace)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if extraArgs(fs, stderr) {
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	cfg := gateway.Config{Upstream: *upstream, MaxBodyBytes: *maxBody, MaxStreams: *maxStreams,
		IdleTimeout: *idle, RequestTimeout: *reqTimeout,
		Logf: func(f string, a ...any) { fmt.Fprintf(stderr, f+"\n", a...) }}
	if *models != "" {
		cfg.Models = strings.Split(*models, ",")
	}
	// The scripted upstream answers both the proxy (over loopback HTTP) and
	// the runs (in process) when no upstream is given.
	sp, err := scripted.New(scripted.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "ocbench serve: %v\n", err)
		return 1
	}
	runs := &gateway.EngineRuns{Model: llm.Model{ID: "scripted-1", API: "openai-completions", Provider: "scripted"}, StreamFunc: sp.Stream}
	if cfg.Upstream == "" {
		up, err := sp.Start()
		if err != nil {
			fmt.Fprintf(stderr, "ocbench serve: %v\n", err)
			return 1
		}
		defer up.Close()
		cfg.Upstream = up.URL
	} else {
		runs.Model = llm.Model{ID: "default", API: "openai-completions", Provider: "openai-compatible", BaseURL: cfg.Upstream}
		runs.StreamFunc = nil // the engine's HTTP transport, key from the environment
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
	cfg.Runs = runs

	srv, err := gateway.New(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "ocbench serve: %v\n", err)
		return 2
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "ocbench serve: %v\n", err)
		return 1
	}
	// The first line is read by `ocbench loadtest` when it starts a gateway.
	fmt.Fprintf(stdout, "ocbench gateway on http://%s upstream %s\n", ln.Addr(), cfg.Upstream)
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
