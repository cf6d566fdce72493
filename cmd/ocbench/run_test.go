package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runRun(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(append([]string{"run"}, args...), &out, &errb)
	return out.String(), errb.String(), code
}

func TestRunCommandDefault(t *testing.T) {
	for _, wire := range []string{"openai-chat", "openai-responses", "anthropic"} {
		t.Run(wire, func(t *testing.T) {
			out, errs, code := runRun(t, "--wire", wire, "read", "the", "instructions")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			for _, want := range []string{"→ read", "← read", "I read AGENTS.md", "turns 2", "tool calls 1 (0 errors)", "cache read 6144"} {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

func TestRunCommandJSON(t *testing.T) {
	dir := t.TempDir()
	session := filepath.Join(dir, "s.jsonl")
	out, errs, code := runRun(t, "--json", "--quiet", "--session", session, "hello")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var res struct {
		Turns       int    `json:"turns"`
		StopReason  string `json:"stopReason"`
		SessionFile string `json:"sessionFile"`
		ToolCalls   []struct {
			Name string `json:"name"`
		} `json:"toolCalls"`
		Usage struct {
			CacheRead int `json:"cacheRead"`
		} `json:"usage"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if res.Turns != 2 || res.StopReason != "stop" || len(res.ToolCalls) != 1 || res.SessionFile != session || res.Usage.CacheRead == 0 {
		t.Fatalf("%+v", res)
	}
	if b, err := os.ReadFile(session); err != nil || bytes.Count(b, []byte("\n")) != 5 {
		t.Fatalf("session file: %v, %d lines", err, bytes.Count(b, []byte("\n")))
	}
	// Events as JSON lines.
	out, _, code = runRun(t, "--json", "--session", session, "again")
	if code != 0 {
		t.Fatal(out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var first map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || first["event"] != "run_start" {
		t.Fatalf("first line %q", lines[0])
	}
}

func TestRunCommandErrors(t *testing.T) {
	if _, errs, code := runRun(t); code != 2 || !strings.Contains(errs, "MESSAGE is required") {
		t.Fatalf("no message: %d %s", code, errs)
	}
	if _, _, code := runRun(t, "--wire", "smoke-signals", "hi"); code != 2 {
		t.Fatalf("bad wire: %d", code)
	}
	if _, _, code := runRun(t, "--base-url", "http://127.0.0.1:1", "hi"); code != 2 {
		t.Fatalf("base url without model: %d", code)
	}
	dir := t.TempDir()
	foreign := filepath.Join(dir, "notes.jsonl")
	os.WriteFile(foreign, []byte("{\"a\":1}\n"), 0o644)
	_, errs, code := runRun(t, "--session", foreign, "hi")
	if code != 1 || !strings.Contains(errs, "not a session file") {
		t.Fatalf("foreign session: %d %s", code, errs)
	}
	// An endpoint that refuses the connection: a clear error, exit 1.
	_, errs, code = runRun(t, "--base-url", "http://127.0.0.1:1", "--model", "m", "--session", filepath.Join(dir, "s.jsonl"), "hi")
	if code != 1 || !strings.Contains(errs, "model call failed") {
		t.Fatalf("refused connection: %d %s", code, errs)
	}
	// A workspace that does not exist.
	_, errs, code = runRun(t, "--workspace", filepath.Join(dir, "nope"), "hi")
	if code != 1 || errs == "" {
		t.Fatalf("missing workspace: %d %s", code, errs)
	}
}

func TestRunCommandSteering(t *testing.T) {
	out, errs, code := runRun(t, "--steer", "also list the files", "--followup", "now summarize", "read the instructions")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"» [steer] also list the files", "» [followup] now summarize"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if i, j := strings.Index(out, "[steer]"), strings.Index(out, "[followup]"); i < 0 || j < i {
		t.Errorf("steer must come before the follow-up:\n%s", out)
	}
}

// TestRunCommandRedactsKeys: an upstream that echoes the key in its error,
// and a model that streams a secret, never get it onto stdout, stderr or
// the session file.
func TestRunCommandRedactsKeys(t *testing.T) {
	const key = "live-run-command-key-0123456789" // no known prefix: only the literal catches it
	const token = "svc-token-value-98765"
	t.Setenv("OPENAI_API_KEY", key)
	t.Setenv("OCBENCH_RUN_TEST_TOKEN", token)
	jsonSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(401)
		fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s (sent as %s)","type":"invalid_request_error"}}`, key, r.Header.Get("Authorization"))
	}))
	defer jsonSrv.Close()
	// A long non-JSON body, which the error message shows as an excerpt
	// cut through the echoed key.
	textSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(403)
		fmt.Fprintf(w, "<html>denied for %s, see the docs at https://example.invalid/errors/keys</html>", key)
	}))
	defer textSrv.Close()
	dir := t.TempDir()
	session := filepath.Join(dir, "s.jsonl")
	for _, args := range [][]string{
		{"--base-url", jsonSrv.URL, "--model", "m", "--session", session, "hi"},
		{"--json", "--base-url", jsonSrv.URL, "--model", "m", "--session", session, "hi"},
		{"--base-url", textSrv.URL, "--model", "m", "--session", session, "hi"},
	} {
		out, errs, code := runRun(t, args...)
		if code != 1 {
			t.Fatalf("exit %d: %s %s", code, out, errs)
		}
		if strings.Contains(out+errs, "run-command") || strings.Contains(out+errs, "6789") || !strings.Contains(out+errs, "[REDACTED]") {
			t.Fatalf("the key was printed:\n%s\n%s", out, errs)
		}
	}
	// A model that streams the token (read from a file, say) in its text.
	script := filepath.Join(dir, "script.json")
	os.WriteFile(script, []byte(`{"chunk":3,"turns":[{"steps":[{"text":"the token is `+token+` ok"}]}]}`), 0o644)
	for _, args := range [][]string{{"--script", script, "--session", session, "hi"}, {"--json", "--script", script, "--session", session, "hi"}} {
		out, errs, code := runRun(t, args...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		if strings.Contains(out+errs, "98765") || !strings.Contains(out, "[REDACTED]") {
			t.Fatalf("the token was printed:\n%s", out)
		}
	}
	b, _ := os.ReadFile(session)
	if bytes.Contains(b, []byte("0123456789")) || bytes.Contains(b, []byte("98765")) {
		t.Fatalf("the session file holds a secret:\n%s", b)
	}
}

