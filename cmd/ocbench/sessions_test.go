package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/transcript"
)

// `ocbench run --sessions sqlite:PATH` continues a session OpenClaw
// 2026.9.6 wrote (testdata/sessions/openclaw-2026.9.6-agent.sqlite).
func TestRunContinuesOpenClawStore(t *testing.T) {
	b, err := os.ReadFile("../../testdata/sessions/openclaw-2026.9.6-agent.sqlite")
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "agents", "main", "agent", "openclaw-agent.sqlite")
	os.MkdirAll(filepath.Dir(db), 0o755)
	if err := os.WriteFile(db, b, 0o644); err != nil {
		t.Fatal(err)
	}
	const id = "0f0e0d0c-1111-4222-8333-444455556666"
	_, errs, code := runRun(t, "--quiet", "--sessions", "sqlite:"+db, "--session-id", id, "read", "the", "instructions")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	st, err := transcript.OpenSQLiteStore(db, transcript.SQLiteOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sc, err := transcript.ReadStoreContext(context.Background(), st, id)
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range sc.Messages {
		roles = append(roles, m.Role.String())
	}
	// OpenClaw's user + assistant, then the run: user, tool call, result, answer.
	if got := strings.Join(roles, ","); got != "user,assistant,user,assistant,toolResult,assistant" {
		t.Fatalf("branch after the run: %s", got)
	}
}
