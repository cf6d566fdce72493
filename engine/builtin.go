package engine

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ocbench/ocbench/internal/redact"
)

// ErrPathEscape means a tool was asked for a path outside the workspace:
// an absolute path elsewhere, a ".." that climbs out, or a symlink that
// points out. Nothing was read or written.
var ErrPathEscape = errors.New("engine: path escapes the workspace")

// ErrExecDisabled is the error of an exec call in a run that did not
// enable exec. (exec is then not offered to the model at all; the error
// only shows when a model calls it anyway, through the unknown-tool path.)
var ErrExecDisabled = errors.New("engine: exec is not enabled")

// PathError reports a refused path. It wraps ErrPathEscape.
type PathError struct {
	Path string
	Why  string
}

func (e *PathError) Error() string {
	return fmt.Sprintf("path %q is outside the workspace (%s)", e.Path, e.Why)
}

// Unwrap makes errors.Is(err, ErrPathEscape) true.
func (e *PathError) Unwrap() error { return ErrPathEscape }

// Workspace is the directory the built-in tools are confined to. Every path
// is resolved inside it: absolute paths elsewhere, ".." past its root and
// symlinks that lead out are refused with a *PathError, and the file
// operations themselves go through an os.Root, so a symlink swapped in
// after the check cannot lead out either.
type Workspace struct {
	dir  string // absolute, symlinks resolved
	mu   sync.Mutex
	root *os.Root // opened by OpenWorkspace, or at first use by a run
}

// OpenWorkspace opens dir (which must exist) as a workspace.
func OpenWorkspace(dir string) (*Workspace, error) {
	w, err := resolveWorkspace(dir)
	if err != nil {
		return nil, err
	}
	if _, err := w.openRoot(); err != nil {
		return nil, fmt.Errorf("engine: workspace %q: %w", dir, err)
	}
	return w, nil
}

