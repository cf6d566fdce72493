package bench

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/bench/peerdata"
)

// TestPeerPackagesHaveScenarios: every declared peer benchmark has an
// ocbench scenario of the same stage and input (so each of its lines gets
// a ratio), is declared once, and its package exists in the peers module.
func TestPeerPackagesHaveScenarios(t *testing.T) {
	scs, err := Scenarios()
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, sc := range scs {
		have[sc.Stage+"/"+sc.Input] = true
	}
	seen := map[string]bool{}
	for _, p := range peerdata.PeerPackages() {
		if len(p.Benchmarks) == 0 {
			t.Errorf("peers/%s declares no benchmark", p.Dir)
		}
		if _, err := os.Stat(filepath.Join("..", "peers", p.Dir)); err != nil && !p.Optional {
			t.Errorf("peers/%s: %v", p.Dir, err)
		}
		for _, b := range p.Benchmarks {
			if !have[b.Name()] {
				t.Errorf("peers/%s: %s has no ocbench scenario", p.Dir, b.Name())
			}
			k := b.Name() + "/" + b.Impl
			if seen[k] {
				t.Errorf("%s declared twice", k)
			}
			seen[k] = true
		}
	}
}

// matchesBench applies a -test.bench pattern as package testing does: one
// regular expression per '/'-separated level of the name.
func matchesBench(t *testing.T, pattern, name string) bool {
	pats, parts := strings.Split(pattern, "/"), strings.Split(name, "/")
	for i, p := range pats {
		if i >= len(parts) {
			return true
		}
		if !regexp.MustCompile(p).MatchString(parts[i]) {
			return false
		}
	}
	return true
}

func TestBenchPatternSelects(t *testing.T) {
	p, _ := peerdata.PeerPackageIn("stdlib")
	sel := p.Select(regexp.MustCompile("^decode/anthropic$"))
	if len(sel) != 1 || sel[0].Impl != peerdata.ImplStdlib {
		t.Fatalf("selected %v", sel)
	}
	pat := benchPattern(sel)
	if !matchesBench(t, pat, "BenchmarkPeers/decode/anthropic/bufio+json") {
		t.Errorf("%s does not select the selected benchmark", pat)
	}
	for _, other := range []string{"BenchmarkPeers/decode/openai-chat/bufio+json", "BenchmarkPeers/validate/small/encoding-json", "BenchmarkPeersTokenize/x/y"} {
		if matchesBench(t, pat, other) {
			t.Errorf("%s selects %s", pat, other)
		}
	}
}

// TestPlanPeersFilter: a filter narrows the peers to the packages with a
// matching benchmark, and nothing is planned when nothing matches.
func TestPlanPeersFilter(t *testing.T) {
	dir, err := FindPeersDir(".")
	if err != nil {
		t.Skip(err)
	}
	pr, err := PlanPeers(context.Background(), dir, regexp.MustCompile("^repair/small-python$"), false, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pr.Peers) != 1 || pr.Peers[0].Dir != "jsonrepair" || len(pr.Peers[0].Selected) != 1 {
		t.Fatalf("planned %+v", pr.Peers)
	}
	pr, err = PlanPeers(context.Background(), dir, regexp.MustCompile("^nothing-matches$"), true, Options{})
	if err != nil || len(pr.Peers) != 0 {
		t.Fatalf("planned %+v, %v", pr.Peers, err)
	}
}

