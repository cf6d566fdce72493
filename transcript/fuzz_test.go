package transcript

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ocbench/ocbench/llm"
)

// FuzzReader feeds arbitrary bytes to the Reader. It must never panic or
// loop, its counts must add up, a torn line must be the input's tail, and
// every entry it returns must survive a write/read round trip through
// AppendEntryJSON. Seeds: testdata/fuzz/FuzzReader (cuts of the two
// session files and hand-made edge cases) plus the ones below.
func FuzzReader(f *testing.F) {
	f.Add([]byte(`{"type":"session","version":3,"id":"s","cwd":"/"}` + "\n" +
		`{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"hi"}}` + "\n"))
	f.Add([]byte(`{"type":"session","id":"s"}` + "\n" + `{"type":"compaction","summary":"S","firstKeptEntryIndex":1,"tokensBefore":1}` + "\n" + `{"type":"mess`))
	f.Add([]byte("{\"type\":\"session\",\"version\":2,\"id\":\"s\"}\n{\"type\":\"message\",\"id\":\"a\",\"message\":{\"role\":\"hookMessage\",\"content\":[]}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(bytes.NewReader(data), Options{MaxLineSize: 1 << 16, KeepUnknown: true})
		var entries []Entry
		for r.Next() {
			entries = append(entries, r.Entry().Clone())
		}
		st := r.Stats()
		err := r.Err()
		if err != nil && !errors.Is(err, ErrNotSession) && !errors.Is(err, ErrLineTooLong) {
			t.Fatalf("unexpected error type: %v", err)
		}
		var sum int64
		for _, n := range st.ByType {
			sum += n
		}
		if sum != st.Entries || st.Entries != int64(len(entries)) {
			t.Fatalf("counts: %+v, %d entries", st, len(entries))
		}
		if st.Bytes > int64(len(data)) {
			t.Fatalf("read %d of %d bytes", st.Bytes, len(data))
		}
		if st.Torn && st.TornOffset+st.TornBytes != int64(len(data)) {
			t.Fatalf("torn line %d+%d is not the tail of %d bytes", st.TornOffset, st.TornBytes, len(data))
		}
		sc := BuildSessionContext(entries)
		// History preparation takes whatever a file holds.
		for _, api := range []llm.API{"anthropic-messages", "openai-responses", "openai-completions"} {
			out, rep := Prepare(sc.Messages, PrepareOptions{Policy: PolicyForAPI(api), HistoryLimit: 3, ContextWindowTokens: 8000, Now: func() int64 { return 1 }})
			if rep.Out != len(out) {
				t.Fatalf("Prepare report %+v for %d messages", rep, len(out))
			}
		}

		// The id-only pass sees the same entries.
		rs := NewReader(bytes.NewReader(data), Options{MaxLineSize: 1 << 16, KeepUnknown: true, SkipContent: true})
		n := 0
		for ; rs.Next(); n++ {
			if n >= len(entries) || !bytes.Equal(rs.Entry().ID, entries[n].ID) || !bytes.Equal(rs.Entry().ParentID, entries[n].ParentID) {
				t.Fatalf("SkipContent entry %d differs", n)
			}
		}
		if n != len(entries) || rs.Stats().Torn != st.Torn || (rs.Err() == nil) != (err == nil) {
			t.Fatalf("SkipContent: %d of %d entries", n, len(entries))
		}

		// Round trip: what we write, we read back the same.
		var buf []byte
		buf = append(buf, `{"type":"session","version":3,"id":"rt"}`+"\n"...)
		var written []*Entry
		for i := range entries {
			e := &entries[i]
			if e.Type == TypeUnknown || (e.Type == TypeMessage && e.Message == nil && len(e.MessageJSON) == 0) {
				continue
			}
			if e.Timestamp < 0 || e.Timestamp > 253402300799999 {
				e.Timestamp = 0
			}
			buf = append(AppendEntryJSON(buf, e), '\n')
			written = append(written, e)
		}
		r2 := NewReader(bytes.NewReader(buf), Options{Strict: true, KeepUnknown: true})
		// Strings are written with each byte of invalid UTF-8 as U+FFFD
		// (as encoding/json writes them), so two bad bytes in a row come
		// back as two U+FFFD.
		same := func(got, wrote []byte) bool { return bytes.Equal(got, perByteFFFD(wrote)) }
		i := 0
		for ; r2.Next(); i++ {
			g, w := r2.Entry(), written[i]
			if g.Type != w.Type || !same(g.ID, w.ID) || !same(g.ParentID, w.ParentID) || g.Timestamp != w.Timestamp {
				t.Fatalf("round trip %d: got %v %q %q %d, want %v %q %q %d", i, g.Type, g.ID, g.ParentID, g.Timestamp, w.Type, w.ID, w.ParentID, w.Timestamp)
			}
			if w.Message != nil {
				// What was written reads back as the same bytes (invalid
				// UTF-8 is written as U+FFFD itself).
				gj, wj := g.Message.AppendJSON(nil), w.Message.AppendJSON(nil)
				if !bytes.Equal(gj, wj) {
					t.Fatalf("round trip %d: message %s != %s", i, gj, wj)
				}
			}
			if !same(g.Summary, w.Summary) || !same(g.CustomType, w.CustomType) || !bytes.Equal(g.Data, w.Data) ||
				!same(g.Provider, w.Provider) || !same(g.FirstKeptEntryID, w.FirstKeptEntryID) || g.TokensBefore != w.TokensBefore {
				t.Fatalf("round trip %d: fields differ: got summary %q custom %q data %q provider %q kept %q tokens %d, want %q %q %q %q %q %d",
					i, g.Summary, g.CustomType, g.Data, g.Provider, g.FirstKeptEntryID, g.TokensBefore,
					w.Summary, w.CustomType, w.Data, w.Provider, w.FirstKeptEntryID, w.TokensBefore)
			}
		}
		if err := r2.Err(); err != nil || i != len(written) {
			t.Fatalf("round trip: %d of %d entries, %v", i, len(written), err)
		}
	})
}

// perByteFFFD returns b with every byte that does not start a valid UTF-8
// sequence replaced by U+FFFD.
func perByteFFFD(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			out = append(out, "\uFFFD"...)
		} else {
			out = append(out, b[:n]...)
		}
		b = b[n:]
	}
	return out
}

// FuzzJSTrim holds the fast paths of jsTrim and isBlankText (a text that
// starts and ends with an ASCII non-space is left as it is) to trimming
// rune by rune.
func FuzzJSTrim(f *testing.F) {
	for _, s := range []string{"", " a ", "a", "\ta\n", "\u00a0x", "x\u3000", "\v", "ab", "\x85a", "a\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := jsTrim(s), strings.TrimFunc(s, llm.IsJSSpace); got != want {
			t.Fatalf("jsTrim(%q) = %q, want %q", s, got, want)
		}
		if got, want := isBlankText([]byte(s)), len(bytes.TrimFunc([]byte(s), llm.IsJSSpace)) == 0; got != want {
			t.Fatalf("isBlankText(%q) = %v, want %v", s, got, want)
		}
	})
}
