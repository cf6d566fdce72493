package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/transcript"
	"github.com/ocbench/ocbench/transcript/pgstore"
)

// `ocbench run --sessions sqlite:PATH` continues a session OpenClaw
// 2026.9.6 wrote (testdata/sessions/openclaw-2026.9.6-agent.sqlite).
func TestRunContinuesOpenClawStore(t *testing.T) {
	b, err := os.ReadFile("../../testdata/sessions/openclaw-2026.9.6-agent.sqlite")
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "agents", "main", "agent", "openclaw-agent.sqlite")
	os.MkdirAll(filepath.Dir(db), 0o755)
	if err := os.WriteFile(db, b, 0o644); err != nil {
		t.Fatal(err)
	}
	const id = "0f0e0d0c-1111-4222-8333-444455556666"
	_, errs, code := runRun(t, "--quiet", "--sessions", "sqlite:"+db, "--session-id", id, "read", "the", "instructions")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	st, err := transcript.OpenSQLiteStore(db, transcript.SQLiteOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sc, err := transcript.ReadStoreContext(context.Background(), st, id)
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range sc.Messages {
		roles = append(roles, m.Role.String())
	}
	// OpenClaw's user + assistant, then the run: user, tool call, result, answer.
	if got := strings.Join(roles, ","); got != "user,assistant,user,assistant,toolResult,assistant" {
		t.Fatalf("branch after the run: %s", got)
	}
}

// TestServeHelper is an `ocbench serve` process for TestTwoServesOnOnePostgres.
func TestServeHelper(t *testing.T) {
	args := os.Getenv("OCBENCH_SERVE_HELPER_ARGS")
	if args == "" {
		t.Skip("helper process of TestTwoServesOnOnePostgres")
	}
	os.Exit(run(append([]string{"serve"}, strings.Split(args, "\x1f")...), os.Stdout, os.Stderr))
}

// startServeHelper starts `ocbench serve args...` as a process of this test
// binary (TestServeHelper), stopped when the test ends, and returns the
// fields of its first line: ocbench gateway on http://ADDR upstream URL ...
func startServeHelper(t *testing.T, args ...string) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestServeHelper$")
	cmd.Env = append(os.Environ(), "OCBENCH_SERVE_HELPER_ARGS="+strings.Join(args, "\x1f"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("serve %q: %v", args, err)
	}
	return strings.Fields(line)
}

// twoNodeRuns is the number of runs TestTwoServesOnOnePostgres sends:
// OCBENCH_TWO_NODE_RUNS (the full figure: 1000), else 10 (the test command
// runs it under -race).
func twoNodeRuns() int {
	if n, err := strconv.Atoi(os.Getenv("OCBENCH_TWO_NODE_RUNS")); err == nil && n > 0 {
		return n
	}
	return 10
}

// Two `ocbench serve` processes on one PostgreSQL: runs of one session sent
// to both alternately never interleave (each run's entries follow the
// previous run's, in one chain) and every run's entries are there.
func TestTwoServesOnOnePostgres(t *testing.T) {
	url := os.Getenv("OCBENCH_TEST_POSTGRES_URL")
	if url == "" {
		t.Skip("OCBENCH_TEST_POSTGRES_URL is not set: no PostgreSQL to test against (.ci/run starts one)")
	}
	var bases []string
	for i := 0; i < 2; i++ {
		f := startServeHelper(t, "--addr", "127.0.0.1:0", "--sessions", url)
		if len(f) < 4 {
			t.Fatalf("serve %d said %q", i, f)
		}
		bases = append(bases, f[3])
	}
	id := fmt.Sprintf("two-node-%d", time.Now().UnixNano())
	n := twoNodeRuns()
	for i := 0; i < n; i++ {
		body := fmt.Sprintf(`{"session":%q,"message":"run %d"}`, id, i)
		resp, err := http.Post(bases[i%2]+"/v1/runs", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), "event: result") || strings.Contains(string(b), `"error"`) {
			t.Fatalf("run %d on node %d: %d %s", i, i%2, resp.StatusCode, b)
		}
	}
	st, err := pgstore.Open(context.Background(), url, pgstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r, err := st.Reader(context.Background(), id, transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	prev := ""
	run, entries, others := -1, 0, 0
	var roles []string // of the current run
	check := func() {
		// Every run's messages: its prompt, the tool call, the result, the
		// answer (the scripted provider's turn); as the session outgrows
		// the context the engine may add overflow turns (errored
		// assistants) and compactions before the call or the answer.
		got := strings.Join(roles, ",")
		if run >= 0 && (!strings.HasPrefix(got, "user,") || !strings.HasSuffix(got, ",assistant") || strings.Count(got, "toolResult") != 1) {
			t.Fatalf("run %d has messages %v", run, roles)
		}
	}
	for r.Next() {
		e := r.Entry()
		if string(e.ParentID) != prev {
			t.Fatalf("entry %s hangs from %q, not from the entry before it %q: runs interleaved", e.ID, e.ParentID, prev)
		}
		prev = string(e.ID)
		entries++
		m := e.Message
		if m == nil {
			others++ // compactions the engine wrote as the session grew
			continue
		}
		if m.Role == llm.RoleUser {
			check()
			run, roles = run+1, nil
			if want := fmt.Sprintf("run %d", run); m.TextContent() != want {
				t.Fatalf("user message %q, want %q", m.TextContent(), want)
			}
		}
		roles = append(roles, m.Role.String())
	}
	check()
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
	if run != n-1 {
		t.Fatalf("%d runs in the session, want %d", run+1, n)
	}
	t.Logf("%d runs alternating on two gateways: %d entries in one chain (%d of them not messages), every run complete", n, entries, others)
}
