package streamwrap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ocbench/ocbench/llm"
)

// This file runs the rows of streamwrap-cases.json (OpenClaw 2026.9.6's own
// tests and derived probes) against the Go decorators.
//
// Mapping of OpenClaw's JavaScript objects onto Go's stream model:
//   - input.objects become llm.Messages and llm.Blocks; a block referenced
//     from a message's content is that message's Content element, so a fix
//     made through one reference is seen through every other, as with
//     "$ref". Standalone blocks (a toolcall_end's toolCall) are separate.
//   - a fake llm.Stream yields the events; during an event its Message is the
//     event's partial (else its message or error, else the call's result),
//     and eventViews exposes the event's distinct message and toolCall
//     objects. After the last event Message is the call's result.
//   - result() without draining ("drain": false) cannot be expressed: a Go
//     consumer reads the final message after draining. The harness drains.
//     The events of those rows are empty or partial-only, which never
//     count or reset the unknown-tool streak, so nothing observable changes.
//   - "async" (a promise of a stream) is the same call in Go; "baseThrows" is
//     an error from the StreamFunc; "iterThrows" a stream that ends without
//     a terminal event and with Err set.
//   - an expected check without an operator is JavaScript's
//     {equals: undefined} dropped by JSON: it is checked as isUndefined.

type jsonCase struct {
	Wrapper  string          `json:"wrapper"`
	Name     string          `json:"name"`
	Kind     string          `json:"kind"`
	Input    json.RawMessage `json:"input"`
	Expected []check         `json:"expected"`
	Verified bool            `json:"verified"`
	Mismatch []struct {
		Assertion  check           `json:"assertion"`
		DistActual json.RawMessage `json:"dist_actual"`
	} `json:"mismatch"`
}

type check struct {
	Path          string          `json:"path"`
	Equals        json.RawMessage `json:"equals"`
	Matches       *string         `json:"matches"`
	Contains      *string         `json:"contains"`
	IsUndefined   *bool           `json:"isUndefined"`
	EqualsPath    *string         `json:"equalsPath"`
	NotEqualsPath *string         `json:"notEqualsPath"`
}

func (c check) key() string { b, _ := json.Marshal(c); return string(b) }

// skippedCases lists the rows Go's model cannot express, with the reason.
var skippedCases = map[string]string{
	"assigns fallback ids when both name and id are missing": "llm.Block has no 'missing name' distinct from an empty one: a nameless tool call is a blank name " +
		"(pi-ai's providers always set a string name), so the final turn is rewritten as a blank-name call instead of staying an undispatchable toolCall",
}

