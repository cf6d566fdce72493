package prompt

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/cespare/xxhash/v2"
	"go.yaml.in/yaml/v3"
)

// DefaultMaxFileBytes is the largest bootstrap file the workspace guard
// reads (2 MiB, as OpenClaw's boundary guard); larger files are injected as
// missing.
const DefaultMaxFileBytes = 2 << 20

// maxSkillFileBytes bounds how much of a SKILL.md is read for its front
// matter.
const maxSkillFileBytes = 256 << 10

var (
	// ErrWorkspace is returned when the workspace directory does not exist
	// or is not a directory.
	ErrWorkspace = errors.New("prompt: workspace is not a readable directory")
	// ErrOutsideWorkspace marks a file whose path (or symlink target) leaves
	// the workspace; it is never read.
	ErrOutsideWorkspace = errors.New("prompt: path leaves the workspace")
	// ErrFileTooLarge marks a bootstrap file over the size limit; it is not
	// read.
	ErrFileTooLarge = errors.New("prompt: bootstrap file too large")
	// ErrNotRegular marks a bootstrap path that is not a regular file.
	ErrNotRegular = errors.New("prompt: bootstrap path is not a regular file")
)

// FileError is the error of one workspace file; it wraps the cause
// (ErrOutsideWorkspace, ErrFileTooLarge, ErrNotRegular, or an I/O error).
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string { return "prompt: " + e.Path + ": " + e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

// HookContext is what a bootstrap hook learns about the run.
type HookContext struct {
	Workspace  string
	SessionKey string
	AgentID    string
	Trigger    string
}

// BootstrapHook can add, remove or replace bootstrap files before they are
// budgeted and rendered (OpenClaw's agent:bootstrap internal hook). Files it
// adds need a Path (relative paths resolve against the workspace) and either
// Content or Missing; files without a path are dropped with a warning.
type BootstrapHook func(ctx HookContext, files []BootstrapFile) []BootstrapFile

// Config is what the resolver turns into Params: the run's identity and
// trigger, bootstrap and skills settings, and the explicit prompt inputs
// that do not come from the workspace (Base).
type Config struct {
	// Base holds the inputs passed through unchanged (tools, time zone,
	// runtime, provider contribution, owners, …). The resolver sets
	// WorkspaceDir, Mode (unless ModeSet), ContextFiles, SkillsPrompt,
	// BootstrapMode, BootstrapTruncationNotice and ApprovalUI.
	Base Params
	// ModeSet uses Base.Mode instead of the mode derived from SessionKey.
	ModeSet bool

	SessionKey string
	AgentID    string
	// DefaultAgent is true for the default agent (heartbeat guidance).
	DefaultAgent bool
	// Trigger is "user" (default), "heartbeat", "cron", "memory", …
	Trigger string
	// HeartbeatDisabled removes HEARTBEAT.md for the default agent on
	// non-heartbeat runs, and turns the heartbeat prompt off.
	HeartbeatDisabled bool
	// HeartbeatPrompt overrides DefaultHeartbeatPrompt (heartbeat.prompt).
	// The prompt's Heartbeats section appears only on heartbeat runs of the
	// default agent.
	HeartbeatPrompt string
	// ContextMode "lightweight" keeps only HEARTBEAT.md on heartbeat runs,
	// nothing otherwise.
	ContextMode string
	// ContextInjection: "always" (default), "continuation-skip", "never".
	ContextInjection string
	// ContinuationSkip tells, for continuation-skip, that the session
	// already received a full injection (and no compaction since).
	ContinuationSkip bool
	// SetupCompleted: BOOTSTRAP.md is not pending even if present.
	SetupCompleted bool

	Budget         Budget
	Warning        WarningMode
	SeenSignatures []string
	// MaxFileBytes bounds one bootstrap file (DefaultMaxFileBytes if 0).
	MaxFileBytes int64
	// ExtraFiles are glob patterns, relative to the workspace, of extra
	// bootstrap files (bootstrap-extra-files); only files whose basename is
	// a bootstrap file name are taken.
	ExtraFiles []string
	// Hook runs after the session filters (agent:bootstrap).
	Hook BootstrapHook

	// SkillDirs are further skill roots, lowest precedence first (bundled,
	// managed ~/.openclaw/skills, …); <workspace>/skills wins over them.
	SkillDirs []string
	// SkillFilter, if non-nil, is the agent's allow-list of skill names.
	SkillFilter []string
	// DisabledSkills are skills switched off in configuration
	// (skills.entries.<name>.enabled=false).
	DisabledSkills []string
	SkillLimits    SkillLimits
	// HomeDir shortens skill paths under it to "~/…" (default: the user's
	// home directory, os.UserHomeDir, as OpenClaw uses os.homedir()).
	HomeDir string
	// ToolsAllow, if non-empty, forces minimal mode and drops skills.
	ToolsAllow []string
}

// Resolved is the resolver's result: the renderer's inputs and the
// accounting behind them.
type Resolved struct {
	Params    Params
	Workspace string // absolute, symlinks resolved
	// Files are the injected bootstrap files with their sizes.
	Files []InjectedFile
	// Raw are the bootstrap files before budgeting.
	Raw      []RawFileStat
	Warning  BudgetWarning
	Skills   SkillsResult
	Warnings []string
}

// Resolver reads workspaces. It caches bootstrap file contents and parsed
// skills keyed by path, size, modification time, device and inode (as
// OpenClaw's workspace cache does), so an unchanged file costs one stat per
// resolve and is read and parsed once; PromptIn also keeps the rendered
// prompt of an unchanged configuration and workspace. It is safe for
// concurrent use; the zero value is ready. Share one across runs.
type Resolver struct {
	mu     sync.Mutex
	files  map[string]cachedFile
	skills map[string]cachedSkill
	dirs   map[string]cachedDir
	memo   map[string]*promptMemo // PromptIn's rendered prompts
}

// cachedDir is a directory's listing, valid while the directory's
// (device, inode, size, mtime) stay the same: adding, removing or renaming
// an entry changes its mtime.
type cachedDir struct {
	size    int64
	mtime   time.Time
	id      [2]uint64
	entries []dirEntry
}

type dirEntry struct {
	name string
	dir  bool
}

// listDir returns the entries of the directory whose stat is st, read by
// list when the cached listing under key is stale.
func (r *Resolver) listDir(key string, st fs.FileInfo, list func() ([]dirEntry, error)) ([]dirEntry, error) {
	id := fileID(st)
	r.mu.Lock()
	if c, ok := r.dirs[key]; ok && c.size == st.Size() && c.mtime.Equal(st.ModTime()) && c.id == id {
		r.mu.Unlock()
		return c.entries, nil
	}
	r.mu.Unlock()
	entries, err := list()
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	if r.dirs == nil {
		r.dirs = make(map[string]cachedDir)
	}
	if len(r.dirs) > 4096 {
		clear(r.dirs)
	}
	r.dirs[key] = cachedDir{size: st.Size(), mtime: st.ModTime(), id: id, entries: entries}
	r.mu.Unlock()
	return entries, nil
}

type cachedSkill struct {
	size  int64
	mtime time.Time
	id    [2]uint64 // device, inode
	skill Skill
	err   error
}

type cachedFile struct {
	size    int64
	mtime   time.Time
	id      [2]uint64 // device, inode
	content string
	hash    uint64
	invalid bool
}

// commitReminder is the workspace note added when BOOTSTRAP.md exists.
const commitReminder = "Reminder: commit your changes in this workspace after edits."

// Resolve resolves with a fresh Resolver.
func Resolve(cfg *Config, workspace string) (*Resolved, error) {
	var r Resolver
	return r.Resolve(cfg, workspace)
}

// Resolve turns cfg and the workspace directory into Params. It returns an
// error wrapping ErrWorkspace when the workspace cannot be used; problems
// with single files become missing markers and warnings, as in OpenClaw.
func (r *Resolver) Resolve(cfg *Config, workspace string) (*Resolved, error) {
	abs, err := filepath.Abs(workspace)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrWorkspace, workspace, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrWorkspace, workspace, err)
	}
	wst, err := os.Stat(real)
	if err != nil || !wst.IsDir() {
		return nil, fmt.Errorf("%w: %s: not a directory", ErrWorkspace, workspace)
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrWorkspace, workspace, err)
	}
	defer root.Close()
	return r.resolveIn(cfg, abs, root, wst, nil)
}

