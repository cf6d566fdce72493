package transcript

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ocbench/ocbench/llm"
)

// storeKind opens a fresh store of one implementation for a test.
type storeKind struct {
	name string
	// open returns a store and the location a second process opens it by.
	open func(t testing.TB) (Store, string)
}

func pgURL(t testing.TB) string {
	u := os.Getenv("OCBENCH_TEST_POSTGRES_URL")
	if u == "" {
		t.Skip("OCBENCH_TEST_POSTGRES_URL is not set: no PostgreSQL to test against (.ci/run starts one)")
	}
	return u
}

var storeKinds = []storeKind{
	{"jsonl", func(t testing.TB) (Store, string) {
		dir := t.TempDir()
		s, err := OpenDirStore(dir)
		if err != nil {
			t.Fatal(err)
		}
		return s, "jsonl:" + dir
	}},
	{"sqlite", func(t testing.TB) (Store, string) {
		path := filepath.Join(t.TempDir(), "agents", "main", "agent", "openclaw-agent.sqlite")
		copySQLiteTemplate(t, path)
		s, err := OpenSQLiteStore(path, SQLiteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s, "sqlite:" + path
	}},
	{"postgres", func(t testing.TB) (Store, string) {
		u := pgURL(t)
		s, err := PGOpenForTest(context.Background(), u, 3*time.Second, "")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s, u
	}},
}

// A fresh OpenClaw schema costs a second under -race: it is made once and
// copied for each test.
var (
	templateOnce sync.Once
	templateDB   []byte
	templateErr  error
)

func copySQLiteTemplate(t testing.TB, path string) {
	t.Helper()
	templateOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ocbench-sqlite-template-")
		if err != nil {
			templateErr = err
			return
		}
		defer os.RemoveAll(dir)
		p := filepath.Join(dir, "t.sqlite")
		s, err := OpenSQLiteStore(p, SQLiteOptions{})
		if err != nil {
			templateErr = err
			return
		}
		// One file without its WAL.
		s.DB().Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
		s.Close()
		templateDB, templateErr = os.ReadFile(p)
	})
	if templateErr != nil {
		t.Fatal(templateErr)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, templateDB, 0o644); err != nil {
		t.Fatal(err)
	}
}

// openStoreAt opens a store by the location storeKind.open returned.
func openStoreAt(loc string, leaseTTL time.Duration, holder string) (Store, error) {
	switch {
	case strings.HasPrefix(loc, "jsonl:"):
		return OpenDirStore(strings.TrimPrefix(loc, "jsonl:"))
	case strings.HasPrefix(loc, "sqlite:"):
		return OpenSQLiteStore(strings.TrimPrefix(loc, "sqlite:"), SQLiteOptions{})
	default:
		return PGOpenForTest(context.Background(), loc, leaseTTL, holder)
	}
}

func uniqueID(t testing.TB) string {
	return fmt.Sprintf("t%d-%d", time.Now().UnixNano(), rand.IntN(1<<30))
}

func forEachStore(t *testing.T, f func(t *testing.T, s Store, loc string)) {
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) {
			s, loc := k.open(t)
			f(t, s, loc)
		})
	}
}

func userMsg(text string) *llm.Message {
	return &llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: []byte(text)}}, Timestamp: 1}
}

func TestStoreAppendReadContinue(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store, loc string) {
		ctx := context.Background()
		id := uniqueID(t)
		w, err := s.Open(ctx, id, WriterOptions{Durability: SyncEntry})
		if err != nil {
			t.Fatal(err)
		}
		if !w.Recovery().Created {
			t.Fatal("a new session is not reported created")
		}
		first, _ := w.AppendMessage(userMsg("q1"))
		big := strings.Repeat("a long answer that compresses well ", 100) // over 1 KiB: a zstd row in SQLite
		if _, err := w.AppendMessage(&llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockText, Text: []byte(big)}}, Timestamp: 2}); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Append(&Entry{Type: TypeReset, Reason: []byte("reset"), FirstKeptEntryID: []byte(first)}); err != nil {
			t.Fatal(err)
		}
		w.AppendMessage(userMsg("q2"))
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		// Continue: the next entry chains to the last one.
		w, err = s.Open(ctx, id, WriterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if w.Recovery().Created || w.Recovery().Entries != 4 {
			t.Fatalf("reopened: %+v", w.Recovery())
		}
		w.AppendMessage(userMsg("q3"))
		w.Close()
		sc, err := ReadStoreContext(ctx, s, id)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(texts(sc.Messages), "|"); got != "q1|"+big+"|q2|q3" {
			t.Fatalf("context %q", got)
		}
		if s.Kind() != "jsonl" && sc.Header.Version != CurrentVersion {
			t.Fatalf("header version %d", sc.Header.Version)
		}
		list, err := s.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, si := range list {
			if si.ID == id {
				found = si.Entries == 5 || s.Kind() == "jsonl"
			}
		}
		if !found {
			t.Fatalf("%s not listed with 5 entries: %+v", id, list)
		}
		if ss, ok := s.(*SQLiteStore); ok {
			var z int
			ss.DB().QueryRow(`SELECT count(*) FROM transcript_events WHERE session_id = ? AND event_zstd IS NOT NULL AND navigation_json IS NOT NULL`, id).Scan(&z)
			if z != 1 {
				t.Fatalf("%d compressed rows, want 1 (the entry over 1 KiB)", z)
			}
		}
	})
}

