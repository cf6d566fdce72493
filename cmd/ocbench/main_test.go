package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

func runCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

func commandNames() []string {
	var names []string
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// TestHelpEveryCommand: "CMD --help", "CMD -h" and "help CMD" print the
// command's usage with its flags to stdout and exit 0, for every command.
func TestHelpEveryCommand(t *testing.T) {
	for _, name := range commandNames() {
		var first string
		for _, args := range [][]string{{name, "--help"}, {name, "-h"}, {"help", name}, {name, "--count", "3", "-help"}} {
			if name != "bench" && len(args) == 4 {
				continue
			}
			code, out, errOut := runCmd(t, args...)
			if code != 0 || errOut != "" {
				t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
			}
			if !strings.Contains(strings.ToLower(out), "usage") || !strings.Contains(out, "\n  -") {
				t.Errorf("%v: stdout is not a usage with flags:\n%s", args, out)
			}
			if first == "" {
				first = out
			} else if out != first {
				t.Errorf("%v: help differs from %s --help", args, name)
			}
		}
	}
	_, out, _ := runCmd(t, "bench", "--help")
	for _, f := range []string{"filter", "count", "duration", "json", "benchfmt", "html", "cpuprofile", "memprofile", "peers"} {
		if !strings.Contains(out, "  -"+f+" ") && !strings.Contains(out, "  -"+f+"\n") {
			t.Errorf("bench --help does not list -%s:\n%s", f, out)
		}
	}
}

func TestTopLevelUsage(t *testing.T) {
	if code, out, errOut := runCmd(t); code != 2 || out != "" || !strings.Contains(errOut, "usage: ocbench") {
		t.Errorf("no arguments: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}} {
		if code, out, errOut := runCmd(t, args...); code != 0 || errOut != "" || !strings.Contains(out, "usage: ocbench") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
	if code, _, errOut := runCmd(t, "nosuch"); code != 2 || !strings.Contains(errOut, "unknown command") {
		t.Errorf("unknown command: exit %d, %q", code, errOut)
	}
	if code, _, errOut := runCmd(t, "help", "nosuch"); code != 2 || !strings.Contains(errOut, "unknown command") {
		t.Errorf("help of an unknown command: exit %d, %q", code, errOut)
	}
}

// TestExtraArgumentsRefused: commands that take only flags refuse a stray
// argument (exit 2) before doing anything.
func TestExtraArgumentsRefused(t *testing.T) {
	for _, name := range []string{"bench", "fuzz", "loadtest", "serve", "prompt"} {
		code, _, errOut := runCmd(t, name, "stray")
		if code != 2 || !strings.Contains(errOut, `unexpected argument "stray"`) {
			t.Errorf("%s stray: exit %d, stderr %q", name, code, errOut)
		}
	}
}

// TestServeProfileCheckedFirst: serve's --cpuprofile path is checked
// before the gateway starts: a bad one is a usage error.
func TestServeProfileCheckedFirst(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "no", "such", "dir", "cpu.prof")
	code, out, errOut := runCmd(t, "serve", "--addr", "127.0.0.1:0", "--cpuprofile", bad)
	if code != 2 || !strings.Contains(errOut, "--cpuprofile") || strings.Contains(out, "ocbench gateway on") {
		t.Errorf("serve --cpuprofile %s: exit %d, stdout %q, stderr %q", bad, code, out, errOut)
	}
}

// TestBenchOutputsCheckedFirst: a bad output path fails at once with exit
// 2, before any measuring; two outputs cannot both take stdout.
func TestBenchOutputsCheckedFirst(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "no", "such", "dir", "out")
	for _, f := range []string{"--html", "--benchfmt", "--cpuprofile", "--memprofile"} {
		start := time.Now()
		code, out, errOut := runCmd(t, "bench", f, bad)
		if code != 2 || !strings.Contains(errOut, f) || out != "" {
			t.Errorf("%s %s: exit %d, stdout %q, stderr %q", f, bad, code, out, errOut)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: failed after %v, not at once", f, d)
		}
	}
	for _, args := range [][]string{{"--html", "-", "--json"}, {"--html", "-", "--benchfmt", "-"}} {
		code, _, errOut := runCmd(t, append([]string{"bench"}, args...)...)
		if code != 2 || !strings.Contains(errOut, "both write to stdout") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
	if code, _, errOut := runCmd(t, "bench", "--peers", "some"); code != 2 || !strings.Contains(errOut, "--peers") {
		t.Errorf("--peers some: exit %d, %q", code, errOut)
	}
}

func TestBenchFilterMatchingNothing(t *testing.T) {
	for _, peers := range []string{"none", "auto"} {
		code, out, errOut := runCmd(t, "bench", "--peers", peers, "--filter", "^no-such-scenario$")
		if code != 1 || out != "" || !strings.Contains(errOut, "matches no scenario") {
			t.Errorf("--peers %s: exit %d, stdout %q, stderr %q", peers, code, out, errOut)
		}
	}
}

// TestBenchHTMLToStdout: --html - writes only the HTML to stdout (the
// table would corrupt it), as in every command.
func TestBenchHTMLToStdout(t *testing.T) {
	code, out, errOut := runCmd(t, "bench", "--peers", "none", "--filter", "^prompt/warm$", "--duration", "5ms", "--html", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.HasPrefix(out, "<!DOCTYPE html>") || strings.Contains(out, "vs ocbench") {
		t.Errorf("stdout is not only the HTML report:\n%.300s", out)
	}
}

// TestBenchFilterNarrowsPeers: the filter selects the peer benchmarks too,
// and only their package is built and run.
func TestBenchFilterNarrowsPeers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a peer test binary")
	}
	code, out, errOut := runCmd(t, "bench", "--filter", "^repair/small-python$", "--duration", "5ms", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep struct {
		Results []struct{ Name, Impl string }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	impls := map[string]bool{}
	for _, r := range rep.Results {
		if r.Name != "repair/small-python" {
			t.Errorf("result %s/%s does not match the filter", r.Name, r.Impl)
		}
		impls[r.Impl] = true
	}
	if !impls["ocbench"] || !impls["kaptinlin-jsonrepair"] || len(impls) != 2 {
		t.Errorf("implementations %v, want ocbench and kaptinlin-jsonrepair", impls)
	}
	if !strings.Contains(errOut, "peers/jsonrepair") || strings.Contains(errOut, "peers/stdlib") {
		t.Errorf("built other peer packages than jsonrepair:\n%s", errOut)
	}
}

// TestFuzzInterrupted: an interrupted fuzz run exits 130, like a shell.
func TestFuzzInterrupted(t *testing.T) {
	done := make(chan int)
	var o, e bytes.Buffer
	go func() { done <- run([]string{"fuzz", "-n", "100000000", "--out", t.TempDir()}, &o, &e) }()
	// A handler of our own keeps SIGINT from killing the test binary
	// before runFuzz has installed its own; the signal is sent until the
	// command stops, as a user presses Ctrl-C again.
	own := make(chan os.Signal, 8)
	signal.Notify(own, os.Interrupt)
	defer signal.Stop(own)
	deadline := time.After(20 * time.Second)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case code := <-done:
			if code != 130 {
				t.Errorf("exit %d, want 130; stderr %s", code, e.String())
			}
			return
		case <-tick.C:
			if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
		case <-deadline:
			t.Fatal("fuzz did not stop on SIGINT")
		}
	}
}

// TestFuzzOutChecked: fuzz writes into --out only when a case fails, so
// a directory it could never create or write fails at once (exit 2), and
// a good one is still not created by a run without failures.
func TestFuzzOutChecked(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{filepath.Join(file, "sub"), file} {
		start := time.Now()
		code, stdout, errOut := runCmd(t, "fuzz", "-n", "100000000", "--out", out)
		if code != 2 || stdout != "" || !strings.Contains(errOut, "--out") || !strings.Contains(errOut, "not a directory") {
			t.Errorf("--out %s: exit %d, stdout %q, stderr %q", out, code, stdout, errOut)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("--out %s: failed after %v, not at once", out, d)
		}
	}
	fresh := filepath.Join(dir, "new", "failures")
	if code, _, errOut := runCmd(t, "fuzz", "-n", "20", "--out", fresh); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "new")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a run without failures created its --out directory: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("the write check left files behind: %v", ents)
	}
}