// resolveWorkspace resolves dir (which must be a directory) as a
// workspace whose root is opened at first use: a run whose prompt comes
// from the memo and that calls no built-in tool never opens it.
func resolveWorkspace(dir string) (*Workspace, error) {
	abs, err := absPath(dir)
	if err != nil {
		return nil, fmt.Errorf("engine: workspace %q: %w", dir, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("engine: workspace %q: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("engine: workspace %q: %w", dir, &os.PathError{Op: "open", Path: abs, Err: syscall.ENOTDIR})
	}
	if real, ok := resolvedWorkspaces.lookup(abs, st); ok {
		return &Workspace{dir: real}, nil
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("engine: workspace %q: %w", dir, err)
	}
	if rst, err := os.Stat(real); err != nil {
		return nil, fmt.Errorf("engine: workspace %q: %w", dir, err)
	} else if os.SameFile(rst, st) {
		resolvedWorkspaces.add(abs, real, st)
	}
	return &Workspace{dir: real}, nil
}

// absPath is filepath.Abs, without the Clean it does of a path already
// absolute and clean (a service passes the same workspace to every run).
func absPath(p string) (string, error) {
	if filepath.Separator == '/' && filepath.IsAbs(p) && (p == "/" || !strings.HasSuffix(p, "/") &&
		!strings.Contains(p, "//") && !strings.Contains(p, "/./") && !strings.Contains(p, "/../") &&
		!strings.HasSuffix(p, "/.") && !strings.HasSuffix(p, "/..")) {
		return p, nil
	}
	return filepath.Abs(p)
}

// resolvedWorkspaces memoises what a workspace path resolves to (every
// run of a service resolves the same few), so that a run pays one stat of
// the path (two when it holds a symlink) instead of an lstat per
// component: an entry holds while the path and the resolved path still
// name the directory they named when it was made (os.SameFile); a path
// whose symlinks now lead elsewhere is resolved again.
var resolvedWorkspaces = wsMemo{m: map[string]wsResolved{}}

type wsMemo struct {
	mu sync.Mutex
	m  map[string]wsResolved // absolute path -> resolution
}

type wsResolved struct {
	real string
	fi   os.FileInfo // of the directory both name
}

const maxResolvedWorkspaces = 256

// lookup returns the resolution of abs, whose stat is st, if it holds.
func (c *wsMemo) lookup(abs string, st os.FileInfo) (string, bool) {
	c.mu.Lock()
	e, ok := c.m[abs]
	c.mu.Unlock()
	if !ok || !os.SameFile(e.fi, st) {
		return "", false
	}
	if e.real != abs {
		if rst, err := os.Stat(e.real); err != nil || !os.SameFile(rst, st) {
			return "", false
		}
	}
	return e.real, true
}

func (c *wsMemo) add(abs, real string, st os.FileInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[abs]; ok || len(c.m) < maxResolvedWorkspaces {
		c.m[abs] = wsResolved{real: real, fi: st}
	}
}

// openRoot returns the workspace's root, opening it at the first call.
func (w *Workspace) openRoot() (*os.Root, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.root == nil {
		root, err := os.OpenRoot(w.dir)
		if err != nil {
			return nil, err
		}
		w.root = root
	}
	return w.root, nil
}

// Dir returns the workspace's absolute path with symlinks resolved.
func (w *Workspace) Dir() string { return w.dir }

// Close releases the workspace's directory handle.
func (w *Workspace) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.root == nil {
		return nil
	}
	err := w.root.Close()
	w.root = nil
	return err
}

// Resolve maps a path given by the model to a path relative to the
// workspace, or refuses it. Relative paths are taken from the workspace
// root; absolute paths are accepted only when they lie inside it. The
// deepest existing ancestor of the result is resolved with
// filepath.EvalSymlinks and must stay inside the workspace.
func (w *Workspace) Resolve(p string) (string, error) {
	if strings.IndexByte(p, 0) >= 0 {
		return "", &PathError{Path: p, Why: "contains a NUL byte"}
	}
	rel := p
	if strings.TrimSpace(p) == "" {
		rel = "."
	}
	if strings.HasPrefix(rel, "~") {
		return "", &PathError{Path: p, Why: "home-relative paths are not allowed"}
	}
	if filepath.IsAbs(rel) {
		clean := filepath.Clean(rel)
		r, err := filepath.Rel(w.dir, clean)
		if err != nil || !filepath.IsLocal(r) && r != "." {
			// The caller may name the workspace through a symlinked alias.
			if real, ok := evalDeepest(clean); ok {
				r, err = filepath.Rel(w.dir, real)
			}
			if err != nil || !filepath.IsLocal(r) && r != "." {
				return "", &PathError{Path: p, Why: "absolute path outside the workspace"}
			}
		}
		rel = r
	}
	rel = filepath.Clean(rel)
	if rel != "." && !filepath.IsLocal(rel) {
		return "", &PathError{Path: p, Why: "climbs out with .."}
	}
	real, ok := evalDeepest(filepath.Join(w.dir, rel))
	if !ok {
		return "", &PathError{Path: p, Why: "cannot be resolved"}
	}
	if r, err := filepath.Rel(w.dir, real); err != nil || (r != "." && !filepath.IsLocal(r)) {
		return "", &PathError{Path: p, Why: "a symlink leads out of the workspace"}
	}
	return rel, nil
}

// evalDeepest resolves the symlinks of the deepest existing ancestor of
// abs and re-appends the components that do not exist yet.
func evalDeepest(abs string) (string, bool) {
	cur := abs
	var rest []string
	for {
		if _, err := os.Lstat(cur); err == nil {
			real, err := filepath.EvalSymlinks(cur)
			if err != nil {
				// A dangling symlink: refuse rather than guess its target.
				return "", false
			}
			for i := len(rest) - 1; i >= 0; i-- {
				real = filepath.Join(real, rest[i])
			}
			return real, true
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return "", false
		}
		rest = append(rest, filepath.Base(cur))
		cur = parent
	}
}

// rootErr maps os.Root's refusals to *PathError so the model sees one
// consistent message, and keeps other errors as they are.
func rootErr(p string, err error) error {
	if err == nil {
		return nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "escapes") {
		return &PathError{Path: p, Why: "a symlink leads out of the workspace"}
	}
	return err
}

// BuiltinOptions configures the built-in tools.
type BuiltinOptions struct {
	// Exec offers the exec tool; it is off unless set.
	Exec bool
	// ExecTimeout bounds one command (default DefaultExecTimeout, OpenClaw's
	// tools.exec.timeoutSeconds; a call may ask for less).
	ExecTimeout time.Duration
	// ExecEnvAllow names environment variables a command gets although
	// they look secret. By default a command gets the process environment
	// without its secret variables (names with KEY, TOKEN, SECRET,
	// PASSWORD, CREDENTIAL, … : redact.IsSecretEnvName), so that a model
	// running env cannot read the provider's API keys.
	ExecEnvAllow []string
	// ExecOutputCap bounds the output kept from one command, in bytes
	// (default 50 KiB); the tail is kept, as pi's bash tool keeps it.
	ExecOutputCap int
	// ReadMaxBytes bounds the text one read returns (default 50 KiB), and
	// ReadMaxLines the lines (default 2000), pi's read-tool limits.
	ReadMaxBytes int
	ReadMaxLines int
	// MaxFileBytes bounds the size of a file read or edited (default 8 MiB).
	MaxFileBytes int64
}

func (o *BuiltinOptions) setDefaults() {
	if o.ExecTimeout <= 0 {
		o.ExecTimeout = DefaultExecTimeout
	}
	if o.ExecOutputCap <= 0 {
		o.ExecOutputCap = 50 << 10
	}
	if o.ReadMaxBytes <= 0 {
		o.ReadMaxBytes = 50 << 10
	}
	if o.ReadMaxLines <= 0 {
		o.ReadMaxLines = 2000
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = 8 << 20
	}
}

// Built-in tool schemas, compiled once per process.
const (
	readSchema = `{"type":"object","properties":{` +
		`"path":{"type":"string","minLength":1,"description":"Path of the file, relative to the workspace"},` +
		`"offset":{"type":"integer","minimum":1,"description":"Line number to start reading from (1-indexed)"},` +
		`"limit":{"type":"integer","minimum":1,"description":"Maximum number of lines to read"}},` +
		`"required":["path"],"additionalProperties":false}`
	writeSchema = `{"type":"object","properties":{` +
		`"path":{"type":"string","minLength":1,"description":"Path of the file to write, relative to the workspace"},` +
		`"content":{"type":"string","description":"Content to write"}},` +
		`"required":["path","content"],"additionalProperties":false}`
	editSchema = `{"type":"object","properties":{` +
		`"path":{"type":"string","minLength":1,"description":"Path of the file to edit"},` +
		`"oldText":{"type":"string","minLength":1,"description":"Exact text to replace; must occur exactly once"},` +
		`"newText":{"type":"string","description":"Replacement text"}},` +
		`"required":["path","oldText","newText"],"additionalProperties":false}`
	lsSchema = `{"type":"object","properties":{` +
		`"path":{"type":"string","description":"Directory to list (default: the workspace root)"},` +
		`"limit":{"type":"integer","minimum":1,"description":"Maximum number of entries (default 500)"}},` +
		`"additionalProperties":false}`
	execSchema = `{"type":"object","properties":{` +
		`"command":{"type":"string","minLength":1,"description":"Shell command to run in the workspace"},` +
		`"timeout":{"type":"number","exclusiveMinimum":0,"description":"Timeout in seconds"}},` +
		`"required":["command"],"additionalProperties":false}`
)

type builtinSpec struct {
	name, desc, params string
}

var builtinSpecs = [...]builtinSpec{
	{"read", "Read the contents of a file in the workspace. Output is truncated to 2000 lines or 50KB; use offset/limit for large files.", readSchema},
	{"write", "Write content to a file in the workspace, creating it and its parent directories if needed, overwriting it if it exists.", writeSchema},
	{"edit", "Edit a file by replacing exact text. oldText must match exactly once, including whitespace.", editSchema},
	{"ls", "List the entries of a directory in the workspace, sorted, with a trailing / on directories.", lsSchema},
	{"exec", "Run a shell command with the workspace as working directory. Returns the combined stdout and stderr (the tail when long) and the exit code.", execSchema},
}

var compiledBuiltins = sync.OnceValue(func() []*Tool {
	out := make([]*Tool, len(builtinSpecs))
	for i, s := range builtinSpecs {
		out[i] = MustNewSchemaTool(s.name, s.desc, []byte(s.params), func(context.Context, []byte) (ToolOutput, error) {
			return ToolOutput{}, errors.New("BUG: unbound built-in tool")
		})
	}
	return out
})

// Builtins returns the built-in tools bound to ws: read, write, edit, ls,
// and exec when opt.Exec is set. The schemas are compiled once per process;
// binding them is cheap.
func Builtins(ws *Workspace, opt BuiltinOptions) []*Tool {
	opt.setDefaults()
	return bindBuiltins(&builtins{ws: ws, opt: opt})
}

func bindBuiltins(b *builtins) []*Tool {
	handlers := [...]ToolHandler{b.bound((*builtins).read), b.bound((*builtins).write), b.bound((*builtins).edit),
		b.bound((*builtins).ls), b.bound((*builtins).exec)}
	tools := make([]*Tool, 0, len(handlers))
	for i, proto := range compiledBuiltins() {
		if proto.name == "exec" && !b.opt.Exec {
			continue
		}
		t := *proto
		t.handler = handlers[i]
		// write, edit and exec change the workspace: under
		// Params.ParallelTools they never overlap other calls.
		t.exclusive = proto.name != "read" && proto.name != "ls"
		tools = append(tools, &t)
	}
	return tools
}

type builtins struct {
	ws  *Workspace // nil: the run's (runBuiltins)
	opt BuiltinOptions
}

// bound returns h as the handler of b's tool: on b's workspace, or on the
// workspace of the run that calls it (a context value) when b has none.
func (b *builtins) bound(h func(*builtins, context.Context, []byte) (ToolOutput, error)) ToolHandler {
	return func(ctx context.Context, args []byte) (ToolOutput, error) {
		if b.ws != nil {
			return h(b, ctx, args)
		}
		ws, _ := ctx.Value(workspaceKey{}).(*Workspace)
		if ws == nil {
			return ToolOutput{}, errNoWorkspace
		}
		return h(&builtins{ws: ws, opt: b.opt}, ctx, args)
	}
}

// workspaceKey is the context key of the run's workspace in tool calls.
type workspaceKey struct{}

var errNoWorkspace = errors.New("engine: built-in tool called outside a run with a workspace")

// runBuiltins returns the built-in tools of runs with options opt, bound
// to no workspace: each call works in its run's. Runs with the same
// options share them (and so the registry and definitions built of them,
// see sharedToolSet); they are made again when the options change.
func runBuiltins(opt BuiltinOptions) []*Tool {
	opt.setDefaults()
	if s := lastRunBuiltins.Load(); s != nil && s.opt.ExecTimeout == opt.ExecTimeout && s.opt.Exec == opt.Exec &&
		s.opt.ExecOutputCap == opt.ExecOutputCap && s.opt.ReadMaxBytes == opt.ReadMaxBytes && s.opt.ReadMaxLines == opt.ReadMaxLines &&
		s.opt.MaxFileBytes == opt.MaxFileBytes && slices.Equal(s.opt.ExecEnvAllow, opt.ExecEnvAllow) {
		return s.tools
	}
	opt.ExecEnvAllow = slices.Clone(opt.ExecEnvAllow)
	s := &builtinSet{opt: opt, tools: bindBuiltins(&builtins{opt: opt})}
	lastRunBuiltins.Store(s)
	return s.tools
}

type builtinSet struct {
	opt   BuiltinOptions
	tools []*Tool
}

var lastRunBuiltins atomic.Pointer[builtinSet]

func decodeArgs(args []byte, v any) error {
	if err := json.Unmarshal(args, v); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidArguments, err)
	}
	return nil
}

