package transcript

import (
	"context"
	"strconv"
	"testing"
)

// BenchmarkDirStoreRun is one run's work on its session: open a live
// session (40 entries), append a turn of 4 entries, close (SyncNone).
func BenchmarkDirStoreRun(b *testing.B) {
	d, err := OpenDirStore(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()
	const sessions = 16
	for s := 0; s < sessions; s++ {
		w, err := d.Open(ctx, "s"+strconv.Itoa(s), WriterOptions{Durability: SyncNone})
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < 40; i++ {
			w.AppendMessage(userMsg("earlier turn " + strconv.Itoa(i)))
		}
		w.Close()
	}
	benchTurns(b, d, func(i int) string { return "s" + strconv.Itoa(i%sessions) })
}

// benchTurns opens session id(i), appends a turn of 4 entries and closes
// it, b.N times.
func benchTurns(b *testing.B, d *DirStore, id func(int) string) {
	msg := userMsg("read AGENTS.md")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w, err := d.Open(context.Background(), id(i), WriterOptions{Durability: SyncNone})
		if err != nil {
			b.Fatal(err)
		}
		for j := 0; j < 4; j++ {
			if _, err := w.AppendMessage(msg); err != nil {
				b.Fatal(err)
			}
		}
		w.Close()
	}
}

// BenchmarkDirStoreNewSession: a fresh session per run (the loadtest's
// /v1/runs), 4 entries, SyncNone.
func BenchmarkDirStoreNewSession(b *testing.B) {
	d, err := OpenDirStore(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	benchTurns(b, d, func(i int) string { return "n" + strconv.Itoa(i) })
}
