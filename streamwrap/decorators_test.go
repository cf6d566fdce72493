package streamwrap

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/streamwrap/repair"
)

// scriptBase returns a StreamFunc over a fresh script with the given tool
// name, argument fragments and final stop reason.
func scriptBase(name string, frags []string, stop llm.StopReason) (llm.StreamFunc, *scriptStream) {
	s := newScript()
	s.name = name
	s.frags = nil
	for _, f := range frags {
		s.frags = append(s.frags, []byte(f))
	}
	s.text = s.text[:2]
	return func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		s.reset()
		return &stopOverride{scriptStream: s, stop: stop}, nil
	}, s
}

// stopOverride ends the script with another stop reason.
type stopOverride struct {
	*scriptStream
	stop llm.StopReason
}

func (o *stopOverride) Next() bool {
	if !o.scriptStream.Next() {
		return false
	}
	if o.ev.Type == llm.EventDone && o.stop != llm.StopToolUse {
		o.ev.Reason = o.stop
		o.msg.StopReason = o.stop
	}
	return true
}

func drain(t *testing.T, f llm.StreamFunc, req *llm.Request) (*llm.Message, []llm.EventType) {
	t.Helper()
	s, err := f(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var types []llm.EventType
	for s.Next() {
		types = append(types, s.Event().Type)
	}
	m := s.Message().Clone()
	s.Close()
	return m, types
}

func chatReq() *llm.Request {
	return &llm.Request{Model: llm.Model{API: "openai-completions", Provider: "openai-compatible"}}
}

func TestArgumentStageProfiles(t *testing.T) {
	type want struct {
		stop llm.StopReason
		args string
		msg  string
		last llm.EventType
	}
	cases := []struct {
		name  string
		frags []string
		stop  llm.StopReason
		want  map[repair.Profile]want
	}{
		{"valid", []string{`{"path":"a"}`}, llm.StopToolUse, map[repair.Profile]want{
			repair.ProfileOpenClaw: {llm.StopToolUse, `{"path":"a"}`, "", llm.EventDone},
			repair.ProfileExtended: {llm.StopToolUse, `{"path":"a"}`, "", llm.EventDone},
			repair.ProfileOff:      {llm.StopToolUse, `{"path":"a"}`, "", llm.EventDone},
		}},
		{"trailing comma", []string{`{"path":"a",}`}, llm.StopToolUse, map[repair.Profile]want{
			repair.ProfileOpenClaw: {llm.StopError, "", MsgMalformedToolCall, llm.EventError},
			repair.ProfileExtended: {llm.StopToolUse, `{"path":"a"}`, "", llm.EventDone},
			repair.ProfileOff:      {llm.StopError, "{}", `tool call "read" (call_1) has malformed arguments (repair is off)`, llm.EventError},
		}},
		{"cut by length", []string{`{"path":"a`}, llm.StopLength, map[repair.Profile]want{
			repair.ProfileOpenClaw: {llm.StopError, "", MsgMalformedToolCall, llm.EventError},
			repair.ProfileExtended: {llm.StopLength, "{}", `tool call "read" (call_1) was cut off before its arguments were complete; the model stopped at its output limit`, llm.EventDone},
			repair.ProfileOff:      {llm.StopError, "{}", `tool call "read" (call_1) has malformed arguments (repair is off)`, llm.EventError},
		}},
	}
	for _, c := range cases {
		for p, w := range c.want {
			t.Run(c.name+"/"+p.String(), func(t *testing.T) {
				base, _ := scriptBase("read", c.frags, c.stop)
				m, types := drain(t, ArgumentStage(base, p), chatReq())
				if m.StopReason != w.stop || m.ErrorMessage != w.msg || types[len(types)-1] != w.last {
					t.Fatalf("stop %v msg %q last %v", m.StopReason, m.ErrorMessage, types[len(types)-1])
				}
				if w.args == "" {
					if len(m.ToolCalls(nil)) != 0 {
						t.Fatalf("tool calls kept: %s", m.AppendJSON(nil))
					}
					return
				}
				if got := string(m.Content[1].AppendJSON(nil)); !strings.Contains(got, `"arguments":`+w.args) {
					t.Fatalf("got %s, want arguments %s", got, w.args)
				}
			})
		}
	}
}

// The openclaw profile on an API without the provider finalisation keeps
// pi-ai's lossy parse, a string included.
func TestArgumentStageOpenClawKeepsPiParse(t *testing.T) {
	base, _ := scriptBase("read", []string{`{"path":"a`}, llm.StopLength)
	req := &llm.Request{Model: llm.Model{API: "anthropic-messages", Provider: "anthropic"}}
	m, _ := drain(t, ArgumentStage(base, repair.ProfileOpenClaw), req)
	if m.StopReason != llm.StopLength || string(m.Content[1].Arguments) != `{"path":"a"}` {
		t.Fatalf("got %s", m.AppendJSON(nil))
	}
}

func TestTrimAloneThresholdAndIDs(t *testing.T) {
	base, script := scriptBase(" Delete ", []string{`{}`}, llm.StopToolUse)
	script.id = " "
	var guard UnknownToolGuard
	f := TrimToolCallNames(base, TrimConfig{Allowed: NewAllowlist("read"), UnknownToolThreshold: 2, Guard: &guard})
	for turn := 1; turn <= 3; turn++ {
		m, _ := drain(t, f, chatReq())
		rewritten := m.Content[0].Type == llm.BlockText && len(m.Content) == 1
		if rewritten != (turn == 3) {
			t.Fatalf("turn %d: %s", turn, m.AppendJSON(nil))
		}
		if turn < 3 {
			if n := string(m.Content[1].Name); n != "Delete" {
				t.Fatalf("name %q", n)
			}
			if id := string(m.Content[1].ID); !strings.HasPrefix(id, "call_") || len(id) != 29 {
				t.Fatalf("id %q", id)
			}
		} else if !strings.Contains(string(m.Content[0].Text), `"delete"`) {
			t.Fatalf("text %s", m.Content[0].Text)
		}
		if name, n := guard.Count(); name != "delete" || n != turn {
			t.Fatalf("turn %d: streak %q %d", turn, name, n)
		}
	}
}

type sinkRec struct{ evs []ModelCallEvent }

func (r *sinkRec) ModelCall(e *ModelCallEvent) { r.evs = append(r.evs, *e) }

func TestDiagnostics(t *testing.T) {
	var rec sinkRec
	base, _ := scriptBase("read", []string{`{"a":1}`}, llm.StopToolUse)
	f := DiagnosticModelCallEvents(base, DiagnosticsConfig{Sink: &rec, RunID: "r1", PromptStats: true})
	req := chatReq()
	req.System = "sys"
	req.Messages = []llm.Message{llm.TextMessage(llm.RoleUser, "hello")}
	drain(t, f, req)
	if len(rec.evs) != 2 || rec.evs[0].Phase != ModelCallStarted || rec.evs[1].Phase != ModelCallCompleted {
		t.Fatalf("events %+v", rec.evs)
	}
	e := rec.evs[1]
	if e.CallSeq != 1 || e.RunID != "r1" || e.ResponseStreamBytes == 0 || e.Events == 0 || e.StopReason != llm.StopToolUse || e.Prompt.TotalChars != 8 {
		t.Fatalf("completed %+v", e)
	}
	// A failed call: the error path token.
	rec.evs = nil
	boom := errors.New("connection refused")
	f = DiagnosticModelCallEvents(func(context.Context, *llm.Request) (llm.Stream, error) { return nil, boom }, DiagnosticsConfig{Sink: &rec})
	if _, err := f(context.Background(), chatReq()); err != boom {
		t.Fatal(err)
	}
	if len(rec.evs) != 2 || rec.evs[1].Phase != ModelCallError || rec.evs[1].ErrorCategory != DiagRequestFailed {
		t.Fatalf("events %+v", rec.evs)
	}
	// Closed before the end.
	rec.evs = nil
	f = DiagnosticModelCallEvents(base, DiagnosticsConfig{Sink: &rec})
	s, _ := f(context.Background(), chatReq())
	s.Next()
	s.Close()
	if len(rec.evs) != 2 || rec.evs[1].ErrorCategory != DiagClosedEarly {
		t.Fatalf("events %+v", rec.evs)
	}
}

func TestYieldAbortGate(t *testing.T) {
	called := false
	base := func(context.Context, *llm.Request) (llm.Stream, error) { called = true; return nil, errors.New("x") }
	yielded := true
	f := YieldAbortGate(base, func() bool { return yielded })
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(ErrSessionsYield)
	s, err := f(ctx, &llm.Request{Model: llm.Model{API: "anthropic-messages", Provider: "anthropic", ID: "c"}})
	if err != nil || called {
		t.Fatalf("err %v called %v", err, called)
	}
	if s.Next() {
		t.Fatal("synthetic stream yielded an event")
	}
	m := s.Message()
	if m.StopReason != llm.StopAborted || len(m.Content) != 1 || m.Content[0].Type != llm.BlockText || m.API != "anthropic-messages" || m.Timestamp == 0 {
		t.Fatalf("message %s", m.AppendJSON(nil))
	}
	// Any one condition missing passes through.
	yielded = false
	if _, err := f(ctx, &llm.Request{}); err == nil || !called {
		t.Fatal("gate did not pass through without yieldDetected")
	}
	called, yielded = false, true
	ctx2, cancel2 := context.WithCancelCause(context.Background())
	cancel2(errors.New("user abort"))
	if f(ctx2, &llm.Request{}); !called {
		t.Fatal("gate answered for a different abort reason")
	}
}

func TestTransformOutputText(t *testing.T) {
	base, script := scriptBase("read", []string{`{"q":"secret-1"}`}, llm.StopToolUse)
	script.text = [][]byte{[]byte("the secret-1 "), []byte("is here")}
	up := func(dst, src []byte) []byte {
		return append(dst, strings.ReplaceAll(string(src), "secret-1", "[x]")...)
	}
	s, _ := TransformOutputText(base, up)(context.Background(), chatReq())
	var deltas []string
	for s.Next() {
		if e := s.Event(); e.Type == llm.EventTextDelta {
			deltas = append(deltas, string(e.Delta))
		}
	}
	m := s.Message()
	if deltas[0] != "the [x] " || string(m.Content[0].Text) != "the [x] is here" || string(m.Content[1].Arguments) != `{"q":"[x]"}` {
		t.Fatalf("deltas %q message %s", deltas, m.AppendJSON(nil))
	}
	s.Close()
}

// TestTransformOutputTextControlChars: arguments rewritten by a transform
// stay JSON when a string holds a control character or DEL (fastjson's own
// MarshalTo wrote them as Go's \x01 and \x7f).
func TestTransformOutputTextControlChars(t *testing.T) {
	base, _ := scriptBase("read", []string{`{"q":"secret-1\u0001\u007f\"","k\u0002":1}`}, llm.StopToolUse)
	up := func(dst, src []byte) []byte {
		return append(dst, strings.ReplaceAll(string(src), "secret-1", "[x]")...)
	}
	m, _ := drain(t, func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		return TransformOutputText(base, up)(ctx, req)
	}, chatReq())
	args := m.Content[len(m.Content)-1].Arguments
	var got map[string]any
	if err := json.Unmarshal(args, &got); err != nil || got["q"] != "[x]\x01\x7f\"" || got["k\x02"] != 1.0 {
		t.Fatalf("arguments %s: %v %v", args, got, err)
	}
}

