package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/ocbench/ocbench/llm"
)

func newTestWorkspace(t *testing.T) (*Workspace, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("alpha\nbeta\ngamma\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	ws, err := OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws, ws.Dir()
}

func builtinRegistry(t *testing.T, ws *Workspace, opt BuiltinOptions) *Registry {
	t.Helper()
	r, err := NewRegistry(Builtins(ws, opt)...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRegistryUnknownAndInvalid(t *testing.T) {
	ws, _ := newTestWorkspace(t)
	r := builtinRegistry(t, ws, BuiltinOptions{})
	ctx := context.Background()

	res := r.Call(ctx, "teleport", []byte(`{}`))
	if !res.IsError || !errors.Is(res.Err, ErrUnknownTool) || !strings.Contains(res.Text, "read") {
		t.Fatalf("unknown tool: %+v", res)
	}
	// exec is not offered unless enabled.
	res = r.Call(ctx, "exec", []byte(`{"command":"true"}`))
	if !res.IsError || !errors.Is(res.Err, ErrUnknownTool) {
		t.Fatalf("exec without enabling: %+v", res)
	}
	for _, args := range []string{
		``,                               // undecided arguments
		`{"path":`,                       // not JSON
		`"notes.txt"`,                    // not an object
		`{}`,                             // missing required
		`{"path":42}`,                    // wrong type
		`{"path":"notes.txt","x":1}`,     // additionalProperties
		`{"path":"notes.txt","limit":0}`, // minimum
	} {
		res := r.Call(ctx, "read", []byte(args))
		var ae *ArgumentError
		if !res.IsError || !errors.As(res.Err, &ae) || !errors.Is(res.Err, ErrInvalidArguments) {
			t.Errorf("args %q: want ArgumentError, got %+v", args, res)
		}
	}
}

func TestValidationBeforeExecution(t *testing.T) {
	ran := false
	tool := MustNewSchemaTool("count", "counts", []byte(`{"type":"object","properties":{"n":{"type":"integer","maximum":3}},"required":["n"]}`),
		func(ctx context.Context, args []byte) (ToolOutput, error) {
			ran = true
			return ToolOutput{Text: string(args)}, nil
		})
	r, err := NewRegistry(tool)
	if err != nil {
		t.Fatal(err)
	}
	res := r.Call(context.Background(), "count", []byte(`{"n":7}`))
	if !res.IsError || ran {
		t.Fatalf("schema failure ran the tool: %+v ran=%v", res, ran)
	}
	if !strings.Contains(res.Text, "/n") {
		t.Errorf("error does not point at the field: %q", res.Text)
	}
	res = r.Call(context.Background(), "count", []byte(` {"n":2} `))
	if res.IsError || !ran || res.Text != `{"n":2}` {
		t.Fatalf("valid call: %+v", res)
	}
	if _, err := NewRegistry(tool, tool); !errors.Is(err, ErrDuplicateTool) {
		t.Fatalf("duplicate: %v", err)
	}
	if _, err := NewSchemaTool("bad", "", []byte(`{"type":"nope"}`), tool.handler); !errors.Is(err, ErrBadSchema) {
		t.Fatalf("bad schema: %v", err)
	}
	if _, err := NewSchemaTool("ext", "", []byte(`{"$ref":"file:///etc/passwd"}`), tool.handler); !errors.Is(err, ErrBadSchema) {
		t.Fatalf("external ref: %v", err)
	}
}

func TestToolPanicIsAnErrorResult(t *testing.T) {
	tool := MustNewSchemaTool("boom", "", nil, func(ctx context.Context, args []byte) (ToolOutput, error) {
		panic("kaboom")
	})
	r, _ := NewRegistry(tool)
	res := r.Call(context.Background(), "boom", []byte(`{}`))
	if !res.IsError || !errors.Is(res.Err, ErrToolPanic) {
		t.Fatalf("%+v", res)
	}
}

func TestBuiltinsReadWriteEditLs(t *testing.T) {
	ws, _ := newTestWorkspace(t)
	r := builtinRegistry(t, ws, BuiltinOptions{ReadMaxLines: 2})
	ctx := context.Background()
	call := func(name, args string) CallResult {
		t.Helper()
		return r.Call(ctx, name, []byte(args))
	}
	if res := call("read", `{"path":"notes.txt"}`); res.IsError || !strings.HasPrefix(res.Text, "alpha\nbeta\n") || !strings.Contains(res.Text, "Use offset=3") {
		t.Fatalf("read: %+v", res)
	}
	if res := call("read", `{"path":"notes.txt","offset":3}`); res.IsError || res.Text != "gamma\n" {
		t.Fatalf("read offset: %+v", res)
	}
	if res := call("write", `{"path":"deep/new/file.md","content":"hello"}`); res.IsError {
		t.Fatalf("write: %+v", res)
	}
	if b, _ := os.ReadFile(filepath.Join(ws.Dir(), "deep/new/file.md")); string(b) != "hello" {
		t.Fatalf("written %q", b)
	}
	if res := call("edit", `{"path":"notes.txt","oldText":"beta","newText":"BETA"}`); res.IsError {
		t.Fatalf("edit: %+v", res)
	}
	if res := call("edit", `{"path":"notes.txt","oldText":"zeta","newText":"x"}`); !res.IsError {
		t.Fatalf("edit of missing text succeeded")
	}
	os.WriteFile(filepath.Join(ws.Dir(), "dup.txt"), []byte("x x"), 0o644)
	if res := call("edit", `{"path":"dup.txt","oldText":"x","newText":"y"}`); !res.IsError || !strings.Contains(res.Text, "2 occurrences") {
		t.Fatalf("ambiguous edit: %+v", res)
	}
	res := call("ls", `{}`)
	if res.IsError || !strings.Contains(res.Text, "sub/") || !strings.Contains(res.Text, "notes.txt") {
		t.Fatalf("ls: %+v", res)
	}
	abs := filepath.Join(ws.Dir(), "notes.txt")
	if res := call("read", `{"path":"`+abs+`"}`); res.IsError {
		t.Fatalf("absolute path inside the workspace refused: %+v", res)
	}
}

func TestPathEscapes(t *testing.T) {
	ws, dir := newTestWorkspace(t)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("s3cret"), 0o644)
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "filelink")); err != nil {
		t.Fatal(err)
	}
	r := builtinRegistry(t, ws, BuiltinOptions{})
	ctx := context.Background()
	cases := []struct{ tool, args string }{
		{"read", `{"path":"../` + filepath.Base(outside) + `/secret"}`},
		{"read", `{"path":"` + filepath.Join(outside, "secret") + `"}`},
		{"read", `{"path":"/etc/passwd"}`},
		{"read", `{"path":"link/secret"}`},
		{"read", `{"path":"filelink"}`},
		{"read", `{"path":"sub/../../x"}`},
		{"read", `{"path":"~/x"}`},
		{"write", `{"path":"link/planted","content":"x"}`},
		{"write", `{"path":"../planted","content":"x"}`},
		{"edit", `{"path":"filelink","oldText":"s3cret","newText":"pwned"}`},
		{"ls", `{"path":"link"}`},
		{"ls", `{"path":".."}`},
	}
	for _, c := range cases {
		res := r.Call(ctx, c.tool, []byte(c.args))
		if !res.IsError || !errors.Is(res.Err, ErrPathEscape) {
			t.Errorf("%s %s: want ErrPathEscape, got %+v", c.tool, c.args, res)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "planted")); err == nil {
		t.Fatal("a file was planted outside the workspace")
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret")); string(b) != "s3cret" {
		t.Fatal("the outside file was modified")
	}
}

