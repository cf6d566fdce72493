//go:build linux

package prompt

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestPromptInWatchedWorkspace: on Linux a warm check of an armed memo
// stats no dependency (the watches vouch for them); an event on a watched
// directory sends it to the stat check once, which keeps the prompt when
// nothing it depends on changed and re-arms; a dependency that changed is
// seen; a bootstrap file that is a symlink out of the workspace is stat'ed
// on every check, so an edit of its target (in a directory nobody
// watches) is seen too.
func TestPromptInWatchedWorkspace(t *testing.T) {
	dir, open, opens := memoWorkspace(t)
	cfg := SampleConfig()
	outside := filepath.Join(dir, "docs", "soul.md")
	if err := os.Mkdir(filepath.Join(dir, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(outside, []byte("# Soul\nbe kind\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "SOUL.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("docs", "soul.md"), filepath.Join(dir, "SOUL.md")); err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(dir, "notes.txt") // no dependency; its directory is watched
	if err := os.WriteFile(notes, []byte("first"), 0o644); err != nil {
		t.Fatal(err)
	}
	var r Resolver
	check := func(name string, wantOpen, wantStatCheck bool) {
		t.Helper()
		o, s := *opens, memoStatChecks.Load()
		got, _, err := r.PromptIn(cfg, dir, open, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := uncached(t, cfg, dir); got != want {
			t.Fatalf("%s: the prompt differs from a fresh one", name)
		}
		if opened := *opens > o; opened != wantOpen {
			t.Fatalf("%s: resolved again: %v, want %v", name, opened, wantOpen)
		}
		if checked := memoStatChecks.Load() > s; checked != wantStatCheck && !wantOpen {
			t.Fatalf("%s: stat check: %v, want %v", name, checked, wantStatCheck)
		}
	}
	check("cold", true, true)
	var m *promptMemo
	for _, v := range r.memo {
		m = v
	}
	if m == nil || m.watch.Load() == nil {
		t.Fatal("the memo was not armed")
	}
	if n := len(m.watch.Load().stat); n != 1 {
		t.Fatalf("%d dependencies stat'ed on every check, want 1 (the symlinked SOUL.md)", n)
	}
	for range 3 {
		check("warm", false, false)
	}
	if err := os.WriteFile(notes, []byte("a tool wrote this"), 0o644); err != nil {
		t.Fatal(err)
	}
	check("unrelated file rewritten", false, true)
	check("warm after re-arming", false, false)
	later := time.Now().Add(time.Hour)
	touch(t, filepath.Join(dir, "skills", "weather", "SKILL.md"), later)
	check("SKILL.md edited", true, true)
	check("warm after the edit", false, false)
	touch(t, outside, later)
	check("the symlink's target edited", true, true)
	check("warm at the end", false, false)
}
