package engine

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider/scripted"
	"github.com/ocbench/ocbench/transcript"
)

// TestLiveSessionRunAllocations: a warm run of a live DirStore session
// (what /v1/runs does: OpenClaw's prompt of an unchanged workspace, the
// built-in tools, one model call) allocates at most 100 times (93 since
// runs share the built-in tools; 132 before, and BenchmarkRunSetupLiveSession
// went from 384 to 148 to 110),
// and no more on a session of 400 messages than on one of 40: the prompt
// comes from the memo, the context is extended by the last run's lines,
// and history preparation copies nothing it does not change.
func TestLiveSessionRunAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	p, st := sampleRun(t, true)
	seed := func(id string, n int) {
		w, err := st.Open(context.Background(), id, transcript.WriterOptions{Durability: transcript.SyncNone})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			m := llm.TextMessage(llm.RoleUser, "earlier question "+strconv.Itoa(i)+" "+strings.Repeat("word ", 30))
			if i%2 == 1 {
				m = llm.TextMessage(llm.RoleAssistant, "earlier answer "+strconv.Itoa(i))
				m.StopReason = llm.StopStop
			}
			if _, err := w.AppendMessage(&m); err != nil {
				t.Fatal(err)
			}
		}
		w.Close()
	}
	seed("short", 40)
	seed("long", 400)
	measure := func(id string) float64 {
		p.SessionID = id
		run := func() {
			if _, err := Run(context.Background(), p); err != nil {
				t.Fatal(err)
			}
		}
		for range 3 {
			run()
		}
		return testing.AllocsPerRun(20, run)
	}
	short, long := measure("short"), measure("long")
	t.Logf("allocations per warm run: %.0f (40 messages), %.0f (400 messages)", short, long)
	if short > 100 {
		t.Fatalf("a warm live-session run allocates %.0f times, want at most 100", short)
	}
	if long > short+5 {
		t.Fatalf("a run allocates %.0f times on 400 messages, %.0f on 40: allocations grow with the history", long, short)
	}
}

// TestRunWorkspaceChecks: the run's workspace root is opened lazily, but a
// workspace that is missing or not a directory still fails the run's
// setup, and the built-in tools work on the root opened at their first
// call.
func TestRunWorkspaceChecks(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("the notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := &scripted.Script{Turns: []scripted.Turn{
		{Steps: []scripted.Step{scripted.ToolCall("", "read", `{"path":"notes.txt"}`)}},
		{Steps: []scripted.Step{scripted.Text("done")}},
	}}
	prov := scripted.MustNew(scripted.Options{Script: script})
	for _, bad := range []string{filepath.Join(dir, "missing"), file} {
		p := Params{Prompt: "hi", Model: llm.Model{ID: "scripted-1", API: "openai-completions", Provider: "scripted"},
			StreamFunc: prov.StreamFunc(), Workspace: bad, BuiltinTools: true}
		if _, err := Run(context.Background(), p); err == nil || !strings.Contains(err.Error(), "workspace") {
			t.Fatalf("workspace %s: %v", bad, err)
		}
	}
	p := Params{Prompt: "hi", Model: llm.Model{ID: "scripted-1", API: "openai-completions", Provider: "scripted"},
		StreamFunc: prov.StreamFunc(), Workspace: ws, BuiltinTools: true}
	res, err := Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ToolCalls) != 1 || res.ToolCalls[0].IsError || !strings.Contains(res.NewMessages[2].TextContent(), "the notes") {
		t.Fatalf("the read tool did not read the file: %+v", res.ToolCalls)
	}
}
