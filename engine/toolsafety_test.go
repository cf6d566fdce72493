//go:build unix

package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// callBounded runs a registry call, failing the test if it has not
// returned after a few seconds (the old code hung forever).
func callBounded(t *testing.T, reg *Registry, name, args string) CallResult {
	t.Helper()
	done := make(chan CallResult, 1)
	go func() { done <- reg.Call(context.Background(), name, []byte(args)) }()
	select {
	case res := <-done:
		return res
	case <-time.After(5 * time.Second):
		t.Fatalf("%s %s hangs", name, args)
		return CallResult{}
	}
}

func TestToolsOnAFIFODoNotHang(t *testing.T) {
	ws, dir := newTestWorkspace(t)
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	reg := builtinRegistry(t, ws, BuiltinOptions{})
	for _, c := range []struct{ tool, args string }{
		{"read", `{"path":"pipe"}`},
		{"edit", `{"path":"pipe","oldText":"a","newText":"b"}`},
		{"ls", `{"path":"pipe"}`},
	} {
		res := callBounded(t, reg, c.tool, c.args)
		if !res.IsError || !strings.Contains(res.Text, "pipe") {
			t.Errorf("%s on a FIFO: %+v", c.tool, res)
		}
		if c.tool != "ls" && !errors.Is(res.Err, ErrNotRegular) {
			t.Errorf("%s on a FIFO: %v, want ErrNotRegular", c.tool, res.Err)
		}
	}
}

func TestWriteDoesNotGoThroughHardLinks(t *testing.T) {
	ws, dir := newTestWorkspace(t)
	outside := filepath.Join(t.TempDir(), "precious.txt")
	if err := os.WriteFile(outside, []byte("original\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(outside, filepath.Join(dir, "link.txt")); err != nil {
		t.Skip("no hard links here:", err)
	}
	reg := builtinRegistry(t, ws, BuiltinOptions{})
	if res := callBounded(t, reg, "write", `{"path":"link.txt","content":"overwritten\n"}`); res.IsError {
		t.Fatal(res.Text)
	}
	if b, _ := os.ReadFile(outside); string(b) != "original\n" {
		t.Fatalf("write went through the hard link: the outside file is %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "link.txt")); string(b) != "overwritten\n" {
		t.Fatalf("workspace file: %q", b)
	}
	// edit too, and the file keeps its permissions.
	os.Remove(filepath.Join(dir, "link.txt"))
	os.Link(outside, filepath.Join(dir, "link.txt"))
	if res := callBounded(t, reg, "edit", `{"path":"link.txt","oldText":"original","newText":"edited"}`); res.IsError {
		t.Fatal(res.Text)
	}
	if b, _ := os.ReadFile(outside); string(b) != "original\n" {
		t.Fatalf("edit went through the hard link: the outside file is %q", b)
	}
	st, _ := os.Stat(filepath.Join(dir, "link.txt"))
	if b, _ := os.ReadFile(filepath.Join(dir, "link.txt")); string(b) != "edited\n" || st.Mode().Perm() != 0o600 {
		t.Fatalf("workspace file: %q %v", b, st.Mode())
	}
	// No temporary files are left behind.
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("left %s", e.Name())
		}
	}
}

func TestWriteThroughSymlinkInsideWorkspaceKeepsTheLink(t *testing.T) {
	ws, dir := newTestWorkspace(t)
	if err := os.Symlink("notes.txt", filepath.Join(dir, "alias.txt")); err != nil {
		t.Skip(err)
	}
	reg := builtinRegistry(t, ws, BuiltinOptions{})
	if res := callBounded(t, reg, "write", `{"path":"alias.txt","content":"new\n"}`); res.IsError {
		t.Fatal(res.Text)
	}
	if st, err := os.Lstat(filepath.Join(dir, "alias.txt")); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced: %v %v", st.Mode(), err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); string(b) != "new\n" {
		t.Fatalf("%q", b)
	}
}

// TestToolTimeout: a tool blocked where it cannot see its context does
// not hold the run: after Params.ToolTimeout (and the grace) the call gets
// an error result and the run goes on to the next model call.
func TestToolTimeout(t *testing.T) {
	old := toolAbandonGrace
	toolAbandonGrace = 50 * time.Millisecond
	defer func() { toolAbandonGrace = old }()
	block := make(chan struct{})
	defer close(block)
	stuck := MustNewSchemaTool("stuck", "never returns", []byte(`{"type":"object"}`), func(context.Context, []byte) (ToolOutput, error) {
		<-block
		return ToolOutput{Text: "late"}, nil
	})
	e := newRunEnv(t,
		fakeTurn{msg: assistantCalls([3]string{"c1", "stuck", `{}`})},
		fakeTurn{msg: assistantText("moved on")},
	)
	p := e.params("go")
	p.Tools = []*Tool{stuck}
	p.ToolTimeout = 100 * time.Millisecond
	done := make(chan struct{})
	var res Result
	var err error
	go func() { res, err = Run(context.Background(), p); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the run hangs on a stuck tool")
	}
	if err != nil || res.FinalText() != "moved on" || len(res.ToolCalls) != 1 || !errors.Is(res.ToolCalls[0].Err, ErrToolTimeout) {
		t.Fatalf("%v %q %+v", err, res.FinalText(), res.ToolCalls)
	}
	// A tool that honours its context gets the deadline too.
	polite := MustNewSchemaTool("polite", "waits for its context", []byte(`{"type":"object"}`), func(ctx context.Context, _ []byte) (ToolOutput, error) {
		<-ctx.Done()
		return ToolOutput{}, ctx.Err()
	})
	e2 := newRunEnv(t, fakeTurn{msg: assistantCalls([3]string{"c1", "polite", `{}`})}, fakeTurn{msg: assistantText("ok")})
	p2 := e2.params("go")
	p2.Tools, p2.ToolTimeout = []*Tool{polite}, 50*time.Millisecond
	res, err = Run(context.Background(), p2)
	if err != nil || !errors.Is(res.ToolCalls[0].Err, ErrToolTimeout) {
		t.Fatalf("%v %+v", err, res.ToolCalls)
	}
}

func TestExecDefaultTimeoutIsOpenClaws(t *testing.T) {
	var o BuiltinOptions
	o.setDefaults()
	if o.ExecTimeout != 1800*time.Second {
		t.Fatalf("%v", o.ExecTimeout)
	}
	var p Params
	p.setDefaults()
	if p.ToolTimeout < o.ExecTimeout {
		t.Fatalf("tool timeout %v below exec's %v", p.ToolTimeout, o.ExecTimeout)
	}
}