// ResolveIn is Resolve for a workspace the caller already opened: root
// was opened on the workspace's absolute path with symlinks resolved
// (root.Name()), which is then the workspace directory the prompt names.
// It saves resolving and opening the directory again on every run.
func (r *Resolver) ResolveIn(cfg *Config, root *os.Root) (*Resolved, error) {
	wst, err := root.Stat(".")
	if err != nil || !wst.IsDir() {
		return nil, fmt.Errorf("%w: %s: not a directory", ErrWorkspace, root.Name())
	}
	return r.resolveIn(cfg, root.Name(), root, wst, nil)
}

// resolveIn resolves cfg in the workspace root (abs: its path, wst: its
// stat). rec, when not nil, records every file and directory the result
// depends on (see PromptIn).
func (r *Resolver) resolveIn(cfg *Config, abs string, root *os.Root, wst fs.FileInfo, rec *depRecorder) (*Resolved, error) {

	res := &Resolved{Workspace: abs}
	p := cfg.Base
	p.WorkspaceDir = abs
	if !cfg.ModeSet {
		p.Mode = ModeForSession(cfg.SessionKey)
	}
	if len(cfg.ToolsAllow) > 0 && p.Mode == ModeFull {
		p.Mode = ModeMinimal
	}
	p.ApprovalUI = ApprovalUIFor(p.Runtime.Channel, p.Runtime.Capabilities)
	p.UserTimezone = ResolveTimezone(p.UserTimezone)
	trigger := cfg.Trigger
	if trigger == "" {
		trigger = "user"
	}
	p.HeartbeatPrompt = ""
	if trigger == "heartbeat" && cfg.DefaultAgent && !cfg.HeartbeatDisabled {
		p.HeartbeatPrompt = cfg.HeartbeatPrompt
		if strings.TrimSpace(p.HeartbeatPrompt) == "" {
			p.HeartbeatPrompt = DefaultHeartbeatPrompt
		}
	}
	maxBytes := cfg.MaxFileBytes
	if maxBytes <= 0 {
		maxBytes = DefaultMaxFileBytes
	}

	// The file set, in load order. MEMORY.md only with that exact name.
	names := slices.Clone(BootstrapFileNames)
	if !r.exactNameExists(root, wst, "MEMORY.md") {
		names = slices.DeleteFunc(names, func(n string) bool { return n == "MEMORY.md" })
	}
	var files []BootstrapFile
	for _, n := range names {
		files = append(files, r.load(root, abs, n, maxBytes, &res.Warnings, rec))
	}
	for _, pat := range cfg.ExtraFiles {
		matches, err := fs.Glob(root.FS(), path.Clean(filepath.ToSlash(pat)))
		if err != nil {
			res.Warnings = append(res.Warnings, fmt.Sprintf("invalid bootstrap extra-files pattern %q: %v", pat, err))
			continue
		}
		for _, m := range matches {
			if !slices.Contains(BootstrapFileNames, path.Base(m)) {
				continue
			}
			files = append(files, r.load(root, abs, m, maxBytes, &res.Warnings, nil))
		}
	}

	// Filters, in OpenClaw's order.
	if ModeForSession(cfg.SessionKey) == ModeMinimal {
		files = slices.DeleteFunc(files, func(f BootstrapFile) bool { return !slices.Contains(MinimalBootstrapFileNames, f.Name) })
	}
	if cfg.ContextMode == "lightweight" {
		files = slices.DeleteFunc(files, func(f BootstrapFile) bool { return trigger != "heartbeat" || f.Name != "HEARTBEAT.md" })
	}
	if cfg.Hook != nil {
		files = cfg.Hook(HookContext{Workspace: abs, SessionKey: cfg.SessionKey, AgentID: cfg.AgentID, Trigger: trigger}, files)
	}
	if cfg.DefaultAgent && cfg.HeartbeatDisabled && trigger != "heartbeat" {
		files = slices.DeleteFunc(files, func(f BootstrapFile) bool { return f.Name == "HEARTBEAT.md" })
	}
	files = r.sanitize(root, abs, files, maxBytes, &res.Warnings)

	// Bootstrap mode.
	pending := false
	for _, f := range files {
		if f.Name == "BOOTSTRAP.md" && !f.Missing && f.Error == nil {
			pending = !cfg.SetupCompleted
			if !slices.Contains(p.WorkspaceNotes, commitReminder) {
				p.WorkspaceNotes = append(slices.Clip(p.WorkspaceNotes), commitReminder)
			}
		}
	}
	p.BootstrapMode = BootstrapNone
	if pending && trigger == "user" && p.Mode == ModeFull {
		p.BootstrapMode = BootstrapFull
		if !hasTool(p.ToolNames, "read") {
			p.BootstrapMode = BootstrapLimited
		}
	}
	if p.BootstrapMode != BootstrapFull {
		files = slices.DeleteFunc(files, func(f BootstrapFile) bool { return f.Name == "BOOTSTRAP.md" })
	}
	switch cfg.ContextInjection {
	case "never":
		files = nil
	case "continuation-skip":
		if cfg.ContinuationSkip && trigger != "heartbeat" && p.BootstrapMode != BootstrapFull {
			files = nil
		}
	}

	injected, warns := BuildContextFiles(files, cfg.Budget)
	res.Warnings = append(res.Warnings, warns...)
	res.Files = injected
	b := cfg.Budget.norm()
	var inj []InjectedStat
	p.ContextFiles = p.ContextFiles[:0:0]
	for _, f := range injected {
		inj = append(inj, InjectedStat{Path: f.Path, Chars: f.InjectedChars})
		c := SanitizeContent(f.Content)
		p.ContextFiles = append(p.ContextFiles, ContextFile{Path: f.Path, Content: c, Hash: xxhash.Sum64String(c), Clean: true})
	}
	for _, f := range files {
		rs := RawFileStat{Name: f.Name, Path: f.Path, Missing: f.Missing || f.Error != nil}
		if !rs.Missing {
			rs.RawChars = len16(trimEndJS(f.Content))
		}
		res.Raw = append(res.Raw, rs)
	}
	res.Warning = AnalyzeBudget(b.MaxChars, b.TotalMaxChars, res.Raw, inj, cfg.Warning, cfg.SeenSignatures)
	p.BootstrapTruncationNotice = res.Warning.SystemNotice

	// Skills.
	if len(cfg.ToolsAllow) == 0 {
		skills := r.discoverSkills(root, abs, cfg, &res.Warnings, rec)
		home := cfg.HomeDir
		if home == "" {
			home, _ = os.UserHomeDir()
		}
		res.Skills = BuildSkillsPrompt(skills, cfg.SkillLimits, home, "")
		p.SkillsPrompt = res.Skills.Prompt
		p.SkillsHash = xxhash.Sum64String(p.SkillsPrompt)
		if res.Skills.Warning != "" {
			res.Warnings = append(res.Warnings, res.Skills.Warning)
		}
	} else {
		p.SkillsPrompt, p.SkillsHash = "", 0
	}
	res.Params = p
	return res, nil
}