func (b *builtins) readFile(p string) (string, []byte, error) {
	root, err := b.ws.openRoot()
	if err != nil {
		return "", nil, err
	}
	rel, err := b.ws.Resolve(p)
	if err != nil {
		return "", nil, err
	}
	// Non-blocking: opening a FIFO (or a device) for reading would wait
	// for a writer forever. Only regular files are read.
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return rel, nil, rootErr(p, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return rel, nil, err
	}
	if st.IsDir() {
		return rel, nil, fmt.Errorf("%s is a directory; use ls to list it", p)
	}
	if !st.Mode().IsRegular() {
		return rel, nil, fmt.Errorf("%w: %s is not a regular file (%s)", ErrNotRegular, p, fileKind(st.Mode()))
	}
	if st.Size() > b.opt.MaxFileBytes {
		return rel, nil, fmt.Errorf("%s is %d bytes, over the %d-byte limit of this tool", p, st.Size(), b.opt.MaxFileBytes)
	}
	data, err := readSized(io.LimitReader(f, b.opt.MaxFileBytes+1), st.Size())
	if err != nil {
		return rel, nil, err
	}
	if int64(len(data)) > b.opt.MaxFileBytes {
		return rel, nil, fmt.Errorf("%s is over the %d-byte limit of this tool", p, b.opt.MaxFileBytes)
	}
	return rel, data, nil
}