func TestStoreSecondWriterGetsLockError(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store, loc string) {
		ctx := context.Background()
		id := uniqueID(t)
		// Concurrent openers: exactly one wins, the others get ErrLocked.
		const n = 8
		var wg sync.WaitGroup
		var mu sync.Mutex
		var won []SessionWriter
		locked := 0
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				w, err := s.Open(ctx, id, WriterOptions{})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					won = append(won, w)
				case errors.Is(err, ErrLocked):
					locked++
				default:
					t.Errorf("open: %v", err)
				}
			}()
		}
		wg.Wait()
		if len(won) != 1 || locked != n-1 {
			t.Fatalf("%d writers opened, %d locked out", len(won), locked)
		}
		// Another process (another store handle) is locked out too.
		s2, err := openStoreAt(loc, 3*time.Second, "")
		if err != nil {
			t.Fatal(err)
		}
		defer s2.Close()
		if _, err := s2.Open(ctx, id, WriterOptions{}); !errors.Is(err, ErrLocked) {
			t.Fatalf("second handle: %v, want ErrLocked", err)
		}
		won[0].Close()
		w, err := s2.Open(ctx, id, WriterOptions{})
		if err != nil {
			t.Fatalf("after close: %v", err)
		}
		w.Close()
	})
}

func TestStoreArchive(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store, loc string) {
		ctx := context.Background()
		id := uniqueID(t)
		w, err := s.Open(ctx, id, WriterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w.AppendMessage(userMsg("kept"))
		w.Close()
		info, err := s.Archive(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if info.Events < 1 || info.Bytes <= 0 {
			t.Fatalf("archive info %+v", info)
		}
		if _, err := s.Open(ctx, id, WriterOptions{}); !errors.Is(err, ErrArchived) {
			t.Fatalf("open after archive: %v", err)
		}
		sc, err := ReadStoreContext(ctx, s, id)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(texts(sc.Messages), "|"); got != "kept" {
			t.Fatalf("archived context %q", got)
		}
		list, _ := s.List(ctx)
		for _, si := range list {
			if si.ID == id && si.Archived == nil {
				t.Fatalf("listed as live: %+v", si)
			}
		}
	})
}

func TestStoreSessionSizeLimit(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store, loc string) {
		ctx := context.Background()
		id := uniqueID(t)
		w, err := s.Open(ctx, id, WriterOptions{MaxSessionBytes: 2000})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if _, err := w.AppendMessage(userMsg("small")); err != nil {
			t.Fatal(err)
		}
		_, err = w.AppendMessage(userMsg(strings.Repeat("x", 3000)))
		var se *SizeLimitError
		if !errors.As(err, &se) || !errors.Is(err, ErrSessionTooLarge) {
			t.Fatalf("oversized append: %v", err)
		}
		if _, err := w.AppendMessage(userMsg("still fine")); err != nil {
			t.Fatalf("after a refused append: %v", err)
		}
		w.Close()
		sc, _ := ReadStoreContext(ctx, s, id)
		if got := strings.Join(texts(sc.Messages), "|"); got != "small|still fine" {
			t.Fatalf("context %q", got)
		}
	})
}