func TestSensitiveStopReasonRaw(t *testing.T) {
	base, _ := scriptBase("read", []string{`{}`}, llm.StopToolUse)
	raw := func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		s, _ := base(ctx, req)
		return rawStop{s, []byte("weird_reason")}, nil
	}
	req := chatReq()
	req.Model.API = "anthropic-messages"
	m, types := drain(t, HandleSensitiveStopReason(raw), req)
	if m.StopReason != llm.StopError || types[len(types)-1] != llm.EventError ||
		m.ErrorMessage != "The model stopped because the provider returned an unhandled stop reason: weird_reason. Please rephrase and try again." {
		t.Fatalf("got %s %v", m.AppendJSON(nil), types)
	}
	// On openai-completions the transport maps every finish reason itself
	// (mapOpenAIStopReason): the raw reason is not second-guessed.
	if m, _ := drain(t, HandleSensitiveStopReason(raw), chatReq()); m.StopReason != llm.StopToolUse {
		t.Fatalf("openai-completions: got %s", m.AppendJSON(nil))
	}
	// The raw stop reason survives the chain.
	s, _ := Chain(raw, Options{})(context.Background(), chatReq())
	if r, ok := s.(RawStopReasoner); !ok || string(r.RawStopReason()) != "weird_reason" {
		t.Fatal("RawStopReason lost in the chain")
	}
	s.Close()
}