// ResolveTimezone is the time zone of the "Current Date & Time" section:
// the configured zone if it is a valid IANA name, else the host's zone (from
// TZ), else "UTC".
func ResolveTimezone(configured string) string {
	valid := func(tz string) bool {
		if tz == "" || tz == "Local" {
			return false
		}
		_, err := time.LoadLocation(tz)
		return err == nil
	}
	if tz := strings.TrimSpace(configured); valid(tz) {
		return tz
	}
	if tz := strings.TrimPrefix(os.Getenv("TZ"), ":"); valid(tz) {
		return tz
	}
	return "UTC"
}

// exactNameExists reports whether the workspace has an entry named exactly
// name (case-sensitive, even on case-insensitive file systems). st is the
// workspace directory's stat: the listing is read again only when it
// changed.
func (r *Resolver) exactNameExists(root *os.Root, st fs.FileInfo, name string) bool {
	entries, err := r.listDir(root.Name()+"\x00.", st, func() ([]dirEntry, error) {
		d, err := root.Open(".")
		if err != nil {
			return nil, err
		}
		defer d.Close()
		names, err := d.Readdirnames(-1)
		if err != nil {
			return nil, err
		}
		out := make([]dirEntry, len(names))
		for i, n := range names {
			out[i] = dirEntry{name: n}
		}
		return out, nil
	})
	if err != nil {
		return false
	}
	return slices.ContainsFunc(entries, func(e dirEntry) bool { return e.name == name })
}

