package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ocbench/ocbench/llm"
)

func fixedNow() time.Time { return time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC) }

func textEntry(r llm.Role, s string) *Entry {
	m := llm.TextMessage(r, s)
	if r == llm.RoleAssistant {
		m.StopReason = llm.StopStop
	}
	return &Entry{Type: TypeMessage, Message: &m}
}

func readFile(t testing.TB, path string, opts Options) ([]Entry, Header, Stats) {
	t.Helper()
	r, err := OpenFile(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	es := readAll(t, r)
	return es, r.Header(), r.Stats()
}

func TestWriterRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	w, err := OpenWriter(path, WriterOptions{SessionID: "sess-1", Cwd: "/work", Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if rec := w.Recovery(); !rec.Created {
		t.Errorf("recovery %+v", rec)
	}
	in := []*Entry{
		{Type: TypeModelChange, Provider: []byte("anthropic"), ModelID: []byte("claude-sonnet-4-5")},
		{Type: TypeThinkingLevelChange, ThinkingLevel: []byte("high")},
		textEntry(llm.RoleUser, "hello \"world\"\n"),
		textEntry(llm.RoleAssistant, "hi"),
		{Type: TypeCustom, CustomType: []byte("model-snapshot"), Data: []byte(`{"provider":"anthropic"}`)},
		{Type: TypeCustomMessage, CustomType: []byte("ext"), Content: []byte(`"injected"`), Display: true},
		{Type: TypeCompaction, Summary: []byte("S"), FirstKeptEntryID: []byte("x"), TokensBefore: 42, Details: []byte(`{"readFiles":[]}`), FromHook: true},
		{Type: TypeBranchSummary, FromID: []byte("y"), Summary: []byte("B")},
		{Type: TypeLabel, TargetID: []byte("z"), Label: []byte("L")},
		{Type: TypeSessionInfo, Name: []byte("N")},
		{Type: TypeMessage, MessageJSON: []byte(`{"role":"bashExecution","command":"ls","output":"","exitCode":0,"timestamp":3}`)},
	}
	var ids []string
	for _, e := range in {
		id, err := w.Append(e)
		if err != nil {
			t.Fatal(err)
		}
		if len(id) != 8 {
			t.Errorf("id %q", id)
		}
		ids = append(ids, id)
	}
	if w.Leaf() != ids[len(ids)-1] {
		t.Errorf("leaf %q", w.Leaf())
	}
	if _, err := w.Append(&Entry{Type: TypeUnknown}); !errors.Is(err, ErrBadEntry) {
		t.Errorf("unknown type: %v", err)
	}
	if _, err := w.Append(&Entry{Type: TypeCustom, Data: []byte(`{bad`)}); !errors.Is(err, ErrBadEntry) {
		t.Errorf("bad data: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Append(in[0]); !errors.Is(err, ErrClosed) {
		t.Errorf("after close: %v", err)
	}
	out, h, st := readFile(t, path, Options{Strict: true})
	if h.Version != 3 || h.ID != "sess-1" || h.Cwd != "/work" || h.Timestamp != fixedNow().UnixMilli() {
		t.Errorf("header %+v", h)
	}
	if st.Entries != int64(len(in)) || st.Torn || st.BadLines != 0 {
		t.Fatalf("stats %+v", st)
	}
	for i := range in {
		got := out[i]
		want := *in[i]
		want.ID = []byte(ids[i])
		if i > 0 {
			want.ParentID = []byte(ids[i-1])
		}
		want.Timestamp = fixedNow().UnixMilli()
		want.RawType = []byte(want.Type.String())
		want.Line, want.Offset = got.Line, got.Offset
		if want.Type == TypeMessage {
			if want.Message != nil {
				gm, wm := got.Message.AppendJSON(nil), want.Message.AppendJSON(nil)
				if !bytes.Equal(gm, wm) {
					t.Errorf("%d: message %s != %s", i, gm, wm)
				}
				want.Message, got.Message = nil, nil
				want.MessageRole = []byte(llm.RoleUser.String())
				if i == 3 {
					want.MessageRole = []byte("assistant")
				}
			} else {
				want.MessageRole = []byte("bashExecution")
			}
		}
		if !reflect.DeepEqual(normalize(got), normalize(want)) {
			t.Errorf("%d:\n got %+v\nwant %+v", i, normalize(got), normalize(want))
		}
	}
}

// normalize maps empty byte slices to nil for comparison.
func normalize(e Entry) Entry {
	v := reflect.ValueOf(&e).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if f.Kind() == reflect.Slice && f.Len() == 0 {
			f.Set(reflect.Zero(f.Type()))
		}
	}
	return e
}

func TestWriterLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	w, err := OpenWriter(path, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = OpenWriter(path, WriterOptions{})
	var le *LockedError
	if !errors.Is(err, ErrLocked) || !errors.As(err, &le) || le.Path != path {
		t.Fatalf("second writer: %v", err)
	}
	// Readers are not blocked.
	if _, _, st := readFile(t, path, Options{}); st.Lines != 1 {
		t.Errorf("reader: %+v", st)
	}
	w.Close()
	w2, err := OpenWriter(path, WriterOptions{})
	if err != nil {
		t.Fatalf("after close: %v", err)
	}
	w2.Close()
}

func TestWriterRecoversTornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	w, err := OpenWriter(path, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	id1, _ := w.Append(textEntry(llm.RoleUser, "one"))
	w.Close()
	torn := `{"type":"message","id":"deadbeef","parentId":"` + id1 + `","message":{"role":"user","cont`
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(torn)
	f.Close()
	before, _ := os.ReadFile(path)

	w, err = OpenWriter(path, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rec := w.Recovery()
	if !rec.Torn || rec.TornBytes != int64(len(torn)) || rec.TornOffset != int64(len(before)-len(torn)) || rec.SideFile != path+".torn-1" {
		t.Fatalf("recovery %+v", rec)
	}
	side, _ := os.ReadFile(rec.SideFile)
	if string(side) != torn {
		t.Errorf("side file %q", side)
	}
	if w.Leaf() != id1 {
		t.Errorf("leaf %q", w.Leaf())
	}
	id2, err := w.Append(textEntry(llm.RoleAssistant, "two"))
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	es, _, st := readFile(t, path, Options{Strict: true})
	if len(es) != 2 || string(es[1].ID) != id2 || string(es[1].ParentID) != id1 || st.Torn {
		t.Errorf("entries %d stats %+v", len(es), st)
	}
	// A second torn line goes to the next side file.
	f, _ = os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"type":"mess`)
	f.Close()
	w, err = OpenWriter(path, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rec := w.Recovery(); rec.SideFile != path+".torn-2" {
		t.Errorf("recovery %+v", rec)
	}
	w.Close()
}

func TestWriterCompleteLineWithoutNewline(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(path, []byte(`{"type":"session","version":3,"id":"s"}`+"\n"+
		`{"type":"message","id":"aaaaaaaa","parentId":null,"message":{"role":"user","content":"x"}}`), 0o644)
	w, err := OpenWriter(path, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rec := w.Recovery(); !rec.AddedNewline || rec.Torn || w.Leaf() != "aaaaaaaa" {
		t.Errorf("recovery %+v leaf %q", rec, w.Leaf())
	}
	w.Append(textEntry(llm.RoleAssistant, "y"))
	w.Close()
	if es, _, _ := readFile(t, path, Options{Strict: true}); len(es) != 2 || string(es[1].ParentID) != "aaaaaaaa" {
		t.Errorf("entries %d", len(es))
	}
}

func TestWriterRefusesForeignFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notes.jsonl")
	content := `{"level":"info","msg":"hello"}` + "\n"
	os.WriteFile(path, []byte(content), 0o644)
	_, err := OpenWriter(path, WriterOptions{})
	if !errors.Is(err, ErrNotSession) {
		t.Fatalf("err %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != content {
		t.Errorf("foreign file modified: %q", b)
	}
	// The lock was released.
	os.WriteFile(path, nil, 0o644)
	w, err := OpenWriter(path, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
}

func copyFile(t testing.TB, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func messagesJSON(ms []llm.Message) string {
	var b []byte
	for i := range ms {
		b = ms[i].AppendJSON(b)
		b = append(b, '\n')
	}
	return string(b)
}

func TestWriterMigratesV1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.jsonl")
	copyFile(t, piV1File, path)
	before, err := LoadContext(path)
	if err != nil {
		t.Fatal(err)
	}
	origEntries, _, _ := readFile(t, piV1File, Options{})
	w, err := OpenWriter(path, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rec := w.Recovery()
	if rec.MigratedFrom != 1 || rec.Entries != 1018 || w.Header().Version != 3 || w.Header().ID != "d703a1a9-1b7b-4fb1-b512-c9738b1fe617" {
		t.Fatalf("recovery %+v header %+v", rec, w.Header())
	}
	w.Close()
	es, h, st := readFile(t, path, Options{Strict: true})
	if h.Version != 3 || st.Entries != 1018 || h.Provider != "anthropic" || h.ModelID != "claude-sonnet-4-5" {
		t.Fatalf("header %+v stats %+v", h, st)
	}
	for i := range es {
		if string(es[i].ID) != string(origEntries[i].ID) || string(es[i].ParentID) != string(origEntries[i].ParentID) {
			t.Fatalf("%d: ids %q/%q vs %q/%q", i, es[i].ID, es[i].ParentID, origEntries[i].ID, origEntries[i].ParentID)
		}
	}
	after, err := LoadContext(path)
	if err != nil {
		t.Fatal(err)
	}
	if messagesJSON(before.Messages) != messagesJSON(after.Messages) || before.ThinkingLevel != after.ThinkingLevel || before.ModelID != after.ModelID {
		t.Error("context changed by migration")
	}
}

// TestWriterMigratesControlCharIDs: a v2 file whose ids hold control
// characters, quotes and DEL migrates to lines that are JSON and keep them
// (fastjson's Arena strings were written with Go's \x01 quoting).
func TestWriterMigratesControlCharIDs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v2.jsonl")
	lines := `{"type":"session","version":2,"id":"s"}` + "\n" +
		`{"type":"message","id":"a\u0001\"","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"hi"}}` + "\n" +
		`{"type":"message","id":"b\u007f","parentId":"a\u0001\"","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"hookMessage","content":"x"}}` + "\n"
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := OpenWriter(path, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if w.Recovery().MigratedFrom != 2 {
		t.Fatalf("recovery %+v", w.Recovery())
	}
	w.Close()
	raw, _ := os.ReadFile(path)
	for _, line := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
		if !json.Valid(line) {
			t.Fatalf("migrated line is not JSON: %s", line)
		}
	}
	es, _, _ := readFile(t, path, Options{Strict: true})
	if len(es) != 2 || string(es[0].ID) != "a\x01\"" || string(es[1].ID) != "b\x7f" || string(es[1].ParentID) != "a\x01\"" {
		t.Fatalf("entries after migration: %+v", es)
	}
}

func TestRotate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	w, err := OpenWriter(path, WriterOptions{Durability: SyncTurn})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := 0; i < 10; i++ {
		role := llm.RoleUser
		if i%2 == 1 {
			role = llm.RoleAssistant
		}
		id, err := w.Append(textEntry(role, strings.Repeat("turn ", i+1)))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	// A dead branch from entry 3.
	if err := w.SetLeaf(ids[3]); err != nil {
		t.Fatal(err)
	}
	w.Append(textEntry(llm.RoleUser, "abandoned"))
	if err := w.SetLeaf(ids[9]); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Append(&Entry{Type: TypeCompaction, Summary: []byte("summary of 0-5"), FirstKeptEntryID: []byte(ids[6]), TokensBefore: 100}); err != nil {
		t.Fatal(err)
	}
	w.Append(textEntry(llm.RoleUser, "after"))
	w.EndTurn()
	before, err := LoadContext(path)
	if err != nil {
		t.Fatal(err)
	}
	orig, _ := os.ReadFile(path)
	archive, err := w.Rotate()
	if err != nil {
		t.Fatal(err)
	}
	if archive != path+".archive-1.zst" {
		t.Errorf("archive %q", archive)
	}
	// The archive is the old file, readable by OpenFile.
	r, err := OpenFile(archive, Options{})
	if err != nil {
		t.Fatal(err)
	}
	archived := readAll(t, r)
	r.Close()
	if len(archived) != 13 {
		t.Errorf("archived entries %d", len(archived))
	}
	if got, _ := LoadContext(archive); messagesJSON(got.Messages) != messagesJSON(before.Messages) {
		t.Error("archive context differs")
	}
	// The live file keeps ids 6..9, the compaction and "after".
	es, _, _ := readFile(t, path, Options{Strict: true})
	if len(es) != 6 || string(es[0].ID) != ids[6] || len(es[0].ParentID) != 0 {
		t.Fatalf("live entries %d", len(es))
	}
	after, err := LoadContext(path)
	if err != nil {
		t.Fatal(err)
	}
	if messagesJSON(after.Messages) != messagesJSON(before.Messages) {
		t.Errorf("context changed:\n%s\nvs\n%s", messagesJSON(after.Messages), messagesJSON(before.Messages))
	}
	// Appends continue on the new file.
	if _, err := w.Append(textEntry(llm.RoleAssistant, "more")); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if info, _ := os.Stat(path); info.Size() >= int64(len(orig)) {
		t.Errorf("live file not smaller: %d >= %d", info.Size(), len(orig))
	}
	es, _, _ = readFile(t, path, Options{Strict: true})
	if len(es) != 7 || string(es[6].ParentID) != string(es[5].ID) {
		t.Errorf("append after rotate: %d entries", len(es))
	}
}
