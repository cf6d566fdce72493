package provider

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/llm"
)

var updateGolden = flag.Bool("update", false, "rewrite provider/testdata/request/*.golden")

func mustEncode(t testing.TB, w Wire, req *llm.Request) string {
	t.Helper()
	b, err := AppendRequestJSON(nil, w, req)
	if err != nil {
		t.Fatalf("%v: %v", w, err)
	}
	return string(b)
}

func ptr[T any](v T) *T { return &v }

// optionsRequest is a small conversation with two tools, for the option
// cases to decorate.
func optionsRequest(op llm.RequestOptions) *llm.Request {
	return &llm.Request{
		Model:    llm.Model{ID: "m", BaseURL: "http://127.0.0.1:9/v1"},
		System:   "Be brief.",
		Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "What is in a.txt?")},
		Tools: []llm.Tool{
			{Name: "read", Description: "Read a file.", Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
			{Name: "write", Description: "Write a file.", Parameters: []byte(`{"type":"object"}`)},
		},
		MaxTokens: 100,
		Options:   op,
	}
}

var answerSchema = []byte(` {"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"],"additionalProperties":false} `)

// The option cases: each golden file holds, per wire, the encoded body or
// the error it is refused with.
var optionCases = []struct {
	name string
	op   llm.RequestOptions
	mod  func(*llm.Request)
}{
	{name: "tool-choice-auto", op: llm.RequestOptions{ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceAuto}, ParallelToolCalls: ptr(true)}},
	{name: "tool-choice-none", op: llm.RequestOptions{ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceNone}, ParallelToolCalls: ptr(false)}},
	{name: "tool-choice-required", op: llm.RequestOptions{ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceRequired}}},
	{name: "tool-choice-tool", op: llm.RequestOptions{ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: "read"}, ParallelToolCalls: ptr(false)}},
	{name: "parallel-off", op: llm.RequestOptions{ParallelToolCalls: ptr(false)}},
	{name: "format-text", op: llm.RequestOptions{ResponseFormat: &llm.ResponseFormat{Type: llm.ResponseText}}},
	{name: "format-json-object", op: llm.RequestOptions{ResponseFormat: &llm.ResponseFormat{Type: llm.ResponseJSONObject}}},
	{name: "format-json-schema", op: llm.RequestOptions{ResponseFormat: &llm.ResponseFormat{Type: llm.ResponseJSONSchema, Name: "answer", Schema: answerSchema, Strict: true}}},
	{name: "stop-top-p", op: llm.RequestOptions{Stop: []string{"END", "\n\n"}, TopP: ptr(0.9)}},
	{name: "top-p", op: llm.RequestOptions{TopP: ptr(0.25)}},
	{name: "extra-body", op: llm.RequestOptions{ExtraBody: []byte(` { "seed" : 7, "service_tier":"flex", "x":{"nested":[1,"two",null]} } `)}},
	{name: "extra-body-conflict", op: llm.RequestOptions{ExtraBody: []byte(`{"seed":7,"mod\u0065l":"other"}`)}},
	{name: "thinking-forced-tool", op: llm.RequestOptions{ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceRequired}}, mod: func(r *llm.Request) { r.Reasoning = "low" }},
	{name: "thinking-auto", op: llm.RequestOptions{ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceAuto}, ParallelToolCalls: ptr(false)}, mod: func(r *llm.Request) { r.Reasoning = "low" }},
	{name: "all", op: llm.RequestOptions{
		ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: "write"}, ParallelToolCalls: ptr(true),
		ResponseFormat: &llm.ResponseFormat{Type: llm.ResponseJSONSchema, Name: "answer", Schema: answerSchema},
		TopP:           ptr(1.0), ExtraBody: []byte(`{"user":"u-1"}`)}},
}

