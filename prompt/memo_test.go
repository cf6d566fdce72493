package prompt

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// memoWorkspace materializes the sample workspace and returns its
// resolved path and an opener for PromptIn.
func memoWorkspace(t *testing.T) (string, func() (*os.Root, error), *int) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ws")
	if err := MaterializeSample(dir); err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	opens := new(int)
	open := func() (*os.Root, error) {
		*opens++
		r, err := os.OpenRoot(real)
		if err == nil {
			t.Cleanup(func() { r.Close() })
		}
		return r, err
	}
	return real, open, opens
}

// uncached is the prompt a fresh resolver and renderer give.
func uncached(t *testing.T, cfg *Config, dir string) string {
	t.Helper()
	res, err := Resolve(cfg, dir)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := AppendPrompt(nil, &res.Params)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// touch gives path new content of the same size and a new mtime.
func touch(t *testing.T, path string, mtime time.Time) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] = 'Q'
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

// TestPromptInSeesEveryChange: a memoized prompt is returned only while
// nothing it depends on changed; after each outside change (a bootstrap
// file edited, created or removed, a skill edited, added or removed, an
// extra skill root gaining a skill, the configuration or the time zone
// changed) PromptIn gives what a fresh resolver and renderer give, and
// without any change it does not open the workspace at all.
func TestPromptInSeesEveryChange(t *testing.T) {
	dir, open, opens := memoWorkspace(t)
	extra := t.TempDir()
	cfg := SampleConfig()
	cfg.SkillDirs = []string{extra}
	var r Resolver
	later := time.Now().Add(time.Hour)
	check := func(name string, wantOpen bool) {
		t.Helper()
		before := *opens
		got, stable, err := r.PromptIn(cfg, dir, open, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := uncached(t, cfg, dir); got != want {
			t.Fatalf("%s: the memoized prompt differs from a fresh one", name)
		}
		if stable <= 0 || stable > len(got) {
			t.Fatalf("%s: stable length %d of %d", name, stable, len(got))
		}
		if opened := *opens > before; opened != wantOpen {
			t.Fatalf("%s: resolved again: %v, want %v", name, opened, wantOpen)
		}
	}
	check("cold", true)
	check("warm", false)

	touch(t, filepath.Join(dir, "AGENTS.md"), later)
	check("AGENTS.md edited (same size)", true)
	check("warm again", false)

	if err := os.Remove(filepath.Join(dir, "MEMORY.md")); err != nil {
		t.Fatal(err)
	}
	check("MEMORY.md removed", true)
	if err := os.WriteFile(filepath.Join(dir, "BOOTSTRAP.md"), []byte("# Bootstrap\nset things up\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	check("BOOTSTRAP.md created", true)
	check("warm after create", false)

	skill := filepath.Join(dir, "skills", "weather", "SKILL.md")
	touch(t, skill, later)
	check("SKILL.md edited", true)
	if err := os.MkdirAll(filepath.Join(dir, "skills", "zebra"), 0o755); err != nil {
		t.Fatal(err)
	}
	check("empty skill directory added", true)
	if err := os.WriteFile(filepath.Join(dir, "skills", "zebra", "SKILL.md"), []byte("---\nname: zebra\ndescription: stripes\n---\nbody\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	check("SKILL.md created in an existing directory", true)
	if err := os.RemoveAll(filepath.Join(dir, "skills", "zebra")); err != nil {
		t.Fatal(err)
	}
	check("skill removed", true)
	if err := os.MkdirAll(filepath.Join(extra, "lion"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(extra, "lion", "SKILL.md"), []byte("---\nname: lion\ndescription: roars\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	check("skill added to an extra skill root", true)
	check("warm with the extra root", false)

	cfg.Base.ToolNames = append(cfg.Base.ToolNames[:len(cfg.Base.ToolNames):len(cfg.Base.ToolNames)], "extra_tool")
	check("tool list changed", true)
	cfg.Base.ToolSummaries = map[string]string{"extra_tool": "does extra things"}
	check("tool summary added", true)
	cfg.Base.ToolSummaries["extra_tool"] = "does other things"
	check("tool summary changed in place", true)
	cfg.Base.Runtime.Model = "other/model"
	check("model changed", true)
	t.Setenv("TZ", "Europe/Berlin")
	cfg.Base.UserTimezone = ""
	check("time zone from the environment", true)
	t.Setenv("TZ", "Asia/Tokyo")
	check("TZ changed", true)
	check("warm at the end", false)
}

// TestPromptInHookNotMemoized: a bootstrap hook's output cannot be keyed,
// so every call resolves (and sees what the hook returns now).
func TestPromptInHookNotMemoized(t *testing.T) {
	dir, open, opens := memoWorkspace(t)
	cfg := SampleConfig()
	text := "first"
	cfg.Hook = func(_ HookContext, files []BootstrapFile) []BootstrapFile {
		return append(files, BootstrapFile{Name: "TOOLS.md", Path: "hooked/TOOLS.md", Content: text})
	}
	var r Resolver
	for _, want := range []string{"first", "second"} {
		text = want
		got, _, err := r.PromptIn(cfg, dir, open, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(got, want) {
			t.Fatalf("the hook's %q is not in the prompt", want)
		}
	}
	if *opens != 2 {
		t.Fatalf("opened the workspace %d times for 2 calls with a hook", *opens)
	}
}

// TestMemoKeyCoversConfig changes every field of Config (and of the
// structures it holds) in turn: each change must change the memo key, so
// that a field added later cannot be forgotten by the key.
func TestMemoKeyCoversConfig(t *testing.T) {
	base := SampleConfig()
	k0, ok := memoKey(nil, base, "/ws")
	if !ok {
		t.Fatal("the sample configuration is not memoizable")
	}
	sameKeyEncoding(t, "sample", base)
	// Walk the leaves of Config with index paths and mutate each on a
	// fresh sample.
	var leaves [][]int
	var collect func(idx []int, typ reflect.Type)
	collect = func(idx []int, typ reflect.Type) {
		if typ.Kind() == reflect.Struct {
			for i := range typ.NumField() {
				collect(append(idx[:len(idx):len(idx)], i), typ.Field(i).Type)
			}
			return
		}
		leaves = append(leaves, idx)
	}
	collect(nil, reflect.TypeFor[Config]())
	for _, idx := range leaves {
		c := SampleConfig()
		v := reflect.ValueOf(c).Elem().FieldByIndex(idx)
		name := reflect.TypeFor[Config]().FieldByIndex(idx).Name
		if v.Kind() == reflect.Func {
			v.Set(reflect.MakeFunc(v.Type(), func([]reflect.Value) []reflect.Value {
				return []reflect.Value{reflect.Zero(v.Type().Out(0))}
			}))
			if _, ok := memoKey(nil, c, "/ws"); ok {
				t.Errorf("%s: a configuration with a function is memoizable", name)
			}
			sameKeyEncoding(t, name, c)
			continue
		}
		mutate(t, name, v)
		k, ok := memoKey(nil, c, "/ws")
		sameKeyEncoding(t, name, c)
		if name == "ExtraFiles" {
			if ok {
				t.Errorf("a configuration with ExtraFiles is memoizable")
			}
			continue
		}
		if !ok || string(k) == string(k0) {
			t.Errorf("field %s (%v): the key does not change (memoizable %v)", name, idx, ok)
		}
	}
	if len(leaves) < 40 {
		t.Fatalf("only %d leaf fields found", len(leaves))
	}
	if k, _ := memoKey(nil, base, "/other"); string(k) == string(k0) {
		t.Error("the workspace does not change the key")
	}
}

// sameKeyEncoding checks that Config's compiled key encoder writes what
// appendKeyValue, its reflective reference, writes of c.
func sameKeyEncoding(t *testing.T, name string, c *Config) {
	t.Helper()
	fast, ok1 := configKey()(nil, unsafe.Pointer(c))
	ref, ok2 := appendKeyValue(nil, reflect.ValueOf(c).Elem())
	if ok1 != ok2 || ok1 && string(fast) != string(ref) {
		t.Errorf("%s: the compiled key encoder (%v) differs from appendKeyValue (%v)", name, ok1, ok2)
	}
}

// mutate sets v, a leaf field, to a value different from the sample's.
func mutate(t *testing.T, name string, v reflect.Value) {
	t.Helper()
	switch v.Kind() {
	case reflect.String:
		v.SetString(v.String() + "x")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(v.Int() + 1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(v.Uint() + 1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(v.Float() + 1)
	case reflect.Slice:
		v.Set(reflect.Append(v, reflect.Zero(v.Type().Elem())))
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		m.SetMapIndex(reflect.Zero(v.Type().Key()), reflect.Zero(v.Type().Elem()))
		v.Set(m)
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		} else {
			v.Set(reflect.Zero(v.Type()))
		}
	default:
		t.Fatalf("field %s: kind %v has no mutation", name, v.Kind())
	}
}

// TestPromptInWarmAllocations: a warm PromptIn of an unchanged workspace
// allocates nothing (the key is built on the stack, each file is checked
// by one fstatat of a stored path).
func TestPromptInWarmAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	if !haveQuickStat {
		t.Skip("no memo on this platform")
	}
	dir, open, opens := memoWorkspace(t)
	cfg := SampleConfig()
	var r Resolver
	if _, _, err := r.PromptIn(cfg, dir, open, nil); err != nil {
		t.Fatal(err)
	}
	n := testing.AllocsPerRun(50, func() {
		if _, _, err := r.PromptIn(cfg, dir, open, nil); err != nil {
			t.Fatal(err)
		}
	})
	if *opens != 1 {
		t.Fatalf("the workspace was opened %d times", *opens)
	}
	if n != 0 {
		t.Fatalf("a warm PromptIn allocates %.1f times", n)
	}
}

// TestPromptInSeesTheWorkspaceReplaced: the memo checks the files below
// the workspace through a descriptor of its directory, which must never
// vouch for another directory put in its place: here a copy whose
// AGENTS.md differs at the same size and mtime, the directory's own mtime
// set back too, so that only the directory's inode tells them apart.
func TestPromptInSeesTheWorkspaceReplaced(t *testing.T) {
	dir, open, opens := memoWorkspace(t)
	cfg := SampleConfig()
	var r Resolver
	first, _, err := r.PromptIn(cfg, dir, open, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.PromptIn(cfg, dir, open, nil); err != nil || *opens != 1 {
		t.Fatalf("warm call resolved again (%d opens, %v)", *opens, err)
	}
	st, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	agents := filepath.Join(dir, "AGENTS.md")
	ast, err := os.Stat(agents)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dir, dir+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(dir, os.DirFS(dir+".old")); err != nil {
		t.Fatal(err)
	}
	touch(t, agents, ast.ModTime())
	if err := os.Chtimes(dir, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	got, _, err := r.PromptIn(cfg, dir, open, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got == first || got != uncached(t, cfg, dir) || *opens != 2 {
		t.Fatalf("the replaced workspace's prompt was not resolved again (%d opens)", *opens)
	}
}