// readSized is io.ReadAll for a file whose stat said size bytes: its
// buffer starts with room for them and a little more (the file may have
// grown), rather than at 512 bytes, doubling.
func readSized(r io.Reader, size int64) ([]byte, error) {
	b := make([]byte, 0, size+512)
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

func (b *builtins) read(_ context.Context, args []byte) (ToolOutput, error) {
	var a struct {
		Path   string `json:"path"`
		Offset int    `json:"offset"`
		Limit  int    `json:"limit"`
	}
	if err := decodeArgs(args, &a); err != nil {
		return ToolOutput{}, err
	}
	_, data, err := b.readFile(a.Path)
	if err != nil {
		return ToolOutput{}, err
	}
	text := string(data)
	maxLines := b.opt.ReadMaxLines
	if a.Limit > 0 && a.Limit < maxLines {
		maxLines = a.Limit
	}
	if a.Offset <= 1 && len(text) <= b.opt.ReadMaxBytes {
		// The whole file fits (what the lines below would join again).
		n := strings.Count(text, "\n")
		if len(text) > 0 && text[len(text)-1] != '\n' {
			n++
		}
		if n <= maxLines {
			return ToolOutput{Text: text}, nil
		}
	}
	lines := strings.SplitAfter(text, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	total := len(lines)
	start := 0
	if a.Offset > 0 {
		start = a.Offset - 1
	}
	if start >= total && total > 0 {
		return ToolOutput{}, fmt.Errorf("offset %d is beyond the end of %s (%d lines)", a.Offset, a.Path, total)
	}
	var out strings.Builder
	end := start
	for end < total && end-start < maxLines {
		if out.Len()+len(lines[end]) > b.opt.ReadMaxBytes {
			break
		}
		out.WriteString(lines[end])
		end++
	}
	if end == start && start < total {
		// One line longer than the byte limit: show its head.
		out.WriteString(lines[start][:b.opt.ReadMaxBytes])
		fmt.Fprintf(&out, "\n\n[Line %d is longer than %d bytes and was cut.]", start+1, b.opt.ReadMaxBytes)
		return ToolOutput{Text: out.String()}, nil
	}
	if end < total {
		fmt.Fprintf(&out, "\n\n[Showing lines %d-%d of %d. Use offset=%d to continue.]", start+1, end, total, end+1)
	}
	return ToolOutput{Text: out.String()}, nil
}

func (b *builtins) write(_ context.Context, args []byte) (ToolOutput, error) {
	root, err := b.ws.openRoot()
	if err != nil {
		return ToolOutput{}, err
	}
	var a struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	if err := decodeArgs(args, &a); err != nil {
		return ToolOutput{}, err
	}
	rel, err := b.ws.Resolve(a.Path)
	if err != nil {
		return ToolOutput{}, err
	}
	if rel == "." {
		return ToolOutput{}, fmt.Errorf("%s is the workspace directory, not a file", a.Path)
	}
	if dir := filepath.Dir(rel); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return ToolOutput{}, rootErr(a.Path, err)
		}
	}
	if err := b.replaceFile(a.Path, rel, []byte(a.Content)); err != nil {
		return ToolOutput{}, err
	}
	return ToolOutput{Text: fmt.Sprintf("Successfully wrote %d bytes to %s", len(a.Content), a.Path)}, nil
}

