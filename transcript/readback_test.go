package transcript

import (
	"path/filepath"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/ocbench/ocbench/llm"
)

// readBackCases are messages of the kinds a run appends, and some a
// read gives back otherwise (ReadBackMessage must then refuse them).
func readBackCases(text, args string) []llm.Message {
	tool := llm.Message{Role: llm.RoleAssistant, StopReason: llm.StopToolUse, API: "openai-completions", Provider: "p", Model: "m",
		ResponseID: "resp_1", Timestamp: 1764000000123,
		Usage: llm.Usage{Input: 10, Output: 2, CacheRead: 3, CacheWrite: 4, TotalTokens: 19, Reasoning: 5, ReasoningShown: llm.ReasoningBeforeTotal,
			Cost: llm.Cost{Input: 0.1, Output: 0.25, Total: 0.35}},
		Content: []llm.Block{{Type: llm.BlockThinking, Text: []byte("hmm " + text), SignatureSet: true},
			{Type: llm.BlockText, Text: []byte(text), Signature: []byte("sig")},
			{Type: llm.BlockToolCall, ID: []byte("call_1"), Name: []byte("read"), Arguments: []byte(args), RawArgs: []byte(" " + args)}}}
	result := llm.TextMessage(llm.RoleToolResult, text)
	result.ToolCallID, result.ToolName, result.IsError, result.Timestamp = "call_1", "read", true, 1764000000200
	user := llm.TextMessage(llm.RoleUser, text)
	user.Timestamp = 1
	failed := llm.Message{Role: llm.RoleAssistant, StopReason: llm.StopError, ErrorMessage: "boom " + text, Timestamp: 1764000000300}
	empty := llm.Message{Role: llm.RoleAssistant, StopReason: llm.StopStop, Content: []llm.Block{}, Timestamp: 5}
	image := llm.Message{Role: llm.RoleUser, Timestamp: 6, Content: []llm.Block{{Type: llm.BlockImage, Text: []byte("aGk="), MimeType: []byte("image/png")},
		{Type: llm.BlockText}}}
	unstopped := tool
	unstopped.Content = []llm.Block{{Type: llm.BlockText, Text: []byte(text), Unstopped: true, StreamIndex: 2}}
	return []llm.Message{result, user, failed, empty, image, tool, unstopped}
}

// checkReadBack writes msgs through a Writer, reads the file back and
// holds ReadBackMessage to what the Reader gives for each line it
// accepts; it returns how many it accepted.
func checkReadBack(t *testing.T, msgs []llm.Message) int {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	w, err := OpenWriter(path, WriterOptions{Durability: SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	type appended struct {
		e      Entry
		ok     bool
		line   int64
		offset int64
	}
	var want []appended
	lines := int64(1) // the header
	for i := range msgs {
		before, _ := w.State()
		parent := []byte(w.Leaf())
		id, err := w.AppendMessage(&msgs[i])
		if err != nil {
			t.Fatal(err)
		}
		lines++
		e, ok := ReadBackMessage([]byte(id), parent, msgs[i].Timestamp, &msgs[i], lines, before.Size())
		want = append(want, appended{e, ok, lines, before.Size()})
	}
	w.Close()
	rd, err := OpenFile(path, Options{KeepUnknown: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	read := map[string]Entry{}
	for rd.Next() {
		e := rd.Entry().Clone()
		read[string(e.ID)] = e
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	// A line that does not read (arguments that are not JSON, written as
	// they are) is skipped by the reader: ReadBackMessage must have
	// refused its message. The messages before the first refused one are
	// held to what the reader gives.
	accepted := 0
	for n, w := range want {
		if !w.ok {
			// A refused message's line may not be one line (arguments
			// with a raw line break): the line numbers after it are
			// not known, and the caller reads the rest.
			break
		}
		accepted++
		got, found := read[string(w.e.ID)]
		if !found || !reflect.DeepEqual(got, w.e) {
			t.Errorf("message %d (%+v):\nread      %+v\n%+v\nread back %+v\n%+v", n, msgs[n], got, got.Message, w.e, *w.e.Message)
		}
	}
	return accepted
}

func TestReadBackMessageMatchesReader(t *testing.T) {
	for _, c := range []struct{ text, args string }{
		{"hello", `{"path":"a.md"}`},
		{"", ""},
		{"line\nbreak \"quoted\" \\ tab\t <tag> & é 😀 \u2028", `{"a":[1,2.50,-3e2,true,null],"b":{"c":"d\"e\\n"}}`},
		{"x", `{"a": 1}`},       // spaces: written as they are, read back compact
		{"x", "{\"a\":\n1}"},    // a line break: taken out on write
		{"x", `{"s":"\u00e9"}`}, // an escape a read writes otherwise
		{"x", `{"s":"\ud800"}`}, // a lone surrogate
		{"bad \xff byte", `{}`},
	} {
		msgs := readBackCases(c.text, c.args)
		if checkReadBack(t, msgs) == 0 && utf8.ValidString(c.text) {
			t.Errorf("%q %q: nothing accepted", c.text, c.args)
		}
	}
	// What must be refused is refused.
	if _, ok := ReadBackMessage([]byte("a"), nil, 1, &llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: []byte("a"), Unstopped: true}}}, 2, 0); ok {
		t.Error("an unstopped block was accepted")
	}
	if _, ok := ReadBackMessage([]byte("a"), nil, 1, &llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: []byte("\xed\xa0\x80")}}}, 2, 0); ok {
		t.Error("a lone surrogate was accepted")
	}
}

func FuzzReadBackMessage(f *testing.F) {
	f.Add("hello", `{"path":"a.md"}`, int64(1764000000123))
	f.Add("a\x00b\u2029", `[1,{"x":"\"y"}]`, int64(0))
	f.Add("é", `{"a":1e400}`, int64(253402300799999))
	f.Fuzz(func(t *testing.T, text, args string, ts int64) {
		msgs := readBackCases(text, args)
		for i := range msgs {
			if ts > 0 {
				msgs[i].Timestamp = ts
			}
		}
		checkReadBack(t, msgs)
	})
}
