package prompt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The directory listings a shared Resolver caches (the workspace's, for
// the exact-case MEMORY.md check, and each skills directory's) are read
// again as soon as an entry is added or removed.
func TestResolverSeesNewEntries(t *testing.T) {
	ws := t.TempDir()
	if err := MaterializeSample(ws); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(ws, "MEMORY.md"))
	if err := os.MkdirAll(filepath.Join(ws, "skills"), 0o755); err != nil {
		t.Fatal(err)
	}
	var r Resolver
	cfg := &Config{}
	resolve := func() *Resolved {
		t.Helper()
		res, err := r.Resolve(cfg, ws)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	hasMemory := func(res *Resolved) bool {
		for _, f := range res.Params.ContextFiles {
			if filepath.Base(f.Path) == "MEMORY.md" {
				return true
			}
		}
		return false
	}
	res := resolve()
	memBefore := hasMemory(res)
	skillsBefore := res.Skills.Prompt
	if err := os.WriteFile(filepath.Join(ws, "MEMORY.md"), []byte("remember this"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(ws, "skills", "zz-new-skill")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: zz-new-skill\ndescription: A skill added later.\n---\nbody\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res = resolve()
	if memBefore || !hasMemory(res) {
		t.Fatalf("MEMORY.md before %t, after %t", memBefore, hasMemory(res))
	}
	if strings.Contains(skillsBefore, "zz-new-skill") || !strings.Contains(res.Skills.Prompt, "zz-new-skill") {
		t.Fatalf("the new skill is not seen:\n%s", res.Skills.Prompt)
	}
	// Removed again: gone.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(ws, "MEMORY.md"))
	res = resolve()
	if hasMemory(res) || strings.Contains(res.Skills.Prompt, "zz-new-skill") {
		t.Fatal("removed entries are still seen")
	}
}
