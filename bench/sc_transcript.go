package bench

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/transcript"
)

// TranscriptTurns is the number of turns in the synthetic session the
// transcript-read scenarios read (each turn is 4 message entries).
const TranscriptTurns = 500

// transcriptTurn returns the 4 messages of turn i of a coding session: the
// user's request, the assistant's text and tool call, the tool's result
// (about 2 KB of code) and the assistant's answer.
func transcriptTurn(i int) [4]llm.Message {
	ts := int64(1_764_000_000_000) + int64(i)*60_000
	user := llm.TextMessage(llm.RoleUser, fmt.Sprintf("Step %d: open internal/stream/decoder.go and check that the SSE decoder handles a CRLF split across reads.", i))
	user.Timestamp = ts

	var call llm.Message
	call.Role = llm.RoleAssistant
	_, b := call.AddBlock(llm.BlockText)
	b.Text = []byte("I'll read the decoder first.")
	_, b = call.AddBlock(llm.BlockToolCall)
	b.ID = fmt.Appendf(nil, "call_%06d", i)
	b.Name = []byte("read")
	b.Arguments = fmt.Appendf(nil, `{"path":"internal/stream/decoder.go","offset":%d,"limit":80}`, i%40*10)
	b.RawArgs = b.Arguments
	call.StopReason = llm.StopToolUse
	call.API, call.Provider, call.Model = "anthropic-messages", "anthropic", "claude-sonnet-4-5"
	call.Usage = llm.Usage{Input: 1200 + int64(i), Output: 40, CacheRead: 30000 + 100*int64(i)}
	call.Timestamp = ts + 1500

	var code strings.Builder
	for j := 0; code.Len() < 2000; j++ {
		fmt.Fprintf(&code, "%4d\tif bytes.HasSuffix(line, []byte(\"\\r\")) { line = line[:len(line)-1] } // step %d.%d\n", j+1, i, j)
	}
	result := llm.TextMessage(llm.RoleToolResult, code.String())
	result.ToolCallID, result.ToolName = string(call.Content[1].ID), "read"
	result.Timestamp = ts + 1600

	answer := llm.TextMessage(llm.RoleAssistant, fmt.Sprintf("The decoder keeps a pending CR across reads (step %d), so a CRLF split between two reads ends one line, not two. No change is needed.", i))
	answer.StopReason = llm.StopStop
	answer.API, answer.Provider, answer.Model = "anthropic-messages", "anthropic", "claude-sonnet-4-5"
	answer.Usage = llm.Usage{Input: 800, Output: 60, CacheRead: 31000 + 100*int64(i)}
	answer.Timestamp = ts + 4000
	return [4]llm.Message{user, call, result, answer}
}

// TranscriptSession returns a synthetic version-3 session file of
// TranscriptTurns turns (a header, a model change, then 4 message entries
// per turn chained by parentId), the transcript-read input.
func TranscriptSession() []byte {
	out := []byte(`{"type":"session","version":3,"id":"5f0c9a7e-3b1d-4c2a-9e8f-0a1b2c3d4e5f","timestamp":"2025-11-24T16:00:00.000Z","cwd":"/home/u/project"}` + "\n")
	e := transcript.Entry{Type: transcript.TypeModelChange, ID: []byte("00000000"), Timestamp: 1_764_000_000_000,
		Provider: []byte("anthropic"), ModelID: []byte("claude-sonnet-4-5")}
	out = append(transcript.AppendEntryJSON(out, &e), '\n')
	parent := []byte("00000000")
	for i := 0; i < TranscriptTurns; i++ {
		msgs := transcriptTurn(i)
		for j := range msgs {
			id := fmt.Appendf(nil, "%08x", 1+4*i+j)
			e := transcript.Entry{Type: transcript.TypeMessage, ID: id, ParentID: parent, Timestamp: msgs[j].Timestamp, Message: &msgs[j]}
			out = append(transcript.AppendEntryJSON(out, &e), '\n')
			parent = id
		}
	}
	return out
}