func loadCases(t testing.TB) []jsonCase {
	data, err := os.ReadFile("../testdata/spec/streamwrap-cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var cs []jsonCase
	if err := json.Unmarshal(data, &cs); err != nil {
		t.Fatal(err)
	}
	return cs
}

// expectedChecks applies dist_actual for verified:false rows: the spec
// follows the 2026.9.6 build. A mismatch without dist_actual drops the
// assertion (the build does not satisfy it and records no value).
func expectedChecks(c *jsonCase) []check {
	if c.Verified || len(c.Mismatch) == 0 {
		return c.Expected
	}
	repl := map[string]*json.RawMessage{}
	for i := range c.Mismatch {
		m := &c.Mismatch[i]
		if len(m.DistActual) == 0 {
			repl[m.Assertion.key()] = nil
		} else {
			repl[m.Assertion.key()] = &m.DistActual
		}
	}
	var out []check
	for _, e := range c.Expected {
		r, ok := repl[e.key()]
		if !ok {
			out = append(out, e)
			continue
		}
		if r == nil {
			continue
		}
		out = append(out, check{Path: e.Path, Equals: *r})
	}
	return out
}

func TestSpecCases(t *testing.T) {
	cases := loadCases(t)
	// Any case file of the format runs: new cases drop in without code.
	if len(cases) == 0 {
		t.Fatal("no cases in the case file")
	}
	ran := 0
	for i := range cases {
		c := &cases[i]
		t.Run(c.Kind+"/"+c.Name, func(t *testing.T) {
			if why, ok := skippedCases[c.Name]; ok {
				t.Skip(why)
			}
			var root map[string]any
			switch c.Kind {
			case "stream":
				root = runStreamCase(t, c)
			case "unit":
				root = runUnitCase(t, c)
			case "idle":
				root = runIdleCase(t, c)
			default:
				t.Fatalf("unknown kind %q", c.Kind)
			}
			checks := expectedChecks(c)
			if len(checks) == 0 {
				t.Fatal("no checks")
			}
			for _, ck := range checks {
				evalCheck(t, root, ck)
			}
			ran++
		})
	}
	if len(skippedCases) > 2 {
		t.Errorf("skip table grew to %d rows", len(skippedCases))
	}
}

// ---- paths and checks ----

func lookup(root any, path string) (any, bool) {
	cur := root
	for _, seg := range strings.Split(path, ".") {
		switch v := cur.(type) {
		case map[string]any:
			x, ok := v[seg]
			if !ok {
				return nil, false
			}
			cur = x
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(v) {
				return nil, false
			}
			cur = v[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

func normJSON(v any) any {
	b, _ := json.Marshal(v)
	var out any
	json.Unmarshal(b, &out)
	return out
}

func evalCheck(t *testing.T, root map[string]any, ck check) {
	t.Helper()
	got, ok := lookup(root, ck.Path)
	switch {
	case len(ck.Equals) > 0:
		var want any
		if err := json.Unmarshal(ck.Equals, &want); err != nil {
			t.Fatal(err)
		}
		if !ok || !reflect.DeepEqual(normJSON(got), want) {
			t.Errorf("%s: got %s, want %s", ck.Path, js(got, ok), ck.Equals)
		}
	case ck.Matches != nil:
		s, isStr := got.(string)
		if !ok || !isStr || !regexp.MustCompile(*ck.Matches).MatchString(s) {
			t.Errorf("%s: got %s, want match %s", ck.Path, js(got, ok), *ck.Matches)
		}
	case ck.Contains != nil:
		s, isStr := got.(string)
		if !ok || !isStr || !strings.Contains(s, *ck.Contains) {
			t.Errorf("%s: got %s, want it to contain %q", ck.Path, js(got, ok), *ck.Contains)
		}
	case ck.EqualsPath != nil || ck.NotEqualsPath != nil:
		other := ck.EqualsPath
		if other == nil {
			other = ck.NotEqualsPath
		}
		o, ok2 := lookup(root, *other)
		same := ok == ok2 && reflect.DeepEqual(normJSON(got), normJSON(o))
		if ck.EqualsPath != nil && !same {
			t.Errorf("%s = %s, want equal to %s = %s", ck.Path, js(got, ok), *other, js(o, ok2))
		}
		if ck.NotEqualsPath != nil && same {
			t.Errorf("%s = %s, want different from %s", ck.Path, js(got, ok), *other)
		}
	default: // isUndefined, or an equals:undefined dropped by JSON
		if ok {
			t.Errorf("%s: got %s, want undefined", ck.Path, js(got, ok))
		}
	}
}

func js(v any, ok bool) string {
	if !ok {
		return "undefined"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// ---- object graph ----

type graph struct {
	raw    map[string]any
	msgs   map[string]*llm.Message
	blocks map[string]*llm.Block
}

const refPrefix = "$ref:"

func refName(v any) (string, bool) {
	s, ok := v.(string)
	if ok && strings.HasPrefix(s, refPrefix) {
		return s[len(refPrefix):], true
	}
	return "", false
}

func isMessageObject(o map[string]any) bool {
	_, hasRole := o["role"]
	_, hasContent := o["content"]
	return hasRole || hasContent
}

func buildGraph(t *testing.T, objects map[string]any) *graph {
	g := &graph{raw: objects, msgs: map[string]*llm.Message{}, blocks: map[string]*llm.Block{}}
	names := make([]string, 0, len(objects))
	for n := range objects {
		names = append(names, n)
	}
	sort.Strings(names)
	owner := map[string]string{}
	for _, n := range names {
		o, _ := objects[n].(map[string]any)
		if o == nil || !isMessageObject(o) {
			continue
		}
		m := g.message(t, o)
		g.msgs[n] = m
		content, _ := o["content"].([]any)
		for i, c := range content {
			if r, ok := refName(c); ok {
				if prev, dup := owner[r]; dup {
					t.Fatalf("block %s is in two messages (%s, %s)", r, prev, n)
				}
				owner[r] = n
				g.blocks[r] = &m.Content[i]
			}
		}
	}
	for _, n := range names {
		o, _ := objects[n].(map[string]any)
		if o == nil || isMessageObject(o) {
			continue
		}
		if _, ok := g.blocks[n]; !ok {
			b := g.block(t, o)
			g.blocks[n] = &b
		}
	}
	return g
}

func (g *graph) resolveObj(t *testing.T, v any) map[string]any {
	if r, ok := refName(v); ok {
		o, _ := g.raw[r].(map[string]any)
		if o == nil {
			t.Fatalf("dangling ref %s", r)
		}
		return o
	}
	o, _ := v.(map[string]any)
	return o
}

// msgRef returns the message v stands for: the named object or a new one.
func (g *graph) msgRef(t *testing.T, v any) *llm.Message {
	if v == nil {
		return nil
	}
	if r, ok := refName(v); ok {
		m := g.msgs[r]
		if m == nil {
			t.Fatalf("ref %s is not a message", r)
		}
		return m
	}
	o, _ := v.(map[string]any)
	if o == nil {
		return nil
	}
	return g.message(t, o)
}

func (g *graph) blockRef(t *testing.T, v any) *llm.Block {
	if v == nil {
		return nil
	}
	if r, ok := refName(v); ok {
		return g.blocks[r]
	}
	o, _ := v.(map[string]any)
	if o == nil {
		return nil
	}
	b := g.block(t, o)
	return &b
}

func str(o map[string]any, k string) string { s, _ := o[k].(string); return s }

func (g *graph) message(t *testing.T, o map[string]any) *llm.Message {
	m := &llm.Message{Role: llm.RoleAssistant}
	if r, ok := llm.ParseRole(str(o, "role")); ok {
		m.Role = r
	}
	if s, ok := o["content"].(string); ok {
		m.Content = []llm.Block{{Type: llm.BlockText, Text: []byte(s)}}
	}
	content, _ := o["content"].([]any)
	m.Content = make([]llm.Block, 0, len(content))
	for _, c := range content {
		m.Content = append(m.Content, g.block(t, g.resolveObj(t, c)))
	}
	if sr, ok := llm.ParseStopReason(str(o, "stopReason")); ok {
		m.StopReason = sr
	}
	m.ErrorMessage = str(o, "errorMessage")
	m.API, m.Provider, m.Model = llm.API(str(o, "api")), str(o, "provider"), str(o, "model")
	m.ToolCallID, m.ToolName = str(o, "toolCallId"), str(o, "toolName")
	m.IsError, _ = o["isError"].(bool)
	return m
}

func bytesOf(o map[string]any, k string) []byte {
	v, ok := o[k]
	if !ok {
		return nil
	}
	s, _ := v.(string)
	return append([]byte{}, s...)
}

func (g *graph) block(t *testing.T, o map[string]any) llm.Block {
	var b llm.Block
	switch str(o, "type") {
	case "toolCall", "toolUse", "functionCall":
		b.Type = llm.BlockToolCall
		b.ID = bytesOf(o, "id")
		b.Name = bytesOf(o, "name")
		args, ok := o["arguments"]
		if !ok {
			args, ok = o["input"]
		}
		if ok {
			b.Arguments, _ = json.Marshal(args)
		}
		b.RawArgs = bytesOf(o, "partialArgs")
	case "thinking":
		b.Type = llm.BlockThinking
		b.Text = bytesOf(o, "thinking")
		b.Signature = bytesOf(o, "thinkingSignature")
	case "text", "":
		b.Type = llm.BlockText
		b.Text = bytesOf(o, "text")
	default:
		t.Fatalf("block type %q", str(o, "type"))
	}
	return b
}

// ---- snapshots ----

func snapBlock(b *llm.Block) map[string]any {
	o := map[string]any{"type": b.Type.String()}
	switch b.Type {
	case llm.BlockText:
		o["text"] = string(b.Text)
	case llm.BlockThinking:
		o["thinking"] = string(b.Text)
		if len(b.Signature) > 0 {
			o["thinkingSignature"] = string(b.Signature)
		}
	case llm.BlockToolCall:
		if b.ID != nil {
			o["id"] = string(b.ID)
		}
		if b.Name != nil {
			o["name"] = string(b.Name)
		}
		args := b.Arguments
		if len(args) == 0 {
			args = []byte("{}")
		}
		var v any
		if err := json.Unmarshal(args, &v); err != nil {
			v = "<invalid JSON " + string(args) + ">"
		}
		o["arguments"] = v
		if len(b.RawArgs) > 0 {
			o["partialArgs"] = string(b.RawArgs)
		}
	}
	return o
}

func snapMessage(m *llm.Message) map[string]any {
	if m == nil {
		return nil
	}
	content := make([]any, 0, len(m.Content))
	for i := range m.Content {
		content = append(content, snapBlock(&m.Content[i]))
	}
	o := map[string]any{"role": m.Role.String(), "content": content}
	if m.StopReason != llm.StopNone {
		o["stopReason"] = m.StopReason.String()
	}
	if m.ErrorMessage != "" {
		o["errorMessage"] = m.ErrorMessage
	}
	if m.Role == llm.RoleAssistant {
		o["api"], o["provider"], o["model"] = m.API, m.Provider, m.Model
	}
	if m.Role == llm.RoleToolResult {
		o["toolCallId"], o["toolName"], o["isError"] = m.ToolCallID, m.ToolName, m.IsError
	}
	return o
}

func snapEvent(e *llm.Event, m *llm.Message) map[string]any {
	o := map[string]any{"type": e.Type.String()}
	switch e.Type {
	case llm.EventStart:
	case llm.EventDone:
		o["reason"] = e.Reason.String()
		o["message"] = snapMessage(m)
	case llm.EventError:
		o["reason"] = e.Reason.String()
		o["error"] = snapMessage(m)
	default:
		o["contentIndex"] = e.ContentIndex
		if e.Type == llm.EventTextDelta || e.Type == llm.EventThinkingDelta || e.Type == llm.EventToolCallDelta {
			o["delta"] = string(e.Delta)
		}
		if e.Type == llm.EventTextEnd {
			if b := m.Block(e.ContentIndex); b != nil {
				o["content"] = string(b.Text)
			}
		}
	}
	return o
}

// ---- the fake provider stream ----

type fakeEvent struct {
	ev       llm.Event
	partial  *llm.Message
	message  *llm.Message
	toolCall *llm.Block
}

type fakeStream struct {
	ctx     context.Context
	evs     []fakeEvent
	i       int
	result  *llm.Message
	iterErr error
	empty   llm.Message
	closed  bool
}

func (f *fakeStream) Next() bool {
	if f.i+1 >= len(f.evs) {
		f.i = len(f.evs)
		return false
	}
	f.i++
	return true
}

func (f *fakeStream) Event() *llm.Event {
	if f.i >= 0 && f.i < len(f.evs) {
		return &f.evs[f.i].ev
	}
	return &llm.Event{}
}

func (f *fakeStream) Message() *llm.Message {
	if f.i >= 0 && f.i < len(f.evs) {
		e := &f.evs[f.i]
		switch {
		case e.partial != nil:
			return e.partial
		case e.message != nil:
			return e.message
		}
	}
	if f.result != nil {
		return f.result
	}
	return &f.empty
}

func (f *fakeStream) Err() error {
	if f.i >= len(f.evs) {
		return f.iterErr
	}
	return nil
}

func (f *fakeStream) Close() error { f.closed = true; return nil }

func (f *fakeStream) viewMessage() *llm.Message {
	if f.i >= 0 && f.i < len(f.evs) {
		return f.evs[f.i].message
	}
	return nil
}

func (f *fakeStream) viewToolCall() *llm.Block {
	if f.i >= 0 && f.i < len(f.evs) {
		return f.evs[f.i].toolCall
	}
	return nil
}

func (f *fakeStream) hasViews() bool { return true }

var _ eventViews = (*fakeStream)(nil)

// ---- stream cases ----

type streamInput struct {
	Objects          map[string]any   `json:"objects"`
	Calls            []map[string]any `json:"calls"`
	AllowedToolNames []string         `json:"allowedToolNames"`
	GuardOptions     struct {
		UnknownToolThreshold int `json:"unknownToolThreshold"`
	} `json:"guardOptions"`
	TranscriptPolicy TranscriptPolicyJSON `json:"transcriptPolicy"`
	Model            modelJSON            `json:"model"`
}

// modelJSON is every field of OpenClaw's model object the decorators read.
type modelJSON struct {
	API       string `json:"api"`
	Provider  string `json:"provider"`
	ID        string `json:"id"`
	BaseURL   string `json:"baseUrl"`
	Reasoning bool   `json:"reasoning"`
	Compat    struct {
		ToolCallArgumentsEncoding string `json:"toolCallArgumentsEncoding"`
	} `json:"compat"`
	ContextWindow int `json:"contextWindow"`
	MaxTokens     int `json:"maxTokens"`
}

func (m *modelJSON) model() llm.Model {
	return llm.Model{API: llm.API(m.API), Provider: m.Provider, ID: m.ID, BaseURL: m.BaseURL, Reasoning: m.Reasoning,
		HTMLEntityArgs: m.Compat.ToolCallArgumentsEncoding == "html-entities", ContextWindow: m.ContextWindow, MaxTokens: m.MaxTokens}
}

type TranscriptPolicyJSON struct {
	ValidateAnthropicTurns   bool `json:"validateAnthropicTurns"`
	ValidateGeminiTurns      bool `json:"validateGeminiTurns"`
	PreserveSignatures       bool `json:"preserveSignatures"`
	DropThinkingBlocks       bool `json:"dropThinkingBlocks"`
	DropReasoningFromHistory bool `json:"dropReasoningFromHistory"`
}

func (g *graph) fakeEvents(t *testing.T, raw []any) []fakeEvent {
	out := make([]fakeEvent, 0, len(raw))
	for _, r := range raw {
		o, _ := r.(map[string]any)
		et, ok := llm.ParseEventType(str(o, "type"))
		if !ok {
			t.Fatalf("event type %q", str(o, "type"))
		}
		fe := fakeEvent{ev: llm.Event{Type: et}}
		if ci, ok := o["contentIndex"].(float64); ok {
			fe.ev.ContentIndex = int(ci)
		}
		if d, ok := o["delta"].(string); ok {
			fe.ev.Delta = []byte(d)
		}
		if rs, ok := llm.ParseStopReason(str(o, "reason")); ok {
			fe.ev.Reason = rs
		}
		fe.partial = g.msgRef(t, o["partial"])
		fe.message = g.msgRef(t, o["message"])
		if et == llm.EventError && fe.message == nil {
			fe.message = g.msgRef(t, o["error"])
		}
		fe.toolCall = g.blockRef(t, o["toolCall"])
		out = append(out, fe)
	}
	return out
}

func runStreamCase(t *testing.T, c *jsonCase) map[string]any {
	var in streamInput
	if err := json.Unmarshal(c.Input, &in); err != nil {
		t.Fatal(err)
	}
	g := buildGraph(t, in.Objects)
	allowed := NewAllowlist(in.AllowedToolNames...)
	var seen []llm.Message
	var cur *fakeStream
	var baseErr error
	base := func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		seen = req.Messages
		if baseErr != nil {
			return nil, baseErr
		}
		return cur, nil
	}
	var f llm.StreamFunc
	switch c.Wrapper {
	case "wrapStreamFnTrimToolCallNames":
		f = TrimToolCallNames(base, TrimConfig{Allowed: allowed, UnknownToolThreshold: in.GuardOptions.UnknownToolThreshold})
	case "wrapStreamFnRepairMalformedToolCallArguments":
		f = RepairMalformedToolCallArguments(base, RepairConfig{})
	case "wrapStreamFnDecodeXaiToolCallArguments":
		f = DecodeHTMLEntityArguments(base)
	case "wrapStreamFnSanitizeMalformedToolCalls":
		p := in.TranscriptPolicy
		f = SanitizeReplayToolCalls(base, SanitizeConfig{ReplayAllowed: allowed, Policy: TranscriptPolicy{
			ValidateAnthropicTurns: p.ValidateAnthropicTurns, ValidateGeminiTurns: p.ValidateGeminiTurns,
			PreserveSignatures: p.PreserveSignatures, DropThinkingBlocks: p.DropThinkingBlocks,
			DropReasoningFromHistory: p.DropReasoningFromHistory}})
	case "wrapStreamFnPromoteStandaloneTextToolCalls":
		f = PromoteStandaloneTextToolCalls(base, allowed)
	case "wrapStreamFnHandleSensitiveStopReason":
		f = HandleSensitiveStopReason(base)
	default:
		t.Fatalf("no Go decorator for %s", c.Wrapper)
	}
	calls := make([]any, 0, len(in.Calls))
	for ci, call := range in.Calls {
		evsRaw, _ := call["events"].([]any)
		fs := &fakeStream{i: -1, evs: g.fakeEvents(t, evsRaw)}
		fs.result = g.msgRef(t, call["result"])
		if fs.result == nil && call["realEventStream"] == true {
			// A real EventStream resolves result() with the terminal event's message.
			for _, e := range fs.evs {
				if e.ev.Type.IsTerminal() {
					fs.result = e.message
				}
			}
		}
		if s, ok := call["iterThrows"].(string); ok {
			fs.iterErr = errors.New(s)
		}
		baseErr = nil
		if s, ok := call["baseThrows"].(string); ok {
			baseErr = errors.New(s)
		}
		cur = fs
		seen = nil
		req := &llm.Request{Model: in.Model.model()}
		if ctxv, ok := call["context"].(map[string]any); ok {
			msgs, _ := ctxv["messages"].([]any)
			for _, mv := range msgs {
				req.Messages = append(req.Messages, *g.msgRef(t, mv))
			}
		}
		rec := map[string]any{}
		s, err := f(context.Background(), req)
		if err != nil {
			rec["error"] = err.Error()
		} else {
			var events, types []any
			for s.Next() {
				e := s.Event()
				events = append(events, snapEvent(e, s.Message()))
				types = append(types, e.Type.String())
			}
			if events == nil {
				events, types = []any{}, []any{}
			}
			rec["events"], rec["eventTypes"] = events, types
			rec["result"] = snapMessage(s.Message())
			if err := s.Err(); err != nil {
				rec["error"] = err.Error()
			}
			if err := s.Close(); err != nil {
				t.Fatalf("call %d: close: %v", ci, err)
			}
		}
		if seen != nil || call["context"] != nil {
			snap := make([]any, 0, len(seen))
			for i := range seen {
				snap = append(snap, snapMessage(&seen[i]))
			}
			rec["seenContext"] = map[string]any{"messages": snap}
		}
		calls = append(calls, rec)
	}
	objs := map[string]any{}
	for n, m := range g.msgs {
		objs[n] = snapMessage(m)
	}
	for n, b := range g.blocks {
		objs[n] = snapBlock(b)
	}
	return map[string]any{"objects": objs, "calls": calls}
}

// ---- unit cases ----

func runUnitCase(t *testing.T, c *jsonCase) map[string]any {
	var in struct {
		Fn   string            `json:"fn"`
		Args []json.RawMessage `json:"args"`
	}
	if err := json.Unmarshal(c.Input, &in); err != nil {
		t.Fatal(err)
	}
	root := map[string]any{}
	switch in.Fn {
	case "resolveLlmIdleTimeoutMs", "resolveLlmFirstEventTimeoutMs":
		var a struct {
			ModelRequestTimeoutMs *float64 `json:"modelRequestTimeoutMs"`
			RunTimeoutMs          *float64 `json:"runTimeoutMs"`
			Trigger               string   `json:"trigger"`
			Cfg                   struct {
				Agents struct {
					Defaults struct {
						TimeoutSeconds *float64 `json:"timeoutSeconds"`
					} `json:"defaults"`
				} `json:"agents"`
				Models struct {
					Providers map[string]struct {
						LocalService bool   `json:"localService"`
						APIKey       any    `json:"apiKey"`
						BaseURL      string `json:"baseUrl"`
					} `json:"providers"`
				} `json:"models"`
			} `json:"cfg"`
			Model modelJSON `json:"model"`
		}
		if err := json.Unmarshal(in.Args[0], &a); err != nil {
			t.Fatal(err)
		}
		var ti IdleTimeoutInput
		ms := func(p *float64) int64 {
			if p == nil || *p <= 0 {
				return 0
			}
			return int64(min(*p, float64(1<<53)))
		}
		ti.ModelRequestTimeout = msDur(ms(a.ModelRequestTimeoutMs))
		ti.RunTimeout = msDur(ms(a.RunTimeoutMs))
		if s := a.Cfg.Agents.Defaults.TimeoutSeconds; s != nil && *s > 0 {
			ti.AgentDefaultTimeout = msDur(int64(*s * 1000))
		}
		ti.Cron = a.Trigger == "cron"
		ti.Model = a.Model.model()
		if pc, ok := a.Cfg.Models.Providers[a.Model.Provider]; ok {
			// The provider's config marks a local service (localService,
			// or a local auth marker as its apiKey).
			key, _ := pc.APIKey.(string)
			ti.LocalService = pc.LocalService || key == "custom-local" || key == "ollama-local"
			if ti.Model.BaseURL == "" {
				ti.Model.BaseURL = pc.BaseURL
			}
		}
		d := ResolveIdleTimeout(ti)
		if in.Fn == "resolveLlmFirstEventTimeoutMs" {
			d = ResolveFirstEventTimeout(ti)
		}
		root["return"] = d.Milliseconds()
	case "decodeHtmlEntitiesInObject":
		out := decodeEntitiesValue(t, in.Args[0])
		var v any
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("decoded JSON invalid: %s", out)
		}
		root["return"] = v
	case "shouldRepairMalformedToolCallArguments":
		var a struct{ Provider, ModelAPI string }
		var raw map[string]string
		json.Unmarshal(in.Args[0], &raw)
		a.Provider, a.ModelAPI = raw["provider"], raw["modelApi"]
		root["return"] = ShouldRepairMalformedToolCallArguments(a.Provider, llm.API(a.ModelAPI))
	case "normalizeUnhandledStopReasonMessage":
		var s string
		json.Unmarshal(in.Args[0], &s)
		if out, ok := NormalizeUnhandledStopReasonMessage(s); ok {
			root["return"] = out
		}
	default:
		t.Fatalf("unit fn %s", in.Fn)
	}
	return root
}

// ---- idle cases ----

type idleFake struct {
	ctx      context.Context
	chunks   []string
	gap      msDuration
	eventAt  msDuration
	activity []msDuration
	start    timeNow
	i        int
	ev       llm.Event
	msg      llm.Message
	err      error
	blockAll bool
}

func runIdleCase(t *testing.T, c *jsonCase) map[string]any {
	var in struct {
		Scenario     string           `json:"scenario"`
		TimeoutMs    int64            `json:"timeoutMs"`
		GapMs        int64            `json:"gapMs"`
		Chunks       []map[string]any `json:"chunks"`
		ActivityAtMs []int64          `json:"activityAtMs"`
		EventAtMs    int64            `json:"eventAtMs"`
		StopAfter    bool             `json:"stopAfterFirst"`
		Message      string           `json:"message"`
		SettleMs     int64            `json:"settleMs"`
		Opts         struct {
			Scope string `json:"scope"`
		} `json:"opts"`
	}
	if err := json.Unmarshal(c.Input, &in); err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	var baseCtx context.Context
	base := func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		baseCtx = ctx
		f := &idleFake{ctx: ctx, start: now()}
		switch in.Scenario {
		case "never-yield":
			f.blockAll = true
		case "chunks":
			for _, ch := range in.Chunks {
				f.chunks = append(f.chunks, fmt.Sprint(ch["text"]))
			}
			f.gap = msDur(in.GapMs)
		case "activity-keeps-alive":
			f.chunks = []string{"event"}
			f.eventAt = msDur(in.EventAtMs)
			for _, a := range in.ActivityAtMs {
				f.activity = append(f.activity, msDur(a))
			}
		case "promise-never-resolves":
			<-ctx.Done()
			return nil, context.Cause(ctx)
		case "setup-rejects", "sync-throw":
			return nil, errors.New(in.Message)
		default:
			t.Fatalf("scenario %s", in.Scenario)
		}
		return f, nil
	}
	scope := IdleFull
	if in.Opts.Scope == "creation-only" {
		scope = IdleCreationOnly
	}
	timeout := msDur(in.TimeoutMs)
	if in.Scenario == "chunks" {
		// These rows expect no timeout: gaps far below it. A loaded machine
		// can stall a goroutine for longer than 100 ms, so the timeout gets
		// 5x slack here (the gaps stay as specified).
		timeout *= 5
	}
	f := IdleTimeout(base, IdleConfig{Timeout: timeout, Scope: scope, OnIdleTimeout: func(error) { calls.Add(1) }})
	root := map[string]any{}
	chunks := []any{}
	s, err := f(context.Background(), &llm.Request{})
	if err != nil {
		root["error"] = err.Error()
	} else {
		for s.Next() {
			e := s.Event()
			if e.Type == llm.EventTextDelta {
				chunks = append(chunks, map[string]any{"text": string(e.Delta)})
			}
			if in.StopAfter && len(chunks) > 0 {
				break
			}
		}
		if err := s.Err(); err != nil {
			root["error"] = err.Error()
		}
		root["signalAborted"] = baseCtx != nil && baseCtx.Err() != nil
		s.Close()
	}
	if in.SettleMs > 0 {
		sleepMs(in.SettleMs)
	}
	if _, ok := root["signalAborted"]; !ok {
		root["signalAborted"] = baseCtx != nil && baseCtx.Err() != nil
	}
	root["chunks"] = chunks
	root["onIdleTimeoutCalls"] = int(calls.Load())
	return root
}