// A half-written entry (a torn line; a row whose text is cut) is never
// read as an entry, and the session stays writable.
func TestStoreTornWrite(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store, loc string) {
		ctx := context.Background()
		id := uniqueID(t)
		w, err := s.Open(ctx, id, WriterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w.AppendMessage(userMsg("before"))
		w.Close()
		torn := `{"type":"message","id":"deadbeef","parentId":null,"message":{"role":"user","content":"cut her`
		switch st := s.(type) {
		case *DirStore:
			f, _ := os.OpenFile(st.Path(id), os.O_WRONLY|os.O_APPEND, 0)
			f.WriteString(torn)
			f.Close()
		case *SQLiteStore:
			if _, err := st.DB().Exec(`INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?, 100, ?, 0)`, id, torn); err != nil {
				t.Fatal(err)
			}
		default: // PostgreSQL
			if err := PGExecForTest(ctx, st, `INSERT INTO ocbench_session_events (session_id, seq, entry_id, event_json) VALUES ($1, 100, 'x', $2)`, id, torn); err != nil {
				t.Fatal(err)
			}
		}
		w, err = s.Open(ctx, id, WriterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.AppendMessage(userMsg("after")); err != nil {
			t.Fatal(err)
		}
		w.Close()
		sc, err := ReadStoreContext(ctx, s, id)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(texts(sc.Messages), "|"); got != "before|after" {
			t.Fatalf("context %q", got)
		}
	})
}

// crashKills is the number of SIGKILLs per store in TestStoreCrash:
// OCBENCH_CRASH_KILLS (the full run: OCBENCH_CRASH_KILLS=200), else 4, so
// that the README's test command stays fast (each kill starts a process).
func crashKills() int {
	if v, err := strconv.Atoi(os.Getenv("OCBENCH_CRASH_KILLS")); err == nil && v > 0 {
		return v
	}
	return 4
}

// TestStoreCrashHelper is the writer process TestStoreCrash kills: it
// appends until killed, printing each id once Append has returned.
func TestStoreCrashHelper(t *testing.T) {
	loc, id := os.Getenv("OCBENCH_CRASH_STORE"), os.Getenv("OCBENCH_CRASH_SESSION")
	if loc == "" {
		t.Skip("helper process of TestStoreCrash")
	}
	s, err := openStoreAt(loc, 400*time.Millisecond, "crash-"+strconv.Itoa(os.Getpid()))
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(3)
	}
	var w SessionWriter
	for i := 0; i < 100; i++ { // the killed writer's lease may still be live
		d, _ := strconv.Atoi(os.Getenv("OCBENCH_CRASH_DURABILITY"))
		if w, err = s.Open(context.Background(), id, WriterOptions{Durability: Durability(d)}); err == nil || !errors.Is(err, ErrLocked) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(3)
	}
	fmt.Println("OPEN")
	out := bufio.NewWriter(os.Stdout)
	for i := 0; ; i++ {
		text := strings.Repeat("z", rand.IntN(3000))
		eid, err := w.AppendMessage(userMsg(text))
		if err != nil {
			fmt.Fprintln(out, "ERR", err)
			out.Flush()
			os.Exit(4)
		}
		fmt.Fprintln(out, "ACK", eid)
		out.Flush()
	}
}

// TestStoreCrash kills writer processes with SIGKILL at random moments and
// checks after each kill that the store opens and every acknowledged entry
// is there.
func TestStoreCrash(t *testing.T) {
	kills := crashKills()
	forEachStore(t, func(t *testing.T, s Store, loc string) {
		ctx := context.Background()
		id := uniqueID(t)
		acked := map[string]bool{}
		for k := 0; k < kills; k++ {
			cmd := exec.Command(os.Args[0], "-test.run=^TestStoreCrashHelper$", "-test.v=false")
			// Every policy: an acknowledged entry survives a crash of the
			// process under each (SyncNone only risks a machine crash).
			cmd.Env = append(os.Environ(), "OCBENCH_CRASH_STORE="+loc, "OCBENCH_CRASH_SESSION="+id,
				"OCBENCH_CRASH_DURABILITY="+strconv.Itoa(k%3))
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(out)
			opened, first := false, true
			// A writer that never acknowledges is killed after 10 s (and the
			// test fails below).
			guard := time.AfterFunc(10*time.Second, func() { cmd.Process.Signal(syscall.SIGKILL) })
			killAt := make(chan struct{})
			go func() {
				for sc.Scan() {
					line := sc.Text()
					switch {
					case line == "OPEN":
						opened = true
					case strings.HasPrefix(line, "ACK "):
						acked[strings.TrimPrefix(line, "ACK ")] = true
						if first {
							// Killed at a random moment of the appends after
							// the first: mid-write, mid-commit, mid-fsync.
							first = false
							guard.Stop()
							time.AfterFunc(time.Duration(rand.IntN(40))*time.Millisecond, func() { cmd.Process.Signal(syscall.SIGKILL) })
						}
					case strings.HasPrefix(line, "ERR"):
						t.Errorf("helper: %s", line)
						cmd.Process.Signal(syscall.SIGKILL)
					}
				}
				close(killAt)
			}()
			<-killAt
			cmd.Wait()
			if (!opened || first) && !t.Failed() {
				t.Fatalf("kill %d: the helper never opened the session or never acknowledged an append", k)
			}
			// The store opens and holds every acknowledged entry.
			r, err := s.Reader(ctx, id, Options{SkipContent: true, KeepUnknown: true})
			if err != nil {
				t.Fatalf("kill %d: reader: %v", k, err)
			}
			seen := map[string]bool{}
			for r.Next() {
				seen[string(r.Entry().ID)] = true
			}
			r.Close()
			for a := range acked {
				if !seen[a] {
					t.Fatalf("kill %d: acknowledged entry %s lost", k, a)
				}
			}
		}
		t.Logf("%s: %d kills, %d acknowledged entries, 0 lost", s.Kind(), kills, len(acked))
		w, err := s.Open(ctx, id, WriterOptions{})
		if err != nil && !errors.Is(err, ErrLocked) {
			t.Fatalf("store does not open after the kills: %v", err)
		}
		if w != nil {
			w.Close()
		}
	})
}

