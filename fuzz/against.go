package fuzz

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ocbench/ocbench/streamwrap/repair"
)

// AgainstOptions control a differential run (`ocbench fuzz --against`):
// every generated case goes through Command, which must speak the
// `ocbench replay` contract (spec replay.md), and through ocbench's own
// chain with the openclaw profile; their final messages must agree
// (CompareFinal).
type AgainstOptions struct {
	N    uint64
	Seed uint64
	// Command is CMD and its ARGS. Per case it is run as
	// CMD ARGS FLAGS... FILE and the last line of its output is the final
	// message; with Batch, as CMD ARGS --batch DIR --out OUT over a chunk of
	// cases (DIR/NAME.sse and DIR/NAME.flags in, OUT/NAME.json out: the
	// oracle's batch mode).
	Command []string
	Batch   bool
	// BatchSize is the number of cases per batch process (default 200).
	BatchSize int
	// Jobs is how many CMD processes run at once (default 1).
	Jobs int
	// OutDir receives a reproducer per disagreement: NAME.sse, NAME.flags
	// and NAME.txt with both outputs and the differences. Empty writes none.
	OutDir string
	// Timeout bounds one CMD process (default 60 s per case, 10 min per
	// batch).
	Timeout time.Duration
	// Progress, when set, is called after each case or batch.
	Progress func(done uint64)
	// Mutants, when set, makes the cases GenerateMutant's over these
	// recordings instead of GenerateVariant's.
	Mutants []Recording
}

// AgainstReport is a differential run's outcome.
type AgainstReport struct {
	Seed     uint64            `json:"seed"`
	Command  string            `json:"command"`
	Cases    uint64            `json:"cases"`
	Agree    uint64            `json:"agree"`
	Disagree uint64            `json:"disagree"`
	Failed   uint64            `json:"failed"` // CMD gave no message for the case
	PerWire  map[string]uint64 `json:"cases_per_wire"`
	Seconds  float64           `json:"seconds"`
	Files    []string          `json:"reproducers,omitempty"` // at most 50 listed
}

// OK reports whether every case agreed.
func (r *AgainstReport) OK() bool { return r.Disagree == 0 && r.Failed == 0 }

// CaseFlags are the `ocbench replay` flags case c is replayed with (also
// written to NAME.flags for a batch).
func CaseFlags(c *Case) []string {
	f := []string{"--wire", c.Wire.String()}
	if len(c.Tools) > 0 { // none: no allowlist
		f = append(f, "--tools", strings.Join(c.Tools, ","))
	}
	f = append(f, "--repair", "openclaw")
	if c.HTMLEntities {
		f = append(f, "--html-entities")
	}
	if c.Reasoning {
		f = append(f, "--reasoning")
	}
	return f
}

// SplitCommand splits a command line into words: whitespace separates,
// single and double quotes group, a backslash escapes the next character
// (outside single quotes).
func SplitCommand(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case quote == '\'':
			if ch == '\'' {
				quote = 0
			} else {
				cur.WriteByte(ch)
			}
		case ch == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			in = true
		case quote == '"':
			if ch == '"' {
				quote = 0
			} else {
				cur.WriteByte(ch)
			}
		case ch == '\'' || ch == '"':
			quote, in = ch, true
		case ch == ' ' || ch == '\t' || ch == '\n':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(ch)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unclosed %c quote in %q", quote, s)
	}
	if in {
		out = append(out, cur.String())
	}
	if len(out) == 0 {
		return nil, errors.New("empty command")
	}
	return out, nil
}

