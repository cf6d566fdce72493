package prompt

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func fileContent(res *Resolved, name string) (string, bool) {
	for _, f := range res.Params.ContextFiles {
		if filepath.Base(f.Path) == name {
			return f.Content, true
		}
	}
	return "", false
}

func TestResolveSample(t *testing.T) {
	dir := t.TempDir()
	if err := MaterializeSample(dir); err != nil {
		t.Fatal(err)
	}
	res, err := Resolve(SampleConfig(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 0 {
		t.Fatalf("warnings: %q", res.Warnings)
	}
	// Load order is budget order: AGENTS SOUL TOOLS IDENTITY USER HEARTBEAT MEMORY.
	var names []string
	for _, f := range res.Files {
		names = append(names, f.Name)
	}
	if got := strings.Join(names, ","); got != "AGENTS.md,SOUL.md,TOOLS.md,IDENTITY.md,USER.md,HEARTBEAT.md,MEMORY.md" {
		t.Fatalf("files %s", got)
	}
	if res.Skills.Included != 3 || !strings.Contains(res.Params.SkillsPrompt, "<name>github</name>") {
		t.Fatalf("skills %+v", res.Skills)
	}
	out, lay, err := AppendPrompt(nil, &res.Params)
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	// Prompt order is CONTEXT_FILE_ORDER: TOOLS after USER; HEARTBEAT below the boundary.
	if !(strings.Index(s, "USER.md\n") < strings.Index(s, "TOOLS.md\n# TOOLS")) {
		t.Fatal("TOOLS.md not after USER.md in Project Context")
	}
	if strings.Index(s, "/HEARTBEAT.md\n") < lay.Marker {
		t.Fatal("HEARTBEAT.md above the boundary")
	}
	if !strings.Contains(s, soulPersonaLine) {
		t.Fatal("SOUL persona line missing")
	}

	// Minimal (subagent) sessions: reduced file set, no MEMORY.md or HEARTBEAT.md.
	cfg := SampleConfig()
	cfg.SessionKey = "agent:main:subagent:42"
	res, err = Resolve(cfg, dir)
	if err != nil {
		t.Fatal(err)
	}
	if res.Params.Mode != ModeMinimal {
		t.Fatalf("mode %v", res.Params.Mode)
	}
	for _, f := range res.Files {
		if f.Name == "MEMORY.md" || f.Name == "HEARTBEAT.md" {
			t.Fatalf("%s injected for a subagent", f.Name)
		}
	}
}

func TestResolveMissingWorkspace(t *testing.T) {
	_, err := Resolve(SampleConfig(), filepath.Join(t.TempDir(), "nope"))
	if !errors.Is(err, ErrWorkspace) {
		t.Fatalf("err = %v", err)
	}
	f := filepath.Join(t.TempDir(), "file")
	writeFile(t, f, "x")
	if _, err := Resolve(SampleConfig(), f); !errors.Is(err, ErrWorkspace) {
		t.Fatalf("file as workspace: %v", err)
	}
}

func TestResolveBadFiles(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.md")
	writeFile(t, secret, "TOP SECRET")
	// AGENTS.md: a symlink leaving the workspace.
	if err := os.Symlink(secret, filepath.Join(dir, "AGENTS.md")); err != nil {
		t.Skip("symlinks unsupported:", err)
	}
	// SOUL.md: a relative symlink escaping through "..".
	if err := os.Symlink("../"+filepath.Base(outside)+"/secret.md", filepath.Join(dir, "SOUL.md")); err != nil {
		t.Fatal(err)
	}
	// TOOLS.md: invalid UTF-8.
	writeFile(t, filepath.Join(dir, "TOOLS.md"), "ok \xff\xfe bytes\n")
	// IDENTITY.md: a symlink inside the workspace (allowed).
	writeFile(t, filepath.Join(dir, "docs", "id.md"), "identity via link")
	if err := os.Symlink("docs/id.md", filepath.Join(dir, "IDENTITY.md")); err != nil {
		t.Fatal(err)
	}
	// USER.md: a directory, not a file.
	if err := os.MkdirAll(filepath.Join(dir, "USER.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	// HEARTBEAT.md: huge (over the 2 MiB guard): never read.
	big := filepath.Join(dir, "HEARTBEAT.md")
	fh, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := fh.Truncate(8 << 30); err != nil { // sparse 8 GiB
		t.Fatal(err)
	}
	fh.Close()
	// MEMORY.md: unreadable (permission), unless we are root.
	writeFile(t, filepath.Join(dir, "MEMORY.md"), "memory")
	if err := os.Chmod(filepath.Join(dir, "MEMORY.md"), 0); err != nil {
		t.Fatal(err)
	}

	res, err := Resolve(SampleConfig(), dir)
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := AppendPrompt(nil, &res.Params)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "TOP SECRET") {
		t.Fatal("read outside the workspace")
	}
	for _, name := range []string{"AGENTS.md", "SOUL.md", "USER.md", "HEARTBEAT.md"} {
		c, ok := fileContent(res, name)
		if !ok || !strings.HasPrefix(c, "[MISSING] Expected at: ") {
			t.Errorf("%s: %q, want a missing marker", name, c)
		}
	}
	joined := strings.Join(res.Warnings, "\n")
	for _, want := range []string{"AGENTS.md cannot be read", "SOUL.md cannot be read", "HEARTBEAT.md cannot be read", "too large", "TOOLS.md is not valid UTF-8"} {
		if !strings.Contains(joined, want) {
			t.Errorf("warnings lack %q:\n%s", want, joined)
		}
	}
	if c, _ := fileContent(res, "TOOLS.md"); c != "ok \uFFFD\uFFFD bytes" {
		t.Errorf("TOOLS.md = %q", c)
	}
	if c, _ := fileContent(res, "IDENTITY.md"); c != "identity via link" {
		t.Errorf("IDENTITY.md = %q", c)
	}
	if os.Geteuid() != 0 {
		if c, _ := fileContent(res, "MEMORY.md"); !strings.HasPrefix(c, "[MISSING]") {
			t.Errorf("unreadable MEMORY.md = %q", c)
		}
	}
	// The typed errors are reachable for callers that read files directly.
	var r Resolver
	root, _ := os.OpenRoot(dir)
	defer root.Close()
	if _, _, err := r.read(root, "AGENTS.md", DefaultMaxFileBytes); !errors.Is(err, ErrOutsideWorkspace) {
		t.Errorf("symlink escape: %v", err)
	}
	if _, _, err := r.read(root, "../x", DefaultMaxFileBytes); !errors.Is(err, ErrOutsideWorkspace) {
		t.Errorf("dot-dot: %v", err)
	}
	if _, _, err := r.read(root, "HEARTBEAT.md", DefaultMaxFileBytes); !errors.Is(err, ErrFileTooLarge) {
		t.Errorf("huge: %v", err)
	}
	if _, _, err := r.read(root, "USER.md", DefaultMaxFileBytes); !errors.Is(err, ErrNotRegular) {
		t.Errorf("dir: %v", err)
	}
}

func TestResolveHookExtraFilesAndBudget(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "AGENTS.md"), strings.Repeat("a", 5000))
	writeFile(t, filepath.Join(dir, "pkg", "api", "AGENTS.md"), "api agents")
	writeFile(t, filepath.Join(dir, "pkg", "api", "NOTES.md"), "not a bootstrap name")
	writeFile(t, filepath.Join(dir, "SOUL.md"), "   \n\n") // blank: skipped
	writeFile(t, filepath.Join(dir, "memory.md"), "lowercase memory is never injected")
	cfg := SampleConfig()
	cfg.ExtraFiles = []string{"pkg/*/*.md"}
	cfg.Budget = Budget{MaxChars: 1000, TotalMaxChars: 50000, HeadRatio: 0.5, TailRatio: 0.5}
	cfg.Warning = WarnAlways
	cfg.Hook = func(ctx HookContext, files []BootstrapFile) []BootstrapFile {
		if ctx.Workspace == "" || ctx.Trigger != "user" {
			t.Errorf("hook context %+v", ctx)
		}
		out := files[:0]
		for _, f := range files {
			if f.Name != "IDENTITY.md" && f.Name != "USER.md" { // remove one, replace one
				out = append(out, f)
			}
		}
		return append(out,
			BootstrapFile{Name: "USER.md", Path: "USER.md", Content: "from the hook"}, // add one
			BootstrapFile{Name: "X.md", Content: "no path"},                           // dropped with a warning
		)
	}
	res, err := Resolve(cfg, dir)
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := fileContent(res, "USER.md"); c != "from the hook" {
		t.Errorf("hook file: %q", c)
	}
	if _, ok := fileContent(res, "IDENTITY.md"); ok {
		t.Error("hook removal ignored")
	}
	if _, ok := fileContent(res, "SOUL.md"); ok {
		t.Error("blank SOUL.md injected")
	}
	found := false
	for _, f := range res.Params.ContextFiles {
		if strings.HasSuffix(f.Path, filepath.Join("pkg", "api", "AGENTS.md")) {
			found = true
		}
		if strings.Contains(f.Content, "lowercase memory") || strings.Contains(f.Content, "not a bootstrap name") {
			t.Errorf("unexpected file %s", f.Path)
		}
	}
	if !found {
		t.Error("extra file from glob missing")
	}
	agents, _ := fileContent(res, "AGENTS.md")
	if len16(agents) != 1000 || !strings.Contains(agents, "[...truncated, read AGENTS.md for full content...]") {
		t.Errorf("AGENTS.md not truncated to 1000: %d", len16(agents))
	}
	// 50/50 split configured.
	if !strings.Contains(agents, "kept 447+447 chars of 5000") {
		t.Errorf("head/tail split: %q", agents[400:700])
	}
	if !res.Warning.Shown || res.Params.BootstrapTruncationNotice != BootstrapTruncationNotice {
		t.Errorf("warning not shown: %+v", res.Warning)
	}
	if !strings.Contains(strings.Join(res.Warnings, "\n"), `skipping bootstrap file "X.md"`) {
		t.Errorf("warnings %q", res.Warnings)
	}
	// once: the same signature, seen, is not shown again.
	cfg.Warning = WarnOnce
	cfg.SeenSignatures = res.Warning.Seen
	res2, err := Resolve(cfg, dir)
	if err != nil {
		t.Fatal(err)
	}
	if res2.Warning.Shown || res2.Params.BootstrapTruncationNotice != "" {
		t.Error("once mode warned twice")
	}
}

func TestParseSkill(t *testing.T) {
	s, err := ParseSkill([]byte("---\r\nname: x\r\ndescription: \"a: b\"\r\ndisable-model-invocation: true\r\n---\r\nbody"))
	if err != nil || s.Name != "x" || s.Description != "a: b" || !s.DisableModelInvocation {
		t.Fatalf("%+v %v", s, err)
	}
	for _, bad := range []string{"", "no front matter", "---\nname: [unclosed\n---\n", "---\nname: x\n"} {
		if _, err := ParseSkill([]byte(bad)); !errors.Is(err, ErrSkillFrontMatter) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestResolveTimezone(t *testing.T) {
	t.Setenv("TZ", "")
	if tz := ResolveTimezone("Europe/Berlin"); tz != "Europe/Berlin" {
		t.Fatal(tz)
	}
	if tz := ResolveTimezone("Mars/Olympus"); tz != "UTC" {
		t.Fatal(tz)
	}
	t.Setenv("TZ", "Asia/Tokyo")
	if tz := ResolveTimezone(""); tz != "Asia/Tokyo" {
		t.Fatal(tz)
	}
}

func TestResolveBootstrapPending(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "AGENTS.md"), "agents")
	writeFile(t, filepath.Join(dir, "BOOTSTRAP.md"), "Hello, bootstrap me.")
	res, err := Resolve(SampleConfig(), dir)
	if err != nil {
		t.Fatal(err)
	}
	out, _, _ := AppendPrompt(nil, &res.Params)
	s := string(out)
	if res.Params.BootstrapMode != BootstrapFull || !strings.Contains(s, bootstrapPendingFull) ||
		!strings.Contains(s, "/BOOTSTRAP.md\nHello, bootstrap me.") || !strings.Contains(s, commitReminder) {
		t.Fatalf("full bootstrap mode not rendered (mode %v)", res.Params.BootstrapMode)
	}
	// Without the read tool: limited, and BOOTSTRAP.md is not injected.
	cfg := SampleConfig()
	cfg.Base.ToolNames = []string{"exec"}
	res, _ = Resolve(cfg, dir)
	out, _, _ = AppendPrompt(nil, &res.Params)
	if res.Params.BootstrapMode != BootstrapLimited || strings.Contains(string(out), "Hello, bootstrap me.") {
		t.Fatalf("limited mode: %v", res.Params.BootstrapMode)
	}
	// Heartbeat runs, subagents and completed setups: none.
	for name, mut := range map[string]func(*Config){
		"heartbeat": func(c *Config) { c.Trigger = "heartbeat" },
		"subagent":  func(c *Config) { c.SessionKey = "subagent:1" },
		"completed": func(c *Config) { c.SetupCompleted = true },
	} {
		cfg := SampleConfig()
		mut(cfg)
		res, _ := Resolve(cfg, dir)
		if res.Params.BootstrapMode != BootstrapNone {
			t.Errorf("%s: mode %v", name, res.Params.BootstrapMode)
		}
		if _, ok := fileContent(res, "BOOTSTRAP.md"); ok {
			t.Errorf("%s: BOOTSTRAP.md injected", name)
		}
	}
	// contextInjection never: no files at all.
	cfg = SampleConfig()
	cfg.ContextInjection = "never"
	res, _ = Resolve(cfg, dir)
	if len(res.Params.ContextFiles) != 0 {
		t.Fatal("contextInjection=never injected files")
	}
}

func TestResolveSkillSources(t *testing.T) {
	dir := t.TempDir()
	if err := MaterializeSample(dir); err != nil {
		t.Fatal(err)
	}
	managed := t.TempDir()
	writeFile(t, filepath.Join(managed, "weather", "SKILL.md"), "---\nname: weather\ndescription: managed copy\n---\n")
	writeFile(t, filepath.Join(managed, "calendar", "SKILL.md"), "---\nname: calendar\ndescription: Calendar & <events>\n---\n")
	writeFile(t, filepath.Join(managed, "secret", "SKILL.md"), "---\nname: secret\ndescription: x\ndisable-model-invocation: true\n---\n")
	writeFile(t, filepath.Join(managed, "broken", "SKILL.md"), "no front matter")
	cfg := SampleConfig()
	cfg.SkillDirs = []string{managed}
	cfg.DisabledSkills = []string{"summarize"}
	res, err := Resolve(cfg, dir)
	if err != nil {
		t.Fatal(err)
	}
	sp := res.Params.SkillsPrompt
	if !strings.Contains(sp, "<description>Calendar &amp; &lt;events&gt;</description>") {
		t.Error("managed skill missing or not escaped")
	}
	if strings.Contains(sp, "managed copy") || !strings.Contains(sp, "Get current weather") {
		t.Error("workspace skill must win over the managed one")
	}
	if strings.Contains(sp, "<name>secret</name>") || strings.Contains(sp, "<name>summarize</name>") {
		t.Error("hidden or disabled skill listed")
	}
	if !strings.Contains(strings.Join(res.Warnings, "\n"), "broken/SKILL.md") {
		t.Errorf("no warning for the broken skill: %q", res.Warnings)
	}
	cfg.SkillFilter = []string{"calendar"}
	res, _ = Resolve(cfg, dir)
	if res.Skills.Included != 1 {
		t.Errorf("agent filter: %+v", res.Skills)
	}
	cfg.ToolsAllow = []string{"read"}
	res, _ = Resolve(cfg, dir)
	if res.Params.SkillsPrompt != "" || res.Params.Mode != ModeMinimal {
		t.Error("toolsAllow must force minimal mode and drop skills")
	}
}

func TestResolveHeartbeatRun(t *testing.T) {
	dir := t.TempDir()
	if err := MaterializeSample(dir); err != nil {
		t.Fatal(err)
	}
	cfg := SampleConfig()
	res, _ := Resolve(cfg, dir)
	out, _, _ := AppendPrompt(nil, &res.Params)
	if strings.Contains(string(out), "## Heartbeats\nIf the current user message") {
		t.Fatal("Heartbeats section on a user run")
	}
	cfg.Trigger = "heartbeat"
	res, _ = Resolve(cfg, dir)
	out, lay, _ := AppendPrompt(nil, &res.Params)
	if i := strings.LastIndex(string(out), "## Heartbeats\nIf the current user message"); i < lay.Marker {
		t.Fatal("Heartbeats section missing or above the boundary on a heartbeat run")
	}
	cfg.ContextMode = "lightweight"
	res, _ = Resolve(cfg, dir)
	if len(res.Files) != 1 || res.Files[0].Name != "HEARTBEAT.md" {
		t.Fatalf("lightweight heartbeat run files: %+v", res.Files)
	}
	cfg.Trigger = "user"
	res, _ = Resolve(cfg, dir)
	if len(res.Files) != 0 {
		t.Fatal("lightweight user run injected files")
	}
	cfg = SampleConfig()
	cfg.HeartbeatDisabled = true
	res, _ = Resolve(cfg, dir)
	if _, ok := fileContent(res, "HEARTBEAT.md"); ok {
		t.Fatal("HEARTBEAT.md injected with heartbeat guidance disabled")
	}
}