// load reads one workspace-relative file through the guard.
func (r *Resolver) load(root *os.Root, abs, rel string, maxBytes int64, warnings *[]string, rec *depRecorder) BootstrapFile {
	rel = filepath.ToSlash(filepath.Clean(rel))
	f := BootstrapFile{Name: path.Base(rel), Path: filepath.Join(abs, filepath.FromSlash(rel))}
	rec.stat(f.Path)
	content, invalid, err := r.read(root, rel, maxBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f.Missing = true
	case err != nil:
		// Why the guard refused it (an escape, a size limit, a FIFO) is
		// not all in a stat: such a resolution is not memoized.
		rec.fail()
		f.Missing = true
		f.Error = &FileError{Path: f.Path, Err: err}
		*warnings = append(*warnings, fmt.Sprintf("bootstrap file %s cannot be read; injected as missing: %v", rel, err))
	default:
		f.Content = content
		if invalid {
			*warnings = append(*warnings, fmt.Sprintf("bootstrap file %s is not valid UTF-8; invalid bytes replaced with U+FFFD", rel))
		}
	}
	return f
}

// read reads rel under root: never outside it (os.Root refuses paths and
// symlinks that escape), only regular files, at most maxBytes.
func (r *Resolver) read(root *os.Root, rel string, maxBytes int64) (string, bool, error) {
	if !filepath.IsLocal(filepath.FromSlash(rel)) {
		return "", false, ErrOutsideWorkspace
	}
	// The cache key (root NUL rel) and the file's path are built in stack
	// buffers: a warm read allocates neither (quickStat only passes the
	// path to stat(2), which copies it; nothing keeps the string).
	var kb, pb [256]byte
	kbuf := append(append(append(kb[:0], root.Name()...), 0), rel...)
	pbuf := append(append(append(pb[:0], root.Name()...), filepath.Separator), filepath.FromSlash(rel)...)
	if sig, ok := quickStat(unsafe.String(unsafe.SliceData(pbuf), len(pbuf))); ok && sig.regular && sig.size <= maxBytes {
		r.mu.Lock()
		c, hit := r.files[string(kbuf)]
		r.mu.Unlock()
		if hit && c.size == sig.size && c.mtime.Equal(sig.mtime) && c.id == sig.id {
			return c.content, c.invalid, nil
		}
	}
	st, err := root.Stat(rel)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", false, fs.ErrNotExist
		}
		return "", false, classifyRootErr(err)
	}
	if !st.Mode().IsRegular() {
		return "", false, ErrNotRegular
	}
	if st.Size() > maxBytes {
		return "", false, fmt.Errorf("%w: %d bytes (limit %d)", ErrFileTooLarge, st.Size(), maxBytes)
	}
	id := fileID(st)
	key := string(kbuf)
	r.mu.Lock()
	if c, ok := r.files[key]; ok && c.size == st.Size() && c.mtime.Equal(st.ModTime()) && c.id == id {
		r.mu.Unlock()
		return c.content, c.invalid, nil
	}
	r.mu.Unlock()
	// Non-blocking, and checked again on the open file: a FIFO swapped in
	// after the Stat must not hang the run's setup.
	fh, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", false, classifyRootErr(err)
	}
	defer fh.Close()
	if fst, err := fh.Stat(); err != nil || !fst.Mode().IsRegular() {
		return "", false, ErrNotRegular
	}
	b, err := io.ReadAll(io.LimitReader(fh, maxBytes+1))
	if err != nil {
		return "", false, err
	}
	if int64(len(b)) > maxBytes {
		return "", false, fmt.Errorf("%w: grew past %d bytes while read", ErrFileTooLarge, maxBytes)
	}
	content, invalid := decodeUTF8(b)
	r.mu.Lock()
	if r.files == nil {
		r.files = make(map[string]cachedFile)
	}
	if len(r.files) > 4096 {
		clear(r.files) // bounded: reset on overflow
	}
	r.files[key] = cachedFile{size: st.Size(), mtime: st.ModTime(), id: id, content: content, invalid: invalid}
	r.mu.Unlock()
	return content, invalid, nil
}

