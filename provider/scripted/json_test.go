package scripted

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider/wireenc"
)

const exampleScript = `{
  "latency": {"first_event": "20ms", "gap": 2},
  "chunk": 8,
  "turns": [
    {"steps": [
       {"thinking": "Let me look.", "signature": "sig"},
       {"text": "I'll read it.", "chunk": 4},
       {"tool": {"id": "call_1", "name": "read", "args": {"path": "a.txt"}, "quirks": ["trailing_comma", "pad_name"]}},
       {"tools": [{"name": "read", "args": "{\"path\":\"b\"}", "reuse_index": true}, {"name": "ls", "args": {}, "no_index": true, "cut": 1}], "interleave": true},
       {"stall": "50ms"}, {"stall": "forever"},
       {"error": {"type": "overloaded_error", "message": "Overloaded"}},
       {"raw": {"event": "ping", "data": "{\"type\":\"ping\"}"}},
       {"comment": "OPENROUTER PROCESSING"},
       {"eof": true}
     ],
     "usage": {"input": 100, "output": 20, "cache_read": 1024, "cache_write": 7, "reasoning": 3},
     "stop": "toolUse", "raw_stop": "tool_use", "error_message": "x",
     "latency": {"gap": "1ms"},
     "cut_at": 5},
    {"http_error": {"status": 429, "retry_after": "2s", "message": "slow down", "type": "rate_limit_error", "body": "{}"}}
  ]
}`

func TestParse(t *testing.T) {
	got, err := Parse([]byte(exampleScript))
	if err != nil {
		t.Fatal(err)
	}
	want := &Script{
		Latency: Latency{FirstEvent: 20 * time.Millisecond, Gap: 2 * time.Millisecond},
		Chunk:   8,
		Turns: []Turn{{
			Steps: []Step{
				{Kind: StepThinking, Text: "Let me look.", Signature: "sig"},
				{Kind: StepText, Text: "I'll read it.", Chunk: 4},
				{Kind: StepTools, Calls: []Call{{ID: "call_1", Name: " read ", Args: `{"path":"a.txt",}`}}},
				{Kind: StepTools, Interleave: true, Calls: []Call{{Name: "read", Args: `{"path":"b"}`, ReuseIndex: true}, {Name: "ls", Args: `{}`, NoIndex: true, Cut: 1}}},
				{Kind: StepStall, Duration: 50 * time.Millisecond},
				{Kind: StepStall},
				{Kind: StepError, ErrType: "overloaded_error", Message: "Overloaded"},
				{Kind: StepRaw, Event: "ping", Data: `{"type":"ping"}`},
				{Kind: StepComment, Text: "OPENROUTER PROCESSING"},
				{Kind: StepEOF},
			},
			Usage: llm.Usage{Input: 100, Output: 20, CacheRead: 1024, CacheWrite: 7, Reasoning: 3},
			Stop:  llm.StopToolUse, RawStop: "tool_use", ErrorMessage: "x",
			Latency: Latency{Gap: time.Millisecond},
			CutAt:   5,
		}, {
			HTTPError: &HTTPError{Status: 429, RetryAfter: 2 * time.Second, Message: "slow down", Type: "rate_limit_error", Body: "{}"},
		}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
}

func TestParseErrors(t *testing.T) {
	for name, src := range map[string]string{
		"not json":      `{`,
		"unknown field": `{"turns":[{"steps":[{"txt":"x"}]}]}`,
		"two kinds":     `{"turns":[{"steps":[{"text":"x","eof":true}]}]}`,
		"no kind":       `{"turns":[{"steps":[{}]}]}`,
		"stop":          `{"turns":[{"stop":"finished"}]}`,
		"quirk":         `{"turns":[{"steps":[{"tool":{"name":"x","quirks":["weird"]}}]}]}`,
		"duration":      `{"turns":[{"steps":[{"stall":"soon"}]}]}`,
		"negative":      `{"turns":[{"steps":[{"stall":-5}]}]}`,
		"empty":         `{"turns":[]}`,
		"trailing":      `{"turns":[{}]} {}`,
		"bad args":      `{"turns":[{"steps":[{"tool":{"name":"x","args":"\x"}}]}]}`,
		"status":        `{"turns":[{"http_error":{"status":302}}]}`,
	} {
		_, err := Parse([]byte(src))
		var se *ScriptError
		if !errors.Is(err, ErrBadScript) || !errors.As(err, &se) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestLoadAndPlayAFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.json")
	src := `{"turns":[{"steps":[{"text":"from a file"}],"usage":{"input":3,"output":4}}]}`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	m, _, err := playInProcess(t, t.Context(), MustNew(Options{Script: s}), wireenc.Anthropic, userReq("x"))
	if err != nil || m.TextContent() != "from a file" || m.Usage.Output != 4 {
		t.Fatalf("%v %s", err, m.AppendJSON(nil))
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestParseRequestRoles(t *testing.T) {
	for _, tc := range []struct {
		w    wireenc.Wire
		body string
	}{
		{wireenc.OpenAIChat, `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[
			{"role":"system","content":"sys"},{"role":"user","content":[{"type":"text","text":"hello"}]},
			{"role":"assistant","content":"x","tool_calls":[{"id":"c1","type":"function","function":{"name":"read","arguments":"{}"}}]},
			{"role":"tool","tool_call_id":"c1","content":"ok"}],"tools":[{"type":"function","function":{"name":"read"}}]}`},
		{wireenc.Anthropic, `{"model":"m","stream":true,"system":[{"type":"text","text":"sys"}],"messages":[
			{"role":"user","content":"hello"},
			{"role":"assistant","content":[{"type":"text","text":"x"},{"type":"tool_use","id":"c1","name":"read","input":{}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"ok"}]}],"tools":[{"name":"read"}]}`},
		{wireenc.OpenAIResponses, `{"model":"m","stream":true,"instructions":"sys","input":[
			{"role":"user","content":[{"type":"input_text","text":"hello"}]},
			{"type":"message","role":"assistant","content":[{"type":"output_text","text":"x"}]},
			{"type":"function_call","call_id":"c1","name":"read","arguments":"{}"},
			{"type":"function_call_output","call_id":"c1","output":"ok"}],"tools":[{"type":"function","name":"read"}]}`},
	} {
		req, info, err := parseRequest(tc.w, []byte(tc.body))
		if err != nil {
			t.Fatalf("%v: %v", tc.w, err)
		}
		var roles []llm.Role
		for _, m := range req.Messages {
			roles = append(roles, m.Role)
		}
		want := []llm.Role{llm.RoleUser, llm.RoleAssistant, llm.RoleToolResult}
		if !reflect.DeepEqual(roles, want) || req.System != "sys" || req.Model.ID != "m" || !info.stream ||
			req.Messages[0].TextContent() != "hello" || len(req.Tools) != 1 || req.Tools[0].Name != "read" ||
			req.Messages[2].ToolCallID != "c1" || Position(req) != 1 {
			t.Errorf("%v: roles %v, %+v", tc.w, roles, req)
		}
		if tc.w == wireenc.OpenAIChat && !info.includeUsage {
			t.Error("include_usage not read")
		}
	}
	for _, body := range []string{``, `[]`, `"x"`, `{"messages":7}`} {
		if _, _, err := parseRequest(wireenc.OpenAIChat, []byte(body)); body != `{"messages":7}` && !errors.Is(err, ErrBadRequest) {
			t.Errorf("%q: %v", body, err)
		}
	}
}
