package bench

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ocbench/ocbench/bench/peerdata"
)

// Compile-time estimates behind the first ETA, from measurements on a
// 2-core machine: the compiler gets through about 50 KB of Go source per
// second per core on the SDKs, and linking a test binary takes a second or
// two even when every package is cached.
const (
	compileBytesPerSec = 50e3
	linkSeconds        = 2
)

// PlannedPeer is one peer package a run builds and runs.
type PlannedPeer struct {
	peerdata.PeerPackage
	// Selected are the benchmarks of the package the run's filter keeps.
	Selected []peerdata.PeerBench
	// StaleBytes is the Go source the build cache lacks for this package
	// and its dependencies (0 when everything is cached).
	StaleBytes int64
	// Key fingerprints the test binary's sources; Cached is set when a
	// binary of that key is kept from an earlier run (no build at all).
	Key    string
	Cached bool
}

// peerCacheDir is where linked peer test binaries are kept across runs,
// "" when the user has no cache directory.
func peerCacheDir() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "ocbench", "peers")
}

// KeptPeerBinary reports whether a linked test binary of the peer package
// at dir is kept from an earlier run (of any sources: a first guess).
func KeptPeerBinary(dir string) bool {
	cache := peerCacheDir()
	if cache == "" {
		return false
	}
	m, _ := filepath.Glob(filepath.Join(cache, dir+"-*.test"))
	return len(m) > 0
}

// ExpectedBuild is the first estimate of the package's build time.
func (p PlannedPeer) ExpectedBuild() time.Duration {
	if p.Cached {
		return 0
	}
	return time.Duration((linkSeconds + float64(p.StaleBytes)/compileBytesPerSec) * float64(time.Second))
}

// PeerRunner builds the test binaries of the peer packages a run needs and
// runs their benchmarks. Build starts the compilation in the background
// (one package at a time, one compiler process, so that one core stays
// free for ocbench's own measurements); Widen lets builds use both cores
// once those measurements are over; Run waits for each binary in turn and
// runs it.
type PeerRunner struct {
	Dir     string        // the peers module
	Peers   []PlannedPeer // what will be built and run, in order
	Skipped []string      // why planned-out packages are not run (heavy, not cached)
	Opts    Options
	// Log receives the go command's and the test binaries' error output.
	Log io.Writer
	// Built, when set, is called when a package's binary is ready or
	// failed to build.
	Built func(p PlannedPeer, took time.Duration, err error)
	// Measured, when set, is called for each benchmark line read.
	Measured func(r Result)
	// Ran, when set, is called when a package's binary is done, with the
	// number of results it gave (a benchmark may skip itself, a build or
	// a test may fail).
	Ran func(p PlannedPeer, results int)

	filter  *regexp.Regexp
	tmp     string
	once    sync.Once
	mu      sync.Mutex
	cond    *sync.Cond
	slots   int // builds allowed at once
	running int // builds under way
	builds  []*peerBuild
}

type peerBuild struct {
	done chan struct{}
	bin  string
	err  error
}