type rawStop struct {
	llm.Stream
	raw []byte
}

func (r rawStop) RawStopReason() []byte { return r.raw }

func TestIdleCreationOnlyAndActivity(t *testing.T) {
	// Creation-only: a slow gap after creation does not time out.
	gap := func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		return &idleFake{ctx: ctx, start: time.Now(), chunks: []string{"a"}, eventAt: 400 * time.Millisecond}, nil
	}
	var calls atomic.Int32
	f := IdleTimeout(gap, IdleConfig{Timeout: 200 * time.Millisecond, Scope: IdleCreationOnly, OnIdleTimeout: func(error) { calls.Add(1) }})
	s, err := f(context.Background(), &llm.Request{})
	if err != nil {
		t.Fatal(err)
	}
	for s.Next() {
	}
	if s.Err() != nil || calls.Load() != 0 {
		t.Fatalf("creation-only timed out a gap: %v", s.Err())
	}
	s.Close()
	// Full scope: provider activity every 40 ms keeps a 600 ms gap alive
	// under a 250 ms timeout.
	act := func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		var pings []time.Duration
		for p := 40 * time.Millisecond; p < 600*time.Millisecond; p += 40 * time.Millisecond {
			pings = append(pings, p)
		}
		return &idleFake{ctx: ctx, start: time.Now(), chunks: []string{"a"}, eventAt: 600 * time.Millisecond, activity: pings}, nil
	}
	f = IdleTimeout(act, IdleConfig{Timeout: 250 * time.Millisecond, OnIdleTimeout: func(error) { calls.Add(1) }})
	s, _ = f(context.Background(), &llm.Request{})
	n := 0
	for s.Next() {
		n++
	}
	if s.Err() != nil || n != 1 || calls.Load() != 0 {
		t.Fatalf("activity did not keep the stream alive: %v", s.Err())
	}
	s.Close()
	// The error is typed.
	never := func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		return &idleFake{ctx: ctx, blockAll: true}, nil
	}
	s, _ = IdleTimeout(never, IdleConfig{Timeout: 20 * time.Millisecond})(context.Background(), &llm.Request{})
	for s.Next() {
	}
	var ie *IdleTimeoutError
	if !errors.Is(s.Err(), ErrIdleTimeout) || !errors.As(s.Err(), &ie) || ie.Timeout != 20*time.Millisecond {
		t.Fatalf("err %v", s.Err())
	}
	if m := s.Message(); m.StopReason != llm.StopError || m.ErrorMessage != "LLM idle timeout (0s): no response from model" {
		t.Fatalf("message %s", m.AppendJSON(nil))
	}
	s.Close()
}

