package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/prompt"
)

// TestWorkspaceCacheSeesEdits: runs share one workspace cache, and an edit
// of a bootstrap file or a skill (even one that keeps the size) reaches
// the next run's system prompt.
func TestWorkspaceCacheSeesEdits(t *testing.T) {
	ws := filepath.Join(t.TempDir(), "ws")
	if err := prompt.MaterializeSample(ws); err != nil {
		t.Fatal(err)
	}
	var system string
	fn := func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		system = req.System
		return (&fakeProvider{}).stream(ctx, req)
	}
	run := func() string {
		t.Helper()
		p := Params{Prompt: "hi", Model: llm.Model{ID: "m", API: "fake-api", Provider: "fake"}, StreamFunc: fn, Workspace: ws, OpenClawPrompt: true, BuiltinTools: true}
		if _, err := Run(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		return system
	}
	before := run()
	agents := filepath.Join(ws, "AGENTS.md")
	old, _ := os.ReadFile(agents)
	if !strings.Contains(before, string(old[:20])) {
		t.Fatal("AGENTS.md is not in the prompt")
	}
	// Same size, new content, new mtime.
	edited := []byte(strings.Repeat("Z", 20) + string(old[20:]))
	if err := os.WriteFile(agents, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(agents, time.Now(), time.Now().Add(time.Second))
	if after := run(); !strings.Contains(after, strings.Repeat("Z", 20)) {
		t.Fatal("the edited AGENTS.md did not reach the next run")
	}
	// A skill replaced by a new file (new inode) with the same size and mtime.
	skill := filepath.Join(ws, "skills", "weather", "SKILL.md")
	st, _ := os.Stat(skill)
	b, _ := os.ReadFile(skill)
	nb := strings.Replace(string(b), "weather", "WEATHER", 1)
	tmp := skill + ".new"
	os.WriteFile(tmp, []byte(nb), 0o644)
	os.Chtimes(tmp, st.ModTime(), st.ModTime())
	if err := os.Rename(tmp, skill); err != nil {
		t.Fatal(err)
	}
	if after := run(); !strings.Contains(after, "WEATHER") {
		t.Fatal("the replaced SKILL.md did not reach the next run")
	}
}