// PlanPeers decides which peer packages of the module at dir a run with
// this filter needs: those with a selected benchmark; a heavy package
// only when all is set or its SDK package is already in the build cache.
func PlanPeers(ctx context.Context, dir string, filter *regexp.Regexp, all bool, o Options) (*PeerRunner, error) {
	o.setDefaults()
	pr := &PeerRunner{Dir: dir, Opts: o, filter: filter, slots: 1}
	pr.cond = sync.NewCond(&pr.mu)
	var pkgs []PlannedPeer
	for _, p := range peerdata.PeerPackagesIn(dir) {
		if sel := p.Select(filter); len(sel) > 0 {
			pkgs = append(pkgs, PlannedPeer{PeerPackage: p, Selected: sel})
		}
	}
	// A heavy SDK whose module is not even downloaded cannot be compiled
	// yet: skip it before go list, which would download it.
	kept := pkgs[:0]
	for _, p := range pkgs {
		if p.Heavy != "" && !all && !moduleDownloaded(ctx, dir, p.Heavy) {
			pr.Skipped = append(pr.Skipped, heavyNote(p))
			continue
		}
		kept = append(kept, p)
	}
	pkgs = kept
	if len(pkgs) == 0 {
		return pr, nil
	}
	args := []string{"list", "-deps", "-test", "-json=ImportPath,Dir,GoFiles,CgoFiles,TestGoFiles,XTestGoFiles,EmbedFiles,TestEmbedFiles,Stale,Standard,Deps"}
	for _, p := range pkgs {
		args = append(args, "./"+p.Dir)
	}
	for _, p := range pkgs {
		if p.Heavy != "" {
			args = append(args, p.Heavy)
		}
	}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("bench: go list of the peers: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	stale, err := staleSources(out)
	if err != nil {
		return nil, err
	}
	pr.plan(pkgs, stale, all)
	return pr, nil
}

// plan keeps the packages to build: a heavy one only when all is set or
// its SDK package is not stale; each with the stale bytes its build
// compiles first.
func (pr *PeerRunner) plan(pkgs []PlannedPeer, stale *staleSet, all bool) {
	charged := map[string]bool{}
	for _, p := range pkgs {
		if p.Heavy != "" && !all && stale.stale(p.Heavy) {
			pr.Skipped = append(pr.Skipped, heavyNote(p))
			continue
		}
		p.StaleBytes = stale.charge(p.Dir, charged)
		p.Key = stale.key(p.Dir)
		if cache := peerCacheDir(); cache != "" {
			if _, err := os.Stat(filepath.Join(cache, p.Dir+"-"+p.Key+".test")); err == nil {
				p.Cached = true
			}
		}
		pr.Peers = append(pr.Peers, p)
	}
}

func heavyNote(p PlannedPeer) string {
	return fmt.Sprintf("peers/%s (%s) not run: compiling %s takes 2 to 3 GB of memory and minutes the first time; run once with --peers all (later runs include it)", p.Dir, p.Selected[0].Impl, p.Heavy)
}

// moduleDownloaded reports whether the module at path is in the module
// cache (go list -m reports its directory only then, and downloads
// nothing but go.mod files).
func moduleDownloaded(ctx context.Context, dir, path string) bool {
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", path)
	cmd.Dir = dir
	out, err := cmd.Output()
	return err == nil && len(bytes.TrimSpace(out)) > 0
}

type staleSet struct {
	bytes map[string]int64    // import path -> Go source bytes, stale packages only
	deps  map[string][]string // import path -> its transitive dependencies
	files map[string]string   // import path -> its files' names, sizes and times (not std)
}

// staleSources reads go list -json output: the stale packages with the
// sizes of their Go files, every package's dependencies and a fingerprint
// of its files.
func staleSources(out []byte) (*staleSet, error) {
	s := &staleSet{bytes: map[string]int64{}, deps: map[string][]string{}, files: map[string]string{}}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath, Dir                              string
			GoFiles, CgoFiles, TestGoFiles, XTestGoFiles []string
			EmbedFiles, TestEmbedFiles                   []string
			Deps                                         []string
			Stale, Standard                              bool
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("bench: reading go list: %w", err)
		}
		s.deps[p.ImportPath] = p.Deps
		if !p.Standard {
			var fp strings.Builder
			for _, list := range [][]string{p.GoFiles, p.CgoFiles, p.TestGoFiles, p.XTestGoFiles, p.EmbedFiles, p.TestEmbedFiles} {
				for _, f := range list {
					st, err := os.Stat(filepath.Join(p.Dir, f))
					if err != nil {
						fmt.Fprintf(&fp, "%s missing\n", f)
						continue
					}
					fmt.Fprintf(&fp, "%s %d %d\n", f, st.Size(), st.ModTime().UnixNano())
				}
			}
			s.files[p.ImportPath] = p.Dir + "\n" + fp.String()
		}
		if !p.Stale {
			continue
		}
		var n int64
		for _, f := range append(p.GoFiles, p.CgoFiles...) {
			if st, err := os.Stat(filepath.Join(p.Dir, f)); err == nil {
				n += st.Size()
			}
		}
		s.bytes[p.ImportPath] = n
	}
	return s, nil
}

