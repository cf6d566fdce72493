package scripted

import (
	"context"
	"testing"
	"time"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider"
	"github.com/ocbench/ocbench/provider/wireenc"
)

// The provider's own HTTP transport talks to the loopback server with base
// URLs written either way, and a refusal is the same *HTTPError in process
// and over loopback.
func TestProviderClientOverLoopback(t *testing.T) {
	s := Default()
	s.Turns = append(s.Turns, Turn{HTTPError: &HTTPError{Status: 529, RetryAfter: 1500 * time.Millisecond}})
	p := MustNew(Options{Script: s})
	base := modesServer(t, p, "loopback")
	c, err := provider.NewClient(provider.WithGetenv(func(string) string { return "" }))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range wireenc.Wires {
		for _, url := range []string{base, base + "/v1"} {
			if w != wireenc.Anthropic && url == base {
				continue // OpenAI base URLs carry /v1 (the handler serves both anyway)
			}
			req := userReq("go")
			req.Model = llm.Model{ID: "scripted-1", API: w.API(), BaseURL: url}
			st, err := c.Stream(context.Background(), req)
			if err != nil {
				t.Fatalf("%v %s: %v", w, url, err)
			}
			m, err := llm.Drain(st)
			if err != nil || m.StopReason != llm.StopToolUse {
				t.Fatalf("%v %s: %v %s", w, url, err, m.AppendJSON(nil))
			}
			checkTurn(t, w, &s.Turns[0], m)
			m = m.Clone()
			st.Close()
			// the tool result, then the refusal turn after the final answer
			req.Messages = append(req.Messages, *m, llm.Message{Role: llm.RoleToolResult, ToolCallID: string(m.Content[1].ID),
				Content: []llm.Block{{Type: llm.BlockText, Text: []byte("ok")}}})
			st, err = c.Stream(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if m, err := llm.Drain(st); err != nil || m.StopReason != llm.StopStop {
				t.Fatalf("%v: %v", w, err)
			}
			final := st.Message().Clone()
			st.Close()
			req.Messages = append(req.Messages, *final, llm.Message{Role: llm.RoleToolResult})
			_, errHTTP := c.Stream(context.Background(), req)
			_, errIn := p.Stream(context.Background(), req)
			var a, b *provider.HTTPError
			if !errorsAs(errHTTP, &a) || !errorsAs(errIn, &b) || *a != *b || a.Status != 529 || a.RetryAfter != 1500*time.Millisecond {
				t.Errorf("%v: loopback %#v, in process %#v", w, errHTTP, errIn)
			}
		}
	}
}
