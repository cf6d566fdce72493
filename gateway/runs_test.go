package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider/scripted"
	"github.com/ocbench/ocbench/transcript"
)

// TestRunsStreamsEventsAsSSE reads /v1/runs the way curl and a shell script
// would: line by line, "data:" payloads as JSON.
func TestRunsStreamsEventsAsSSE(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "AGENTS.md"), []byte("# Agents\nBe brief.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := scripted.New(scripted.Options{})
	if err != nil {
		t.Fatal(err)
	}
	runs := &EngineRuns{SessionsDir: t.TempDir(), Workspace: ws,
		Model: llm.Model{ID: "scripted-1", API: "openai-completions", Provider: "scripted"}, StreamFunc: p.Stream}
	r := startGateway(t, Config{Runs: runs})

	resp := post(t, r.url+"/v1/runs", `{"session":"s1","message":"read AGENTS.md"}`)
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	var types []string
	var result RunResult
	sc := bufio.NewScanner(resp.Body)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "event: "); ok {
			event = v
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		if event == "result" {
			if err := json.Unmarshal([]byte(data), &result); err != nil {
				t.Fatalf("result %q: %v", data, err)
			}
			continue
		}
		var ev struct{ Type string }
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		types = append(types, ev.Type)
	}
	joined := strings.Join(types, " ")
	if !strings.Contains(joined, "toolcall_end") || strings.Count(joined, "done") < 2 {
		t.Errorf("events %s: want a tool call turn and a final turn", joined)
	}
	if result.Turns < 2 || result.ToolCalls < 1 || result.StopReason != "stop" || result.Error != "" {
		t.Errorf("result %+v", result)
	}

	resp2, err := http.Get(r.url + "/v1/sessions/s1")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp2.Body)
	resp2.Body.Close()
	if resp2.StatusCode != 200 || !strings.Contains(string(b), `"toolResult"`) {
		t.Errorf("session read back: %d %.300s", resp2.StatusCode, b)
	}
	resp3, _ := http.Get(r.url + "/v1/sessions/nope")
	resp3.Body.Close()
	resp4, _ := http.Get(r.url + "/v1/sessions/..%2Fetc")
	resp4.Body.Close()
	if resp3.StatusCode != 404 || resp4.StatusCode == 200 {
		t.Errorf("missing session %d, escaping id %d", resp3.StatusCode, resp4.StatusCode)
	}
	bad := post(t, r.url+"/v1/runs", `{"session":"../x","message":"hi"}`)
	if bad.StatusCode != 400 {
		t.Errorf("escaping session id accepted: %d", bad.StatusCode)
	}
}

func engineRig(t *testing.T, cfg Config) (*rig, *EngineRuns) {
	t.Helper()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "AGENTS.md"), []byte("# Agents\nBe brief.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := scripted.New(scripted.Options{})
	if err != nil {
		t.Fatal(err)
	}
	runs := &EngineRuns{SessionsDir: t.TempDir(), Workspace: ws,
		Model: llm.Model{ID: "scripted-1", API: "openai-completions", Provider: "scripted"}, StreamFunc: p.Stream}
	cfg.Runs = runs
	return startGateway(t, cfg), runs
}

// The sessions directory serves regular files only: a planted symlink
// (to /etc/passwd, say) and a FIFO are "no session", answered at once.
func TestSessionsServeRegularFilesOnly(t *testing.T) {
	r, runs := engineRig(t, Config{})
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("root:x:0:0\n"), 0o644)
	if err := os.Symlink(secret, filepath.Join(runs.SessionsDir, "link.jsonl")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(runs.SessionsDir, "fifo.jsonl"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(runs.SessionsDir, "dir.jsonl"), 0o755)
	c := &http.Client{Timeout: 3 * time.Second}
	for _, id := range []string{"link", "fifo", "dir"} {
		resp, err := c.Get(r.url + "/v1/sessions/" + id)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 404 || strings.Contains(string(b), "root:") {
			t.Errorf("%s: %d %s", id, resp.StatusCode, b)
		}
	}
}