func (b *builtins) edit(_ context.Context, args []byte) (ToolOutput, error) {
	var a struct {
		Path    string `json:"path"`
		OldText string `json:"oldText"`
		NewText string `json:"newText"`
	}
	if err := decodeArgs(args, &a); err != nil {
		return ToolOutput{}, err
	}
	rel, data, err := b.readFile(a.Path)
	if err != nil {
		return ToolOutput{}, err
	}
	switch n := bytes.Count(data, []byte(a.OldText)); n {
	case 0:
		return ToolOutput{}, fmt.Errorf("could not find the exact text in %s; oldText must match exactly, including whitespace and newlines", a.Path)
	case 1:
	default:
		return ToolOutput{}, fmt.Errorf("found %d occurrences of the text in %s; oldText must be unique, add more context", n, a.Path)
	}
	out := bytes.Replace(data, []byte(a.OldText), []byte(a.NewText), 1)
	if err := b.replaceFile(a.Path, rel, out); err != nil {
		return ToolOutput{}, err
	}
	return ToolOutput{Text: "Successfully replaced text in " + a.Path + "."}, nil
}

func (b *builtins) ls(_ context.Context, args []byte) (ToolOutput, error) {
	root, err := b.ws.openRoot()
	if err != nil {
		return ToolOutput{}, err
	}
	var a struct {
		Path  string `json:"path"`
		Limit int    `json:"limit"`
	}
	if err := decodeArgs(args, &a); err != nil {
		return ToolOutput{}, err
	}
	rel, err := b.ws.Resolve(a.Path)
	if err != nil {
		return ToolOutput{}, err
	}
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0) // a FIFO must not block
	if err != nil {
		return ToolOutput{}, rootErr(a.Path, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && !st.IsDir() {
		return ToolOutput{}, fmt.Errorf("%s is not a directory (%s)", a.Path, fileKind(st.Mode()))
	}
	entries, err := f.ReadDir(-1)
	if err != nil {
		return ToolOutput{}, fmt.Errorf("cannot list %s: %w", a.Path, err)
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
		if e.IsDir() {
			names[i] += "/"
		}
	}
	sort.Slice(names, func(i, j int) bool { return strings.ToLower(names[i]) < strings.ToLower(names[j]) })
	limit := 500
	if a.Limit > 0 {
		limit = a.Limit
	}
	if len(names) == 0 {
		return ToolOutput{Text: "(empty directory)"}, nil
	}
	var out strings.Builder
	for i, n := range names {
		if i == limit {
			fmt.Fprintf(&out, "\n[%d entries limit reached; %d more not shown]", limit, len(names)-limit)
			break
		}
		if i > 0 {
			out.WriteByte('\n')
		}
		out.WriteString(n)
	}
	return ToolOutput{Text: out.String()}, nil
}

// DefaultExecTimeout is OpenClaw 2026.9.6's tools.exec.timeoutSeconds
// default (1800 s).
const DefaultExecTimeout = 1800 * time.Second

// ErrNotRegular is the error of a read or edit of something that is not a
// regular file (a FIFO, a socket, a device).
var ErrNotRegular = errors.New("engine: not a regular file")

func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	}
	return "a special file"
}

