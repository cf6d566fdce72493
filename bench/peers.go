package bench

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The peers (official SDK decoders, other JSON repairers, another
// tokenizer) live in a separate module, ./peers, so that embedding ocbench
// never pulls them in. Each peer package (peerdata.PeerPackages, which a
// peer imports instead of this package and its engine) is compiled into
// its own test binary, whose benchmarks are ordinary Go benchmarks named
//
//	BenchmarkPeers/<stage>/<input>/<impl>
//
// run on the same generated inputs as ocbench's scenarios. PeerRunner
// builds the binaries a run needs (in the background, while ocbench's own
// scenarios run) and runs them, reading their lines back as Results.

// ErrNoPeers means the peers module was not found: the binary runs outside
// a clone of the repository, so there is nothing to compare against.
var ErrNoPeers = errors.New("bench: peers module not found (run from a clone of the repository)")

// FindPeersDir looks for peers/go.mod in dir and its parents.
func FindPeersDir(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
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
		res, ok, err := parseBenchLine(sc.Text())
		if err != nil {
			return out, err
		}
		if !ok {
			continue
		}
		runs[res.Name+"/"+res.Impl]++
		res.Run = runs[res.Name+"/"+res.Impl]
		out = append(out, res)
	}
	return out, sc.Err()
}

// parseBenchLine reads one BenchmarkPeers line; ok is false for any other
// line.
func parseBenchLine(line string) (res Result, ok bool, err error) {
	f := strings.Fields(line)
	if len(f) < 4 || !strings.HasPrefix(f[0], "BenchmarkPeers/") {
		return res, false, nil
	}
	name := strings.TrimPrefix(f[0], "BenchmarkPeers/")
	if i := strings.LastIndexByte(name, '-'); i > 0 {
		if _, err := strconv.Atoi(name[i+1:]); err == nil {
			name = name[:i]
		}
	}
	parts := strings.Split(name, "/")
	if len(parts) != 3 {
		return res, false, fmt.Errorf("bench: peer benchmark %q is not stage/input/impl", name)
	}
	iters, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return res, false, fmt.Errorf("bench: peer line %q: %w", line, err)
	}
	res = Result{Name: parts[0] + "/" + parts[1], Stage: parts[0], Input: parts[1], Impl: parts[2], Iterations: iters}
	for i := 2; i+1 < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return res, false, fmt.Errorf("bench: peer line %q: %w", line, err)
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
	return res, true, nil
}