// A kill during Rotate leaves <file>.rotate-tmp and a half-written
// <file>.archive-<n>.zst.tmp; the next OpenWriter removes them (before:
// they stayed forever, and every later rotation left more).
func TestOpenWriterRemovesStaleRotationTemps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	w, err := OpenWriter(path, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.AppendMessage(userMsg("q"))
	w.Close()
	stale := []string{path + ".rotate-tmp", path + ".archive-1.zst.tmp", path + ".migrate-tmp"}
	for _, s := range stale {
		os.WriteFile(s, []byte("partial"), 0o644)
	}
	// Not ours: another file's temp, and a directory of that name.
	other := filepath.Join(dir, "other.jsonl.rotate-tmp")
	os.WriteFile(other, []byte("x"), 0o644)
	w, err = OpenWriter(path, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if got := w.Recovery().StaleTemps; len(got) != len(stale) {
		t.Fatalf("removed %q", got)
	}
	for _, s := range stale {
		if _, err := os.Lstat(s); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s still there", s)
		}
	}
	if _, err := os.Lstat(other); err != nil {
		t.Fatalf("another session's file was removed: %v", err)
	}
	sc, _ := LoadContext(path)
	if got := strings.Join(texts(sc.Messages), "|"); got != "q" {
		t.Fatalf("context %q", got)
	}
}

// A URL whose store package is not linked is a typed error naming the
// package to import, never a directory of that name.
func TestOpenStoreNotLinked(t *testing.T) {
	openersMu.Lock()
	saved := openers
	openers = map[string]StoreOpener{}
	openersMu.Unlock()
	defer func() {
		openersMu.Lock()
		openers = saved
		openersMu.Unlock()
	}()
	dir := t.TempDir()
	t.Chdir(dir)
	for _, name := range []string{"postgres://ocbench@127.0.0.1:5432/db", "postgresql://h/db", "POSTGRES://h/db"} {
		_, err := OpenStore(context.Background(), name)
		var nl *StoreNotLinkedError
		if !errors.As(err, &nl) || !errors.Is(err, ErrStoreNotLinked) {
			t.Fatalf("%s: %v", name, err)
		}
		if nl.Import != "github.com/ocbench/ocbench/transcript/pgstore" || !strings.Contains(err.Error(), `import _ "github.com/ocbench/ocbench/transcript/pgstore"`) {
			t.Fatalf("%s: %v", name, err)
		}
	}
	_, err := OpenStore(context.Background(), "mysql://h/db")
	var nl *StoreNotLinkedError
	if !errors.As(err, &nl) || nl.Import != "" {
		t.Fatalf("unknown scheme: %v", err)
	}
	if des, _ := os.ReadDir(dir); len(des) != 0 {
		t.Fatalf("a URL made a directory: %v", des)
	}
	// A plain directory name is still a JSONL store.
	st, err := OpenStore(context.Background(), filepath.Join(dir, "sessions"))
	if err != nil || st.Kind() != "jsonl" {
		t.Fatalf("directory: %v", err)
	}
}