// replaceFile writes data to the workspace file rel (named p by the
// model) by writing a temporary file in the same directory and renaming it
// over rel. The rename gives the path a new inode, so a hard link planted
// in the workspace to a file outside it (or anywhere) is never written
// through: the outside file keeps its content, and only the workspace path
// changes. It also means a reader never sees half a file. An existing
// file's permissions are kept; a symlink leaf (inside the workspace, as
// Resolve guarantees) is followed, so the link stays a link.
func (b *builtins) replaceFile(p, rel string, data []byte) error {
	root, err := b.ws.openRoot()
	if err != nil {
		return err
	}
	perm, existed := fs.FileMode(0o644), false
	if st, err := root.Lstat(rel); err == nil {
		if st.Mode()&fs.ModeSymlink != 0 {
			real, err := filepath.EvalSymlinks(filepath.Join(b.ws.dir, rel))
			if err != nil {
				return rootErr(p, err)
			}
			r, err := filepath.Rel(b.ws.dir, real)
			if err != nil || !filepath.IsLocal(r) {
				return &PathError{Path: p, Why: "a symlink leads out of the workspace"}
			}
			rel = r
			if st, err = root.Lstat(rel); err != nil {
				return rootErr(p, err)
			}
		}
		if st.IsDir() {
			return fmt.Errorf("%s is a directory, not a file", p)
		}
		if st.Mode().IsRegular() {
			perm, existed = st.Mode().Perm(), true
		}
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(filepath.Dir(rel), "."+filepath.Base(rel)+".ocbench-"+hex.EncodeToString(rnd[:])+".tmp")
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return rootErr(p, err)
	}
	_, err = f.Write(data)
	if err == nil && existed {
		err = f.Chmod(perm) // the umask applied at creation
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, rel)
	}
	if err != nil {
		_ = root.Remove(tmp)
		return rootErr(p, err)
	}
	return nil
}

