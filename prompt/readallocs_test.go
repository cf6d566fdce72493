package prompt

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A warm read of an unchanged workspace file allocates at most the path
// copy stat(2) needs: the cache key and the path are built on the stack.
func TestWarmReadAllocations(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the one-stat warm path is Linux only")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "AGENTS.md"), []byte(strings.Repeat("rules\n", 50)), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	var r Resolver
	first, _, err := r.read(root, "AGENTS.md", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(50, func() {
		c, _, err := r.read(root, "AGENTS.md", 1<<20)
		if err != nil || c != first {
			t.Fatal("warm read differs", err)
		}
	})
	if allocs > 1 {
		t.Fatalf("%.1f allocations per warm read, want <= 1", allocs)
	}
}
