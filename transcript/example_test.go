package transcript_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/transcript"
)

// Stream the entries of a session file and sum the cache usage of its
// model calls, as a prompt-cache profiler does.
func ExampleReader() {
	r, err := transcript.OpenFile("../testdata/sessions/pi-v1-anthropic-large-session.jsonl", transcript.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	var calls, cacheRead int64
	for r.Next() {
		e := r.Entry()
		if e.Type == transcript.TypeMessage && e.Message != nil && e.Message.Role == llm.RoleAssistant && e.Message.Provider == "anthropic" {
			calls++
			cacheRead += e.Message.Usage.CacheRead
		}
	}
	if err := r.Err(); err != nil {
		fmt.Println(err)
		return
	}
	h, st := r.Header(), r.Stats()
	fmt.Println("version", h.Version, "model", h.ModelID)
	fmt.Println("lines", st.Lines, "messages", st.ByType[transcript.TypeMessage], "torn", st.Torn)
	fmt.Println("anthropic calls", calls, "cacheRead", cacheRead)
	// Output:
	// version 1 model claude-sonnet-4-5
	// lines 1019 messages 914 torn false
	// anthropic calls 452 cacheRead 43229469
}

// Append to a session under a lock, then load the active branch as LLM
// messages.
func ExampleWriter() {
	dir, _ := os.MkdirTemp("", "transcript-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "session.jsonl")

	w, err := transcript.OpenWriter(path, transcript.WriterOptions{Durability: transcript.SyncTurn, SessionID: "demo", Cwd: "/work"})
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := transcript.OpenWriter(path, transcript.WriterOptions{}); err != nil {
		fmt.Println("second writer:", err == nil, strings.Contains(err.Error(), "locked"))
	}
	q := llm.TextMessage(llm.RoleUser, "What is in README.md?")
	a := llm.TextMessage(llm.RoleAssistant, "A project description.")
	a.StopReason = llm.StopStop
	w.AppendMessage(&q)
	w.AppendMessage(&a)
	w.EndTurn() // flushes under SyncTurn
	w.Close()

	sc, err := transcript.LoadContext(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range sc.Messages {
		fmt.Println(m.Role, m.TextContent())
	}
	// Output:
	// second writer: false true
	// user What is in README.md?
	// assistant A project description.
}

// Prepare history for a model call: errored turns dropped, tool calls
// paired with results (a synthetic error result for the missing one).
func ExamplePrepare() {
	call := llm.Message{Role: llm.RoleAssistant, StopReason: llm.StopToolUse, Content: []llm.Block{
		{Type: llm.BlockToolCall, ID: []byte("call_1"), Name: []byte("read"), Arguments: []byte(`{"path":"a.txt"}`)},
	}}
	failed := llm.Message{Role: llm.RoleAssistant, StopReason: llm.StopError, ErrorMessage: "429"}
	msgs := []llm.Message{
		llm.TextMessage(llm.RoleUser, "read a.txt"),
		call,
		llm.TextMessage(llm.RoleUser, "hello?"),
		failed,
	}
	out, rep := transcript.Prepare(msgs, transcript.PrepareOptions{
		Policy: transcript.PolicyForAPI("anthropic-messages"),
		Now:    func() int64 { return 0 },
	})
	for _, m := range out {
		fmt.Println(m.Role, strings.TrimSpace(fmt.Sprintf("%q %s", m.TextContent(), m.ToolCallID)))
	}
	fmt.Println("synthetic results:", rep.Pairing.Added, "dropped errored:", rep.Pairing.DroppedErrored)
	// Output:
	// user "read a.txt"
	// assistant ""
	// toolResult "[openclaw] missing tool result in session history; inserted synthetic error result for transcript repair." call1
	// user "hello?"
	// synthetic results: 1 dropped errored: 1
}
