package streamwrap

import (
	"context"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/ocbench/ocbench/llm"
)

// memoGen builds histories from a stream of choices: roles, tool calls
// and results drawn from small pools, so that ids collide, results come
// early, late, twice or never, names need the allowlist or do not
// resolve, and turns repeat.
type memoGen struct {
	next func(n int) int
}

var (
	memoIDs   = []string{"a", "b", " a", "c", "", "d "}
	memoNames = []string{"read", "Read", "exec", "bash", "not allowed", "", " read", "x_very_long_name_that_is_longer_than_sixty_four_characters_in_all_xx"}
	memoArgs  = []string{`{"path":"x"}`, "", " ", "{}"}
	memoAPIs  = []llm.API{"openai-completions", "openai-responses", "anthropic-messages", "bedrock-converse-stream", "google-generative-ai"}
)

func (g *memoGen) message() llm.Message {
	switch g.next(6) {
	case 0, 1:
		return llm.TextMessage(llm.RoleUser, "u")
	case 2, 3:
		m := llm.Message{Role: llm.RoleToolResult, ToolCallID: memoIDs[g.next(len(memoIDs))], ToolName: "read"}
		m.Content = []llm.Block{{Type: llm.BlockText, Text: []byte("r")}}
		return m
	}
	m := llm.Message{Role: llm.RoleAssistant}
	for range g.next(4) {
		switch g.next(4) {
		case 0:
			m.Content = append(m.Content, llm.Block{Type: llm.BlockText, Text: []byte("t")})
		case 1:
			m.Content = append(m.Content, llm.Block{Type: llm.BlockThinking, Text: []byte("h"), Signature: []byte("s")})
		default:
			m.Content = append(m.Content, llm.Block{Type: llm.BlockToolCall, ID: []byte(memoIDs[g.next(len(memoIDs))]),
				Name: []byte(memoNames[g.next(len(memoNames))]), Arguments: []byte(memoArgs[g.next(len(memoArgs))])})
		}
	}
	return m
}

// pairedTurn is a well-formed tool turn: a call and its result.
func (g *memoGen) pairedTurn(n int) []llm.Message {
	id := "call" + string(rune('A'+n%26)) + string(rune('a'+n/26%26))
	return []llm.Message{
		{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockToolCall, ID: []byte(id), Name: []byte("read"), Arguments: []byte(`{}`)}}},
		{Role: llm.RoleToolResult, ToolCallID: id, ToolName: "read", Content: []llm.Block{{Type: llm.BlockText, Text: []byte("r")}}},
	}
}

// checkMemo grows a history step by step (sometimes rewriting its end
// and telling the memo with Keep) and fails at the first call where the
// memo's answer differs from SanitizeReplayMessages of the whole history.
func checkMemo(t *testing.T, g *memoGen, steps int) {
	t.Helper()
	api := memoAPIs[g.next(len(memoAPIs))]
	cfg := SanitizeConfig{Policy: TranscriptPolicy{
		ValidateAnthropicTurns:   g.next(2) == 0,
		ValidateGeminiTurns:      g.next(3) == 0,
		PreserveSignatures:       g.next(2) == 0,
		DropThinkingBlocks:       g.next(3) == 0,
		DropReasoningFromHistory: g.next(2) == 0,
	}}
	if g.next(2) == 0 {
		cfg.ReplayAllowed = NewAllowlist("read", "exec")
	}
	var m ReplayMemo
	var h []llm.Message
	for step := range steps {
		switch g.next(8) {
		case 0:
			// Rewrite the end: the owner says how much is the same.
			k := g.next(len(h) + 1)
			h = append(h[:k:k], g.message())
			m.Keep(k)
		case 1, 2:
			h = append(h, g.pairedTurn(step)...)
		default:
			for range 1 + g.next(3) {
				h = append(h, g.message())
			}
		}
		if g.next(10) == 0 {
			// Another configuration: the memo starts again.
			api = memoAPIs[g.next(len(memoAPIs))]
		}
		want, wch := SanitizeReplayMessages(h, api, cfg)
		got, gch := m.Sanitize(h, api, cfg)
		if gch != wch || !reflect.DeepEqual(got, want) {
			t.Fatalf("step %d (api %s, policy %+v, allowlist %v): memo gives changed=%v %v, a full pass changed=%v %v\nhistory %v",
				step, api, cfg.Policy, cfg.ReplayAllowed != nil, gch, got, wch, want, h)
		}
		if !gch && len(got) > 0 && &got[0] != &h[0] {
			t.Fatalf("step %d: unchanged history returned in another array", step)
		}
	}
}