func TestSanitizePairing(t *testing.T) {
	call := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
		{Type: llm.BlockToolCall, ID: []byte("c1"), Name: []byte(" READ "), Arguments: []byte(`{}`)},
		{Type: llm.BlockToolCall, ID: []byte("c2"), Name: []byte("read"), Arguments: []byte(`{}`)},
	}}
	res := llm.TextMessage(llm.RoleToolResult, "ok")
	res.ToolCallID = "c1"
	orphan := llm.TextMessage(llm.RoleToolResult, "?")
	orphan.ToolCallID = "zz"
	msgs := []llm.Message{llm.TextMessage(llm.RoleUser, "hi"), call, res, orphan}
	out, changed := SanitizeReplayMessages(msgs, "openai-completions", SanitizeConfig{ReplayAllowed: NewAllowlist("read")})
	if !changed || len(out) != 4 {
		t.Fatalf("changed %v, %d messages", changed, len(out))
	}
	if string(out[1].Content[0].Name) != "READ" || out[2].ToolCallID != "c1" || out[3].ToolCallID != "c2" || !out[3].IsError || out[3].TextContent() != MsgMissingToolResult {
		t.Fatalf("got %v", out)
	}
	if string(msgs[1].Content[0].Name) != " READ " {
		t.Fatal("the caller's history was modified")
	}
	// (c1 is answered, so its name resolves without the allowlist: trimmed.)
}

// TestSanitizeCleanHistoryAllocatesNothing: with nothing to do, the
// sanitizer hands the same slice back and allocates nothing.
func TestSanitizeCleanHistoryAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts do not hold under -race")
	}
	clean := []llm.Message{llm.TextMessage(llm.RoleUser, "hi")}
	if a := testing.AllocsPerRun(50, func() { SanitizeReplayMessages(clean, "openai-completions", SanitizeConfig{}) }); a != 0 {
		t.Fatalf("clean history allocated %v", a)
	}
}

func TestPayloadLogRedactsAndRotates(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "payload.jsonl")
	l, err := OpenPayloadLog(PayloadLogConfig{Path: path, MaxBytes: 600, RunID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	base, _ := scriptBase("read", []string{`{}`}, llm.StopToolUse)
	f := l.Wrap(base)
	req := chatReq()
	req.APIKey = "my-literal-key-123"
	req.Messages = []llm.Message{llm.TextMessage(llm.RoleUser, "use sk-abcdefghijklmnopqrstuvwxyz and Bearer abcdefgh12345678 and my-literal-key-123")}
	for i := 0; i < 4; i++ {
		drain(t, f, req)
	}
	if err := l.Close(); err != nil || l.Err() != nil {
		t.Fatal(err, l.Err())
	}
	data, _ := os.ReadFile(path)
	rotated, _ := filepath.Glob(path + ".*.zst")
	if len(rotated) == 0 {
		t.Fatal("no rotated file")
	}
	zf, _ := os.Open(rotated[0])
	dec, _ := zstd.NewReader(zf)
	old, err := bufio.NewReader(dec).ReadString('\n')
	dec.Close()
	zf.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range []string{string(data), old} {
		if strings.Contains(rec, "sk-abc") || strings.Contains(rec, "abcdefgh12345678") || strings.Contains(rec, "my-literal-key") {
			t.Fatalf("secret in log: %s", rec)
		}
		if !strings.Contains(rec, `"stage":"request"`) || !strings.Contains(rec, `"payloadDigest":"`) || !strings.Contains(rec, "[REDACTED]") {
			t.Fatalf("record: %s", rec)
		}
	}
}
