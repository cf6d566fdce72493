package cacheprofile

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/ocbench/ocbench/transcript"
)

// v3 builds a version-3 session line by line.
type v3 struct {
	b      strings.Builder
	n      int
	parent string
	ms     int64
}

func newV3() *v3 {
	s := &v3{ms: 1_780_000_000_000}
	s.b.WriteString(`{"type":"session","version":3,"id":"s1","timestamp":"2026-06-01T00:00:00Z","cwd":"/w"}` + "\n")
	return s
}

// add appends an entry with the given body after parent ("" = the last).
func (s *v3) add(parent, typ, body string) string {
	s.n++
	id := fmt.Sprintf("e%07d", s.n)
	if parent == "" {
		parent = s.parent
	}
	p := "null"
	if parent != "" {
		p = `"` + parent + `"`
	}
	fmt.Fprintf(&s.b, `{"type":%q,"id":%q,"parentId":%s,"timestamp":"2026-06-01T00:00:00Z"%s}`+"\n", typ, id, p, body)
	s.parent = id
	return id
}

func (s *v3) user(text string) string {
	return s.add("", "message", fmt.Sprintf(`,"message":{"role":"user","content":%q,"timestamp":%d}`, text, s.ms))
}

func (s *v3) tool(id, text string) string {
	return s.add("", "message", fmt.Sprintf(`,"message":{"role":"toolResult","toolCallId":%q,"toolName":"bash","content":[{"type":"text","text":%q}],"isError":false,"timestamp":%d}`, id, text, s.ms))
}

// call appends an assistant message made at +sec seconds with usage.
func (s *v3) call(sec int64, provider, model, stop string, input, read, write int64) string {
	s.ms += sec * 1000
	return s.add("", "message", fmt.Sprintf(`,"message":{"role":"assistant","content":[{"type":"toolCall","id":"t%d","name":"bash","arguments":{"command":"ls"}}],"api":"x","provider":%q,"model":%q,"usage":{"input":%d,"output":10,"cacheRead":%d,"cacheWrite":%d},"stopReason":%q,"timestamp":%d}`,
		s.n, provider, model, input, read, write, stop, s.ms))
}

