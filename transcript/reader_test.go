package transcript

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/llm"
)

const (
	qwenFile = "../testdata/sessions/openclaw-v3-2026-03-qwen-1f979e30.jsonl"
	piV1File = "../testdata/sessions/pi-v1-anthropic-large-session.jsonl"
)

func readAll(t testing.TB, r *Reader) []Entry {
	t.Helper()
	var out []Entry
	for r.Next() {
		out = append(out, r.Entry().Clone())
	}
	if err := r.Err(); err != nil {
		t.Fatalf("Err: %v", err)
	}
	return out
}

func TestReadQwenV3(t *testing.T) {
	r, err := OpenFile(qwenFile, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	entries := readAll(t, r)
	h, st := r.Header(), r.Stats()
	if h.Version != 3 || h.ID != "1f979e30-12ad-4b66-80ac-bcbb53b985ff" || h.Cwd != `C:\Users\Admin\.openclaw\workspace` {
		t.Errorf("header = %+v", h)
	}
	if st.Lines != 33 || st.Entries != 32 || st.BadLines != 0 || st.Torn || st.Unknown != 0 {
		t.Errorf("stats = %+v", st)
	}
	if st.ByType[TypeMessage] != 28 || st.ByType[TypeModelChange] != 1 || st.ByType[TypeThinkingLevelChange] != 1 || st.ByType[TypeCustom] != 2 {
		t.Errorf("by type = %v", st.ByType)
	}
	var roles [3]int
	var errors0, injected int
	for i := range entries {
		e := &entries[i]
		if len(e.ID) != 8 {
			t.Errorf("entry %d id %q", i, e.ID)
		}
		if i == 0 && len(e.ParentID) != 0 {
			t.Errorf("first entry has parent %q", e.ParentID)
		}
		if i > 0 && len(e.ParentID) == 0 {
			t.Errorf("entry %d has no parent", i)
		}
		if e.Timestamp == 0 {
			t.Errorf("entry %d: no timestamp", i)
		}
		if e.Type == TypeMessage {
			if e.Message == nil {
				t.Fatalf("entry %d: message not parsed (role %q)", i, e.MessageRole)
			}
			roles[e.Message.Role]++
			if e.Message.StopReason == llm.StopError && e.Message.Usage == (llm.Usage{}) {
				errors0++
			}
			if e.Message.Model == "gateway-injected" {
				injected++
			}
		}
	}
	if roles[llm.RoleUser] != 7 || roles[llm.RoleAssistant] != 19 || roles[llm.RoleToolResult] != 2 {
		t.Errorf("roles = %v", roles)
	}
	if errors0 != 12 || injected != 2 {
		t.Errorf("zero-usage errors %d, injected %d", errors0, injected)
	}
	if e := entries[0]; e.Type != TypeModelChange || string(e.Provider) != "qwen-portal" || string(e.ModelID) != "coder-model" {
		t.Errorf("first entry %+v", e)
	}
	if e := entries[1]; e.Type != TypeThinkingLevelChange || string(e.ThinkingLevel) != "off" {
		t.Errorf("second entry %+v", e)
	}
	// 2026-03-14T03:35:39.401Z
	if got := entries[0].Timestamp; got != 1773459339401 {
		t.Errorf("timestamp = %d", got)
	}
	custom := 0
	for _, e := range entries {
		if e.Type == TypeCustom {
			custom++
			if string(e.CustomType) != "model-snapshot" || !bytes.Contains(e.Data, []byte(`"modelApi"`)) {
				t.Errorf("custom %q %s", e.CustomType, e.Data)
			}
		}
	}
	if custom != 2 {
		t.Errorf("custom = %d", custom)
	}
}

func TestReadPiV1Migrated(t *testing.T) {
	r, err := OpenFile(piV1File, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	entries := readAll(t, r)
	h, st := r.Header(), r.Stats()
	if h.Version != 1 || h.Provider != "anthropic" || h.ModelID != "claude-sonnet-4-5" || h.ThinkingLevel != "off" {
		t.Errorf("header = %+v", h)
	}
	if st.Lines != 1019 || st.Bytes != 974031 || st.ByType[TypeMessage] != 914 || st.ByType[TypeThinkingLevelChange] != 103 ||
		st.ByType[TypeModelChange] != 1 || st.BadLines != 0 || st.Torn {
		t.Errorf("stats = %+v", st)
	}
	var roles [3]int
	var calls, cacheRead, cacheWrite int64
	for i := range entries {
		e := &entries[i]
		// ids are synthesised linearly: entry i (1-based index i+1) chains to i.
		if want := string(appendHex8(nil, int64(i+1))); string(e.ID) != want {
			t.Fatalf("entry %d id %q want %q", i, e.ID, want)
		}
		if i > 0 && string(e.ParentID) != string(entries[i-1].ID) {
			t.Fatalf("entry %d parent %q", i, e.ParentID)
		}
		if e.Type == TypeMessage {
			roles[e.Message.Role]++
			if m := e.Message; m.Role == llm.RoleAssistant && m.Provider == "anthropic" {
				calls++
				cacheRead += m.Usage.CacheRead
				cacheWrite += m.Usage.CacheWrite
			}
		}
	}
	if len(entries[0].ParentID) != 0 {
		t.Error("first entry has a parent")
	}
	if roles[llm.RoleUser] != 88 || roles[llm.RoleAssistant] != 453 || roles[llm.RoleToolResult] != 373 {
		t.Errorf("roles = %v", roles)
	}
	if calls != 452 || cacheRead != 43229469 || cacheWrite != 4296232 {
		t.Errorf("calls %d cacheRead %d cacheWrite %d", calls, cacheRead, cacheWrite)
	}
}

func TestNotSession(t *testing.T) {
	for _, in := range []string{
		`{"foo":1}` + "\n",
		"hello world\n",
		`[1,2,3]` + "\n",
		`{"type":"session","id":5}` + "\n",
		`{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"x"}}` + "\n",
		"\x00\x01\x02binary\n",
	} {
		r := NewReader(strings.NewReader(in), Options{})
		if r.Next() {
			t.Errorf("%q: Next true", in)
		}
		var fe *FormatError
		if err := r.Err(); !errors.Is(err, ErrNotSession) || !errors.As(err, &fe) || fe.Line != 1 {
			t.Errorf("%q: err %v", in, err)
		}
	}
}

func TestEmptyInput(t *testing.T) {
	for _, in := range []string{"", "\n\n", "   "} {
		r := NewReader(strings.NewReader(in), Options{})
		if r.Next() || r.Err() != nil || r.Header().Version != 0 {
			t.Errorf("%q: %v %+v", in, r.Err(), r.Header())
		}
	}
}

func TestTornLastLine(t *testing.T) {
	data, err := os.ReadFile(qwenFile)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	full := bytes.Join(lines[:10], nil)
	torn := append(append([]byte{}, full...), lines[10][:len(lines[10])/2]...)
	r := NewReader(bytes.NewReader(torn), Options{Strict: true})
	entries := readAll(t, r)
	st := r.Stats()
	if len(entries) != 9 || !st.Torn || st.TornOffset != int64(len(full)) || st.TornBytes != int64(len(lines[10])/2) {
		t.Errorf("entries %d stats %+v", len(entries), st)
	}
	// A complete last entry without its newline is not torn.
	whole := append(append([]byte{}, full...), bytes.TrimSuffix(lines[10], []byte("\n"))...)
	r = NewReader(bytes.NewReader(whole), Options{Strict: true})
	entries = readAll(t, r)
	if len(entries) != 10 || r.Stats().Torn {
		t.Errorf("entries %d stats %+v", len(entries), r.Stats())
	}
	// A torn header: nothing, no error, reported.
	r = NewReader(bytes.NewReader(lines[0][:20]), Options{})
	if r.Next() || r.Err() != nil || !r.Stats().Torn || r.Header().Version != 0 {
		t.Errorf("torn header: %v %+v", r.Err(), r.Stats())
	}
}

func TestBadLines(t *testing.T) {
	in := `{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}
{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"hi","timestamp":1}}
{garbage
{"type":"message","id":"b","parentId":"a","message":"not an object"}
{"type":"whatever","id":"c","parentId":"a"}
{"type":"label","id":"d","parentId":"a","targetId":"a","label":"L"}
`
	r := NewReader(strings.NewReader(in), Options{})
	entries := readAll(t, r)
	st := r.Stats()
	// The message entry without a message object stays (the chain through
	// it holds) but gives no message.
	if len(entries) != 3 || st.BadLines != 1 || st.FirstBad != 3 || st.Unknown != 1 || entries[1].Message != nil || len(BuildContext(entries[:2])) != 1 {
		t.Fatalf("entries %d stats %+v", len(entries), st)
	}
	if string(entries[2].TargetID) != "a" || string(entries[2].Label) != "L" {
		t.Errorf("label %+v", entries[2])
	}
	r = NewReader(strings.NewReader(in), Options{KeepUnknown: true})
	entries = readAll(t, r)
	if len(entries) != 4 || entries[2].Type != TypeUnknown || string(entries[2].RawType) != "whatever" {
		t.Errorf("keep unknown: %d", len(entries))
	}
	r = NewReader(strings.NewReader(in), Options{Strict: true})
	n := 0
	for r.Next() {
		n++
	}
	var fe *FormatError
	if n != 1 || !errors.Is(r.Err(), ErrBadLine) || !errors.As(r.Err(), &fe) || fe.Line != 3 {
		t.Errorf("strict: n=%d err=%v", n, r.Err())
	}
}

func TestLineTooLong(t *testing.T) {
	long := `{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"` + strings.Repeat("x", 200000) + `"}}`
	in := `{"type":"session","version":3,"id":"s"}` + "\n" + long + "\n"
	r := NewReader(strings.NewReader(in), Options{MaxLineSize: 100000})
	if r.Next() {
		t.Fatal("Next true")
	}
	var le *LineTooLongError
	if !errors.Is(r.Err(), ErrLineTooLong) || !errors.As(r.Err(), &le) || le.Line != 2 || le.Limit != 100000 {
		t.Errorf("err %v", r.Err())
	}
	r = NewReader(strings.NewReader(in), Options{})
	entries := readAll(t, r)
	if len(entries) != 1 || len(entries[0].Message.Content[0].Text) != 200000 {
		t.Errorf("long line not read")
	}
}

func TestV2Migration(t *testing.T) {
	in := `{"type":"session","version":2,"id":"s","cwd":"/w"}
{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"hookMessage","customType":"x","content":"hooked","display":true,"timestamp":5}}
{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":6}}
`
	r := NewReader(strings.NewReader(in), Options{})
	entries := readAll(t, r)
	if len(entries) != 2 || entries[0].Message != nil || string(entries[0].MessageRole) != "custom" ||
		!bytes.Contains(entries[0].MessageJSON, []byte(`"role":"custom"`)) {
		t.Fatalf("entries %+v", entries)
	}
	msgs := BuildContext(entries)
	if len(msgs) != 2 || msgs[0].Role != llm.RoleUser || msgs[0].TextContent() != "hooked" || msgs[0].Timestamp != 5 {
		t.Errorf("context %+v", msgs)
	}
}

func TestV1CompactionIndex(t *testing.T) {
	// pi v1: compaction refers to the entry it keeps by index into the
	// entries array (header = 0).
	in := `{"type":"session","id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}
{"type":"message","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"one","timestamp":1}}
{"type":"message","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"r1"}],"stopReason":"stop","timestamp":2}}
{"type":"message","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":"two","timestamp":3}}
{"type":"compaction","timestamp":"2026-01-01T00:00:04.000Z","summary":"S","firstKeptEntryIndex":3,"tokensBefore":9}
{"type":"message","timestamp":"2026-01-01T00:00:05.000Z","message":{"role":"bashExecution","command":"ls","output":"a\nb","exitCode":1,"cancelled":false,"truncated":false,"timestamp":5}}
`
	r := NewReader(strings.NewReader(in), Options{})
	entries := readAll(t, r)
	if string(entries[3].FirstKeptEntryID) != string(entries[2].ID) {
		t.Fatalf("firstKept %q want %q", entries[3].FirstKeptEntryID, entries[2].ID)
	}
	msgs := BuildContext(entries)
	var got []string
	for _, m := range msgs {
		got = append(got, m.TextContent())
	}
	want := []string{CompactionSummaryPrefix + "S" + CompactionSummarySuffix, "two", "Ran `ls`\n```\na\nb\n```\n\nCommand exited with code 1"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q", got)
	}
}