func TestReplayMemoMatchesFullPass(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		checkMemo(t, &memoGen{next: rng.IntN}, 40)
	}
}

func FuzzReplayMemo(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte{1, 0, 1, 1, 0, 2, 4, 5, 2, 2, 1, 3, 5, 5, 0, 2, 7, 2, 3, 1, 0, 0, 3, 0})
	f.Add([]byte("assistant calls a, result a comes two turns later"))
	f.Fuzz(func(t *testing.T, data []byte) {
		i := 0
		g := &memoGen{next: func(n int) int {
			if i >= len(data) {
				return 0
			}
			i++
			return int(data[i-1]) % n
		}}
		checkMemo(t, g, 1+len(data)/3)
	})
}

// TestReplayMemoWorkIndependentOfHistory: on a well-formed history that
// grows by a tool turn per call, each call works through the messages
// appended since the last one, not the whole history.
func TestReplayMemoWorkIndependentOfHistory(t *testing.T) {
	for _, api := range memoAPIs {
		var m ReplayMemo
		g := &memoGen{}
		cfg := SanitizeConfig{ReplayAllowed: NewAllowlist("read"), Policy: TranscriptPolicy{ValidateAnthropicTurns: true}}
		h := []llm.Message{llm.TextMessage(llm.RoleUser, "u")}
		var before int64
		for call := range 2000 {
			h = append(h, g.pairedTurn(call)...)
			if call%5 == 4 {
				h = append(h, llm.TextMessage(llm.RoleAssistant, "done"), llm.TextMessage(llm.RoleUser, "next"))
			}
			before = m.Examined()
			if out, changed := m.Sanitize(h, api, cfg); changed || len(out) != len(h) {
				t.Fatalf("%s: call %d changed a well-formed history", api, call)
			}
			if d := m.Examined() - before; d > 4 {
				t.Fatalf("%s: call %d (history of %d messages) worked through %d messages", api, call, len(h), d)
			}
		}
	}
}

// TestSanitizeReplayToolCallsUsesContextMemo: the decorator sanitizes
// with the memo its call's context carries.
func TestSanitizeReplayToolCallsUsesContextMemo(t *testing.T) {
	var m ReplayMemo
	var sent []llm.Message
	f := SanitizeReplayToolCalls(func(_ context.Context, req *llm.Request) (llm.Stream, error) {
		sent = req.Messages
		return nil, nil
	}, SanitizeConfig{})
	g := &memoGen{}
	req := &llm.Request{Model: llm.Model{API: "openai-responses"}}
	ctx := context.WithValue(context.Background(), ReplayMemoKey{}, &m)
	for call := range 3 {
		req.Messages = append(req.Messages, g.pairedTurn(call)...)
		if _, err := f(ctx, req); err != nil {
			t.Fatal(err)
		}
		if len(sent) != len(req.Messages) {
			t.Fatalf("sent %d messages of %d", len(sent), len(req.Messages))
		}
	}
	if m.Examined() != 6 {
		t.Fatalf("the memo worked through %d messages, want the 6 of 3 calls", m.Examined())
	}
	// A dangling call: the decorator sends the synthetic result the
	// full pass gives.
	req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockToolCall, ID: []byte("z"), Name: []byte("read"), Arguments: []byte("{}")}}})
	if _, err := f(ctx, req); err != nil {
		t.Fatal(err)
	}
	want, _ := SanitizeReplayMessages(req.Messages, "openai-responses", SanitizeConfig{})
	if !reflect.DeepEqual(sent, want) || len(sent) != len(req.Messages)+1 {
		t.Fatalf("sent %v, want %v", sent, want)
	}
}
