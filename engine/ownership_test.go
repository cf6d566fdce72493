package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider/scripted"
	"github.com/ocbench/ocbench/transcript"
)

// resultJSON is what a caller sees of a run's messages: NewMessages,
// Final and Conversation, as JSON.
func resultJSON(res *Result) string {
	var b []byte
	for i := range res.NewMessages {
		b = res.NewMessages[i].AppendJSON(b)
	}
	b = append(b, "\nfinal "...)
	if res.Final != nil {
		b = res.Final.AppendJSON(b)
	}
	b = append(b, "\nconversation "...)
	for i := range res.Conversation {
		b = res.Conversation[i].AppendJSON(b)
	}
	return string(b)
}

// A run builds its answers and tool results in its history's next
// element (histSlot), so that each is stored once, and hands pointers to
// them out (Result.Final, the session's entries). A Result stays the
// caller's all the same: the session's next runs (which write over what
// a run appended in the live cache's array, and whose histories grow
// into arrays of their own) never change what an earlier Result holds,
// also while the caller reads it during them (run with -race), and Final
// is the last assistant message of NewMessages. Run lengths cross the
// history's growth (32 messages at a time) and the live cache's room.
func TestResultMessagesStayTheCallers(t *testing.T) {
	for _, mode := range []string{"memory", "file"} {
		t.Run(mode, func(t *testing.T) {
			prov := scripted.MustNew(scripted.Options{Script: toolLoopScript(16, strings.Repeat("checking ", 5))})
			session := filepath.Join(t.TempDir(), "s.jsonl")
			type kept struct {
				res  *Result
				json string
			}
			var earlier []kept
			var history []llm.Message
			clock := time.Unix(1700000000, 0)
			for i, turns := range []int{1, 2, 3, 25, 1, 40, 2, 17} {
				p := benchParams(prov.StreamFunc(), "openai-completions", turns)
				p.Prompt = "prompt " + string(rune('a'+i))
				p.Now = func() time.Time { return clock }
				if mode == "file" {
					p.SessionFile, p.Session.Durability = session, transcript.SyncNone
				} else {
					p.History = history
				}
				// The caller reads the last Result while the next run goes on.
				stop, done := make(chan struct{}), make(chan struct{})
				go func() {
					defer close(done)
					if len(earlier) == 0 {
						return
					}
					last := earlier[len(earlier)-1]
					for {
						select {
						case <-stop:
							return
						default:
						}
						if resultJSON(last.res) != last.json {
							t.Errorf("run %d changed the last Result while it ran", i)
							return
						}
					}
				}()
				res, err := Run(context.Background(), p)
				close(stop)
				<-done
				if !errors.Is(err, ErrTurnLimit) || res.Turns != turns {
					t.Fatalf("run %d: %v after %d turns", i, err, res.Turns)
				}
				if n := len(res.NewMessages); n != 1+2*turns || res.Final == nil ||
					string(res.Final.AppendJSON(nil)) != string(res.NewMessages[n-2].AppendJSON(nil)) {
					t.Fatalf("run %d: %d new messages, Final %v is not the last answer", i, n, res.Final)
				}
				earlier = append(earlier, kept{&res, resultJSON(&res)})
				history = res.Conversation
			}
			for i, k := range earlier {
				if resultJSON(k.res) != k.json {
					t.Fatalf("the Result of run %d changed after it", i)
				}
			}
			if mode == "file" {
				// The transcript holds what the Results did.
				msgs, _ := sessionRoles(t, session)
				var got, want []byte
				for i := range msgs {
					got = append(got, describe(msgs[i:i+1])+" "+msgs[i].TextContent()+"\n"...)
				}
				for _, k := range earlier {
					for i := range k.res.NewMessages {
						m := &k.res.NewMessages[i]
						want = append(want, describe(k.res.NewMessages[i:i+1])+" "+m.TextContent()+"\n"...)
					}
				}
				if string(got) != string(want) {
					t.Fatalf("transcript:\n%s\nResults:\n%s", got, want)
				}
			}
		})
	}
}

