package engine

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/transcript"
)

// A run keeps its session in any transcript.Store: here OpenClaw's SQLite
// store. A second run continues it; a run while another holds the
// session fails with the store's lock error.
func TestRunWithSQLiteSessionStore(t *testing.T) {
	e := newRunEnv(t,
		fakeTurn{msg: assistantCalls([3]string{"c1", "read", `{"path":"notes.txt"}`})},
		fakeTurn{msg: assistantText("first answer")},
		fakeTurn{msg: assistantText("second answer")},
	)
	st, err := transcript.OpenSQLiteStore(filepath.Join(e.dir, "agent", "openclaw-agent.sqlite"), transcript.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p := e.params("read the notes")
	p.SessionFile = ""
	p.SessionStore = st
	p.SessionID = "store-run"
	if _, err := Run(context.Background(), p); err != nil {
		t.Fatalf("run 1: %v", err)
	}
	p.Prompt = "again"
	if _, err := Run(context.Background(), p); err != nil {
		t.Fatalf("run 2: %v", err)
	}
	sc, err := transcript.ReadStoreContext(context.Background(), st, "store-run")
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range sc.Messages {
		roles = append(roles, m.Role.String())
	}
	if got := strings.Join(roles, ","); got != "user,assistant,toolResult,assistant,user,assistant" {
		t.Fatalf("stored branch %s", got)
	}
	if sc.Header.Version != transcript.CurrentVersion {
		t.Fatalf("header version %d", sc.Header.Version)
	}
	w, err := st.Open(context.Background(), "store-run", transcript.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	_, err = Run(context.Background(), p)
	if !errors.Is(err, transcript.ErrLocked) {
		t.Fatalf("run while locked: %v", err)
	}
}

// A session past Session.MaxSessionBytes fails the run with the typed
// error, and nothing of the refused entry is written.
func TestRunSessionSizeLimit(t *testing.T) {
	e := newRunEnv(t, fakeTurn{msg: assistantText("fine")}, fakeTurn{msg: assistantText("never")})
	p := e.params("first")
	p.Session.MaxSessionBytes = 1200
	if _, err := Run(context.Background(), p); err != nil {
		t.Fatalf("run 1: %v", err)
	}
	p.Prompt = strings.Repeat("a long prompt ", 100)
	_, err := Run(context.Background(), p)
	if !errors.Is(err, transcript.ErrSessionTooLarge) {
		t.Fatalf("run 2: %v, want ErrSessionTooLarge", err)
	}
	msgs, _ := sessionRoles(t, e.session)
	if len(msgs) != 2 {
		t.Fatalf("%d messages stored, want the first run's 2", len(msgs))
	}
}