func classifyRootErr(err error) error {
	// os.Root reports escapes as "path escapes from parent".
	if strings.Contains(err.Error(), "escapes") {
		return fmt.Errorf("%w: %v", ErrOutsideWorkspace, err)
	}
	return err
}

// decodeUTF8 decodes bytes as a UTF-8 text decoder with replacement does:
// every invalid byte becomes U+FFFD.
func decodeUTF8(b []byte) (string, bool) {
	if utf8.Valid(b) {
		return string(b), false
	}
	var sb strings.Builder
	sb.Grow(len(b) + 16)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			sb.WriteRune(utf8.RuneError)
		} else {
			sb.Write(b[:size])
		}
		b = b[size:]
	}
	return sb.String(), true
}

// sanitize drops files without a path, resolves paths against the
// workspace (reading hook-supplied files that have no content yet), and
// drops duplicates of the same relative path.
func (r *Resolver) sanitize(root *os.Root, abs string, files []BootstrapFile, maxBytes int64, warnings *[]string) []BootstrapFile {
	var out []BootstrapFile
	seen := map[string]bool{}
	for _, f := range files {
		if strings.TrimSpace(f.Path) == "" {
			*warnings = append(*warnings, fmt.Sprintf("skipping bootstrap file %q — missing or invalid \"path\" field (hook may have used \"filePath\" instead)", f.Name))
			continue
		}
		p := f.Path
		if !filepath.IsAbs(p) {
			p = filepath.Join(abs, p)
		}
		p = filepath.Clean(p)
		rel, err := filepath.Rel(abs, p)
		if err != nil || !filepath.IsLocal(rel) {
			*warnings = append(*warnings, fmt.Sprintf("bootstrap file %s is outside the workspace; injected as missing", f.Path))
			f = BootstrapFile{Name: f.Name, Path: p, Missing: true, Error: &FileError{Path: p, Err: ErrOutsideWorkspace}}
			rel = p
		} else {
			f.Path = p
		}
		if seen[rel] {
			continue
		}
		seen[rel] = true
		if f.Name == "" {
			f.Name = filepath.Base(p)
		}
		out = append(out, f)
	}
	return out
}

