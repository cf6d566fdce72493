package transcript_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/transcript"
)

// A session kept in OpenClaw 2026.9.6's own SQLite store: appended under
// the session's writer lock, then read back as the model's context.
func ExampleOpenSQLiteStore() {
	dir, _ := os.MkdirTemp("", "example-store-")
	defer os.RemoveAll(dir)
	st, err := transcript.OpenSQLiteStore(filepath.Join(dir, "agents", "main", "agent", "openclaw-agent.sqlite"), transcript.SQLiteOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	ctx := context.Background()
	w, err := st.Open(ctx, "s1", transcript.WriterOptions{Durability: transcript.SyncEntry})
	if err != nil {
		fmt.Println(err)
		return
	}
	msg := llm.TextMessage(llm.RoleUser, "hello")
	w.AppendMessage(&msg)
	// A second writer of the same session is refused while w holds it.
	if _, err := st.Open(ctx, "s1", transcript.WriterOptions{}); err != nil {
		fmt.Println("second writer:", err != nil)
	}
	w.Close()
	sc, _ := transcript.ReadStoreContext(ctx, st, "s1")
	fmt.Println(sc.Header.Version, len(sc.Messages), sc.Messages[0].TextContent())
	// Output:
	// second writer: true
	// 4 1 hello
}