func TestExec(t *testing.T) {
	ws, dir := newTestWorkspace(t)
	r := builtinRegistry(t, ws, BuiltinOptions{Exec: true, ExecTimeout: 10 * time.Second, ExecOutputCap: 64})
	ctx := context.Background()
	res := r.Call(ctx, "exec", []byte(`{"command":"pwd; cat notes.txt"}`))
	if res.IsError || !strings.HasPrefix(res.Text, dir+"\n") {
		t.Fatalf("exec: %+v", res)
	}
	res = r.Call(ctx, "exec", []byte(`{"command":"echo bad >&2; exit 3"}`))
	if !res.IsError || !strings.Contains(res.Text, "bad") || !strings.Contains(res.Text, "code 3") {
		t.Fatalf("exit code: %+v", res)
	}
	start := time.Now()
	res = r.Call(ctx, "exec", []byte(`{"command":"sleep 30 & sleep 30; echo never","timeout":0.3}`))
	if !res.IsError || !strings.Contains(res.Text, "timed out") || time.Since(start) > 8*time.Second {
		t.Fatalf("timeout: %+v after %v", res, time.Since(start))
	}
	res = r.Call(ctx, "exec", []byte(`{"command":"seq 1 10000"}`))
	if res.IsError || !strings.Contains(res.Text, "Output truncated") || !strings.HasSuffix(strings.TrimSpace(res.Text), "10000") || len(res.Text) > 200 {
		t.Fatalf("cap: %q", res.Text)
	}
	cctx, cancel := context.WithCancel(ctx)
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	res = r.Call(cctx, "exec", []byte(`{"command":"sleep 30"}`))
	if !res.IsError || !strings.Contains(res.Text, "aborted") {
		t.Fatalf("abort: %+v", res)
	}
}