// discoverSkills finds <dir>/<name>/SKILL.md under the configured skill
// roots and <workspace>/skills (highest precedence), parses their front
// matter, and applies the agent's filter.
func (r *Resolver) discoverSkills(root *os.Root, abs string, cfg *Config, warnings *[]string, rec *depRecorder) []Skill {
	byName := map[string]Skill{}
	var order []string
	add := func(s Skill) {
		if _, ok := byName[s.Name]; !ok {
			order = append(order, s.Name)
		}
		byName[s.Name] = s
	}
	for _, dir := range cfg.SkillDirs {
		fsys := os.DirFS(dir)
		for _, s := range r.scanSkills(fsys, dir, "source:"+dir, warnings, rec) {
			add(s)
		}
	}
	rec.stat(filepath.Join(abs, "skills"))
	if st, err := root.Stat("skills"); err == nil && st.IsDir() {
		for _, s := range r.scanSkills(root.FS(), abs, "workspace", warnings, rec) {
			add(s)
		}
	}
	var out []Skill
	for _, n := range order {
		s := byName[n]
		if cfg.SkillFilter != nil && !slices.Contains(cfg.SkillFilter, s.Name) {
			continue
		}
		if slices.Contains(cfg.DisabledSkills, s.Name) {
			continue
		}
		out = append(out, s)
	}
	return out
}