// A 500 does not reveal where the sessions live.
func TestSessionErrorHidesPath(t *testing.T) {
	r, runs := engineRig(t, Config{})
	notDir := filepath.Join(t.TempDir(), "plainfile")
	os.WriteFile(notDir, nil, 0o644)
	runs.SessionsDir = notDir // open fails with ENOTDIR
	resp, err := http.Get(r.url + "/v1/sessions/s1")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 500 || strings.Contains(string(b), notDir) || strings.Contains(string(b), "plainfile") {
		t.Errorf("%d %s", resp.StatusCode, b)
	}
	run := post(t, r.url+"/v1/runs", `{"session":"s1","message":"read AGENTS.md"}`)
	b, _ = io.ReadAll(run.Body)
	if strings.Contains(string(b), notDir) {
		t.Errorf("run result reveals the sessions path: %s", b)
	}
}

// A workspace the gateway refuses is an HTTP error, not a 200 stream.
func TestRejectedWorkspaceIsNot200(t *testing.T) {
	r, _ := engineRig(t, Config{})
	resp := post(t, r.url+"/v1/runs", `{"session":"s1","workspace":"other","message":"hi"}`)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), "workspace not allowed") {
		t.Errorf("%d %s", resp.StatusCode, b)
	}
}

// panicRuns is a RunService whose Run panics, as a bug in an embedder's
// service would.
type panicRuns struct{}

func (panicRuns) Run(context.Context, RunRequest, func(*llm.Event, *llm.Message) error) (RunResult, error) {
	panic("boom")
}
func (panicRuns) OpenSession(string) (io.ReadCloser, int64, error) { return nil, 0, ErrNoSession }

// A panicking handler answers 500, keeps the gateway up and is counted.
func TestPanicsAreCounted(t *testing.T) {
	r := startGateway(t, Config{Runs: panicRuns{}})
	resp := post(t, r.url+"/v1/runs", `{"session":"s1","message":"hi"}`)
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != 500 {
		t.Errorf("status %d", resp.StatusCode)
	}
	if got := counterValue(t, r, "ocbench_gateway_panics_total"); got != 1 {
		t.Errorf("panics counted %v", got)
	}
	if n := r.srv.m.inFlightValue(); n != 0 {
		t.Errorf("slot not released after a panic: %v in flight", n)
	}
	mresp, _ := http.Get(r.url + "/metrics")
	b, _ := io.ReadAll(mresp.Body)
	mresp.Body.Close()
	if !strings.Contains(string(b), `ocbench_gateway_requests_total{code="500",route="runs"} 1`) {
		t.Errorf("500 not in the request counter")
	}
}

// TestRunsSessionLimits: a session held by another writer is 409 (retry
// later), and a session at its size limit is 413; neither is a 200 and
// neither writes to the session.
func TestRunsSessionLimits(t *testing.T) {
	ws := t.TempDir()
	p, err := scripted.New(scripted.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	runs := &EngineRuns{SessionsDir: dir, Workspace: ws, MaxSessionBytes: 64 << 10,
		Model: llm.Model{ID: "scripted-1", API: "openai-completions", Provider: "scripted"}, StreamFunc: p.Stream}
	r := startGateway(t, Config{Runs: runs})
	status := func(body string) (int, string) {
		resp := post(t, r.url+"/v1/runs", body)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	// Held: another writer has the session open.
	w, err := transcript.OpenWriter(filepath.Join(dir, "held.jsonl"), transcript.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if code, body := status(`{"session":"held","message":"hi"}`); code != http.StatusConflict || !strings.Contains(body, "conflict_error") {
		t.Fatalf("held session: %d %s, want 409 conflict_error", code, body)
	}
	w.Close()
	if code, body := status(`{"session":"held","message":"hi"}`); code != 200 {
		t.Fatalf("released session: %d %s", code, body)
	}

	// Full: runs of a long message fill the session to its limit.
	long := strings.Repeat("x", 20<<10)
	got413 := false
	for i := 0; i < 8 && !got413; i++ {
		code, body := status(`{"session":"big","message":"` + long + `"}`)
		switch code {
		case 200:
		case http.StatusRequestEntityTooLarge:
			got413 = true
		default:
			t.Fatalf("run %d: %d %s", i, code, body)
		}
	}
	if !got413 {
		t.Fatal("a session past MaxSessionBytes was never refused")
	}
	if fi, err := os.Stat(filepath.Join(dir, "big.jsonl")); err != nil || fi.Size() > 64<<10 {
		t.Fatalf("the session grew past its limit: %v %v", fi.Size(), err)
	}
}
