package pgstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/transcript"
)

// The Store contract suite runs on this store from package transcript's
// tests (store_test.go, linked through pglink_test.go); these are the
// PostgreSQL-only cases.

func pgURL(t testing.TB) string {
	u := os.Getenv("OCBENCH_TEST_POSTGRES_URL")
	if u == "" {
		t.Skip("OCBENCH_TEST_POSTGRES_URL is not set: no PostgreSQL to test against (.ci/run starts one)")
	}
	return u
}

func uniqueID(t testing.TB) string {
	return fmt.Sprintf("t%d-%d", time.Now().UnixNano(), rand.IntN(1<<30))
}

func userMsg(text string) *llm.Message {
	return &llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: []byte(text)}}, Timestamp: 1}
}

func texts(ms []llm.Message) []string {
	var out []string
	for _, m := range ms {
		var b strings.Builder
		for _, c := range m.Content {
			b.Write(c.Text)
		}
		out = append(out, b.String())
	}
	return out
}

// Importing the package registers it: transcript.OpenStore opens
// postgres:// and postgresql:// names as a *Store.
func TestOpenStoreByName(t *testing.T) {
	u := pgURL(t)
	ctx := context.Background()
	for _, name := range []string{u, "postgresql" + strings.TrimPrefix(u, "postgres")} {
		st, err := transcript.OpenStore(ctx, name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, ok := st.(*Store); !ok || st.Kind() != "postgres" {
			t.Fatalf("%s: %T %s", name, st, st.Kind())
		}
		id := uniqueID(t)
		w, err := st.Open(ctx, id, transcript.WriterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.AppendMessage(userMsg("hello")); err != nil {
			t.Fatal(err)
		}
		w.Close()
		sc, err := transcript.ReadStoreContext(ctx, st, id)
		if err != nil || strings.Join(texts(sc.Messages), "|") != "hello" {
			t.Fatalf("read back: %v %q", err, texts(sc.Messages))
		}
		st.Close()
	}
	if _, err := transcript.OpenStore(ctx, "postgres://127.0.0.1:1/x?connect_timeout=1"); err == nil || errors.Is(err, transcript.ErrStoreNotLinked) {
		t.Fatalf("unreachable server: %v", err)
	}
}

// A PostgreSQL writer whose node dies loses its lease after the TTL; the
// next writer takes over, and the dead one can never append again.
func TestLeaseExpiresForADeadNode(t *testing.T) {
	u := pgURL(t)
	ctx := context.Background()
	a, err := Open(ctx, u, Options{LeaseTTL: time.Second, Holder: "node-a"})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(ctx, u, Options{LeaseTTL: time.Second, Holder: "node-b"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	id := uniqueID(t)
	wa, err := a.Open(ctx, id, transcript.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wa.AppendMessage(userMsg("from a"))
	if _, err := b.Open(ctx, id, transcript.WriterOptions{}); !errors.Is(err, transcript.ErrLocked) {
		t.Fatalf("b while a is alive: %v", err)
	}
	// Node a stops renewing (it "dies" without releasing).
	pa := wa.(*pgWriter)
	close(pa.stop)
	pa.wg.Wait()
	deadline := time.Now().Add(5 * time.Second)
	var wb transcript.SessionWriter
	for time.Now().Before(deadline) {
		if wb, err = b.Open(ctx, id, transcript.WriterOptions{}); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if wb == nil {
		t.Fatalf("b never took over: %v", err)
	}
	defer wb.Close()
	if _, err := wb.AppendMessage(userMsg("from b")); err != nil {
		t.Fatal(err)
	}
	if _, err := pa.AppendMessage(userMsg("late a")); !errors.Is(err, transcript.ErrLeaseLost) {
		t.Fatalf("dead node's append: %v, want transcript.ErrLeaseLost", err)
	}
	sc, _ := transcript.ReadStoreContext(ctx, b, id)
	if got := strings.Join(texts(sc.Messages), "|"); got != "from a|from b" {
		t.Fatalf("context %q", got)
	}
}