func TestCloneMessage(t *testing.T) {
	m := assistantCalls([3]string{"c1", "read", `{"path":"a"}`})
	m.Content[0].RawArgs = []byte(`{"path":"a"`)
	_, b := m.AddBlock(llm.BlockText)
	b.Text = []byte("hello")
	c := cloneMessage(nil, &m, nil)
	if string(c.AppendJSON(nil)) != string(m.AppendJSON(nil)) || string(c.Content[0].RawArgs) != `{"path":"a"` {
		t.Fatalf("clone differs")
	}
	m.Content[1].Text[0] = 'J'
	c.Content[0].ID = append(c.Content[0].ID, "xyz"...)
	if string(c.Content[1].Text) != "hello" || string(c.Content[0].Name) != "read" {
		t.Fatalf("clone shares memory or appends overlap: %q %q", c.Content[1].Text, c.Content[0].Name)
	}
	if a := testing.AllocsPerRun(100, func() { cloneMessage(nil, &m, nil) }); a > 3 && !raceEnabled {
		t.Fatalf("%v allocs", a)
	}
	// Messages of one arena share its chunks and slabs, never a byte.
	var a msgArena
	c1, c2 := cloneMessage(&a, &m, nil), cloneMessage(&a, &m, nil)
	r := toolResultMessage(&a, nil, []byte("c1"), "read", "result", false, time.Now())
	c1.Content[1].Text = append(c1.Content[1].Text, "!!!"...)
	r.Content[0].Text = append(r.Content[0].Text, "!!!"...)
	if string(c2.Content[1].Text) != string(m.Content[1].Text) || string(c2.Content[0].ID) != "c1" || r.ToolCallID != "c1" ||
		string(c1.AppendJSON(nil)) == string(c2.AppendJSON(nil)) || string(c2.AppendJSON(nil)) != string(m.AppendJSON(nil)) {
		t.Fatalf("arena clones share memory: %q %q %q", c2.Content[1].Text, c2.Content[0].ID, r.ToolCallID)
	}
	if n := testing.AllocsPerRun(100, func() { cloneMessage(&a, &m, nil) }); n > 1 && !raceEnabled {
		t.Fatalf("%v allocs per clone in an arena", n)
	}
	// Placed in a message of the caller's (a history's next element), a
	// clone takes only its blocks and bytes from the arena; the blocks
	// of two clones never overlap.
	var d1, d2 llm.Message
	d1.Content = make([]llm.Block, 4) // overwritten, not reused
	if c := cloneMessage(&a, &m, &d1); c != &d1 || cloneMessage(&a, &m, &d2) != &d2 {
		t.Fatal("not placed in dst")
	}
	d1.Content = append(d1.Content, llm.Block{Type: llm.BlockText, Text: []byte("more")})
	if string(d2.AppendJSON(nil)) != string(m.AppendJSON(nil)) || string(d1.AppendJSON(nil)) == string(m.AppendJSON(nil)) {
		t.Fatalf("placed clones share blocks: %s", d2.AppendJSON(nil))
	}
	var d llm.Message
	if n := testing.AllocsPerRun(100, func() { cloneMessage(&a, &m, &d) }); n > 0.5 && !raceEnabled {
		t.Fatalf("%v allocs per placed clone in an arena", n)
	}
}