// TestRunCommandLengthExitCode: a turn cut at the output limit is not a
// finished turn, and a script can tell (exit 3, not 0).
func TestRunCommandLengthExitCode(t *testing.T) {
	script := filepath.Join(t.TempDir(), "script.json")
	os.WriteFile(script, []byte(`{"turns":[{"steps":[{"text":"cut short"}],"stop":"length"}]}`), 0o644)
	out, errs, code := runRun(t, "--script", script, "hi")
	if code != exitLength {
		t.Fatalf("exit %d, want %d: %s %s", code, exitLength, out, errs)
	}
	if !strings.Contains(out, "stop: length") {
		t.Fatalf("the summary does not name the stop reason:\n%s", out)
	}
}

// TestRunCommandCompat: --base-url on a compatible server that is not
// OpenAI's own sends max_tokens and no prompt_cache_key, even under the
// default provider name "openai" (the key variable); --compat openai
// switches to OpenAI's field names.
func TestRunCommandCompat(t *testing.T) {
	bodies := make(chan string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies <- string(b)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	t.Setenv("OPENAI_API_KEY", "k")
	for _, c := range []struct {
		flags     []string
		want, not string
	}{
		{nil, `"max_tokens":64`, "prompt_cache_key"},
		{[]string{"--compat", "openai"}, `"max_completion_tokens":64`, `"max_tokens"`},
	} {
		args := append([]string{"--base-url", srv.URL + "/v1", "--model", "m", "--max-tokens", "64", "--session", filepath.Join(t.TempDir(), "s.jsonl")}, c.flags...)
		out, errs, code := runRun(t, append(args, "hi")...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s %s", c.flags, code, out, errs)
		}
		b := <-bodies
		if !strings.Contains(b, c.want) || strings.Contains(b, c.not) {
			t.Fatalf("%v: request body %s: want %s and no %s", c.flags, b, c.want, c.not)
		}
	}
	if _, _, code := runRun(t, "--base-url", srv.URL, "--model", "m", "--compat", "bogus", "hi"); code != 2 {
		t.Fatalf("a bad --compat exits %d, want 2", code)
	}
}
