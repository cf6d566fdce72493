package bench

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
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
	for _, p := range PeerPackages() {
		if len(p.Benchmarks) == 0 {
			t.Errorf("peers/%s declares no benchmark", p.Dir)
		}
		if _, err := os.Stat(filepath.Join("..", "peers", p.Dir)); err != nil {
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
	p, _ := PeerPackageIn("stdlib")
	sel := p.Select(regexp.MustCompile("^decode/anthropic$"))
	if len(sel) != 1 || sel[0].Impl != ImplStdlib {
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

// TestPlanPeersHeavyOnlyWhenCached: with an empty build cache the SDK
// root packages are not built unless asked for (--peers all), and the
// light packages' first ETA counts the source they must compile.
func TestPlanPeersHeavyOnlyWhenCached(t *testing.T) {
	dir, err := FindPeersDir(".")
	if err != nil {
		t.Skip(err)
	}
	t.Setenv("GOCACHE", t.TempDir())
	pr, err := PlanPeers(context.Background(), dir, nil, false, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pr.Peers {
		if p.Heavy != "" {
			t.Errorf("heavy peers/%s planned with an empty build cache", p.Dir)
		}
	}
	if len(pr.Skipped) != 2 || !strings.Contains(pr.Skipped[0], "--peers all") {
		t.Errorf("skipped %q", pr.Skipped)
	}
	if len(pr.Peers) == 0 || pr.Peers[0].StaleBytes < 1<<20 {
		t.Errorf("first peer's stale source: %+v", pr.Peers)
	}
	all, err := PlanPeers(context.Background(), dir, nil, true, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Peers) != len(PeerPackages()) || len(all.Skipped) != 0 {
		t.Errorf("--peers all planned %d of %d packages, skipped %q", len(all.Peers), len(PeerPackages()), all.Skipped)
	}
}