func TestRequestOptionsGolden(t *testing.T) {
	for _, tc := range optionCases {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			for _, w := range Wires {
				req := optionsRequest(tc.op)
				if tc.mod != nil {
					tc.mod(req)
				}
				body, err := AppendRequestJSON([]byte("prefix"), w, req)
				out.WriteString(w.String() + ": ")
				if err != nil {
					if !errors.Is(err, ErrUnsupportedOption) && !errors.Is(err, ErrInvalidOption) {
						t.Errorf("%v: untyped error %v", w, err)
					}
					if string(body) != "prefix" {
						t.Errorf("%v: refused request left %q in dst", w, body)
					}
					out.WriteString("error: " + err.Error() + "\n")
					continue
				}
				body = bytes.TrimPrefix(body, []byte("prefix"))
				if !json.Valid(body) {
					t.Errorf("%v: invalid JSON %s", w, body)
				}
				out.Write(body)
				out.WriteByte('\n')
			}
			path := filepath.Join("testdata", "request", tc.name+".golden")
			if *updateGolden {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got := out.String(); got != string(want) {
				t.Errorf("body differs from %s:\ngot:\n%s\nwant:\n%s", path, got, want)
			}
		})
	}
}

// Every refusal is typed, says which option and which wire, and happens
// before a byte is written.
func TestRequestOptionsRefused(t *testing.T) {
	all := Wires[:]
	for _, tc := range []struct {
		name    string
		wires   []Wire
		op      llm.RequestOptions
		noTools bool
		want    error
		option  string
	}{
		{"stop on responses", []Wire{WireOpenAIResponses}, llm.RequestOptions{Stop: []string{"x"}}, false, ErrUnsupportedOption, "stop"},
		{"json_object on anthropic", []Wire{WireAnthropic}, llm.RequestOptions{ResponseFormat: &llm.ResponseFormat{Type: llm.ResponseJSONObject}}, false, ErrUnsupportedOption, "response_format"},
		{"unknown tool", all, llm.RequestOptions{ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: "reed"}}, false, ErrInvalidOption, "tool_choice"},
		{"tool without name", all, llm.RequestOptions{ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceTool}}, false, ErrInvalidOption, "tool_choice"},
		{"name without mode tool", all, llm.RequestOptions{ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceAuto, Name: "read"}}, false, ErrInvalidOption, "tool_choice"},
		{"unknown mode", all, llm.RequestOptions{ToolChoice: llm.ToolChoice{Mode: 9}}, false, ErrInvalidOption, "tool_choice"},
		{"tool choice without tools", all, llm.RequestOptions{ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceNone}}, true, ErrInvalidOption, "tool_choice"},
		{"parallel without tools", all, llm.RequestOptions{ParallelToolCalls: ptr(true)}, true, ErrInvalidOption, "parallel_tool_calls"},
		{"schema not an object", all, llm.RequestOptions{ResponseFormat: &llm.ResponseFormat{Type: llm.ResponseJSONSchema, Name: "a", Schema: []byte(`[1]`)}}, false, ErrInvalidOption, "response_format"},
		{"schema malformed", all, llm.RequestOptions{ResponseFormat: &llm.ResponseFormat{Type: llm.ResponseJSONSchema, Name: "a", Schema: []byte(`{"type":`)}}, false, ErrInvalidOption, "response_format"},
		{"schema without name", []Wire{WireOpenAIChat, WireOpenAIResponses}, llm.RequestOptions{ResponseFormat: &llm.ResponseFormat{Type: llm.ResponseJSONSchema, Schema: answerSchema}}, false, ErrInvalidOption, "response_format"},
		{"schema name with a space", []Wire{WireOpenAIChat, WireOpenAIResponses}, llm.RequestOptions{ResponseFormat: &llm.ResponseFormat{Type: llm.ResponseJSONSchema, Name: "my answer", Schema: answerSchema}}, false, ErrInvalidOption, "response_format"},
		{"schema with json_object", all, llm.RequestOptions{ResponseFormat: &llm.ResponseFormat{Type: llm.ResponseJSONObject, Schema: answerSchema}}, false, ErrInvalidOption, "response_format"},
		{"unknown format", all, llm.RequestOptions{ResponseFormat: &llm.ResponseFormat{Type: 7}}, false, ErrInvalidOption, "response_format"},
		{"empty stop", []Wire{WireOpenAIChat, WireAnthropic}, llm.RequestOptions{Stop: []string{"a", ""}}, false, ErrInvalidOption, "stop"},
		{"top_p above 1", all, llm.RequestOptions{TopP: ptr(1.5)}, false, ErrInvalidOption, "top_p"},
		{"top_p NaN", all, llm.RequestOptions{TopP: ptr(math.NaN())}, false, ErrInvalidOption, "top_p"},
		{"extra body member the encoder wrote", all, llm.RequestOptions{ExtraBody: []byte(`{"stream":false}`)}, false, ErrInvalidOption, "extra_body.stream"},
		{"extra body escaped member name", all, llm.RequestOptions{ExtraBody: []byte(`{"\u0074ools":[]}`)}, false, ErrInvalidOption, "extra_body.tools"},
		{"extra body twice", all, llm.RequestOptions{ExtraBody: []byte(`{"seed":1,"seed":2}`)}, false, ErrInvalidOption, "extra_body.seed"},
		{"extra body array", all, llm.RequestOptions{ExtraBody: []byte(`[{"seed":1}]`)}, false, ErrInvalidOption, "extra_body"},
		{"extra body cut", all, llm.RequestOptions{ExtraBody: []byte(`{"seed":1,"x":`)}, false, ErrInvalidOption, "extra_body"},
		{"extra body trailing", all, llm.RequestOptions{ExtraBody: []byte(`{"seed":1} {}`)}, false, ErrInvalidOption, "extra_body"},
		{"extra body bad UTF-8", all, llm.RequestOptions{ExtraBody: []byte("{\"s\":\"\xff\"}")}, false, ErrInvalidOption, "extra_body"},
		{"extra body whitespace", all, llm.RequestOptions{ExtraBody: []byte(" ")}, false, ErrInvalidOption, "extra_body"},
		{"schema nested too deep", all, llm.RequestOptions{ResponseFormat: &llm.ResponseFormat{Type: llm.ResponseJSONSchema, Name: "a", Schema: []byte(`{"a":` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + `}`)}}, false, ErrInvalidOption, "response_format"},
		{"extra body nested too deep", all, llm.RequestOptions{ExtraBody: []byte(`{"a":` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + `}`)}, false, ErrInvalidOption, "extra_body"},
		{"extra body control character in a name", all, llm.RequestOptions{ExtraBody: []byte("{\"a\x01\":1}")}, false, ErrInvalidOption, "extra_body"},
		{"extra body control character beside an escape", all, llm.RequestOptions{ExtraBody: []byte("{\"a\":\"\x00\\b\"}")}, false, ErrInvalidOption, "extra_body"},
		{"schema control character beside an escape", all, llm.RequestOptions{ResponseFormat: &llm.ResponseFormat{Type: llm.ResponseJSONSchema, Name: "a", Schema: []byte("{\"\x00\\b\":1}")}}, false, ErrInvalidOption, "response_format"},
		{"extra body bad escape", all, llm.RequestOptions{ExtraBody: []byte(`{"a\x":1}`)}, false, ErrInvalidOption, "extra_body"},
	} {
		for _, w := range tc.wires {
			req := optionsRequest(tc.op)
			if tc.noTools {
				req.Tools = nil
			}
			body, err := AppendRequestJSON(nil, w, req)
			var oe *OptionError
			if !errors.Is(err, tc.want) || !errors.As(err, &oe) || oe.Option != tc.option || oe.Wire != w || len(body) != 0 {
				t.Errorf("%s on %v: err %v (option %+v), body %q; want %v on option %s", tc.name, w, err, oe, body, tc.want, tc.option)
			}
		}
	}
	// A member the encoder did not write is the caller's to add.
	req := optionsRequest(llm.RequestOptions{ExtraBody: []byte(`{"tools":[]}`)})
	req.Tools = nil
	if body := mustEncode(t, WireOpenAIChat, req); !strings.HasSuffix(body, `"max_tokens":100,"tools":[]}`) {
		t.Errorf("unwritten member: %s", body)
	}
}