// key fingerprints the test binary of the peer package at dir: the Go
// version and the names, sizes and modification times of every file of
// every non-standard package it is built from. The same key means the
// same binary, so a linked binary is reused across runs.
func (s *staleSet) key(dir string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	for path, deps := range s.deps {
		if !strings.HasSuffix(path, "/peers/"+dir+".test") {
			continue
		}
		all := append([]string{path}, deps...)
		slices.Sort(all)
		for _, d := range all {
			if f, ok := s.files[d]; ok {
				fmt.Fprintf(h, "%s\n%s", d, f)
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:20]
}

// stale reports whether the package at path is missing from the build
// cache.
func (s *staleSet) stale(path string) bool {
	_, ok := s.bytes[path]
	return ok
}

// charge returns the stale bytes of the test binary of the peer package
// at dir and its dependencies that charged does not hold yet, and adds
// them to it: a dependency shared by two peers is compiled once, by the
// first build.
func (s *staleSet) charge(dir string, charged map[string]bool) int64 {
	var n int64
	for path, deps := range s.deps {
		if !strings.HasSuffix(path, "/peers/"+dir+".test") {
			continue
		}
		for _, d := range append(deps, path) {
			if !charged[d] {
				charged[d] = true
				n += s.bytes[d]
			}
		}
	}
	return n
}

// Build starts compiling every planned package's test binary in the
// background, in order. It returns at once; Run waits for the binaries.
func (pr *PeerRunner) Build(ctx context.Context) {
	pr.once.Do(func() {
		tmp, err := os.MkdirTemp("", "ocbench-peers-")
		pr.tmp = tmp
		for range pr.Peers {
			pr.builds = append(pr.builds, &peerBuild{done: make(chan struct{})})
		}
		go func() {
			for i, p := range pr.Peers {
				pr.mu.Lock()
				for pr.running >= pr.slots {
					pr.cond.Wait()
				}
				pr.running++
				pr.mu.Unlock()
				go pr.build(ctx, p, pr.builds[i], err)
			}
		}()
	})
}

// Widen lets two packages build at once, each compiler process on its own
// core: ocbench's own measurements are over, nothing else needs the CPU.
func (pr *PeerRunner) Widen() {
	pr.mu.Lock()
	pr.slots = 2
	pr.mu.Unlock()
	pr.cond.Broadcast()
}

func (pr *PeerRunner) build(ctx context.Context, p PlannedPeer, b *peerBuild, tmpErr error) {
	start := time.Now()
	defer func() {
		pr.mu.Lock()
		pr.running--
		pr.mu.Unlock()
		pr.cond.Broadcast()
		if pr.Built != nil {
			pr.Built(p, time.Since(start), b.err)
		}
		close(b.done)
	}()
	if tmpErr != nil {
		b.err = tmpErr
		return
	}
	cache := peerCacheDir()
	kept := ""
	if cache != "" && p.Key != "" {
		kept = filepath.Join(cache, p.Dir+"-"+p.Key+".test")
		if _, err := os.Stat(kept); err == nil {
			b.bin = kept
			return
		}
	}
	b.bin = filepath.Join(pr.tmp, p.Dir+".test")
	cmd := exec.CommandContext(ctx, "go", "test", "-c", "-vet=off", "-p", "1", "-o", b.bin, "./"+p.Dir)
	cmd.Dir = pr.Dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdout = &stderr
	if err := cmd.Run(); err != nil {
		b.err = fmt.Errorf("building peers/%s: %v: %s", p.Dir, err, strings.TrimSpace(stderr.String()))
		return
	}
	// Keep the binary for the next run: the new one is renamed into place
	// (atomic, so a concurrent run sees a whole binary or none); binaries
	// of other keys go once they are an hour old (a run of another clone
	// may be about to execute a fresh one). Failing to keep it costs only
	// a later link.
	if kept != "" && os.MkdirAll(cache, 0o755) == nil {
		old, _ := filepath.Glob(filepath.Join(cache, p.Dir+"-*.test"))
		for _, o := range old {
			if st, err := os.Stat(o); err == nil && o != kept && time.Since(st.ModTime()) > time.Hour {
				os.Remove(o)
			}
		}
		tmp := kept + ".tmp" + strconv.Itoa(os.Getpid())
		if copyFile(b.bin, tmp) == nil && os.Rename(tmp, kept) == nil {
			b.bin = kept
		} else {
			os.Remove(tmp)
		}
	}
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Run waits for each package's binary and runs its agreement test and its
// selected benchmarks, for the run's duration and count. A package whose
// build or test fails is reported and the others still run: one broken
// peer must not hide the others. The results kept are those whose name
// matches the run's filter.
func (pr *PeerRunner) Run(ctx context.Context) ([]Result, error) {
	pr.Build(ctx)
	defer func() {
		if pr.tmp != "" {
			os.RemoveAll(pr.tmp)
		}
	}()
	var out []Result
	var errs []error
	for i, p := range pr.Peers {
		b := pr.builds[i]
		select {
		case <-b.done:
		case <-ctx.Done():
			return out, ctx.Err()
		}
		if b.err != nil {
			errs = append(errs, b.err)
			if pr.Ran != nil {
				pr.Ran(p, 0)
			}
			continue
		}
		rs, err := pr.runBinary(ctx, p, b.bin)
		if pr.Ran != nil {
			pr.Ran(p, len(rs))
		}
		out = append(out, rs...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return out, errors.Join(errs...)
}

func (pr *PeerRunner) runBinary(ctx context.Context, p PlannedPeer, bin string) ([]Result, error) {
	cmd := exec.CommandContext(ctx, bin, "-test.run", "^TestAgree$", "-test.bench", benchPattern(p.Selected),
		"-test.benchmem", "-test.benchtime", pr.Opts.Duration.String(), "-test.count", strconv.Itoa(pr.Opts.Count))
	cmd.Dir = filepath.Join(pr.Dir, p.Dir) // tests read files relative to their package
	var tail bytes.Buffer
	cmd.Stderr = &tail
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	var out []Result
	runs := map[string]int{}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var perr error
	for sc.Scan() {
		line := sc.Text()
		r, ok, err := parseBenchLine(line)
		if err != nil && perr == nil {
			perr = err
		}
		if !ok {
			// Keep the test's own output (a failed agreement, a skip) for
			// the error message.
			if !strings.HasPrefix(line, "goos:") && !strings.HasPrefix(line, "goarch:") &&
				!strings.HasPrefix(line, "pkg:") && !strings.HasPrefix(line, "cpu:") && line != "PASS" {
				tail.WriteString(line + "\n")
			}
			continue
		}
		if pr.filter != nil && !pr.filter.MatchString(r.Name) {
			continue
		}
		runs[r.Name+"/"+r.Impl]++
		r.Run = runs[r.Name+"/"+r.Impl]
		out = append(out, r)
		if pr.Measured != nil {
			pr.Measured(r)
		}
	}
	werr := cmd.Wait()
	if werr != nil {
		msg := strings.TrimSpace(tail.String())
		if pr.Log != nil && msg != "" {
			fmt.Fprintf(pr.Log, "peers/%s:\n%s\n", p.Dir, msg)
		}
		return out, fmt.Errorf("peers/%s failed (%v); %d results kept", p.Dir, werr, len(out))
	}
	return out, perr
}