// TestPlanHeavyOnlyWhenCached: a heavy SDK package missing from the
// build cache is not built unless asked for (--peers all); a shared stale
// dependency is charged to the first build only.
func TestPlanHeavyOnlyWhenCached(t *testing.T) {
	const mod = "github.com/ocbench/ocbench/peers/"
	out := []byte(`{"ImportPath":"shared","Stale":true,"Dir":".","GoFiles":["peerset.go"]}
{"ImportPath":"github.com/openai/openai-go/v3","Stale":true}
{"ImportPath":"` + mod + `stdlib.test","Stale":true,"Deps":["shared"]}
{"ImportPath":"` + mod + `jsonrepair.test","Stale":true,"Deps":["shared"]}
{"ImportPath":"` + mod + `openaichat.test","Stale":true,"Deps":["shared","github.com/openai/openai-go/v3"]}
`)
	stale, err := staleSources(out)
	if err != nil {
		t.Fatal(err)
	}
	var pkgs []PlannedPeer
	for _, dir := range []string{"stdlib", "jsonrepair", "openaichat"} {
		p, _ := peerdata.PeerPackageIn(dir)
		pkgs = append(pkgs, PlannedPeer{PeerPackage: p, Selected: p.Benchmarks})
	}
	pr := &PeerRunner{}
	pr.plan(pkgs, stale, false)
	if len(pr.Peers) != 2 || len(pr.Skipped) != 1 || !strings.Contains(pr.Skipped[0], "--peers all") {
		t.Fatalf("planned %d, skipped %q", len(pr.Peers), pr.Skipped)
	}
	if pr.Peers[0].StaleBytes == 0 || pr.Peers[1].StaleBytes != 0 {
		t.Errorf("shared stale bytes charged %d then %d, want all to the first build", pr.Peers[0].StaleBytes, pr.Peers[1].StaleBytes)
	}
	all := &PeerRunner{}
	all.plan(pkgs, stale, true)
	if len(all.Peers) != 3 || len(all.Skipped) != 0 {
		t.Errorf("--peers all planned %d, skipped %q", len(all.Peers), all.Skipped)
	}
	cached, _ := staleSources(out[:0])
	some := &PeerRunner{}
	some.plan(pkgs, cached, false)
	if len(some.Peers) != 3 {
		t.Errorf("with the SDK in the build cache, planned %d of 3", len(some.Peers))
	}
}

// TestPeerBinaryKey: the key of a peer's test binary changes when a file
// of a package it is built from changes, so a kept binary is never stale.
func TestPeerBinaryKey(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "a.go")
	if err := os.WriteFile(src, []byte("package a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	list := []byte(`{"ImportPath":"a","Dir":"` + dir + `","GoFiles":["a.go"]}
{"ImportPath":"fmt","Standard":true}
{"ImportPath":"github.com/ocbench/ocbench/peers/stdlib.test","Deps":["a","fmt"]}
`)
	key := func() string {
		s, err := staleSources(list)
		if err != nil {
			t.Fatal(err)
		}
		return s.key("stdlib")
	}
	k1 := key()
	if k2 := key(); k2 != k1 {
		t.Fatalf("key not stable: %s %s", k1, k2)
	}
	if err := os.WriteFile(src, []byte("package a // changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if k3 := key(); k3 == k1 {
		t.Error("key unchanged after a source file changed")
	}
}

// TestPeersBuildWithoutEngine: a peer's test binary is built from package
// peerdata, never from package bench and what its scenarios need (the
// engine, the transcript store and its SQLite, the gateway): a cold
// build of a small peer must not compile SQLite. The binary's cache key
// covers peerdata's files, so a kept binary goes stale when they change.
func TestPeersBuildWithoutEngine(t *testing.T) {
	dir, err := FindPeersDir(".")
	if err != nil {
		t.Skip(err)
	}
	const mod = "github.com/ocbench/ocbench/"
	args := []string{"list", "-e", "-deps", "-test", "-json=ImportPath,Dir,GoFiles,CgoFiles,TestGoFiles,XTestGoFiles,EmbedFiles,TestEmbedFiles,Standard,Deps", "./peerkit"}
	pkgs := peerdata.PeerPackagesIn(dir)
	for _, p := range pkgs {
		args = append(args, "./"+p.Dir)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list of the peers: %v", err)
	}
	s, err := staleSources(out)
	if err != nil {
		t.Fatal(err)
	}
	forbidden := func(path string) bool {
		if path == mod+"bench" || strings.HasPrefix(path, "modernc.org/sqlite") || strings.HasPrefix(path, "github.com/prometheus/") {
			return true
		}
		for _, p := range []string{"bench/internal", "engine", "transcript", "prompt", "gateway"} {
			if path == mod+p || strings.HasPrefix(path, mod+p+"/") {
				return true
			}
		}
		return false
	}
	peerdataFiles := s.files[mod+"bench/peerdata"]
	if !strings.Contains(peerdataFiles, "peers.go ") {
		t.Errorf("peerdata's files are not in the peers' fingerprint: %q", peerdataFiles)
	}
	tests := []string{mod + "peers/peerkit"} // no test files: the package itself
	for _, p := range pkgs {
		tests = append(tests, mod+"peers/"+p.Dir+".test")
	}
	for _, test := range tests {
		deps, ok := s.deps[test]
		if !ok {
			t.Errorf("go list lists no %s", test)
			continue
		}
		if !slices.Contains(deps, mod+"bench/peerdata") {
			t.Errorf("%s is not built from peerdata", test)
		}
		for _, d := range deps {
			if forbidden(d) {
				t.Errorf("%s is built from %s", test, d)
			}
		}
	}
}
