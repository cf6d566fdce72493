package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/transcript"
)

// The PostgreSQL driver (pgx) is compiled only into an ocbench built with
// -tags postgres, and into no library package an embedder imports for
// the gateway, the engine, the stores or the cache profile.
func TestDefaultBuildLeavesOutPostgres(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to list the build graph with")
	}
	deps := func(args ...string) []string {
		t.Helper()
		out, err := exec.Command("go", append([]string{"list", "-deps"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %v: %v\n%s", args, err, out)
		}
		return strings.Fields(string(out))
	}
	has := func(pkgs []string, prefix string) string {
		for _, p := range pkgs {
			if strings.HasPrefix(p, prefix) {
				return p
			}
		}
		return ""
	}
	for _, target := range [][]string{
		{"."},
		{"../../gateway", "../../engine", "../../transcript", "../../cacheprofile", "../../loadtest"},
	} {
		if p := has(deps(target...), "github.com/jackc/"); p != "" {
			t.Errorf("the default build of %v compiles %s", target, p)
		}
		if p := has(deps(target...), "github.com/ocbench/ocbench/transcript/pgstore"); p != "" {
			t.Errorf("the default build of %v compiles %s", target, p)
		}
	}
	tagged := deps("-tags", "postgres", ".")
	if has(tagged, "github.com/jackc/pgx/v5") == "" || has(tagged, "github.com/ocbench/ocbench/transcript/pgstore") == "" {
		t.Errorf("ocbench built with -tags postgres does not link the PostgreSQL store")
	}
}

// A store name the binary has no store for is a usage error (exit 2) that
// says what to do and never echoes the name (a URL may hold a password).
// This test binary links pgstore (sessions_test.go), so the PostgreSQL
// message is checked on the error transcript.OpenStore gives without it
// (transcript's TestOpenStoreNotLinked), and the exit code end to end on a
// scheme no package provides.
func TestStoreNotLinkedExits2(t *testing.T) {
	msg, ok := notLinked(&transcript.StoreNotLinkedError{Scheme: "postgres", Import: "github.com/ocbench/ocbench/transcript/pgstore"})
	if !ok || !strings.Contains(msg, "go build -tags postgres ./cmd/ocbench") {
		t.Fatalf("postgres not linked: %q", msg)
	}
	for _, args := range [][]string{
		{"serve", "--addr", "127.0.0.1:0", "--sessions", "mysql://u:hunter2@127.0.0.1:1/db"},
		{"cache-profile", "mysql://u:hunter2@127.0.0.1:1/db"},
	} {
		code, out, errOut := runCmd(t, args...)
		if code != 2 || !strings.Contains(errOut, "mysql://...: no such session store") || strings.Contains(errOut+out, "hunter2") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", args[0], code, out, errOut)
		}
	}
}