// interruptAfter pushes an interrupt after n events of its stream, which
// then ends aborted with what it streamed so far.
type interruptAfter struct {
	llm.Stream
	q *Queue
	n int
}

func (s *interruptAfter) Next() bool {
	if s.n--; s.n == 0 {
		s.q.Push(Interrupt, "stop, do this instead")
	}
	return s.Stream.Next()
}

// An answer interrupted mid-stream (its text and a tool call streamed)
// is recorded whole while the history takes a copy without the call
// (addToHistory): the answer, built in the history's next element when
// the history has grown into an array of its own, is moved out first, so
// the copy does not land on it. What the session's next run reads back
// from memory (the live cache) is then what the file holds: its requests
// are byte-identical to those of a run that reads the file.
func TestInterruptedAnswerReadBackMatchesFile(t *testing.T) {
	world := func(cached bool) []string {
		var turns []fakeTurn
		turns = append(turns, fakeTurn{msg: assistantText("hello")})
		for range 14 {
			// The history outgrows the live cache's array.
			turns = append(turns, fakeTurn{msg: assistantCalls([3]string{"", "read", `{"path":"notes.txt"}`})})
		}
		cut := assistantCalls([3]string{"cx", "read", `{"path":"notes.txt"}`})
		cut.Content = append([]llm.Block{{Type: llm.BlockText, Text: []byte("let me look")}}, cut.Content...)
		turns = append(turns, fakeTurn{msg: cut}, fakeTurn{msg: assistantText("doing it")}, fakeTurn{msg: assistantText("again")})
		for i := 1; i < 15; i++ {
			turns[i].msg.Content[0].ID = []byte(fmt.Sprintf("c%d", i))
		}
		e := newRunEnv(t, turns...)
		q := &Queue{}
		var reqs []string
		for i, prompt := range []string{"first", "second", "third"} {
			if !cached {
				liveSessions.take(e.session)
			}
			p := e.params(prompt)
			p.Now = func() time.Time { return time.Unix(1700000000, 0) }
			p.Session.Durability = transcript.SyncNone
			p.Queue = q
			p.StreamFunc = func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
				b, err := json.Marshal(req.Messages)
				if err != nil {
					t.Error(err)
				}
				reqs = append(reqs, strings.ReplaceAll(string(b), e.dir, "DIR"))
				s, err := e.fp.stream(ctx, req)
				if e.fp.calls == 16 {
					// Start, the text's three events, the call's start.
					s = &interruptAfter{Stream: s, q: q, n: 6}
				}
				return s, err
			}
			res, err := Run(context.Background(), p)
			if err != nil {
				t.Fatalf("run %d: %v", i, err)
			}
			if i == 1 && (res.Steered != 1 || res.FinalText() != "doing it") {
				t.Fatalf("run %d: steered %d, final %q", i, res.Steered, res.FinalText())
			}
			if i == 1 && cached {
				// The cache holds the file's messages, the cut call's too.
				le := liveSessions.take(e.session)
				if le == nil {
					t.Fatal("the session is not cached")
				}
				f, err := os.Open(e.session)
				if err != nil {
					t.Fatal(err)
				}
				rd := transcript.NewReader(f, transcript.Options{})
				var file, mem []byte
				for rd.Next() {
					if m := rd.Entry().Message; m != nil {
						file = m.AppendJSON(file)
					}
				}
				f.Close()
				for _, en := range le.entries {
					if en.Message != nil {
						mem = en.Message.AppendJSON(mem)
					}
				}
				if string(mem) != string(file) || !strings.Contains(string(mem), `"cx"`) {
					t.Fatalf("cached messages differ from the file's:\ncached %s\nfile   %s", mem, file)
				}
				liveSessions.put(le)
			}
		}
		_, roles := sessionRoles(t, e.session)
		if !strings.Contains(roles, "assistant:aborted,toolResult!,user,assistant:stop") {
			t.Fatalf("no interrupted call in the session: %s", roles)
		}
		return reqs
	}
	a, b := world(true), world(false)
	if len(a) != len(b) || len(a) != 18 {
		t.Fatalf("%d and %d requests, want 18", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("request %d differs:\ncached   %s\nuncached %s", i, a[i], b[i])
		}
	}
}
