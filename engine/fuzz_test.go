package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzWorkspaceResolve checks the confinement property: whatever path the
// model sends, Resolve either refuses it or returns a local path whose real
// location (symlinks resolved) is inside the workspace.
func FuzzWorkspaceResolve(f *testing.F) {
	for _, s := range []string{"", ".", "a.txt", "../x", "/etc/passwd", "sub/../../x", "link/secret", "sub/./f", "~/x",
		"a\x00b", "sub//f", "link", "sub/link2/..", "/", "..", "...", "sub/inner/../../..", "C:\\x"} {
		f.Add(s)
	}
	dir := f.TempDir()
	outside := f.TempDir()
	os.MkdirAll(filepath.Join(dir, "sub", "inner"), 0o755)
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a"), 0o644)
	os.Symlink(outside, filepath.Join(dir, "link"))
	os.Symlink(filepath.Join(dir, "sub"), filepath.Join(dir, "sub", "link2"))
	ws, err := OpenWorkspace(dir)
	if err != nil {
		f.Fatal(err)
	}
	defer ws.Close()
	f.Fuzz(func(t *testing.T, p string) {
		rel, err := ws.Resolve(p)
		if err != nil {
			return
		}
		if rel != "." && !filepath.IsLocal(rel) {
			t.Fatalf("%q resolved to non-local %q", p, rel)
		}
		real, ok := evalDeepest(filepath.Join(ws.Dir(), rel))
		if !ok {
			t.Fatalf("%q accepted but cannot be resolved", p)
		}
		if real != ws.Dir() && !strings.HasPrefix(real, ws.Dir()+string(filepath.Separator)) {
			t.Fatalf("%q resolved outside: %q", p, real)
		}
	})
}

// FuzzToolCall sends arbitrary argument bytes to every built-in tool: the
// registry must never panic and must refuse anything the schema refuses.
func FuzzToolCall(f *testing.F) {
	for _, s := range []string{``, `{}`, `{"path":"a.txt"}`, `{"path":"../a"}`, `{"path":1}`, `null`, `[]`, `"x"`,
		`{"path":"a.txt","offset":99999999999999999999}`, `{"path":"a.txt","limit":-1}`, `{"path":"a.txt","oldText":"a","newText":"b"}`,
		`{"path":"n/e/w.txt","content":"x"}`, `{"path":"a.txt"}{"path":"b"}`, "{\"path\":\"\xff\"}", `{"path":"a.txt",}`} {
		f.Add(uint8(0), s)
	}
	dir := f.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("line one\nline two\n"), 0o644)
	ws, err := OpenWorkspace(dir)
	if err != nil {
		f.Fatal(err)
	}
	defer ws.Close()
	reg, err := NewRegistry(Builtins(ws, BuiltinOptions{})...)
	if err != nil {
		f.Fatal(err)
	}
	names := reg.Names()
	f.Fuzz(func(t *testing.T, which uint8, args string) {
		name := names[int(which)%len(names)]
		res := reg.Call(context.Background(), name, []byte(args))
		if res.IsError && res.Text == "" {
			t.Fatalf("%s(%q): error result without text", name, args)
		}
	})
}
