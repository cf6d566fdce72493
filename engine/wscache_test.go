package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/prompt"
	"github.com/ocbench/ocbench/provider/scripted"
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

// TestWorkspaceResolutionFollowsChanges: the memo of resolved workspace
// paths never hands out a resolution that no longer holds: a symlink
// re-pointed, or a directory replaced by another, is resolved again.
func TestWorkspaceResolutionFollowsChanges(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks")
	}
	dir := t.TempDir()
	a, b, link := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "ws")
	for _, d := range []string{a, b} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	realOf := func(p string) string {
		t.Helper()
		r, err := filepath.EvalSymlinks(p)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	resolve := func(p string) string {
		t.Helper()
		w, err := resolveWorkspace(p)
		if err != nil {
			t.Fatal(err)
		}
		return w.Dir()
	}
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	for range 2 { // made, then from the memo
		if got := resolve(link); got != realOf(a) {
			t.Fatalf("ws -> a resolved to %s", got)
		}
	}
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(b, link); err != nil {
		t.Fatal(err)
	}
	if got := resolve(link); got != realOf(b) {
		t.Fatalf("ws re-pointed to b resolved to %s", got)
	}
	// a replaced by a symlink to b: the memo's resolution of a (itself)
	// no longer names the directory a leads to.
	if got := resolve(a); got != realOf(a) {
		t.Fatal(got)
	}
	if err := os.Remove(a); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(b, a); err != nil {
		t.Fatal(err)
	}
	if got := resolve(a); got != realOf(b) {
		t.Fatalf("a, now a symlink to b, resolved to %s", got)
	}
	if err := os.Remove(a); err != nil {
		t.Fatal(err)
	}
	if _, err := resolveWorkspace(a); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a removed: %v", err)
	}
}

// TestSharedBuiltinsWorkInTheirRunsWorkspace: runs share one set of
// built-in tools (runBuiltins), which work in the workspace of the run
// that calls them, also when runs in different workspaces overlap.
func TestSharedBuiltinsWorkInTheirRunsWorkspace(t *testing.T) {
	script := &scripted.Script{Turns: []scripted.Turn{
		{Steps: []scripted.Step{scripted.ToolCall("", "read", `{"path":"f.txt"}`)}},
		{Steps: []scripted.Step{scripted.Text("done")}},
	}}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		ws := t.TempDir()
		want := "workspace " + strconv.Itoa(i)
		if err := os.WriteFile(filepath.Join(ws, "f.txt"), []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			prov := scripted.MustNew(scripted.Options{Script: script})
			res, err := Run(context.Background(), Params{Prompt: "read it", Model: llm.Model{ID: "scripted-1", API: "openai-completions", Provider: "scripted"},
				StreamFunc: prov.StreamFunc(), Workspace: ws, BuiltinTools: true, SystemPrompt: "s"})
			if err != nil {
				errs <- err
				return
			}
			for _, m := range res.NewMessages {
				if m.Role == llm.RoleToolResult {
					if got := m.TextContent(); !strings.Contains(got, want) || m.IsError {
						errs <- fmt.Errorf("run in %q read %q", want, got)
					}
					return
				}
			}
			errs <- fmt.Errorf("run in %q: no tool result", want)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if _, err := runBuiltins(BuiltinOptions{})[0].handler(context.Background(), []byte(`{"path":"f.txt"}`)); !errors.Is(err, errNoWorkspace) {
		t.Fatalf("a shared built-in called outside a run: %v", err)
	}
}

// FuzzAbsPath holds absPath, which skips filepath.Abs's Clean for a path
// that is already absolute and clean, to filepath.Abs.
func FuzzAbsPath(f *testing.F) {
	for _, p := range []string{"/", "/a", "/a/b", "/a/", "//a", "/a//b", "/a/./b", "/a/../b", "/a/.", "/a/..", "/..", "/.", "a", "./a", "", "/a/.b", "/a/..b", "/a/b..", "/.a"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		got, err := absPath(p)
		want, werr := filepath.Abs(p)
		if got != want || (err == nil) != (werr == nil) {
			t.Fatalf("absPath(%q) = %q, %v; filepath.Abs: %q, %v", p, got, err, want, werr)
		}
	})
}
