package scripted

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider"
	"github.com/ocbench/ocbench/provider/wireenc"
	"github.com/valyala/fastjson"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// userReq is a request holding one user message.
func userReq(text string) *llm.Request {
	// A reasoning model, so that chat reasoning deltas are kept.
	return &llm.Request{Model: llm.Model{Reasoning: true}, Messages: []llm.Message{llm.TextMessage(llm.RoleUser, text)}}
}

// playInProcess runs req through p.Stream on wire w and drains it.
func playInProcess(t testing.TB, ctx context.Context, p *Provider, w wireenc.Wire, req *llm.Request) (*llm.Message, []llm.EventType, error) {
	t.Helper()
	r := *req
	r.Model.API = w.API()
	s, err := p.Stream(ctx, &r)
	if err != nil {
		return nil, nil, err
	}
	defer s.Close()
	var types []llm.EventType
	for s.Next() {
		types = append(types, s.Event().Type)
	}
	return s.Message().Clone(), types, s.Err()
}

// requestBody writes req as a streaming request body of wire w (enough
// of it for the scripted endpoints: model, messages, stream flags).
func requestBody(w wireenc.Wire, req *llm.Request, stream bool) []byte {
	b := []byte(`{"model":"test-model","stream":`)
	if stream {
		b = append(b, "true"...)
	} else {
		b = append(b, "false"...)
	}
	if w == wireenc.OpenAIChat {
		b = append(b, `,"stream_options":{"include_usage":true}`...)
	}
	key := `,"messages":[`
	if w == wireenc.OpenAIResponses {
		key = `,"input":[`
	}
	b = append(b, key...)
	n := 0
	sep := func() {
		if n > 0 {
			b = append(b, ',')
		}
		n++
	}
	for i := range req.Messages {
		m := &req.Messages[i]
		switch m.Role {
		case llm.RoleUser:
			sep()
			b = append(b, `{"role":"user","content":`...)
			b = llm.AppendJSONString(b, m.TextContent())
			b = append(b, '}')
		case llm.RoleAssistant:
			for j := range m.Content {
				c := &m.Content[j]
				if c.Type != llm.BlockToolCall {
					continue
				}
				sep()
				switch w {
				case wireenc.OpenAIChat:
					b = append(b, `{"role":"assistant","tool_calls":[{"id":`...)
					b = llm.AppendJSONString(b, c.ID)
					b = append(b, `,"type":"function","function":{"name":`...)
					b = llm.AppendJSONString(b, c.Name)
					b = append(b, `,"arguments":"{}"}}]}`...)
				case wireenc.OpenAIResponses:
					b = append(b, `{"type":"function_call","call_id":`...)
					b = llm.AppendJSONString(b, c.ID)
					b = append(b, `,"name":`...)
					b = llm.AppendJSONString(b, c.Name)
					b = append(b, `,"arguments":"{}"}`...)
				case wireenc.Anthropic:
					b = append(b, `{"role":"assistant","content":[{"type":"tool_use","id":`...)
					b = llm.AppendJSONString(b, c.ID)
					b = append(b, `,"name":`...)
					b = llm.AppendJSONString(b, c.Name)
					b = append(b, `,"input":{}}]}`...)
				}
			}
		case llm.RoleToolResult:
			sep()
			switch w {
			case wireenc.OpenAIChat:
				b = append(b, `{"role":"tool","tool_call_id":`...)
				b = llm.AppendJSONString(b, m.ToolCallID)
				b = append(b, `,"content":"ok"}`...)
			case wireenc.OpenAIResponses:
				b = append(b, `{"type":"function_call_output","call_id":`...)
				b = llm.AppendJSONString(b, m.ToolCallID)
				b = append(b, `,"output":"ok"}`...)
			case wireenc.Anthropic:
				b = append(b, `{"role":"user","content":[{"type":"tool_result","tool_use_id":`...)
				b = llm.AppendJSONString(b, m.ToolCallID)
				b = append(b, `,"content":"ok"}]}`...)
			}
		}
	}
	return append(b, "]}"...)
}

// post sends a request body to the wire's endpoint.
func post(ctx context.Context, base string, w wireenc.Wire, body []byte) (*http.Response, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, base+w.Path(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Content-Type", "application/json")
	return http.DefaultClient.Do(hr)
}

// playLoopback sends req to the server over HTTP and decodes the SSE
// answer with the provider's decoder. A non-2xx answer is returned as a
// *provider.HTTPError built from the status and Retry-After.
func playLoopback(t testing.TB, ctx context.Context, base string, w wireenc.Wire, req *llm.Request) (*llm.Message, []llm.EventType, error) {
	t.Helper()
	resp, err := post(ctx, base, w, requestBody(w, req, true))
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		body, _ := io.ReadAll(resp.Body)
		he := &provider.HTTPError{Status: resp.StatusCode, Message: string(body)}
		if ra := resp.Header.Get("Retry-After"); ra != "" {
			d, _ := time.ParseDuration(ra + "s")
			he.RetryAfter = d
		}
		return nil, nil, he
	}
	pw, _ := provider.ParseWire(w.String())
	d := provider.NewDecoder(pw, resp.Body, provider.Options{})
	d.SetContext(ctx)
	var types []llm.EventType
	for d.Next() {
		types = append(types, d.Event().Type)
	}
	return d.Message().Clone(), types, d.Err()
}

