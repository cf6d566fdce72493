package transcript

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ocbench/ocbench/llm"
)

const lockChildEnv = "TRANSCRIPT_LOCK_CHILD"

// TestLockChild holds a writer open until killed (child of
// TestLockedByAnotherProcess).
func TestLockChild(t *testing.T) {
	path := os.Getenv(lockChildEnv)
	if path == "" {
		t.Skip("child process only")
	}
	w, err := OpenWriter(path, WriterOptions{})
	if err != nil {
		os.Stdout.WriteString("ERR " + err.Error() + "\n")
		os.Exit(2)
	}
	w.Append(textEntry(llm.RoleUser, "from the child"))
	os.Stdout.WriteString("locked\n")
	select {}
}

func TestLockedByAnotherProcess(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	cmd := exec.Command(exe, "-test.run=^TestLockChild$")
	cmd.Env = append(os.Environ(), lockChildEnv+"="+path)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "locked\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child: %q", line)
	}
	_, err = OpenWriter(path, WriterOptions{})
	if !errors.Is(err, ErrLocked) {
		t.Errorf("while the child holds the lock: %v", err)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	// The kernel released the lock with the process; nothing was lost.
	w, err := OpenWriter(path, WriterOptions{})
	if err != nil {
		t.Fatalf("after the child died: %v", err)
	}
	defer w.Close()
	if w.Recovery().Entries != 1 {
		t.Errorf("recovery %+v", w.Recovery())
	}
}

// TestBoundedMemory streams 128 MB of session through a Reader and checks
// that the heap does not grow with it.
func TestBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	data := readFileBytes(t, piV1File)
	nl := bytes.IndexByte(data, '\n') + 1
	const total = 128 << 20
	src := io.LimitReader(&cycleReader{head: data[:nl], body: data[nl:]}, total)
	r := NewReader(src, Options{RawMessages: true})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	n := 0
	for r.Next() {
		n++
	}
	runtime.ReadMemStats(&after)
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
	st := r.Stats()
	if st.Bytes != total {
		t.Errorf("read %d of %d bytes", st.Bytes, total)
	}
	grew := after.TotalAlloc - before.TotalAlloc
	if grew > 4<<20 {
		t.Errorf("allocated %d bytes reading %d MB", grew, total>>20)
	}
	t.Logf("%d entries, %d MB read, %d KB allocated in all, heap in use %d KB", n, total>>20, grew>>10, after.HeapInuse>>10)
}

func TestWriterLineLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	w, err := OpenWriter(path, WriterOptions{MaxLineSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Append(textEntry(llm.RoleUser, strings.Repeat("x", 2000))); !errors.Is(err, ErrLineTooLong) {
		t.Errorf("err %v", err)
	}
	if _, err := w.Append(textEntry(llm.RoleUser, "fits")); err != nil {
		t.Fatal(err)
	}
	es, _, st := readFile(t, path, Options{Strict: true})
	if len(es) != 1 || len(es[0].ParentID) != 0 || st.Torn {
		t.Errorf("entries %d", len(es))
	}
}

func TestParseISOMillis(t *testing.T) {
	for _, c := range []struct {
		in string
		ms int64
		ok bool
	}{
		{"2026-03-14T03:35:39.401Z", 1773459339401, true},
		{"2026-03-14T03:35:39Z", 1773459339000, true},
		{"2026-03-14T03:35:39.4Z", 1773459339400, true},
		{"2026-03-14T03:35:39.401999Z", 1773459339401, true},
		{"2026-03-14T11:35:39.401+08:00", 1773459339401, true},
		{"1970-01-01T00:00:00.000Z", 0, true},
		{"2026-13-14T03:35:39Z", 0, false},
		{"yesterday", 0, false},
		{"", 0, false},
	} {
		ms, ok := parseISOMillis([]byte(c.in))
		if ms != c.ms || ok != c.ok {
			t.Errorf("%q: %d %v, want %d %v", c.in, ms, ok, c.ms, c.ok)
		}
	}
	if got := string(appendISOMillis(nil, 1773459339401)); got != "2026-03-14T03:35:39.401Z" {
		t.Errorf("format %q", got)
	}
	// The digits written directly are AppendFormat's, leap days, the
	// ends of years and of the range included.
	for _, ms := range []int64{0, -1, 1, 999, -62167219200000, -62167219200001, 253402300799999, 253402300800000, 951782400000, 951868799999, 4107542399999, -2208988800001} {
		if got, want := string(appendISOMillis(nil, ms)), time.UnixMilli(ms).UTC().Format(isoLayout); got != want {
			t.Errorf("format %d: %q, want %q", ms, got, want)
		}
	}
	for ms := int64(-5e12); ms < 3e14; ms += 7_654_321_987 {
		if got, want := string(appendISOMillis(nil, ms)), time.UnixMilli(ms).UTC().Format(isoLayout); got != want {
			t.Fatalf("format %d: %q, want %q", ms, got, want)
		}
	}
}

func TestOpenFileDetectsZstd(t *testing.T) {
	dir := t.TempDir()
	z := filepath.Join(dir, "q.jsonl.zst")
	if err := compressFile(bytes.NewReader(readFileBytes(t, qwenFile)), z); err != nil {
		t.Fatal(err)
	}
	plain, h1, s1 := readFile(t, qwenFile, Options{})
	packed, h2, s2 := readFile(t, z, Options{})
	if len(plain) != len(packed) || h1 != h2 || !reflect.DeepEqual(s1, s2) {
		t.Errorf("zstd read differs: %d/%d entries", len(plain), len(packed))
	}
	// A corrupt archive is an error, not a panic.
	b := readFileBytes(t, z)
	b = append(b[:len(b)/2:len(b)/2], bytes.Repeat([]byte{0xff}, 64)...)
	bad := filepath.Join(dir, "bad.zst")
	os.WriteFile(bad, b, 0o644)
	r, err := OpenFile(bad, Options{})
	if err == nil {
		for r.Next() {
		}
		err = r.Err()
		r.Close()
	}
	if err == nil {
		t.Error("corrupt archive read without error")
	}
}

func TestWriterConcurrentAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	w, err := OpenWriter(path, WriterOptions{Durability: SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	const goroutines, each = 8, 200
	errs := make(chan error, goroutines)
	for g := 0; g < goroutines; g++ {
		go func() {
			for i := 0; i < each; i++ {
				if _, err := w.Append(textEntry(llm.RoleUser, strings.Repeat("y", 100+i))); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for g := 0; g < goroutines; g++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	es, _, st := readFile(t, path, Options{Strict: true})
	if len(es) != goroutines*each || st.BadLines != 0 {
		t.Fatalf("%d entries, stats %+v", len(es), st)
	}
	ids := map[string]bool{}
	for i := range es {
		if ids[string(es[i].ID)] {
			t.Fatalf("duplicate id %s", es[i].ID)
		}
		ids[string(es[i].ID)] = true
		if i > 0 && string(es[i].ParentID) != string(es[i-1].ID) {
			t.Fatalf("entry %d not chained to %d", i, i-1)
		}
	}
	if sc, err := LoadContext(path); err != nil || len(sc.Messages) != goroutines*each {
		t.Errorf("context: %v %d", err, len(sc.Messages))
	}
}

func TestModelSnapshot(t *testing.T) {
	entries, _, _ := readFile(t, qwenFile, Options{})
	last, ok := ModelSnapshot{}, false
	for i := range entries {
		if s, found := ParseModelSnapshot(&entries[i]); found {
			last, ok = s, true
		}
	}
	if !ok || last.Provider != "qwen-portal" || last.ModelAPI != "openai-completions" || last.ModelID == "" || last.Timestamp == 0 {
		t.Fatalf("snapshot %+v", last)
	}
	if NeedsModelSnapshot(entries, last) {
		t.Error("unchanged model needs a snapshot")
	}
	next := ModelSnapshot{Timestamp: 5, Provider: "anthropic", ModelAPI: "anthropic-messages", ModelID: "claude-sonnet-4-5"}
	if !NeedsModelSnapshot(entries, next) || !NeedsModelSnapshot(nil, next) {
		t.Error("a changed or first model needs a snapshot")
	}
	e := next.Entry()
	if got, ok := ParseModelSnapshot(&e); !ok || got != next {
		t.Errorf("round trip %+v", got)
	}
}

func TestWriterTornHeader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(path, []byte(`{"type":"session","version":3,"id":"ab`), 0o644)
	w, err := OpenWriter(path, WriterOptions{SessionID: "fresh"})
	if err != nil {
		t.Fatal(err)
	}
	rec := w.Recovery()
	if !rec.Torn || !rec.Created || rec.TornOffset != 0 || rec.SideFile == "" || w.Header().ID != "fresh" {
		t.Errorf("recovery %+v header %+v", rec, w.Header())
	}
	w.Append(textEntry(llm.RoleUser, "x"))
	w.Close()
	if es, h, _ := readFile(t, path, Options{Strict: true}); len(es) != 1 || h.ID != "fresh" {
		t.Errorf("entries %d header %+v", len(es), h)
	}
	if side, _ := os.ReadFile(rec.SideFile); string(side) != `{"type":"session","version":3,"id":"ab` {
		t.Errorf("side file %q", side)
	}
}
