package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// The peers (official SDK decoders, other JSON repairers, another
// tokenizer) live in a separate module, ./peers, so that embedding ocbench
// never pulls them in. Their benchmarks are ordinary Go benchmarks named
//
//	BenchmarkPeers/<stage>/<input>/<impl>
//
// run on the same generated inputs as ocbench's scenarios; RunPeers runs
// them with `go test` and reads their lines back as Results.

// peerChecks selects the peers module's tests that check each peer against
// ocbench on the benchmark inputs.
const peerChecks = "^(TestAllAgree|TestRepairAgainstKaptinlin|TestPeerInputsHaveScenarios|TestTokenizeBenchInputAgrees)$"

// ErrNoPeers means the peers module was not found: the binary runs outside
// a clone of the repository, so there is nothing to compare against.
var ErrNoPeers = errors.New("bench: peers module not found (run from a clone of the repository)")

// FindPeersDir looks for peers/go.mod in dir and its parents.
func FindPeersDir(dir string) (string, error) {
	for {
		p := filepath.Join(dir, "peers")
		if b, err := os.ReadFile(filepath.Join(p, "go.mod")); err == nil && bytes.Contains(b, []byte("module github.com/ocbench/ocbench/peers")) {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", ErrNoPeers
		}
		dir = parent
	}
}

// RunPeers runs the peer benchmarks in the peers module at dir, for the
// same time and count as our scenarios, and returns the results whose
// "stage/input" name matches filter (all when nil). Build output and
// failures of the go command go to log.
func RunPeers(ctx context.Context, dir string, filter *regexp.Regexp, o Options, log io.Writer) ([]Result, error) {
	o.setDefaults()
	// The agreement tests run first: a peer that does not rebuild what
	// ocbench decodes, repairs or counts must not be timed against it.
	cmd := exec.CommandContext(ctx, "go", "test", "-run", peerChecks, "-bench", "^BenchmarkPeers$",
		"-benchmem", "-benchtime", o.Duration.String(), "-count", strconv.Itoa(o.Count), ".")
	cmd.Dir = dir
	cmd.Stderr = log
	out, err := cmd.Output()
	results, perr := ParseBenchOutput(bytes.NewReader(out))
	// Keep what was measured even when a peer failed: one broken peer
	// must not hide the others.
	kept := results[:0]
	for _, r := range results {
		if filter == nil || filter.MatchString(r.Name) {
			kept = append(kept, r)
		}
	}
	if err != nil {
		return kept, fmt.Errorf("bench: peers: go test failed (%w); %d peer results kept, see the log above", err, len(kept))
	}
	return kept, perr
}

// ParseBenchOutput reads Go benchmark lines named
// BenchmarkPeers/<stage>/<input>/<impl>[-procs] and returns them as
// Results (Run counts the repetitions of each name). Other lines are
// ignored.
func ParseBenchOutput(r io.Reader) ([]Result, error) {
	var out []Result
	runs := map[string]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "BenchmarkPeers/") {
			continue
		}
		name := strings.TrimPrefix(f[0], "BenchmarkPeers/")
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		parts := strings.Split(name, "/")
		if len(parts) != 3 {
			return out, fmt.Errorf("bench: peer benchmark %q is not stage/input/impl", name)
		}
		iters, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return out, fmt.Errorf("bench: peer line %q: %w", sc.Text(), err)
		}
		res := Result{Name: parts[0] + "/" + parts[1], Stage: parts[0], Input: parts[1], Impl: parts[2], Iterations: iters}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return out, fmt.Errorf("bench: peer line %q: %w", sc.Text(), err)
			}
			switch f[i+1] {
			case "ns/op":
				res.NsPerOp = v
			case "MB/s":
				res.MBPerSec = v
			case "B/op":
				res.BytesPerOp = v
			case "allocs/op":
				res.AllocsPerOp = v
			case "ns/event":
				res.NsPerEvent = v
				if v > 0 {
					res.EventsPerSec = 1e9 / v
				}
			}
		}
		runs[res.Name+"/"+res.Impl]++
		res.Run = runs[res.Name+"/"+res.Impl]
		out = append(out, res)
	}
	return out, sc.Err()
}
