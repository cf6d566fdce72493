package gateway

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider/scripted"
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
