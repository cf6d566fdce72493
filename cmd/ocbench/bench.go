package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"runtime/pprof"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/ocbench/ocbench/bench"
)

func init() {
	register("bench", "measure every stage against its peers (the main job)", runBench)
}

func runBench(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	filter := fs.String("filter", "", "run only scenarios whose name matches this regular expression")
	count := fs.Int("count", 1, "run each scenario this many times (medians are reported)")
	dur := fs.Duration("duration", 300*time.Millisecond, "measuring time per scenario, like -benchtime")
	jsonOut := fs.Bool("json", false, "print the report as JSON instead of a table")
	benchfmt := fs.String("benchfmt", "", "write Go benchmark lines for benchstat to this file (- for stdout)")
	htmlOut := fs.String("html", "", "write a self-contained HTML report to this file")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the run to this file")
	memprofile := fs.String("memprofile", "", "write a heap profile at the end of the run to this file")
	noPeers := fs.Bool("no-peers", false, "skip the peers (they build a separate module with go test)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "ocbench bench: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	var re *regexp.Regexp
	if *filter != "" {
		var err error
		if re, err = regexp.Compile(*filter); err != nil {
			fmt.Fprintf(stderr, "ocbench bench: --filter: %v\n", err)
			return 2
		}
	}
	if *count < 1 || *dur <= 0 {
		fmt.Fprintln(stderr, "ocbench bench: --count must be at least 1 and --duration positive")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintf(stderr, "ocbench bench: %v\n", err)
			return 2
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "ocbench bench: %v\n", err)
			return 2
		}
		defer pprof.StopCPUProfile()
	}

	scs, err := bench.Scenarios()
	if err != nil {
		fmt.Fprintf(stderr, "ocbench bench: %v\n", err)
		return 1
	}
	scs = bench.Filter(scs, re)
	opts := bench.Options{Duration: *dur, Count: *count}
	opts.Progress = progress(stderr, len(scs)**count)
	started := time.Now()
	results := bench.Run(ctx, scs, opts)

	var notes []string
	if !*noPeers {
		fmt.Fprintln(stderr, "peers: building and running ./peers (official SDKs, other repairers and tokenizers) ...")
		dir, err := bench.FindPeersDir(".")
		if err == nil {
			var peerRes []bench.Result
			peerRes, err = bench.RunPeers(ctx, dir, re, bench.Options{Duration: *dur, Count: *count}, stderr)
			results = append(results, peerRes...)
		}
		if err != nil {
			notes = append(notes, "peers not measured: "+err.Error())
			fmt.Fprintf(stderr, "peers: %v\n", err)
		}
	}
	rep := bench.NewReport(results, opts, started)
	rep.Notes = append(rep.Notes, notes...)

	if *memprofile != "" {
		if err := writeHeapProfile(*memprofile); err != nil {
			fmt.Fprintf(stderr, "ocbench bench: %v\n", err)
		}
	}
	if *benchfmt != "" {
		if err := writeTo(*benchfmt, stdout, rep.WriteBenchfmt); err != nil {
			fmt.Fprintf(stderr, "ocbench bench: %v\n", err)
			return 1
		}
	}
	if *htmlOut != "" {
		if err := writeTo(*htmlOut, stdout, rep.WriteHTML); err != nil {
			fmt.Fprintf(stderr, "ocbench bench: %v\n", err)
			return 1
		}
		fmt.Fprintf(stderr, "wrote %s\n", *htmlOut)
	}
	if *jsonOut {
		err = rep.WriteJSON(stdout)
	} else if *benchfmt != "-" {
		err = rep.WriteTable(stdout)
		for _, n := range rep.Notes {
			fmt.Fprintln(stdout, "note:", n)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "ocbench bench: %v\n", err)
		return 1
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		return 130
	}
	for _, s := range rep.Summaries {
		if s.Err != "" {
			return 1
		}
	}
	return 0
}

// progress returns a progress callback: a live bar on a terminal, plain
// lines otherwise (logs, CI, pipes).
func progress(w io.Writer, total int) func(done, total int, name string) {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		bar := progressbar.NewOptions(total, progressbar.OptionSetWriter(w), progressbar.OptionSetWidth(30),
			progressbar.OptionShowCount(), progressbar.OptionClearOnFinish(), progressbar.OptionSetPredictTime(true))
		return func(done, _ int, name string) {
			bar.Describe(fmt.Sprintf("%-32s", name))
			_ = bar.Set(done)
			if name == "" {
				_ = bar.Finish()
			}
		}
	}
	return func(done, total int, name string) {
		if name != "" {
			fmt.Fprintf(w, "[%d/%d] %s\n", done+1, total, name)
		}
	}
}

func writeTo(path string, stdout io.Writer, write func(io.Writer) error) error {
	if path == "-" {
		return write(stdout)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return pprof.WriteHeapProfile(f)
}
