package transcript

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	openclawStore   = "../testdata/sessions/openclaw-2026.9.6-agent.sqlite"
	openclawSession = "0f0e0d0c-1111-4222-8333-444455556666"
)

// copyOpenClawStore copies the store OpenClaw 2026.9.6 wrote into a
// temporary agent directory.
func copyOpenClawStore(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(openclawStore)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "agents", "main", "agent", "openclaw-agent.sqlite")
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A session OpenClaw wrote (header row 0, UUID entry ids, a compressed
// assistant row) is read and continued: the new entry hangs from
// OpenClaw's last one, and OpenClaw's derived index is marked for rebuild.
func TestContinueSessionOpenClawWrote(t *testing.T) {
	p := copyOpenClawStore(t)
	st, err := OpenSQLiteStore(p, SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	sc, err := ReadStoreContext(ctx, st, openclawSession)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Header.Version != 4 || len(sc.Messages) != 2 || !strings.HasPrefix(texts(sc.Messages)[1], "The notes say: The quick brown fox") {
		t.Fatalf("read %+v: %q", sc.Header, texts(sc.Messages))
	}
	w, err := st.Open(ctx, openclawSession, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	last := w.Leaf()
	if len(last) != 36 {
		t.Fatalf("leaf %q: not OpenClaw's last entry", last)
	}
	if _, err := w.AppendMessage(userMsg("and continued by ocbench")); err != nil {
		t.Fatal(err)
	}
	w.Close()
	sc, err = ReadStoreContext(ctx, st, openclawSession)
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(sc.Messages); len(got) != 3 || got[2] != "and continued by ocbench" {
		t.Fatalf("continued context %q", got)
	}
	var seq int
	var parent string
	var rebuild int
	st.DB().QueryRow(`SELECT seq, parent_id FROM transcript_event_identities WHERE session_id = ? ORDER BY seq DESC LIMIT 1`, openclawSession).Scan(&seq, &parent)
	st.DB().QueryRow(`SELECT needs_rebuild FROM session_transcript_index_state WHERE session_id = ?`, openclawSession).Scan(&rebuild)
	if seq != 3 || parent != last || rebuild != 1 {
		t.Fatalf("new row seq %d parent %q (want 3, %q), needs_rebuild %d", seq, parent, last, rebuild)
	}
	list, _ := st.List(ctx)
	if len(list) != 1 || list[0].ID != openclawSession || list[0].Entries != 3 {
		t.Fatalf("list %+v", list)
	}
}