func profileString(t *testing.T, s string, opts Options) (*Report, []Call) {
	t.Helper()
	var calls []Call
	opts.OnCall = func(c *Call) { calls = append(calls, cloneCall(c)) }
	rep, err := Profile(strings.NewReader(s), opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep, calls
}

func TestUnknownEntriesSkippedAndCounted(t *testing.T) {
	s := newV3()
	s.user(strings.Repeat("x", 8000))
	s.add("", "wormhole", `,"data":1`)
	s.call(1, "anthropic", "claude-sonnet-4-5", "toolUse", 3, 0, 4000)
	s.add("", "another_new_type", ``)
	s.tool("t1", "ok")
	s.call(2, "anthropic", "claude-sonnet-4-5", "stop", 3, 4000, 10)
	rep, calls := profileString(t, s.b.String(), Options{})
	if rep.UnknownSkipped != 2 {
		t.Errorf("unknown skipped = %d, want 2", rep.UnknownSkipped)
	}
	// The unknown entries sit on the branch: the parent chain still holds.
	if len(calls) != 2 || calls[1].Predicted.Reason != "hit" || !*calls[1].Agree {
		t.Errorf("calls = %+v", calls)
	}
}

func TestTornLastLineReported(t *testing.T) {
	s := newV3()
	s.user("hi")
	s.call(1, "anthropic", "claude-sonnet-4-5", "stop", 3, 0, 4000)
	in := s.b.String() + `{"type":"message","id":"zz","parentId":"e0000002","message":{"role":"us`
	rep, _ := profileString(t, in, Options{})
	if !rep.Torn || rep.TornOffset != int64(len(s.b.String())) {
		t.Errorf("torn=%v offset=%d, want the torn line at %d", rep.Torn, rep.TornOffset, len(s.b.String()))
	}
	var out bytes.Buffer
	WriteText(&out, []*Report{rep})
	if !strings.Contains(out.String(), "torn last line at byte") {
		t.Errorf("text report does not mention the torn line:\n%s", out.String())
	}
}

func TestFileOfAnotherTool(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"package.json": `{"name":"x","version":"1.0.0"}` + "\n",
		"notes.txt":    "hello\nworld\n",
		"empty.jsonl":  "",
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o644)
		_, err := ProfileFile(p, Options{})
		var fe *FileError
		if !errors.Is(err, ErrNotSession) || !errors.As(err, &fe) || fe.File != p {
			t.Errorf("%s: err = %v, want ErrNotSession in a FileError naming the file", name, err)
		}
	}
	// A SQLite database of another tool.
	p := filepath.Join(dir, "other.sqlite")
	db, err := sql.Open("sqlite", p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE kv(k TEXT, v TEXT); INSERT INTO kv VALUES('a','b')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := ProfileFile(p, Options{}); !errors.Is(err, ErrNotSession) {
		t.Errorf("other sqlite: err = %v, want ErrNotSession", err)
	}
	if _, err := ProfileFile(filepath.Join(dir, "missing.jsonl"), Options{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestSQLiteStoreMatchesJSONL(t *testing.T) {
	// A session's entries as rows of OpenClaw's SQLite store, every other
	// row zstd-compressed; the profile must equal the JSONL one.
	s := newV3()
	s.user(strings.Repeat("hello ", 1000))
	s.call(1, "anthropic", "claude-sonnet-4-5", "toolUse", 3, 0, 5000)
	s.tool("t2", strings.Repeat("result ", 300))
	s.call(2, "anthropic", "claude-sonnet-4-5", "toolUse", 3, 5000, 520)
	s.tool("t4", strings.Repeat("more ", 300))
	s.call(400, "anthropic", "claude-sonnet-4-5", "stop", 3, 0, 5900)
	want, _ := profileString(t, s.b.String(), Options{})

	p := filepath.Join(t.TempDir(), "openclaw-agent.sqlite")
	db, err := sql.Open("sqlite", p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE transcript_events(session_id TEXT, seq INTEGER, event_json TEXT, event_zstd BLOB, event_utf8_bytes INTEGER, created_at INTEGER, navigation_json TEXT)`); err != nil {
		t.Fatal(err)
	}
	enc, _ := zstd.NewWriter(nil)
	lines := strings.Split(strings.TrimSpace(s.b.String()), "\n")[1:]
	for i := len(lines) - 1; i >= 0; i-- { // inserted backwards: seq decides
		l := lines[i]
		if i%2 == 0 {
			_, err = db.Exec(`INSERT INTO transcript_events VALUES(?,?,?,NULL,?,0,NULL)`, "sess-b", i, l, len(l))
		} else {
			_, err = db.Exec(`INSERT INTO transcript_events VALUES(?,?,NULL,?,?,0,NULL)`, "sess-b", i, enc.EncodeAll([]byte(l), nil), len(l))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	// A second session in the same store.
	if _, err := db.Exec(`INSERT INTO transcript_events VALUES('sess-a',0,?,NULL,0,0,NULL)`, lines[0]); err != nil {
		t.Fatal(err)
	}
	db.Close()
	reps, err := ProfileFile(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != 2 || reps[0].SessionID != "sess-a" || reps[1].SessionID != "sess-b" {
		t.Fatalf("reports: %d", len(reps))
	}
	got := reps[1]
	if got.Source != "sqlite" || got.Calls != want.Calls || got.Predicted != want.Predicted || got.Recorded != want.Recorded || got.All != want.All {
		t.Errorf("sqlite profile differs:\n got %+v\nwant %+v", got, want)
	}
	if got.Explained["expired"] != 1 {
		t.Errorf("explained = %v, want the expiry", got.Explained)
	}
}

func TestBranchAndCompaction(t *testing.T) {
	const m = "claude-sonnet-4-5"
	s := newV3()
	s.user(strings.Repeat("a", 6000))
	s.call(1, "anthropic", m, "toolUse", 3, 0, 3000)
	t1 := s.tool("x", strings.Repeat("b", 4000))
	s.call(2, "anthropic", m, "stop", 3, 3000, 1010)
	// Branch: a new user message hangs off the tool result, not the last
	// assistant (as /tree does). The prefix through the tool result stays.
	s.add(t1, "message", `,"message":{"role":"user","content":"other way","timestamp":1}`)
	s.call(3, "anthropic", m, "toolUse", 3, 4010, 15)
	k := s.tool("y", strings.Repeat("c", 400))
	s.call(2, "anthropic", m, "stop", 3, 4025, 110)
	// Compaction keeping the last tool result: the summary leads the
	// context, so the next call re-reads only tools+system (1500 tokens:
	// the first prompt, 3003, less the 1500-token message and the tail).
	s.add("", "compaction", fmt.Sprintf(`,"summary":"we did things","firstKeptEntryId":%q,"tokensBefore":4135`, k))
	s.user("next")
	s.call(2, "anthropic", m, "toolUse", 3, 1500, 200)
	rep, calls := profileString(t, s.b.String(), Options{})
	if len(calls) != 5 {
		t.Fatalf("%d calls", len(calls))
	}
	if c := calls[2]; c.Predicted.Reason != "hit" || c.Messages != 4 {
		t.Errorf("after the branch: reason %s, %d messages; want a hit over user, tool call, tool result, new user; got %+v", c.Predicted.Reason, c.Messages, c)
	}
	c := calls[4]
	if c.Predicted.Reason != "prefix-changed" || c.Predicted.ChangedAt != "compaction summary" || c.Messages != 4 {
		t.Errorf("after compaction: %+v", c)
	}
	if c.Predicted.CacheRead != 1500 || !*c.Agree || c.Explanation != "" {
		t.Errorf("after compaction: read %d agree %v explanation %q", c.Predicted.CacheRead, *c.Agree, c.Explanation)
	}
	if rep.UnexplainedN != 0 {
		t.Errorf("unexplained %d", rep.UnexplainedN)
	}
}

func TestModelAndThinkingChange(t *testing.T) {
	s := newV3()
	s.user(strings.Repeat("a", 6000))
	s.call(1, "anthropic", "claude-sonnet-4-5", "stop", 3, 0, 3000)
	s.add("", "thinking_level_change", `,"thinkingLevel":"high"`)
	s.user("more")
	s.call(2, "anthropic", "claude-sonnet-4-5", "stop", 3, 1500, 1520)
	s.add("", "model_change", `,"provider":"anthropic","modelId":"claude-opus-4-6"`)
	s.user("more")
	s.call(2, "anthropic", "claude-opus-4-6", "stop", 3, 0, 4600)
	rep, calls := profileString(t, s.b.String(), Options{})
	// A thinking change keeps tools+system (the first breakpoint) and
	// loses the messages.
	if c := calls[1]; c.Predicted.Reason != "prefix-changed" || c.Predicted.ChangedAt != "options (thinking level)" || c.Predicted.CacheRead != rep.Unseen {
		t.Errorf("thinking change: %+v, unseen %d", c.Predicted, rep.Unseen)
	}
	if c := calls[2]; c.Predicted.Reason != "model-changed" || c.Explanation != "model-changed" {
		t.Errorf("model change: %+v %s", c.Predicted, c.Explanation)
	}
}

func TestOpenAISession(t *testing.T) {
	// OpenAI records cacheRead in 128-token steps and no writes.
	s := newV3()
	s.user(strings.Repeat("a", 4000))
	s.call(1, "openai", "gpt-5.1", "toolUse", 2100, 0, 0)
	s.tool("x", strings.Repeat("b", 2000))
	s.call(2, "openai", "gpt-5.1", "toolUse", 568, 2048, 0)
	rep, calls := profileString(t, s.b.String(), Options{})
	if c := calls[1]; c.Predicted.CacheRead != 2048 || !*c.Agree {
		t.Errorf("second call: %+v", c.Predicted)
	}
	if rep.ToolLoop.ReadError() != 0 {
		t.Errorf("read error %v", rep.ToolLoop.ReadError())
	}
}

func TestMessageNodeAllocs(t *testing.T) {
	// Hashing and estimating a parsed message allocates nothing.
	var p Profiler
	msgEntry := newV3()
	msgEntry.tool("x", strings.Repeat("é", 100))
	rd := transcriptReader(msgEntry.b.String())
	if !rd.Next() {
		t.Fatal(rd.Err())
	}
	e := rd.Entry()
	allocs := testing.AllocsPerRun(100, func() { entryNode(e, &p.dig) })
	if allocs != 0 {
		t.Errorf("entryNode allocates %.1f times per message, want 0", allocs)
	}
}

func transcriptReader(s string) *transcript.Reader {
	return transcript.NewReader(strings.NewReader(s), transcript.Options{KeepUnknown: true})
}

func TestRuntimeContextOnlyAfterLastUser(t *testing.T) {
	// OpenClaw sends only the runtime-context message that follows the
	// latest user message: the previous one drops out of the history, and
	// the cache loses everything after it.
	const m = "claude-sonnet-4-5"
	s := newV3()
	s.user(strings.Repeat("a", 6000))
	s.add("", "custom_message", `,"customType":"openclaw.runtime-context","content":"Conversation info: message 1","display":false`)
	s.call(1, "anthropic", m, "stop", 3, 0, 3000)
	asst := s.n
	s.user("second")
	s.add("", "custom_message", `,"customType":"openclaw.runtime-context","content":"Conversation info: message 2","display":false`)
	s.call(5, "anthropic", m, "stop", 3, 1000, 2100)
	rep, calls := profileString(t, s.b.String(), Options{})
	c := calls[1]
	if c.Messages != 4 {
		t.Errorf("second call sends %d messages, want 4 (user, assistant, user, runtime context)", c.Messages)
	}
	if c.Predicted.Reason != "prefix-changed" || c.Predicted.ChangedAtLine != int64(asst+1) || c.Predicted.CacheRead != rep.Unseen {
		t.Errorf("second call: %+v (unseen %d, assistant at line %d)", c.Predicted, rep.Unseen, asst+1)
	}
}