func (r *Resolver) scanSkills(fsys fs.FS, base, source string, warnings *[]string, rec *depRecorder) []Skill {
	prefix := "skills"
	if source != "workspace" {
		prefix = "."
	}
	if source != "workspace" { // discoverSkills recorded <workspace>/skills
		// The listing is cached by the directory's stat: recording that
		// stat covers every entry added, removed or renamed.
		rec.stat(filepath.Join(base, prefix))
	}
	dst, err := fs.Stat(fsys, prefix)
	if err != nil || !dst.IsDir() {
		return nil
	}
	entries, err := r.listDir(base+"\x00"+prefix, dst, func() ([]dirEntry, error) {
		des, err := fs.ReadDir(fsys, prefix)
		if err != nil {
			return nil, err
		}
		out := make([]dirEntry, len(des))
		for i, e := range des {
			out[i] = dirEntry{name: e.Name(), dir: e.IsDir()}
		}
		return out, nil
	})
	if err != nil {
		rec.fail()
		return nil
	}
	var out []Skill
	for _, e := range entries {
		if !e.dir {
			continue
		}
		rel := path.Join(prefix, e.name, "SKILL.md")
		rec.stat(filepath.Join(base, filepath.FromSlash(rel)))
		s, err := r.loadSkill(fsys, base, rel)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil && !errors.Is(err, ErrSkillFrontMatter) {
			// A read error, unlike bad front matter, may pass.
			rec.fail()
		}
		if err != nil {
			*warnings = append(*warnings, fmt.Sprintf("skipping skill %s: %v", rel, err))
			continue
		}
		if s.Name == "" {
			s.Name = e.name
		}
		s.FilePath = filepath.Join(base, filepath.FromSlash(rel))
		s.BaseDir = filepath.Dir(s.FilePath)
		s.Source = source
		out = append(out, s)
	}
	return out
}

// loadSkill parses one SKILL.md, cached by path, size and mtime.
func (r *Resolver) loadSkill(fsys fs.FS, base, rel string) (Skill, error) {
	key := base + "\x00" + rel
	if sig, ok := quickStat(filepath.Join(base, filepath.FromSlash(rel))); ok && sig.regular {
		r.mu.Lock()
		c, hit := r.skills[key]
		r.mu.Unlock()
		if hit && c.size == sig.size && c.mtime.Equal(sig.mtime) && c.id == sig.id {
			return c.skill, c.err
		}
	}
	st, err := fs.Stat(fsys, rel)
	if err != nil {
		return Skill{}, fs.ErrNotExist
	}
	if !st.Mode().IsRegular() {
		return Skill{}, fs.ErrNotExist
	}
	id := fileID(st)
	r.mu.Lock()
	if c, ok := r.skills[key]; ok && c.size == st.Size() && c.mtime.Equal(st.ModTime()) && c.id == id {
		r.mu.Unlock()
		return c.skill, c.err
	}
	r.mu.Unlock()
	f, err := fsys.Open(rel)
	if err != nil {
		return Skill{}, fs.ErrNotExist
	}
	b, err := io.ReadAll(io.LimitReader(f, maxSkillFileBytes))
	f.Close()
	if err != nil {
		return Skill{}, err
	}
	s, perr := ParseSkill(b)
	r.mu.Lock()
	if r.skills == nil {
		r.skills = make(map[string]cachedSkill)
	}
	if len(r.skills) > 4096 {
		clear(r.skills)
	}
	r.skills[key] = cachedSkill{size: st.Size(), mtime: st.ModTime(), id: id, skill: s, err: perr}
	r.mu.Unlock()
	return s, perr
}

// ErrSkillFrontMatter is returned by ParseSkill for a SKILL.md without
// valid YAML front matter.
var ErrSkillFrontMatter = errors.New("prompt: SKILL.md front matter missing or invalid")

// ParseSkill reads a SKILL.md's YAML front matter (between leading "---"
// lines): name, description, and disable-model-invocation.
func ParseSkill(b []byte) (Skill, error) {
	s := strings.TrimPrefix(string(b), "\ufeff")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	if !strings.HasPrefix(s, "---\n") {
		return Skill{}, ErrSkillFrontMatter
	}
	body := s[4:]
	end := strings.Index(body, "\n---")
	if end < 0 {
		return Skill{}, ErrSkillFrontMatter
	}
	var fm struct {
		Name                    string `yaml:"name"`
		Description             string `yaml:"description"`
		DisableModelInvocation  bool   `yaml:"disable-model-invocation"`
		DisableModelInvocation2 bool   `yaml:"disableModelInvocation"`
	}
	if err := yaml.Unmarshal([]byte(body[:end]), &fm); err != nil {
		return Skill{}, fmt.Errorf("%w: %v", ErrSkillFrontMatter, err)
	}
	return Skill{
		Name:                   strings.TrimSpace(fm.Name),
		Description:            strings.TrimSpace(fm.Description),
		DisableModelInvocation: fm.DisableModelInvocation || fm.DisableModelInvocation2,
	}, nil
}