// tailBuffer keeps the last max bytes written to it and counts the rest.
type tailBuffer struct {
	max     int
	buf     []byte
	dropped int64
	mu      sync.Mutex
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - 2*t.max; over > 0 {
		over += t.max
		t.dropped += int64(over)
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) result() (string, int64) {
	if over := len(t.buf) - t.max; over > 0 {
		t.dropped += int64(over)
		t.buf = t.buf[over:]
	}
	return string(t.buf), t.dropped
}

// scrubbedEnv is environ without its secret variables, except those
// named in allow.
func scrubbedEnv(environ, allow []string) []string {
	out := environ[:0:0]
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if redact.IsSecretEnvName(name) && !slices.Contains(allow, name) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func (b *builtins) exec(ctx context.Context, args []byte) (ToolOutput, error) {
	if !b.opt.Exec {
		return ToolOutput{}, ErrExecDisabled
	}
	var a struct {
		Command string  `json:"command"`
		Timeout float64 `json:"timeout"`
	}
	if err := decodeArgs(args, &a); err != nil {
		return ToolOutput{}, err
	}
	timeout := b.opt.ExecTimeout
	if a.Timeout > 0 {
		if d := time.Duration(a.Timeout * float64(time.Second)); d < timeout {
			timeout = d
		}
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, "/bin/sh", "-c", a.Command)
	cmd.Dir = b.ws.dir
	cmd.Env = scrubbedEnv(os.Environ(), b.opt.ExecEnvAllow)
	cmd.Stdin = nil
	out := &tailBuffer{max: b.opt.ExecOutputCap}
	cmd.Stdout = out
	cmd.Stderr = out
	killGroupOnCancel(cmd)
	cmd.WaitDelay = 2 * time.Second
	runErr := cmd.Run()
	text, dropped := out.result()
	var sb strings.Builder
	if dropped > 0 {
		fmt.Fprintf(&sb, "[Output truncated: the first %d bytes were dropped, showing the last %d.]\n", dropped, len(text))
	}
	sb.WriteString(text)
	if text == "" {
		sb.WriteString("(no output)")
	}
	switch {
	case runErr == nil:
		return ToolOutput{Text: sb.String()}, nil
	case ctx.Err() != nil:
		sb.WriteString("\n\nCommand aborted.")
		return ToolOutput{Text: sb.String(), IsError: true}, nil
	case cctx.Err() != nil:
		fmt.Fprintf(&sb, "\n\nCommand timed out after %s.", timeout)
		return ToolOutput{Text: sb.String(), IsError: true}, nil
	}
	var ee *exec.ExitError
	if errors.As(runErr, &ee) {
		sb.WriteString("\n\nCommand exited with code " + strconv.Itoa(ee.ExitCode()))
		return ToolOutput{Text: sb.String(), IsError: true}, nil
	}
	return ToolOutput{}, fmt.Errorf("exec: %w", runErr)
}