// A file that fits the read limits whole is returned as it is; at each
// limit's edge the window and its trailer take over, as for any file.
func TestBuiltinReadWholeFileAtTheLimits(t *testing.T) {
	ws, dir := newTestWorkspace(t)
	r := builtinRegistry(t, ws, BuiltinOptions{ReadMaxLines: 3, ReadMaxBytes: 12})
	for _, c := range []struct{ content, args, want string }{
		{"", ``, ""},
		{"a\nb\nc\n", ``, "a\nb\nc\n"},
		{"a\nb\nc", `,"offset":1`, "a\nb\nc"},
		{"a\nb\nc\nd", ``, "a\nb\nc\n\n\n[Showing lines 1-3 of 4. Use offset=4 to continue.]"},
		{"a\nb\nc\n", `,"limit":2`, "a\nb\n\n\n[Showing lines 1-2 of 3. Use offset=3 to continue.]"},
		{"abcdefghijk\n", ``, "abcdefghijk\n"},
		{"abcdefghij\nk\n", ``, "abcdefghij\n\n\n[Showing lines 1-1 of 2. Use offset=2 to continue.]"},
		{"a\nb\nc\n", `,"offset":2`, "b\nc\n"},
	} {
		if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte(c.content), 0o644); err != nil {
			t.Fatal(err)
		}
		args := `{"path":"f.txt"` + c.args + `}`
		if res := r.Call(context.Background(), "read", []byte(args)); res.IsError || res.Text != c.want {
			t.Errorf("read %q %s: %q (error %v), want %q", c.content, args, res.Text, res.IsError, c.want)
		}
	}
}

// A registry finds its tools by name whether it compares them in order
// (a few) or looks them up by name (more), and interns the names it has.
func TestRegistryFindFewAndMany(t *testing.T) {
	for _, n := range []int{1, 8, 9, 20} {
		var tools []*Tool
		for i := range n {
			tools = append(tools, MustNewSchemaTool(fmt.Sprintf("tool%d", i), "t", nil,
				func(ctx context.Context, args []byte) (ToolOutput, error) { return ToolOutput{}, nil }))
		}
		reg, err := NewRegistry(tools...)
		if err != nil {
			t.Fatal(err)
		}
		for i, tl := range tools {
			name := []byte(fmt.Sprintf("tool%d", i))
			if got, ok := reg.Lookup(string(name)); !ok || got != tl {
				t.Fatalf("%d tools: Lookup(%s) = %v, %v", n, name, got, ok)
			}
			if s := reg.internName(name); s != tl.name || unsafe.StringData(s) != unsafe.StringData(tl.name) {
				t.Fatalf("%d tools: internName(%s) = %q, not the tool's own", n, name, s)
			}
		}
		if _, ok := reg.Lookup("tool"); ok {
			t.Fatalf("%d tools: found an unknown name", n)
		}
		if s := reg.internName([]byte("nope")); s != "nope" {
			t.Fatalf("%d tools: internName of an unknown name = %q", n, s)
		}
	}
}
