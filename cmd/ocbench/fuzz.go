package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/ocbench/ocbench/fuzz"
	"github.com/ocbench/ocbench/internal/progress"
	"github.com/ocbench/ocbench/streamwrap/repair"
)

func init() {
	register("fuzz", "push generated malformed tool calls through decoding and the chain; check invariants", runFuzz)
}

func runFuzz(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fuzz", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Uint64("n", 10000, "number of cases")
	seed := fs.Uint64("seed", 1, "seed: the same seed gives the same cases")
	profile := fs.String("profile", "extended", "argument-repair profile whose promises are checked: extended or openclaw")
	out := fs.String("out", "fuzz-failures", "directory for failing cases (replayable with ocbench replay)")
	jsonOut := fs.Bool("json", false, "print the report as JSON")
	against := fs.String("against", "", "differential run: compare --repair openclaw with 'CMD ARGS', any implementation of the ocbench replay contract")
	batch := fs.Bool("batch", false, "with --against: run CMD ARGS --batch DIR --out OUT over chunks of cases (the oracle's batch mode)")
	batchSize := fs.Int("batch-size", 200, "with --batch: cases per CMD process")
	jobs := fs.Int("jobs", 1, "with --against: CMD processes at once")
	mutate := fs.Bool("mutate", false, "with --against: cases are recorded and generated bodies with SSE and JSON mutations (fuzz.GenerateMutant)")
	corpus := fs.String("corpus", "", "with --mutate: the recordings to mutate, every NAME.sse under DIR with its NAME.flags if any (default: the built-in recordings)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if extraArgs(fs, stderr) {
		return 2
	}
	if err := checkOutDir(*out); err != nil {
		fmt.Fprintf(stderr, "ocbench fuzz: --out: %v\n", err)
		return 2
	}
	if (*mutate || *corpus != "") && *against == "" {
		fmt.Fprintln(stderr, "ocbench fuzz: --mutate and --corpus need --against")
		return 2
	}
	if *against != "" {
		var mutants []fuzz.Recording
		if *corpus != "" {
			rs, err := fuzz.LoadRecordings(*corpus)
			if err != nil {
				fmt.Fprintf(stderr, "ocbench fuzz: --corpus: %v\n", err)
				return 2
			}
			mutants = rs
		} else if *mutate {
			mutants = fuzz.EmbeddedRecordings()
		}
		return runFuzzAgainst(stdout, stderr, *against, *n, *seed, *out, *batch, *batchSize, *jobs, *jsonOut, mutants)
	}
	p, ok := repair.ParseProfile(*profile)
	if !ok || p == repair.ProfileOff {
		fmt.Fprintf(stderr, "ocbench fuzz: --profile must be extended or openclaw, not %q\n", *profile)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	// One status line: redrawn in place on a terminal, a plain line every
	// few seconds elsewhere.
	line := progress.New(stderr)
	rep, err := fuzz.Run(ctx, fuzz.Options{N: *n, Seed: *seed, Profile: p, OutDir: *out,
		Progress: func(done uint64) {
			line.Set("%s %d/%d cases", progress.Bar(float64(done)/float64(max(*n, 1)), 20), done, *n)
		}})
	line.Done()
	interrupted := ctx.Err() != nil
	if err != nil {
		fmt.Fprintf(stderr, "ocbench fuzz: %v\n", err)
		if interrupted {
			return 130
		}
		return 1
	}
	if *jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(rep)
	} else {
		fmt.Fprintf(stdout, "cases       %d (seed %d, profile %s)\n", rep.Cases, rep.Seed, rep.Profile)
		fmt.Fprintf(stdout, "tool calls  %d: %d executed (%d repaired), %d refused\n", rep.Calls, rep.Executed, rep.Repaired, rep.Refused)
		fmt.Fprintf(stdout, "truncated   %d cases cut by the stream end or the length limit\n", rep.Truncated)
		fmt.Fprintf(stdout, "panics      %d\nhangs       %d\nviolations  %d\n", rep.Panics, rep.Hangs, rep.Violations)
		fmt.Fprintf(stdout, "throughput  %.0f cases/s, %.1f MB/s over %.1fs\n", rep.CasesPerS, rep.MBPerS, rep.Seconds)
		for _, f := range rep.Failures {
			fmt.Fprintf(stdout, "failure     %s\n", f)
		}
	}
	if interrupted {
		fmt.Fprintln(stderr, "ocbench fuzz: interrupted; the report covers the cases run")
		return 130
	}
	if !rep.OK() {
		return 1
	}
	return 0
}

// runFuzzAgainst is `ocbench fuzz --against`: the differential run.
func runFuzzAgainst(stdout, stderr io.Writer, against string, n, seed uint64, out string, batch bool, batchSize, jobs int, jsonOut bool, mutants []fuzz.Recording) int {
	cmd, err := fuzz.SplitCommand(against)
	if err != nil {
		fmt.Fprintf(stderr, "ocbench fuzz: --against: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := fuzz.Against(ctx, fuzz.AgainstOptions{N: n, Seed: seed, Command: cmd, Batch: batch, BatchSize: batchSize, Jobs: jobs, OutDir: out, Mutants: mutants,
		Progress: func(done uint64) { fmt.Fprintf(stderr, "%d/%d cases\n", done, n) }})
	if err != nil {
		fmt.Fprintf(stderr, "ocbench fuzz: %v\n", err)
		if rep == nil {
			return 1
		}
	}
	if jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(rep)
	} else {
		kind := ""
		if mutants != nil {
			kind = fmt.Sprintf(", mutants of %d recordings and generated cases", len(mutants))
		}
		fmt.Fprintf(stdout, "cases       %d (seed %d%s) against %s\n", rep.Cases, rep.Seed, kind, rep.Command)
		fmt.Fprintf(stdout, "wires       openai-chat %d, openai-responses %d, anthropic %d\n", rep.PerWire["openai-chat"], rep.PerWire["openai-responses"], rep.PerWire["anthropic"])
		fmt.Fprintf(stdout, "agree       %d\ndisagree    %d\nno message  %d\n", rep.Agree, rep.Disagree, rep.Failed)
		fmt.Fprintf(stdout, "time        %.1fs\n", rep.Seconds)
		for _, f := range rep.Files {
			fmt.Fprintf(stdout, "reproducer  %s\n", f)
		}
	}
	if err != nil || !rep.OK() {
		return 1
	}
	return 0
}
