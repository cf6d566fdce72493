package fuzz

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/ocbench/ocbench/streamwrap/repair"
)

// Options control a run.
type Options struct {
	N       uint64 // cases
	Seed    uint64
	Profile repair.Profile
	Workers int // default GOMAXPROCS
	// OutDir receives failing cases (created when the first one fails);
	// empty writes none.
	OutDir string
	// HangAfter is how long one case may take before it counts as a hang
	// (default 10 s). A hang stops the run: its goroutine cannot be killed.
	HangAfter time.Duration
	// Progress, when set, is called about once a second.
	Progress func(done uint64)
}

// Report is a run's outcome. Panics and Violations must be zero.
type Report struct {
	Seed       uint64   `json:"seed"`
	Profile    string   `json:"profile"`
	Cases      uint64   `json:"cases"`
	Calls      uint64   `json:"toolCalls"`
	Executed   uint64   `json:"executed"`
	Repaired   uint64   `json:"repaired"`
	Refused    uint64   `json:"refused"`
	Truncated  uint64   `json:"truncatedCases"`
	Panics     uint64   `json:"panics"`
	Hangs      uint64   `json:"hangs"`
	Violations uint64   `json:"violations"`
	Bytes      uint64   `json:"bytes"`
	Seconds    float64  `json:"seconds"`
	CasesPerS  float64  `json:"casesPerS"`
	MBPerS     float64  `json:"mbPerS"`
	Failures   []string `json:"failures,omitempty"` // files written, at most 20 listed
}

// OK reports whether the run found nothing wrong.
func (r *Report) OK() bool { return r.Panics == 0 && r.Hangs == 0 && r.Violations == 0 }

// Run generates and checks opts.N cases, spread over workers, and returns
// the report. The same seed gives the same cases (their order of
// checking may differ).
func Run(ctx context.Context, o Options) (*Report, error) {
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.HangAfter <= 0 {
		o.HangAfter = 10 * time.Second
	}
	rep := &Report{Seed: o.Seed, Profile: o.Profile.String(), Cases: o.N}
	var next, done, calls, executed, repaired, refused, truncated, panics, violations, nbytes atomic.Uint64
	var mu sync.Mutex
	fail := func(c *Case, vs []Violation) {
		violations.Add(uint64(len(vs)))
		if o.OutDir == "" {
			return
		}
		path, err := writeFailure(o.OutDir, c, o.Profile, vs)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			rep.Failures = append(rep.Failures, "could not write a failure: "+err.Error())
		} else if len(rep.Failures) < 20 {
			rep.Failures = append(rep.Failures, path)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	// The watchdog: each worker publishes when its current case started.
	started := make([]atomic.Int64, o.Workers)
	current := make([]atomic.Uint64, o.Workers)
	var hang atomic.Bool
	go func() {
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		last := time.Now()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			for w := range started {
				if s := started[w].Load(); s != 0 && time.Since(time.Unix(0, s)) > o.HangAfter && !hang.Swap(true) {
					c := Generate(o.Seed, current[w].Load())
					fail(c, []Violation{{Rule: "hang", Call: -1, Detail: fmt.Sprintf("case still running after %v", o.HangAfter)}})
					cancel()
				}
			}
			if o.Progress != nil && time.Since(last) >= time.Second {
				last = time.Now()
				o.Progress(done.Load())
			}
		}
	}()
	var g errgroup.Group
	for w := 0; w < o.Workers; w++ {
		g.Go(func() error {
			var r runner
			for ctx.Err() == nil {
				i := next.Add(1) - 1
				if i >= o.N {
					return nil
				}
				current[w].Store(i)
				started[w].Store(time.Now().UnixNano())
				c := Generate(o.Seed, i)
				out, perr := r.safeCheck(ctx, c, o.Profile)
				started[w].Store(0)
				nbytes.Add(uint64(len(c.Body)))
				if c.Cut || c.Length {
					truncated.Add(1)
				}
				if perr != "" {
					panics.Add(1)
					fail(c, []Violation{{Rule: "panic", Call: -1, Detail: perr}})
					r = runner{} // a panic may leave parsers half-used
				} else {
					calls.Add(uint64(out.Calls))
					executed.Add(uint64(out.Executed))
					repaired.Add(uint64(out.Repaired))
					refused.Add(uint64(out.Refused))
					if len(out.Violations) > 0 {
						fail(c, out.Violations)
					}
				}
				done.Add(1)
			}
			return nil
		})
	}
	g.Wait()
	el := time.Since(start)
	rep.Cases = done.Load()
	rep.Calls, rep.Executed, rep.Repaired, rep.Refused = calls.Load(), executed.Load(), repaired.Load(), refused.Load()
	rep.Truncated, rep.Panics, rep.Violations, rep.Bytes = truncated.Load(), panics.Load(), violations.Load(), nbytes.Load()
	if hang.Load() {
		rep.Hangs = 1
	}
	rep.Seconds = el.Seconds()
	rep.CasesPerS = float64(rep.Cases) / el.Seconds()
	rep.MBPerS = float64(rep.Bytes) / 1e6 / el.Seconds()
	return rep, nil
}

// safeCheck runs check and turns a panic into its message and stack.
func (r *runner) safeCheck(ctx context.Context, c *Case, p repair.Profile) (out Outcome, perr string) {
	defer func() {
		if v := recover(); v != nil {
			buf := make([]byte, 8<<10)
			buf = buf[:runtime.Stack(buf, false)]
			perr = fmt.Sprintf("%v\n%s", v, buf)
		}
	}()
	return r.check(ctx, c, p), ""
}

// writeFailure writes c's body and a note saying what broke and how to
// replay it.
func writeFailure(dir string, c *Case, p repair.Profile, vs []Violation) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	base := filepath.Join(dir, fmt.Sprintf("fuzz-%d-%d", c.Seed, c.Index))
	if err := os.WriteFile(base+".sse", c.Body, 0o644); err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d case %d, wire %s, profile %s\n", c.Seed, c.Index, c.Wire, p)
	for _, v := range vs {
		fmt.Fprintf(&b, "violation: %s\n", v)
	}
	for k, call := range c.Calls {
		fmt.Fprintf(&b, "call %d: meant %s %s\n  sent %q %q quirks %v\n", k+1, call.Name, call.Args, call.SentName, call.SentArgs, call.Quirks)
	}
	fmt.Fprintf(&b, "replay: %s\n", ReplayCommand(c, p, base+".sse"))
	return base + ".sse", os.WriteFile(base+".txt", []byte(b.String()), 0o644)
}

// ReplayCommand is the `ocbench replay` line that reproduces case c.
func ReplayCommand(c *Case, p repair.Profile, file string) string {
	cmd := fmt.Sprintf("ocbench replay --wire %s --tools %s --repair %s", c.Wire, strings.Join(c.Tools, ","), p)
	if c.HTMLEntities {
		cmd += " --html-entities"
	}
	return cmd + " --events " + file
}