// Against runs the differential check.
func Against(ctx context.Context, o AgainstOptions) (*AgainstReport, error) {
	if len(o.Command) == 0 {
		return nil, errors.New("no command to run against")
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 200
	}
	if o.Jobs <= 0 {
		o.Jobs = 1
	}
	if o.Timeout <= 0 {
		o.Timeout = time.Minute
		if o.Batch {
			o.Timeout = 10 * time.Minute
		}
	}
	work, err := os.MkdirTemp("", "ocbench-against-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	rep := &AgainstReport{Seed: o.Seed, Command: strings.Join(o.Command, " "), PerWire: map[string]uint64{}}
	start := time.Now()
	var mu sync.Mutex
	var done atomic.Uint64
	record := func(c *Case, ours, theirs []byte, cmdErr string) {
		var diffs []string
		if theirs == nil {
			diffs = []string{"no message from the command: " + cmdErr}
		} else {
			diffs = CompareFinal(ours, theirs)
		}
		mu.Lock()
		defer mu.Unlock()
		rep.Cases++
		rep.PerWire[c.Wire.String()]++
		switch {
		case theirs == nil:
			rep.Failed++
		case len(diffs) == 0:
			rep.Agree++
			return
		default:
			rep.Disagree++
		}
		if o.OutDir == "" {
			return
		}
		path, err := writeDisagreement(o.OutDir, c, ours, theirs, diffs, cmdErr, o.Command)
		if err != nil {
			path = "could not write a reproducer: " + err.Error()
		}
		if len(rep.Files) < 50 {
			rep.Files = append(rep.Files, path)
		}
	}
	ours := func(r *runner, c *Case) []byte {
		m := r.turn(ctx, c, repair.ProfileOpenClaw)
		return m.AppendJSON(nil)
	}
	// Chunks of case indices, handed to Jobs workers.
	size := uint64(1)
	if o.Batch {
		size = uint64(o.BatchSize)
	}
	var next atomic.Uint64
	errc := make(chan error, o.Jobs)
	var wg sync.WaitGroup
	for j := 0; j < o.Jobs; j++ {
		wg.Add(1)
		go func(j int) {
			defer wg.Done()
			var r runner
			for ctx.Err() == nil {
				lo := next.Add(size) - size
				if lo >= o.N {
					return
				}
				hi := min(lo+size, o.N)
				cases := make([]*Case, 0, hi-lo)
				for i := lo; i < hi; i++ {
					if o.Mutants != nil {
						cases = append(cases, GenerateMutant(o.Mutants, o.Seed, i))
					} else {
						cases = append(cases, GenerateVariant(o.Seed, i))
					}
				}
				var theirs [][]byte
				var cmdErr []string
				var err error
				if o.Batch {
					theirs, cmdErr, err = runBatch(ctx, o, filepath.Join(work, fmt.Sprintf("job%d", j)), cases)
				} else {
					theirs, cmdErr, err = runEach(ctx, o, filepath.Join(work, fmt.Sprintf("job%d", j)), cases)
				}
				if err != nil {
					errc <- err
					return
				}
				for k, c := range cases {
					record(c, ours(&r, c), theirs[k], cmdErr[k])
				}
				d := done.Add(uint64(len(cases)))
				if o.Progress != nil {
					o.Progress(d)
				}
			}
		}(j)
	}
	wg.Wait()
	rep.Seconds = time.Since(start).Seconds()
	select {
	case err := <-errc:
		return rep, err
	default:
	}
	return rep, ctx.Err()
}

func caseName(c *Case) string {
	if c.Mutant {
		return fmt.Sprintf("mutant-%d-%d", c.Seed, c.Index)
	}
	return fmt.Sprintf("fuzz-%d-%d", c.Seed, c.Index)
}

// runEach runs CMD once per case.
func runEach(ctx context.Context, o AgainstOptions, dir string, cases []*Case) ([][]byte, []string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	out := make([][]byte, len(cases))
	msgs := make([]string, len(cases))
	for k, c := range cases {
		file := filepath.Join(dir, caseName(c)+".sse")
		if err := os.WriteFile(file, c.Body, 0o644); err != nil {
			return nil, nil, err
		}
		args := append(append(append([]string{}, o.Command[1:]...), CaseFlags(c)...), file)
		stdout, stderr, err := runCmd(ctx, o.Timeout, o.Command[0], args)
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		if line := LastLine(stdout); len(line) > 0 && bytes.HasPrefix(line, []byte("{")) {
			out[k] = append([]byte(nil), line...)
		} else {
			msgs[k] = cmdFailure(err, stderr)
		}
		os.Remove(file)
	}
	return out, msgs, nil
}

// runBatch runs CMD once over a directory of cases.
func runBatch(ctx context.Context, o AgainstOptions, dir string, cases []*Case) ([][]byte, []string, error) {
	in, outDir := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	os.RemoveAll(dir)
	if err := os.MkdirAll(in, 0o755); err != nil {
		return nil, nil, err
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, nil, err
	}
	for _, c := range cases {
		name := caseName(c)
		if err := os.WriteFile(filepath.Join(in, name+".sse"), c.Body, 0o644); err != nil {
			return nil, nil, err
		}
		if err := os.WriteFile(filepath.Join(in, name+".flags"), []byte(strings.Join(CaseFlags(c), " ")+"\n"), 0o644); err != nil {
			return nil, nil, err
		}
	}
	args := append(append([]string{}, o.Command[1:]...), "--batch", in, "--out", outDir)
	_, stderr, err := runCmd(ctx, o.Timeout, o.Command[0], args)
	if ctx.Err() != nil {
		return nil, nil, ctx.Err()
	}
	out := make([][]byte, len(cases))
	msgs := make([]string, len(cases))
	for k, c := range cases {
		b, rerr := os.ReadFile(filepath.Join(outDir, caseName(c)+".json"))
		if rerr != nil || len(bytes.TrimSpace(b)) == 0 {
			msgs[k] = cmdFailure(err, stderr)
			continue
		}
		out[k] = b
	}
	os.RemoveAll(dir)
	return out, msgs, nil
}

func runCmd(ctx context.Context, timeout time.Duration, name string, args []string) ([]byte, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.Bytes(), stderr.Bytes(), err
}

func cmdFailure(err error, stderr []byte) string {
	tail := stderr
	if len(tail) > 600 {
		tail = tail[len(tail)-600:]
	}
	s := strings.TrimSpace(string(tail))
	if err != nil {
		s = err.Error() + ": " + s
	}
	if s == "" {
		s = "no output"
	}
	return s
}

// writeDisagreement writes the reproducer of a disagreement: the body, its
// flags, and a note with both final messages and what differs.
func writeDisagreement(dir string, c *Case, ours, theirs []byte, diffs []string, cmdErr string, command []string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	base := filepath.Join(dir, caseName(c))
	if err := os.WriteFile(base+".sse", c.Body, 0o644); err != nil {
		return "", err
	}
	flags := strings.Join(CaseFlags(c), " ")
	if err := os.WriteFile(base+".flags", []byte(flags+"\n"), 0o644); err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d case %d, wire %s: ocbench --repair openclaw and %q disagree\n", c.Seed, c.Index, c.Wire, strings.Join(command, " "))
	for _, d := range diffs {
		fmt.Fprintf(&b, "differs: %s\n", d)
	}
	for k, call := range c.Calls {
		fmt.Fprintf(&b, "call %d: meant %s %s\n  sent %q %q quirks %v\n", k+1, call.Name, call.Args, call.SentName, call.SentArgs, call.Quirks)
	}
	if len(c.Variant) > 0 {
		fmt.Fprintf(&b, "variant: %s\n", strings.Join(c.Variant, ", "))
	}
	fmt.Fprintf(&b, "ours:   %s\n", bytes.TrimSpace(ours))
	if theirs != nil {
		var compact bytes.Buffer
		if json.Compact(&compact, theirs) != nil {
			compact.Reset()
			compact.Write(bytes.TrimSpace(theirs))
		}
		fmt.Fprintf(&b, "theirs: %s\n", compact.Bytes())
	} else {
		fmt.Fprintf(&b, "theirs: (none) %s\n", cmdErr)
	}
	fmt.Fprintf(&b, "replay: ocbench replay %s %s.sse\n", flags, base)
	fmt.Fprintf(&b, "against: %s %s %s.sse\n", strings.Join(command, " "), flags, base)
	return base + ".sse", os.WriteFile(base+".txt", []byte(b.String()), 0o644)
}
