package transcript

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/llm"
)

func readFileBytes(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// cycleReader yields head once, then body over and over.
type cycleReader struct {
	head, body []byte
	off        int
	inBody     bool
}

func (c *cycleReader) Read(p []byte) (int, error) {
	src := c.head
	if c.inBody {
		src = c.body
	}
	n := copy(p, src[c.off:])
	c.off += n
	if c.off == len(src) {
		c.off, c.inBody = 0, true
	}
	return n, nil
}

// steadyAllocs returns the allocations of one Next on an endless stream
// after a warm-up pass over body.
func steadyAllocs(t *testing.T, head, body []byte, opts Options, wantType EntryType) float64 {
	t.Helper()
	r := NewReader(&cycleReader{head: head, body: body}, opts)
	for i := 0; i < 3*bytes.Count(body, []byte("\n")); i++ {
		if !r.Next() {
			t.Fatalf("Next false: %v", r.Err())
		}
	}
	seen := false
	allocs := testing.AllocsPerRun(2000, func() {
		if !r.Next() {
			t.Fatalf("Next false: %v", r.Err())
		}
		if r.Entry().Type == wantType {
			seen = true
		}
	})
	if !seen {
		t.Fatalf("no %v entry read", wantType)
	}
	return allocs
}

// TestReaderSteadyStateAllocs pins zero allocations per entry in steady
// state: for every entry (messages included) with RawMessages, and for
// non-message entries with messages parsed.
func TestReaderSteadyStateAllocs(t *testing.T) {
	data := readFileBytes(t, piV1File)
	nl := bytes.IndexByte(data, '\n') + 1
	if a := steadyAllocs(t, data[:nl], data[nl:], Options{RawMessages: true, KeepUnknown: true}, TypeMessage); a > 0 {
		t.Errorf("RawMessages: %.2f allocations per entry, want 0", a)
	}

	head := []byte(`{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}` + "\n")
	var b strings.Builder
	for i := 0; i < 50; i++ {
		fmt.Fprintf(&b, `{"type":"thinking_level_change","id":"%08x","parentId":"%08x","timestamp":"2026-01-01T00:00:01.000Z","thinkingLevel":"high"}`+"\n", i+1, i)
		fmt.Fprintf(&b, `{"type":"custom","id":"c%07x","parentId":"%08x","timestamp":"2026-01-01T00:00:01.000Z","customType":"model-snapshot","data":{"provider":"anthropic","modelId":"x"}}`+"\n", i, i+1)
		fmt.Fprintf(&b, `{"type":"model_change","id":"m%07x","parentId":"c%07x","timestamp":"2026-01-01T00:00:02.000Z","provider":"anthropic","modelId":"claude"}`+"\n", i, i)
		fmt.Fprintf(&b, `{"type":"compaction","id":"k%07x","parentId":"m%07x","timestamp":"2026-01-01T00:00:03.000Z","summary":"S","firstKeptEntryId":"c%07x","tokensBefore":5,"details":{"readFiles":["a"]}}`+"\n", i, i, i)
	}
	if a := steadyAllocs(t, head, []byte(b.String()), Options{}, TypeCompaction); a > 0 {
		t.Errorf("non-message entries: %.2f allocations per entry, want 0", a)
	}
}

func BenchmarkReadLargeSession(b *testing.B) {
	data := readFileBytes(b, piV1File)
	for _, mode := range []struct {
		name string
		opts Options
	}{{"messages", Options{}}, {"raw", Options{RawMessages: true}}, {"skip", Options{SkipContent: true}}} {
		b.Run(mode.name, func(b *testing.B) {
			br := bytes.NewReader(data)
			r := NewReader(br, mode.opts)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				br.Reset(data)
				r.Reset(br)
				for r.Next() {
				}
				if r.Err() != nil {
					b.Fatal(r.Err())
				}
			}
			b.ReportMetric(float64(r.Stats().Entries), "entries/op")
		})
	}
}

func BenchmarkReadZstdArchive(b *testing.B) {
	dir := b.TempDir()
	archive := filepath.Join(dir, "a.zst")
	data := readFileBytes(b, piV1File)
	if err := compressFile(bytes.NewReader(data), archive); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := OpenFile(archive, Options{RawMessages: true})
		if err != nil {
			b.Fatal(err)
		}
		for r.Next() {
		}
		if r.Err() != nil || r.Stats().Bytes != int64(len(data)) {
			b.Fatal(r.Err(), r.Stats().Bytes)
		}
		r.Close()
	}
}

func BenchmarkLoadContext(b *testing.B) {
	data := readFileBytes(b, piV1File)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		sc, err := LoadContext(piV1File)
		if err != nil || len(sc.Messages) != 914 {
			b.Fatal(err, len(sc.Messages))
		}
	}
}

func BenchmarkAppend(b *testing.B) {
	m := llm.TextMessage(llm.RoleAssistant, strings.Repeat("a reasonably sized assistant reply. ", 10))
	m.StopReason = llm.StopStop
	m.Usage = llm.Usage{Input: 100, Output: 50, CacheRead: 1000, TotalTokens: 1150}
	e := &Entry{Type: TypeMessage, Message: &m, Timestamp: 1}
	line := len(AppendEntryJSON(nil, e)) + 1
	for _, d := range []Durability{SyncEntry, SyncTurn, SyncNone} {
		b.Run(d.String(), func(b *testing.B) {
			w, err := OpenWriter(filepath.Join(b.TempDir(), "s.jsonl"), WriterOptions{Durability: d})
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			b.SetBytes(int64(line))
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := w.Append(e); err != nil {
					b.Fatal(err)
				}
				// A turn is about 4 entries (assistant, tool results).
				if i++; i%4 == 0 {
					w.EndTurn()
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
		})
	}
}

func BenchmarkPrepare(b *testing.B) {
	sc, err := LoadContext(piV1File)
	if err != nil {
		b.Fatal(err)
	}
	for _, api := range []llm.API{"anthropic-messages", "openai-responses"} {
		b.Run(string(api), func(b *testing.B) {
			opts := PrepareOptions{Policy: PolicyForAPI(api), Now: func() int64 { return 1 }}
			b.ReportAllocs()
			for b.Loop() {
				out, _ := Prepare(sc.Messages, opts)
				if len(out) == 0 {
					b.Fatal("empty")
				}
			}
			b.ReportMetric(float64(len(sc.Messages)), "messages/op")
		})
	}
}