// TestFuzzMutateFlags: --mutate and --corpus belong to a differential run,
// and a corpus that cannot be read fails before any case runs.
func TestFuzzMutateFlags(t *testing.T) {
	out := t.TempDir()
	for _, args := range [][]string{{"--mutate"}, {"--corpus", out}} {
		code, _, errOut := runCmd(t, append([]string{"fuzz", "--out", out}, args...)...)
		if code != 2 || !strings.Contains(errOut, "need --against") {
			t.Errorf("%v: exit %d, %q", args, code, errOut)
		}
	}
	code, _, errOut := runCmd(t, "fuzz", "--out", out, "--mutate", "--corpus", t.TempDir(), "--against", "false")
	if code != 2 || !strings.Contains(errOut, "--corpus: no .sse files") {
		t.Errorf("empty corpus: exit %d, %q", code, errOut)
	}
}

// TestRunJSONLines: run --json is JSON Lines: every line one object, the
// result (with stopReason) last.
func TestRunJSONLines(t *testing.T) {
	code, out, errOut := runCmd(t, "run", "--json", "read AGENTS.md")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) < 2 {
		t.Fatalf("%d lines:\n%s", len(lines), out)
	}
	for i, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %d is not one JSON object: %v\n%s", i+1, err, l)
		}
		if _, ok := m["stopReason"]; ok != (i == len(lines)-1) {
			t.Errorf("line %d: stopReason present %v; the result must be the last line only", i+1, ok)
		}
	}
}