// transcriptScenarios measure appending one turn (4 message entries, then
// EndTurn) per durability policy, and reading the synthetic session.
func transcriptScenarios() ([]Scenario, error) {
	turn := transcriptTurn(7)
	payload := 0
	for i := range turn {
		payload += len(turn[i].AppendJSON(nil))
	}
	var scs []Scenario
	for _, pol := range []struct {
		input string
		d     transcript.Durability
	}{{"fsync-entry", transcript.SyncEntry}, {"fsync-turn", transcript.SyncTurn}, {"none", transcript.SyncNone}} {
		scs = append(scs, Scenario{
			Name: "transcript-append/" + pol.input, Stage: "transcript-append", Input: pol.input, Impl: Ours,
			Bytes: int64(payload), Events: int64(len(turn)), Latency: true,
			Setup: func() (func() error, func(), error) {
				dir, err := os.MkdirTemp("", "ocbench-bench-transcript-")
				if err != nil {
					return nil, nil, err
				}
				path := filepath.Join(dir, "session.jsonl")
				now := time.Unix(1_764_000_000, 0)
				w, err := transcript.OpenWriter(path, transcript.WriterOptions{Durability: pol.d, SessionID: "bench", Cwd: "/home/u/project",
					Now: func() time.Time { return now }})
				if err != nil {
					os.RemoveAll(dir)
					return nil, nil, err
				}
				teardown := func() { w.Close(); os.RemoveAll(dir) }
				first := true
				return func() error {
					for i := range turn {
						if _, err := w.AppendMessage(&turn[i]); err != nil {
							return err
						}
					}
					if err := w.EndTurn(); err != nil {
						return err
					}
					if first {
						first = false
						return checkAppended(path, turn[:])
					}
					return nil
				}, teardown, nil
			},
		})
	}

	session := TranscriptSession()
	entries := int64(1 + 4*TranscriptTurns)
	for _, mode := range []struct {
		input string
		opts  transcript.Options
	}{{"synthetic-parsed", transcript.Options{}}, {"synthetic-raw", transcript.Options{RawMessages: true}}} {
		scs = append(scs, Scenario{
			Name: "transcript-read/" + mode.input, Stage: "transcript-read", Input: mode.input, Impl: Ours,
			Bytes: int64(len(session)), Events: entries,
			Setup: func() (func() error, func(), error) {
				br := bytes.NewReader(session)
				r := transcript.NewReader(br, mode.opts)
				first := true
				return func() error {
					br.Reset(session)
					r.Reset(br)
					var last *llm.Message
					for r.Next() {
						if first && r.Entry().Message != nil {
							last = r.Entry().Message
						}
					}
					if err := r.Err(); err != nil {
						return err
					}
					if !first {
						return nil
					}
					first = false
					st := r.Stats()
					if st.Entries != entries || st.BadLines != 0 || st.Torn {
						return fmt.Errorf("transcript-read/%s: %d entries (%d bad), want %d", mode.input, st.Entries, st.BadLines, entries)
					}
					if mode.opts.RawMessages {
						return nil
					}
					want := transcriptTurn(TranscriptTurns - 1)[3]
					if last == nil || last.TextContent() != want.TextContent() || last.Usage != want.Usage {
						return fmt.Errorf("transcript-read/%s: last message not read back", mode.input)
					}
					return nil
				}, nil, nil
			},
		})
	}
	return scs, nil
}

// checkAppended reads the session file back and checks that it holds the
// turn's messages, in order, as written.
func checkAppended(path string, turn []llm.Message) error {
	r, err := transcript.OpenFile(path, transcript.Options{})
	if err != nil {
		return err
	}
	defer r.Close()
	n := 0
	for r.Next() {
		e := r.Entry()
		if e.Type != transcript.TypeMessage || e.Message == nil {
			continue
		}
		if n >= len(turn) {
			return fmt.Errorf("transcript-append: more messages than appended")
		}
		got, want := e.Message, &turn[n]
		if !bytes.Equal(got.AppendJSON(nil), want.AppendJSON(nil)) {
			return fmt.Errorf("transcript-append: message %d read back differs", n)
		}
		n++
	}
	if err := r.Err(); err != nil {
		return err
	}
	if n != len(turn) {
		return fmt.Errorf("transcript-append: %d messages read back, want %d", n, len(turn))
	}
	return nil
}
