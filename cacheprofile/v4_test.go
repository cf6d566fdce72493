package cacheprofile

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/transcript"
)

// newV4 is newV3 with OpenClaw 2026.9.6's version-4 header.
func newV4() *v3 {
	s := &v3{ms: 1_780_000_000_000}
	s.b.WriteString(`{"type":"session","version":4,"id":"s4","timestamp":"2026-09-10T00:00:00.000Z","cwd":"/w"}` + "\n")
	return s
}

// A reset restarts the history window: the first call after it is a
// recorded miss that the reset explains, and the calls after that are
// hits on the new, shorter prefix.
func TestResetExplainsTheMissAfterIt(t *testing.T) {
	s := newV4()
	s.user(strings.Repeat("first question ", 200))
	s.call(1, "anthropic", "claude-sonnet-4-5", "stop", 10, 0, 6000)
	s.user("second question")
	s.call(30, "anthropic", "claude-sonnet-4-5", "stop", 10, 6000, 300)
	s.add("", "reset", `,"reason":"reset"`)
	s.user("after the reset")
	s.call(30, "anthropic", "claude-sonnet-4-5", "stop", 10, 0, 5200)
	s.user("and again")
	s.call(30, "anthropic", "claude-sonnet-4-5", "stop", 10, 5200, 100)
	rep, err := Profile(strings.NewReader(s.b.String()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Calls != 4 || rep.Resets != 1 {
		t.Fatalf("calls %d resets %d", rep.Calls, rep.Resets)
	}
	if rep.UnexplainedN != 0 {
		t.Fatalf("%d unexplained misses: %+v", rep.UnexplainedN, rep.Unexplained)
	}
	if rep.Explained["reset"] != 1 {
		t.Fatalf("explained %v", rep.Explained)
	}
	if rep.UnknownSkipped != 0 {
		t.Fatalf("%d unknown entries (the reset or header counted as unknown)", rep.UnknownSkipped)
	}
}

// A leaf entry moves the active branch: the calls after it are sent the
// branch it names, not the abandoned one.
func TestLeafMovesTheProfiledBranch(t *testing.T) {
	s := newV4()
	s.user(strings.Repeat("question ", 300))
	a := s.call(1, "anthropic", "claude-sonnet-4-5", "stop", 10, 0, 6000)
	s.user(strings.Repeat("abandoned ", 3000))
	s.call(10, "anthropic", "claude-sonnet-4-5", "stop", 10, 6000, 8000)
	s.add("", "leaf", `,"targetId":"`+a+`"`)
	s.user("retry")
	s.call(10, "anthropic", "claude-sonnet-4-5", "stop", 10, 6000, 50)
	rep, err := Profile(strings.NewReader(s.b.String()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.LeafMoves != 1 || rep.UnexplainedN != 0 {
		t.Fatalf("leaf moves %d, unexplained %d: %+v", rep.LeafMoves, rep.UnexplainedN, rep.Unexplained)
	}
	if last := rep.All; last.Calls != 3 || last.Agree != 3 {
		t.Fatalf("agreement %+v", rep.All)
	}
}

// A line over the reader's limit is skipped and reported; the calls after
// it are still profiled (before: the profile stopped with an error there).
func TestLongLineSkippedAndProfileContinues(t *testing.T) {
	s := newV3()
	s.user("q")
	s.call(1, "anthropic", "claude-sonnet-4-5", "toolUse", 10, 0, 5000)
	s.add("", "custom", `,"customType":"big","data":"`+strings.Repeat("x", 33<<20)+`"`)
	s.tool("t2", "ok")
	s.call(1, "anthropic", "claude-sonnet-4-5", "stop", 10, 5000, 20)
	rep, err := Profile(strings.NewReader(s.b.String()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.LongLines != 1 || rep.Calls != 2 {
		t.Fatalf("long lines %d, calls %d", rep.LongLines, rep.Calls)
	}
}

// Sessions written by ocbench into OpenClaw's SQLite store (version 4,
// compressed rows, a reset) profile like their JSONL, and cold-archived
// sessions are read from the archive or reported with their sizes.
func TestSQLiteStoreV4AndColdArchives(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent", "openclaw-agent.sqlite")
	st, err := transcript.OpenSQLiteStore(path, transcript.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s := newV4()
	s.user(strings.Repeat("first question ", 200))
	s.call(1, "anthropic", "claude-sonnet-4-5", "stop", 10, 0, 6000)
	s.add("", "reset", `,"reason":"idle"`)
	s.user("after the reset")
	s.call(30, "anthropic", "claude-sonnet-4-5", "stop", 10, 0, 5200)
	for _, id := range []string{"live", "archived", "lost"} {
		w, err := st.Open(ctx, id, transcript.WriterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		r := transcript.NewReader(strings.NewReader(s.b.String()), transcript.Options{})
		for r.Next() {
			e := r.Entry().Clone()
			e.ID = nil
			if _, err := w.Append(&e); err != nil {
				t.Fatal(err)
			}
		}
		w.Close()
	}
	for _, id := range []string{"archived", "lost"} {
		if _, err := st.Archive(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	// "lost": a file archive whose file is not there.
	if _, err := st.DB().Exec(`UPDATE session_transcript_cold_archives SET storage = 'file', archive_blob = NULL WHERE session_id = 'lost'`); err != nil {
		t.Fatal(err)
	}
	st.Close()
	reps, err := ProfileFile(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != 3 {
		t.Fatalf("%d reports", len(reps))
	}
	for _, r := range reps {
		switch r.SessionID {
		case "live", "archived":
			if r.Calls != 2 || r.Resets != 1 || r.UnexplainedN != 0 || r.Explained["reset"] != 1 {
				t.Fatalf("%s: calls %d resets %d unexplained %d explained %v", r.SessionID, r.Calls, r.Resets, r.UnexplainedN, r.Explained)
			}
			if (r.SessionID == "archived") != (r.Archived != nil && r.Archived.Read) {
				t.Fatalf("%s: archived %+v", r.SessionID, r.Archived)
			}
		case "lost":
			if r.Archived == nil || r.Archived.Read || r.Archived.Events != 6 || r.Archived.ArchiveBytes == 0 {
				t.Fatalf("lost: %+v", r.Archived)
			}
		}
	}
	var out bytes.Buffer
	WriteText(&out, reps)
	if !strings.Contains(out.String(), "cold archive (file storage)") {
		t.Fatalf("text report does not say the session is archived:\n%s", out.String())
	}
}

// The README's example: a version-4 session with a reset (testdata).
func TestV4ResetExampleFile(t *testing.T) {
	reps, err := ProfileFile("testdata/v4-reset.jsonl", Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := reps[0]
	if r.Source != "jsonl v4" || r.Calls != 4 || r.UnexplainedN != 0 || r.Explained["reset"] != 1 || r.Explained["cold"] != 1 || r.UnknownSkipped != 0 {
		t.Fatalf("source %q calls %d unexplained %d explained %v unknown %d", r.Source, r.Calls, r.UnexplainedN, r.Explained, r.UnknownSkipped)
	}
}