type playFunc func(t testing.TB, ctx context.Context, w wireenc.Wire, req *llm.Request) (*llm.Message, []llm.EventType, error)

// modes returns the two ways of playing p: in process and over loopback.
func modes(t *testing.T, p *Provider) map[string]playFunc {
	srv, err := p.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Close()
		http.DefaultClient.CloseIdleConnections()
	})
	return map[string]playFunc{
		"inprocess": func(t testing.TB, ctx context.Context, w wireenc.Wire, req *llm.Request) (*llm.Message, []llm.EventType, error) {
			return playInProcess(t, ctx, p, w, req)
		},
		"loopback": func(t testing.TB, ctx context.Context, w wireenc.Wire, req *llm.Request) (*llm.Message, []llm.EventType, error) {
			return playLoopback(t, ctx, srv.URL, w, req)
		},
	}
}

// checkTurn checks that m carries what turn scripted, on wire w.
func checkTurn(t testing.TB, w wireenc.Wire, turn *Turn, m *llm.Message) {
	t.Helper()
	var want []llm.Block
	for i := range turn.Steps {
		st := &turn.Steps[i]
		switch st.Kind {
		case StepText:
			want = append(want, llm.Block{Type: llm.BlockText, Text: []byte(st.Text)})
		case StepThinking:
			want = append(want, llm.Block{Type: llm.BlockThinking, Text: []byte(st.Text), Signature: []byte(st.Signature)})
		case StepTools:
			for _, c := range st.Calls {
				want = append(want, llm.Block{Type: llm.BlockToolCall, ID: []byte(c.ID), Name: []byte(c.Name), RawArgs: []byte(c.Args)})
			}
		}
	}
	if len(m.Content) != len(want) {
		t.Fatalf("%v: %d blocks, want %d: %s", w, len(m.Content), len(want), m.AppendJSON(nil))
	}
	for i := range want {
		wb, gb := &want[i], &m.Content[i]
		if wb.Type != gb.Type {
			t.Fatalf("%v: block %d is %v, want %v", w, i, gb.Type, wb.Type)
		}
		switch wb.Type {
		case llm.BlockText, llm.BlockThinking:
			if string(gb.Text) != string(wb.Text) {
				t.Errorf("%v: block %d text %q, want %q", w, i, gb.Text, wb.Text)
			}
			if wb.Type == llm.BlockThinking {
				switch w {
				case wireenc.Anthropic:
					if string(gb.Signature) != string(wb.Signature) {
						t.Errorf("%v: signature %q, want %q", w, gb.Signature, wb.Signature)
					}
				case wireenc.OpenAIResponses:
					v, err := fastjson.ParseBytes(gb.Signature)
					if err != nil || string(v.GetStringBytes("encrypted_content")) != string(wb.Signature) {
						t.Errorf("%v: reasoning item %s does not carry signature %q", w, gb.Signature, wb.Signature)
					}
				}
			}
		case llm.BlockToolCall:
			id := gb.ID
			if w == wireenc.OpenAIResponses {
				id, _, _ = bytes.Cut(id, []byte("|"))
			}
			if len(wb.ID) > 0 && string(id) != string(wb.ID) {
				t.Errorf("%v: call %d id %q, want %q", w, i, gb.ID, wb.ID)
			}
			if len(id) == 0 {
				t.Errorf("%v: call %d has no id", w, i)
			}
			if string(gb.Name) != string(wb.Name) || string(gb.RawArgs) != string(wb.RawArgs) {
				t.Errorf("%v: call %d = %q %q, want %q %q", w, i, gb.Name, gb.RawArgs, wb.Name, wb.RawArgs)
			}
		}
	}
	if turn.Usage != (llm.Usage{}) {
		u := turn.Usage
		if w == wireenc.Anthropic {
			u.Reasoning = 0
		}
		u.TotalTokens = u.Input + u.Output + u.CacheRead + u.CacheWrite
		if m.Usage != u {
			t.Errorf("%v: usage %+v, want %+v", w, m.Usage, u)
		}
	}
}

func errorsAs[T any](err error, target *T) bool { return err != nil && errors.As(err, target) }

func validJSON(b []byte) bool { return fastjson.ValidateBytes(b) == nil }

func validUTF8(s string) bool { return utf8.ValidString(s) }