// TestHTMLOutputsEverywhere: in bench, loadtest and cache-profile a bad
// --html path fails at once with exit 2, and --html - with --json is
// refused (both would write to stdout).
func TestHTMLOutputsEverywhere(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "no", "dir", "r.html")
	session := "../../testdata/sessions/openclaw-v3-2026-03-qwen-1f979e30.jsonl"
	for _, args := range [][]string{
		{"bench", "--html", bad}, {"loadtest", "--html", bad}, {"cache-profile", "--html", bad, session},
		{"bench", "--html", "-", "--json"}, {"loadtest", "--html", "-", "--json"}, {"cache-profile", "--html", "-", "--json", session},
	} {
		start := time.Now()
		code, out, errOut := runCmd(t, args...)
		if code != 2 || out != "" || !strings.Contains(errOut, "--html") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
		if time.Since(start) > 2*time.Second {
			t.Errorf("%v: took %v, not at once", args, time.Since(start))
		}
	}
	// --html - writes only the HTML to stdout.
	code, out, errOut := runCmd(t, "cache-profile", "--html", "-", session)
	if code != 0 || !strings.HasPrefix(out, "<!DOCTYPE html>") || strings.Contains(out, "predicted hit rate") {
		t.Errorf("cache-profile --html -: exit %d, stderr %q, stdout %.200q", code, errOut, out)
	}
}

// TestREADMEForAStranger: the README keeps what a newcomer needs (one edit
// once dropped it by accident): how to get the binary its examples call,
// the main job, the test command, and a section for every command.
func TestREADMEForAStranger(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for _, want := range []string{
		"go install ./cmd/ocbench",
		"go run ./cmd/ocbench bench",
		"go test -race -count=1 ./... ./peers/...",
		"Go 1.26", "C compiler",
	} {
		if !strings.Contains(readme, want) {
			t.Errorf("README lacks %q", want)
		}
	}
	for _, name := range commandNames() {
		if !strings.Contains(readme, "\n### `ocbench "+name+"`\n") {
			t.Errorf("README has no section for ocbench %s", name)
		}
	}
}
