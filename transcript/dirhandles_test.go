package transcript

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

func dirBranch(t *testing.T, d *DirStore, id string) string {
	t.Helper()
	sc, err := ReadStoreContext(context.Background(), d, id)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(texts(sc.Messages), "|")
}

func appendClose(t *testing.T, d *DirStore, id string, msgs ...string) {
	t.Helper()
	w, err := d.Open(context.Background(), id, WriterOptions{Durability: SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if _, err := w.AppendMessage(userMsg(m)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// A closed session's handle is kept and reused: the next run continues the
// chain, and the old writer stays closed.
func TestDirStoreKeepsIdleHandles(t *testing.T) {
	d, err := OpenDirStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()
	w1, err := d.Open(ctx, "s1", WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w1.AppendMessage(userMsg("a"))
	w1.Close()
	if d.IdleHandles() != 1 {
		t.Fatalf("idle handles %d after a close", d.IdleHandles())
	}
	w2, err := d.Open(ctx, "s1", WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.IdleHandles() != 0 || w2.Recovery().Created || w2.Recovery().Entries != 1 {
		t.Fatalf("resumed: idle %d, recovery %+v", d.IdleHandles(), w2.Recovery())
	}
	if _, err := w1.AppendMessage(userMsg("stale")); !errors.Is(err, ErrClosed) {
		t.Fatalf("the closed writer appended: %v", err)
	}
	if err := w1.Close(); !errors.Is(err, ErrClosed) {
		t.Fatalf("second close: %v", err)
	}
	// A second writer of the resumed session is locked out.
	if _, err := d.Open(ctx, "s1", WriterOptions{}); !errors.Is(err, ErrLocked) {
		t.Fatalf("second open while resumed: %v", err)
	}
	w2.AppendMessage(userMsg("b"))
	w2.Close()
	if got := dirBranch(t, d, "s1"); got != "a|b" {
		t.Fatalf("branch %q", got)
	}
}

// An idle handle holds no lock, and anything another writer did to the
// session meanwhile (an append, a rotation, a rewrite, a lock file
// replaced) makes the store open the session afresh.
func TestDirStoreIdleHandleSeesOtherWriters(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, path string)
		want   string
	}{
		{"append", func(t *testing.T, path string) {
			w, err := OpenWriter(path, WriterOptions{})
			if err != nil {
				t.Fatal(err) // the idle handle must not hold the lock
			}
			w.AppendMessage(userMsg("other"))
			w.Close()
		}, "a|other|b"},
		{"rotate", func(t *testing.T, path string) {
			w, err := OpenWriter(path, WriterOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Rotate(); err != nil {
				t.Fatal(err)
			}
			w.AppendMessage(userMsg("other"))
			w.Close()
		}, "a|other|b"},
		{"rewritten", func(t *testing.T, path string) {
			// Another file of the same size put in its place: the entry
			// has another id, which the next append must hang from.
			b, _ := os.ReadFile(path)
			lines := strings.SplitN(string(b), "\n", 3)
			i := strings.Index(lines[1], `"id":"`) + len(`"id":"`)
			lines[1] = lines[1][:i] + "0badc0de" + lines[1][i+8:]
			os.WriteFile(path+".new", []byte(strings.Join(lines, "\n")), 0o644)
			os.Rename(path+".new", path)
		}, "a|b"},
		{"lock file replaced", func(t *testing.T, path string) {
			os.Remove(sessionLockPath(path))
			w, err := OpenWriter(path, WriterOptions{})
			if err != nil {
				t.Fatal(err)
			}
			w.AppendMessage(userMsg("other"))
			w.Close()
		}, "a|other|b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := OpenDirStore(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			appendClose(t, d, "s", "a")
			tc.change(t, d.Path("s"))
			appendClose(t, d, "s", "b")
			if got := dirBranch(t, d, "s"); got != tc.want {
				t.Fatalf("branch %q, want %q", got, tc.want)
			}
		})
	}
	// Held by another writer while idle here: locked, not reused.
	d, _ := OpenDirStore(t.TempDir())
	defer d.Close()
	appendClose(t, d, "s", "a")
	other, err := OpenWriter(d.Path("s"), WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Open(ctx, "s", WriterOptions{}); !errors.Is(err, ErrLocked) {
		t.Fatalf("open while another writer holds it: %v", err)
	}
	other.Close()
	appendClose(t, d, "s", "b")
	if got := dirBranch(t, d, "s"); got != "a|b" {
		t.Fatalf("branch %q", got)
	}
	// Archived while idle: refused.
	appendClose(t, d, "s", "c")
	if _, err := d.Archive(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Open(ctx, "s", WriterOptions{}); !errors.Is(err, ErrArchived) {
		t.Fatalf("open after archive: %v", err)
	}
}

// The idle handles are bounded (least recently used out) and closed with
// the store.
func TestDirStoreIdleBound(t *testing.T) {
	d := &DirStore{Dir: t.TempDir(), MaxIdle: 8}
	for i := 0; i < 50; i++ {
		appendClose(t, d, fmt.Sprintf("s%d", i), "x")
		if n := d.IdleHandles(); n > 8 {
			t.Fatalf("%d idle handles", n)
		}
	}
	// The most recent are kept: s49 resumes without a scan.
	w, err := d.Open(context.Background(), "s49", WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.IdleHandles() != 7 {
		t.Fatalf("s49 was not idle: %d", d.IdleHandles())
	}
	w.Close()
	d.Close()
	if d.IdleHandles() != 0 {
		t.Fatal("Close left idle handles")
	}
	none := &DirStore{Dir: t.TempDir(), MaxIdle: -1}
	appendClose(t, none, "s", "x")
	if none.IdleHandles() != 0 {
		t.Fatal("MaxIdle -1 kept a handle")
	}
}

// On Linux the sessions of a directory share one lock file: a new session
// creates its transcript and nothing else, and the locks of different
// sessions never conflict.
func TestOneLockFilePerDirectory(t *testing.T) {
	if sessionLockPath("/d/x.jsonl") != "/d/.ocbench-locks" {
		t.Skip("flock side files on this system")
	}
	dir := t.TempDir()
	var ws []*Writer
	for i := 0; i < 20; i++ {
		w, err := OpenWriter(fmt.Sprintf("%s/s%d.jsonl", dir, i), WriterOptions{Durability: SyncNone})
		if err != nil {
			t.Fatalf("session %d: %v", i, err)
		}
		ws = append(ws, w)
	}
	des, _ := os.ReadDir(dir)
	if len(des) != 21 {
		t.Fatalf("%d files for 20 sessions", len(des))
	}
	if _, err := OpenWriter(dir+"/s3.jsonl", WriterOptions{}); !errors.Is(err, ErrLocked) {
		t.Fatalf("a second writer of s3: %v", err)
	}
	for _, w := range ws {
		w.Close()
	}
	w, err := OpenWriter(dir+"/s3.jsonl", WriterOptions{})
	if err != nil {
		t.Fatalf("s3 after its writer closed: %v", err)
	}
	w.Close()
}
