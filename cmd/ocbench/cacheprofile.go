package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/ocbench/ocbench/cacheprofile"
	"github.com/ocbench/ocbench/transcript"
)

func init() {
	register("cache-profile", "show where sessions win and lose the providers' prompt cache", runCacheProfile)
}

func runCacheProfile(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cache-profile", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ocbench cache-profile [flags] SOURCE...    profile sessions: JSONL v1-4 (.zst too), an OpenClaw SQLite store (FILE or sqlite:FILE), postgres://...")
		fmt.Fprintln(stderr, "       ocbench cache-profile --workspace DIR [--turns N]   profile ocbench's own prompt assembly")
		fs.PrintDefaults()
	}
	jsonOut := fs.Bool("json", false, "print JSON: per call the predicted and recorded cache reads and writes, then the summary")
	htmlOut := fs.String("html", "", "also write a self-contained HTML report with a timeline chart to this file (- for stdout, instead of the text report)")
	provider := fs.String("provider", "", "simulate this provider's cache instead of the recorded one (anthropic, openai, gemini, deepseek)")
	model := fs.String("model", "", "simulate this model's rules instead of the recorded one")
	retention := fs.String("retention", "", "cache retention: anthropic short|long, openai in_memory|24h")
	unseen := fs.Int("unseen", 0, "size of tools + system prompt in tokens (default: estimated from the first call's usage)")
	top := fs.Int("top", 10, "how many of the most expensive misses to list")
	workspace := fs.String("workspace", "", "profile ocbench's prompt assembly for this workspace directory (\"sample\" for the built-in one)")
	turns := fs.Int("turns", 10, "simulated turns for --workspace")

	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		args = fs.Args()[1:]
	}
	opts := cacheprofile.Options{Provider: *provider, Model: *model, Retention: *retention, Unseen: *unseen, TopMisses: *top}
	// Outputs are opened before the work; --html - takes stdout from the
	// text report, as in every command.
	outs := &outputs{stdout: stdout}
	defer outs.closeAll()
	if *jsonOut {
		outs.claimStdout("--json")
	}
	htmlW := outs.open("--html", *htmlOut)
	if outs.err != nil {
		fmt.Fprintf(stderr, "ocbench cache-profile: %v\n", outs.err)
		return 2
	}
	textOut := stdout
	if htmlW == stdout {
		textOut = io.Discard
	}

	if *workspace != "" {
		if len(files) > 0 {
			fmt.Fprintln(stderr, "ocbench cache-profile: --workspace takes no files")
			return 2
		}
		if *turns < 1 {
			fmt.Fprintln(stderr, "ocbench cache-profile: --turns must be at least 1")
			return 2
		}
		return runWorkspaceProfile(*workspace, *turns, opts, *jsonOut, htmlW, textOut, stderr)
	}
	if len(files) == 0 {
		fs.Usage()
		return 2
	}

	var stream *cacheprofile.JSONStream
	if *jsonOut {
		stream = cacheprofile.NewJSONStream(stdout)
		stream.Hook(&opts)
	}
	var reps []*cacheprofile.Report
	status := 0
	for _, f := range files {
		r, err := profileSource(f, opts)
		if err != nil {
			if msg, ok := notLinked(err); ok {
				fmt.Fprintf(stderr, "ocbench cache-profile: %s\n", msg)
				return 2
			}
			fmt.Fprintf(stderr, "ocbench cache-profile: %v\n", err)
			if errors.Is(err, cacheprofile.ErrNotSession) {
				fmt.Fprintln(stderr, "  (expected an OpenClaw or pi session: JSONL whose first line is a session header, or an openclaw-agent.sqlite store)")
			}
			status = 1
			continue
		}
		reps = append(reps, r...)
	}
	if stream != nil {
		if err := stream.Close(); err != nil {
			fmt.Fprintf(stderr, "ocbench cache-profile: %v\n", err)
			return 1
		}
	} else if err := cacheprofile.WriteText(textOut, reps); err != nil {
		fmt.Fprintf(stderr, "ocbench cache-profile: %v\n", err)
		return 1
	}
	if htmlW != nil {
		if err := cacheprofile.WriteHTML(htmlW, reps); err != nil {
			fmt.Fprintf(stderr, "ocbench cache-profile: %v\n", err)
			return 1
		}
	}
	return status
}

// profileSource profiles a file, an OpenClaw SQLite store ("sqlite:PATH"
// or its file) or every session of a store named by URL ("postgres://...",
// in an ocbench built with -tags postgres).
func profileSource(src string, opts cacheprofile.Options) ([]*cacheprofile.Report, error) {
	if strings.Contains(src, "://") {
		st, err := transcript.OpenStore(context.Background(), src)
		if err != nil {
			return nil, err
		}
		defer st.Close()
		return cacheprofile.ProfileStore(st, st.Kind(), opts)
	}
	src = strings.TrimPrefix(src, "sqlite:")
	return cacheprofile.ProfileFile(src, opts)
}

func runWorkspaceProfile(dir string, turns int, opts cacheprofile.Options, jsonOut bool, htmlW, stdout, stderr io.Writer) int {
	name := dir
	if dir == "sample" {
		name = "sample (built-in)"
		// The sample's fixed path (as for prompt --report): the path is
		// part of the prompt, so the stable hash is the same on every run.
		d, err := fixedSampleDir()
		if err != nil {
			fmt.Fprintf(stderr, "ocbench cache-profile: %v\n", err)
			return 1
		}
		dir = d
	}
	wr, err := cacheprofile.ProfileWorkspace(dir, turns, cacheprofile.WorkspaceOptions{
		Provider: opts.Provider, Model: opts.Model, Retention: opts.Retention})
	if err != nil {
		fmt.Fprintf(stderr, "ocbench cache-profile: %v\n", err)
		return 1
	}
	wr.Workspace = name
	wr.Report.File = name
	if jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(wr)
	} else {
		err = cacheprofile.WriteWorkspaceText(stdout, wr)
	}
	if err == nil && htmlW != nil {
		err = cacheprofile.WriteHTML(htmlW, []*cacheprofile.Report{wr.Report})
	}
	if err != nil {
		fmt.Fprintf(stderr, "ocbench cache-profile: %v\n", err)
		return 1
	}
	return 0
}
