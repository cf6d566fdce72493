package transcript

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/llm"
)

const v4Header = `{"type":"session","version":4,"id":"s-v4","timestamp":"2026-09-10T10:00:00.000Z","cwd":"/w"}`

func v4user(id, parent, text string) string {
	return `{"type":"message","id":"` + id + `","parentId":` + jsonOrNull(parent) + `,"timestamp":"2026-09-10T10:00:01.000Z","message":{"role":"user","content":"` + text + `","timestamp":1}}`
}

func v4asst(id, parent, text string) string {
	return `{"type":"message","id":"` + id + `","parentId":` + jsonOrNull(parent) + `,"timestamp":"2026-09-10T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"` + text + `"}],"provider":"anthropic","model":"m","stopReason":"stop","timestamp":2}}`
}

func jsonOrNull(s string) string {
	if s == "" {
		return "null"
	}
	return `"` + s + `"`
}

// v4Context reads the session both ways (all entries in memory, and
// LoadContext's two passes) and checks they agree.
func v4Context(t *testing.T, lines ...string) ([]string, Stats) {
	t.Helper()
	body := v4Header + "\n" + strings.Join(lines, "\n") + "\n"
	r := NewReader(strings.NewReader(body), Options{KeepUnknown: true})
	var entries []Entry
	for r.Next() {
		entries = append(entries, r.Entry().Clone())
	}
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
	if r.Header().Version != 4 {
		t.Fatalf("version %d", r.Header().Version)
	}
	mem := texts(BuildSessionContextVersion(entries, 4).Messages)
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := LoadContext(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(sc.Messages); strings.Join(got, "|") != strings.Join(mem, "|") {
		t.Fatalf("LoadContext %q, BuildSessionContext %q", got, mem)
	}
	return mem, r.Stats()
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

func wantTexts(t *testing.T, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("context %q, want %q", got, want)
	}
}

func TestV4ResetStartsAFreshWindow(t *testing.T) {
	got, st := v4Context(t,
		v4user("a1", "", "old question"),
		v4asst("a2", "a1", "old answer"),
		`{"type":"reset","id":"r1","parentId":"a2","timestamp":"2026-09-10T11:00:00.000Z","reason":"idle"}`,
		v4user("b1", "r1", "new question"),
		v4asst("b2", "b1", "new answer"),
	)
	wantTexts(t, got, "new question", "new answer")
	if st.Unknown != 0 || st.ByType[TypeReset] != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestV4ResetKeepsFirstKeptMessagesAndPairedResults(t *testing.T) {
	got, _ := v4Context(t,
		v4user("a1", "", "q1"),
		v4asst("a2", "a1", "a1"),
		v4user("a3", "a2", "q2"),
		`{"type":"message","id":"a4","parentId":"a3","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":{}}],"stopReason":"toolUse","timestamp":3}}`,
		`{"type":"message","id":"a5","parentId":"a4","message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"result"}],"isError":false,"timestamp":4}}`,
		`{"type":"message","id":"a6","parentId":"a5","message":{"role":"toolResult","toolCallId":"zz","toolName":"read","content":[{"type":"text","text":"orphan result"}],"isError":false,"timestamp":5}}`,
		`{"type":"custom_message","id":"a7","parentId":"a6","customType":"note","content":"custom","display":true}`,
		`{"type":"reset","id":"r1","parentId":"a7","reason":"reset","firstKeptEntryId":"a3"}`,
		v4user("b1", "r1", "q3"),
	)
	wantTexts(t, got, "q2", "", "result", "q3")
}

func TestV4CompactionAfterResetIsTheBoundary(t *testing.T) {
	got, _ := v4Context(t,
		v4user("a1", "", "q1"),
		`{"type":"reset","id":"r1","parentId":"a1","reason":"daily"}`,
		v4user("b1", "r1", "q2"),
		v4asst("b2", "b1", "a2"),
		`{"type":"compaction","id":"c1","parentId":"b2","summary":"S","firstKeptEntryId":"b2","tokensBefore":10}`,
		v4user("b3", "c1", "q3"),
	)
	wantTexts(t, got, CompactionSummaryPrefix+"S"+CompactionSummarySuffix, "a2", "q3")
}

func TestV4LeafMovesTheActiveBranch(t *testing.T) {
	got, _ := v4Context(t,
		v4user("a1", "", "q1"),
		v4asst("a2", "a1", "a1"),
		v4user("a3", "a2", "q2"),
		v4asst("a4", "a3", "a2"),
		`{"type":"leaf","id":"l1","parentId":"a4","targetId":"a2"}`,
		v4user("a5", "l1", "q2 again"),
	)
	wantTexts(t, got, "q1", "a1", "q2 again")
	// A leaf entry alone, without an append after it, moves the branch too.
	got, _ = v4Context(t,
		v4user("a1", "", "q1"),
		v4asst("a2", "a1", "a1"),
		v4user("a3", "a2", "q2"),
		`{"type":"leaf","id":"l1","parentId":"a3","targetId":"a1"}`,
	)
	wantTexts(t, got, "q1")
	// An invalid leaf (unknown target) is ignored.
	got, _ = v4Context(t,
		v4user("a1", "", "q1"),
		`{"type":"leaf","id":"l1","parentId":"a1","targetId":"nope"}`,
		v4asst("a2", "a1", "a1"),
	)
	wantTexts(t, got, "q1", "a1")
}

func TestV4LeafCannotLeaveTheResetWindow(t *testing.T) {
	got, _ := v4Context(t,
		v4user("a1", "", "q1"),
		v4asst("a2", "a1", "a1"),
		`{"type":"reset","id":"r1","parentId":"a2","reason":"new"}`,
		v4user("b1", "r1", "q2"),
		`{"type":"leaf","id":"l1","parentId":"b1","targetId":"a1"}`,
		v4asst("b2", "l1", "a2"),
	)
	wantTexts(t, got, "q2", "a2")
}

func TestV4UnknownEntriesKeptAndReported(t *testing.T) {
	got, st := v4Context(t,
		v4user("a1", "", "q1"),
		`{"type":"openclaw_future_thing","id":"x1","parentId":"a1","data":{"k":1}}`,
		v4asst("a2", "x1", "a1"),
		`{"type":"session","version":4,"id":"s-v4","timestamp":"2026-09-10T10:00:00.000Z","cwd":"/w"}`,
		`{"type":"message","id":"side","parentId":"a2","appendMode":"side","message":{"role":"user","content":"beside","timestamp":9}}`,
	)
	wantTexts(t, got, "q1", "a1")
	if st.Unknown != 1 || st.UnknownTypes["openclaw_future_thing"] != 1 || st.ExtraHeaders != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestV4ParentlessEntryHangsFromTheLeaf(t *testing.T) {
	got, _ := v4Context(t,
		v4user("a1", "", "q1"),
		`{"type":"message","id":"a2","message":{"role":"assistant","content":[{"type":"text","text":"a1"}],"timestamp":2}}`,
		v4user("a3", "gone", "q2"),
	)
	wantTexts(t, got, "q1", "a1", "q2")
}

func TestV4EntriesWrittenAndReadBack(t *testing.T) {
	for _, e := range []Entry{
		{Type: TypeReset, ID: []byte("r"), ParentID: []byte("p"), Reason: []byte("idle"), FirstKeptEntryID: []byte("k")},
		{Type: TypeLeaf, ID: []byte("l"), ParentID: []byte("p"), TargetID: []byte("t"), AppendParentSet: true},
		{Type: TypeCustom, ID: []byte("c"), CustomType: []byte("x"), AppendSide: true},
	} {
		line := string(AppendEntryJSON(nil, &e))
		r := NewReader(strings.NewReader(v4Header+"\n"+line+"\n"), Options{})
		if !r.Next() {
			t.Fatalf("%s: %v", line, r.Err())
		}
		g := r.Entry()
		if g.Type != e.Type || string(g.Reason) != string(e.Reason) || string(g.FirstKeptEntryID) != string(e.FirstKeptEntryID) ||
			string(g.TargetID) != string(e.TargetID) || g.AppendParentSet != e.AppendParentSet || g.AppendSide != e.AppendSide {
			t.Fatalf("%s read back as %+v", line, g)
		}
	}
}

// FuzzV4Context: any version-4 body resolves without a panic, and the
// in-memory and two-pass context builders agree on it.
func FuzzV4Context(f *testing.F) {
	f.Add(v4user("a1", "", "q") + "\n" + `{"type":"leaf","id":"l","parentId":"a1","targetId":"a1"}` + "\n" + v4asst("a2", "l", "a"))
	f.Add(v4user("a1", "", "q") + "\n" + `{"type":"reset","id":"r","parentId":"a1","reason":"idle","firstKeptEntryId":"a1"}` + "\n" + v4user("b", "r", "x"))
	f.Add(`{"type":"leaf","id":"l","parentId":"l","targetId":"l"}` + "\n" + `{"type":"x","id":"l","parentId":"l"}`)
	f.Add(`{"type":"message","id":"a","parentId":"b","message":{"role":"user","content":"1"}}` + "\n" + `{"type":"message","id":"b","parentId":"a","appendMode":"side","message":{"role":"user","content":"2"}}`)
	f.Fuzz(func(t *testing.T, body string) {
		full := v4Header + "\n" + body + "\n"
		r := NewReader(strings.NewReader(full), Options{KeepUnknown: true})
		var entries []Entry
		for r.Next() {
			entries = append(entries, r.Entry().Clone())
		}
		if r.Err() != nil {
			return
		}
		mem := BuildSessionContextVersion(entries, 4)
		sc, err := loadContext(func(o Options) (*Reader, error) { return NewReader(strings.NewReader(full), o), nil }, "fuzz")
		if err != nil {
			return
		}
		if len(sc.Messages) != len(mem.Messages) {
			t.Fatalf("LoadContext %d messages, BuildSessionContext %d", len(sc.Messages), len(mem.Messages))
		}
	})
}

// Continuing a version-4 file whose last entry is a leaf control: the next
// append hangs from the leaf's target (its append parent), so the context
// is the moved branch plus the new entry.
func TestWriterContinuesAfterLeafEntry(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	body := v4Header + "\n" + strings.Join([]string{
		v4user("a1", "", "q1"),
		v4asst("a2", "a1", "a1"),
		v4user("a3", "a2", "abandoned"),
		`{"type":"leaf","id":"l1","parentId":"a3","targetId":"a2"}`,
	}, "\n") + "\n"
	os.WriteFile(path, []byte(body), 0o644)
	w, err := OpenWriter(path, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if w.Leaf() != "a2" {
		t.Fatalf("leaf %q, want a2 (the leaf entry's target)", w.Leaf())
	}
	w.AppendMessage(userMsg("q2"))
	w.Close()
	sc, err := LoadContext(path)
	if err != nil {
		t.Fatal(err)
	}
	wantTexts(t, texts(sc.Messages), "q1", "a1", "q2")
}
