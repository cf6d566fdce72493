package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/transcript"
)

// describe renders messages as role:text|role:text for comparisons.
func describe(msgs []llm.Message) string {
	var b strings.Builder
	for i := range msgs {
		m := &msgs[i]
		if i > 0 {
			b.WriteByte('|')
		}
		b.WriteString(m.Role.String())
		b.WriteByte(':')
		for _, c := range m.Content {
			switch c.Type {
			case llm.BlockToolCall:
				fmt.Fprintf(&b, "call(%s %s)", c.ID, c.Name)
			default:
				t := string(c.Text)
				if len(t) > 40 {
					t = t[:40] + "…"
				}
				b.WriteString(t)
			}
		}
		if m.ToolCallID != "" {
			b.WriteString("#" + m.ToolCallID)
		}
	}
	return b.String()
}

// conversationScript is three requests of one conversation: a tool round
// trip, a plain answer, then an overflow that compacts the history and a
// retried answer.
func conversationScript() []fakeTurn {
	overflow := llm.Message{Role: llm.RoleAssistant, StopReason: llm.StopError, ErrorMessage: "prompt is too long: 250000 tokens > 200000 maximum"}
	return []fakeTurn{
		{msg: assistantCalls([3]string{"c1", "read", `{"path":"notes.txt"}`})},
		{msg: assistantText("first answer " + strings.Repeat("x", 4000))},
		{msg: assistantText("second answer")},
		{msg: overflow},
		{msg: assistantText("SUMMARY: user asked things")},
		{msg: assistantText("answer after compaction")},
	}
}

type convPath struct {
	name  string
	setup func(e *runEnv, p *Params)
}

// The same conversation kept in memory, in a session file and in a store:
// the model receives the same requests on every path, compaction
// included, and Result.Conversation of the in-memory path is what the file
// holds after the run.
func TestConversationSameInMemoryFileAndStore(t *testing.T) {
	paths := []convPath{
		{"memory", func(e *runEnv, p *Params) { p.SessionFile = "" }},
		{"file", func(e *runEnv, p *Params) {}},
		{"sqlite", func(e *runEnv, p *Params) {
			st, err := transcript.OpenSQLiteStore(filepath.Join(e.dir, "agent.sqlite"), transcript.SQLiteOptions{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			p.SessionFile, p.SessionStore, p.SessionID = "", st, "conv"
		}},
	}
	var want []string
	var wantConv string
	for _, path := range paths {
		t.Run(path.name, func(t *testing.T) {
			e := newRunEnv(t, conversationScript()...)
			var history []llm.Message
			var store transcript.Store
			var final Result
			for i, prompt := range []string{"first question", "second question", "third question"} {
				p := e.params(prompt)
				if store != nil {
					p.SessionFile, p.SessionStore, p.SessionID = "", store, "conv"
				} else {
					path.setup(e, &p)
					store = p.SessionStore
				}
				p.History = history
				if i == 2 {
					p.Compaction.KeepRecentTokens = 1
				}
				res, err := Run(context.Background(), p)
				if err != nil {
					t.Fatalf("run %d: %v", i, err)
				}
				if p.SessionFile == "" && p.SessionStore == nil {
					if len(res.Conversation) == 0 {
						t.Fatal("no Conversation from an in-memory run")
					}
					if !res.Compaction.Compacted {
						if got, want := describe(res.Conversation), describe(append(append([]llm.Message(nil), history...), res.NewMessages...)); got != want {
							t.Fatalf("run %d: conversation %s, want History + NewMessages %s", i, got, want)
						}
					}
					history = res.Conversation
				} else if res.Conversation != nil {
					t.Fatal("Conversation set for a stored session")
				}
				if res.NewMessages[0].Role != llm.RoleUser || res.NewMessages[0].TextContent() != prompt {
					t.Fatalf("run %d: new messages start with %s", i, describe(res.NewMessages[:1]))
				}
				if last := res.NewMessages[len(res.NewMessages)-1]; last.TextContent() != res.FinalText() {
					t.Fatalf("run %d: new messages end with %s, final %q", i, describe([]llm.Message{last}), res.FinalText())
				}
				final = res
			}
			if !final.Compaction.Compacted || final.FinalText() != "answer after compaction" {
				t.Fatalf("%+v %q", final.Compaction, final.FinalText())
			}
			var got []string
			for _, r := range e.fp.reqs {
				got = append(got, describe(r))
			}
			if len(got) != 6 {
				t.Fatalf("%d model calls, want 6 (tool turn, answer, answer, overflow, summary, retry)", len(got))
			}
			if want == nil {
				want = got
				wantConv = describe(history)
				if !strings.HasPrefix(wantConv, "user:"+transcript.CompactionSummaryPrefix[:40]) {
					t.Fatalf("in-memory conversation after compaction: %s", wantConv)
				}
				return
			}
			for i := range want {
				if i >= len(got) || got[i] != want[i] {
					t.Fatalf("request %d differs from the in-memory path:\n got %s\nwant %s", i, got[min(i, len(got)-1)], want[i])
				}
			}
			if path.name == "file" {
				msgs, _ := sessionRoles(t, e.session)
				if d := describe(msgs); d != wantConv {
					t.Fatalf("file context after the run:\n%s\nin-memory Conversation:\n%s", d, wantConv)
				}
			}
		})
	}
}

// History is the caller's: the run neither keeps nor changes it, and
// failed runs still return the conversation with the failure in it.
func TestInMemoryHistoryOwnershipAndFailure(t *testing.T) {
	e := newRunEnv(t,
		fakeTurn{msg: assistantText("one")},
		fakeTurn{refuse: errors.New("upstream down")},
	)
	p := e.params("q1")
	p.SessionFile = ""
	res, err := Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	hist := res.Conversation
	before := describe(hist)
	p.Prompt, p.History, p.RateLimitRetries = "q2", hist, -1
	res2, err := Run(context.Background(), p)
	if !errors.Is(err, ErrProvider) {
		t.Fatalf("%v", err)
	}
	if describe(hist) != before {
		t.Fatal("the run changed the caller's History")
	}
	if d := describe(res2.Conversation); !strings.HasPrefix(d, before+"|user:q2|assistant:") {
		t.Fatalf("conversation after a failed run: %s", d)
	}
	if len(res2.NewMessages) != 2 || res2.NewMessages[1].StopReason != llm.StopError {
		t.Fatalf("new messages %s", describe(res2.NewMessages))
	}
	// History with a file is refused.
	p.SessionFile = e.session
	if _, err := Run(context.Background(), p); !errors.Is(err, ErrParams) {
		t.Fatalf("History with SessionFile: %v", err)
	}
}