// No request writes more top-level members than object remembers.
func TestEncoderMembersFit(t *testing.T) {
	for _, w := range Wires {
		req := optionsRequest(llm.RequestOptions{
			ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceAuto}, ParallelToolCalls: ptr(true),
			ResponseFormat: &llm.ResponseFormat{Type: llm.ResponseJSONSchema, Name: "a", Schema: answerSchema},
			TopP:           ptr(0.5),
		})
		if w != WireOpenAIResponses {
			req.Options.Stop = []string{"x"}
		}
		req.Temperature, req.Reasoning, req.SessionID = ptr(0.5), "high", "s"
		req.Model.BaseURL = "" // OpenAI: every optional chat member
		var o object
		dst := append([]byte(nil), '{')
		switch w {
		case WireOpenAIResponses:
			dst = appendResponsesRequest(dst, &o, req)
		case WireAnthropic:
			dst = appendAnthropicRequest(dst, &o, req)
		default:
			dst = appendChatRequest(dst, &o, req)
		}
		appendOptions(dst, &o, w, req)
		if o.n > maxMembers {
			t.Errorf("%v writes %d members, object remembers %d", w, o.n, maxMembers)
		}
		t.Logf("%v: %d members", w, o.n)
	}
}

// The encoder allocates nothing into a buffer with room, with or without
// options (and an ExtraBody), over a conversation with text, tool calls
// and tool results. (Before options existed the chat encoder allocated
// twice per call: its text scratch and the URL parse of the compat
// lookup.)
func TestRequestOptionsAllocs(t *testing.T) {
	for _, w := range Wires {
		plain := optionsRequest(llm.RequestOptions{})
		call := llm.Message{Role: llm.RoleAssistant}
		_, b := call.AddBlock(llm.BlockText)
		b.Text = append(b.Text, "Let me look."...)
		_, b = call.AddBlock(llm.BlockToolCall)
		b.ID, b.Name, b.Arguments = []byte("call_1|fc_1"), []byte("read"), []byte(` {"path":"a.txt"} `)
		result := llm.TextMessage(llm.RoleToolResult, "line one")
		result.ToolCallID = "call_1|fc_1"
		_, b = result.AddBlock(llm.BlockText)
		b.Text = append(b.Text, "line two"...)
		plain.Messages = append(plain.Messages, call, result, llm.TextMessage(llm.RoleAssistant, "Done."), llm.TextMessage(llm.RoleUser, "Go on."))
		full := *plain
		full.Options = llm.RequestOptions{
			ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: "read"}, ParallelToolCalls: ptr(false),
			ResponseFormat: &llm.ResponseFormat{Type: llm.ResponseJSONSchema, Name: "answer", Schema: answerSchema, Strict: true},
			TopP:           ptr(0.5), ExtraBody: []byte(`{"seed":7,"x":{"y":[1,2]}}`),
		}
		if w != WireOpenAIResponses {
			full.Options.Stop = []string{"END"}
		}
		buf := make([]byte, 0, 16<<10)
		var err error
		a0 := testing.AllocsPerRun(200, func() { buf, err = AppendRequestJSON(buf[:0], w, plain) })
		a1 := testing.AllocsPerRun(200, func() { buf, err = AppendRequestJSON(buf[:0], w, &full) })
		if err != nil {
			t.Fatal(err)
		}
		// Under the race detector sync.Pool drops items at random, and the
		// options' JSON check (encoding/json.Valid) pools its scanner.
		if a0 != 0 || a1 != 0 && !raceEnabled {
			t.Errorf("%v: %v allocs with options, %v without", w, a1, a0)
		}
	}
}

func BenchmarkAppendRequestJSON(b *testing.B) {
	for _, w := range Wires {
		for _, opts := range []bool{false, true} {
			req := optionsRequest(llm.RequestOptions{})
			for i := 0; i < 20; i++ {
				req.Messages = append(req.Messages, llm.TextMessage(llm.RoleAssistant, strings.Repeat("Some answer text. ", 20)), llm.TextMessage(llm.RoleUser, "And then?"))
			}
			name := w.String() + "/plain"
			if opts {
				name = w.String() + "/options"
				req.Options = llm.RequestOptions{ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceAuto}, ParallelToolCalls: ptr(false), TopP: ptr(0.5),
					ResponseFormat: &llm.ResponseFormat{Type: llm.ResponseJSONSchema, Name: "answer", Schema: answerSchema}, ExtraBody: []byte(`{"seed":7}`)}
			}
			b.Run(name, func(b *testing.B) {
				buf := make([]byte, 0, 64<<10)
				b.ReportAllocs()
				for b.Loop() {
					buf, _ = AppendRequestJSON(buf[:0], w, req)
				}
				b.SetBytes(int64(len(buf)))
			})
		}
	}
}
