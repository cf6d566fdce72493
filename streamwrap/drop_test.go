package streamwrap

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider"
	"github.com/ocbench/ocbench/streamwrap/repair"
)

// chatCall is one scripted OpenAI chat tool call: its argument text is sent
// in two fragments (split in the middle).
type chatCall struct{ name, args string }

// chatSSE builds an OpenAI chat completions body with calls call_1.. and
// the finish reason finish ("" leaves the stream cut after the last
// argument fragment: no finish, no [DONE]).
func chatSSE(finish string, calls ...chatCall) []byte {
	var b bytes.Buffer
	chunk := func(delta any, fr any) {
		j, _ := json.Marshal(map[string]any{"id": "chatcmpl-D", "object": "chat.completion.chunk", "model": "m",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": fr}}})
		fmt.Fprintf(&b, "data: %s\n\n", j)
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	for i, c := range calls {
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": fmt.Sprintf("call_%d", i+1), "type": "function",
			"function": map[string]any{"name": c.name, "arguments": ""}}}}, nil)
		h := len(c.args) / 2
		for _, part := range []string{c.args[:h], c.args[h:]} {
			chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": part}}}}, nil)
		}
	}
	if finish == "" {
		return b.Bytes()
	}
	chunk(map[string]any{}, finish)
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

// dropRun runs body through ArgumentStage alone ("stage"), deferring to
// DropUnrepairedToolCalls ("deferred"), or the whole Chain ("chain") with profile and returns the final message and the
// events (type, content index, and reason of the terminal).
func dropRun(t *testing.T, how string, profile repair.Profile, body []byte) (*llm.Message, []string) {
	t.Helper()
	base := func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		d := provider.NewDecoder(provider.WireOpenAIChat, bytes.NewReader(body), provider.Options{API: req.Model.API, Provider: req.Model.Provider})
		d.SetContext(ctx)
		return d, nil
	}
	var f llm.StreamFunc
	switch how {
	case "stage":
		f = ArgumentStage(base, profile)
	case "deferred": // the stage deferring the drop, and the drop decorator
		f = DropUnrepairedToolCalls(argumentStage(base, profile, profile == repair.ProfileExtended))
	default:
		f = Chain(base, Options{Profile: profile, LiveTools: NewAllowlist("read", "write", "exec")})
	}
	s, err := f(context.Background(), chatReq())
	if err != nil {
		t.Fatal(err)
	}
	var evs []string
	for s.Next() {
		e := s.Event()
		switch {
		case e.Type.IsTerminal():
			evs = append(evs, e.Type.String()+":"+e.Reason.String())
		case e.Type == llm.EventToolCallEnd:
			evs = append(evs, fmt.Sprintf("%s:%d", e.Type, e.ContentIndex))
		}
	}
	m := s.Message().Clone()
	s.Close()
	return m, evs
}

// callsOf lists m's tool calls as name(id)=arguments.
func callsOf(m *llm.Message) []string {
	var out []string
	for _, i := range m.ToolCalls(nil) {
		b := &m.Content[i]
		out = append(out, fmt.Sprintf("%s(%s)=%s", b.Name, b.ID, b.Arguments))
	}
	return out
}

const badArgs = `{"a":[1],,}` // a double trailing comma: not repairable

func TestExtendedDropsOneUnrepairableCall(t *testing.T) {
	body := chatSSE("tool_calls", chatCall{"read", `{"path":"a.txt"}`}, chatCall{"exec", badArgs}, chatCall{"write", `{"path":"b.txt","content":"hi",}`})
	for _, how := range []string{"stage", "deferred", "chain"} {
		t.Run(how, func(t *testing.T) {
			m, evs := dropRun(t, how, repair.ProfileExtended, body)
			got := strings.Join(callsOf(m), " ")
			if want := `read(call_1)={"path":"a.txt"} write(call_3)={"path":"b.txt","content":"hi"}`; got != want {
				t.Fatalf("calls %s, want %s", got, want)
			}
			if m.StopReason != llm.StopToolUse {
				t.Fatalf("stop %v (%s)", m.StopReason, m.ErrorMessage)
			}
			if want := `tool call "exec" (call_2) dropped: malformed arguments that could not be repaired (syntax)`; m.ErrorMessage != want {
				t.Fatalf("error message %q, want %q", m.ErrorMessage, want)
			}
			// The dropped call's toolcall_end went out; done keeps toolUse.
			if want := "toolcall_end:0 toolcall_end:1 toolcall_end:2 done:toolUse"; strings.Join(evs, " ") != want {
				t.Fatalf("events %v, want %s", evs, want)
			}
		})
	}
}

func TestExtendedDropsEachUnrepairableCall(t *testing.T) {
	fence := "```json\n```json\n{\"cmd\":\"ls\"}\n```\n```" // a doubly nested code fence
	body := chatSSE("tool_calls", chatCall{"exec", badArgs}, chatCall{"read", `{"path":"a.txt"}`}, chatCall{"exec", fence})
	for _, how := range []string{"stage", "deferred", "chain"} {
		t.Run(how, func(t *testing.T) {
			m, _ := dropRun(t, how, repair.ProfileExtended, body)
			if got := strings.Join(callsOf(m), " "); got != `read(call_2)={"path":"a.txt"}` || m.StopReason != llm.StopToolUse {
				t.Fatalf("calls %s stop %v", got, m.StopReason)
			}
			parts := strings.Split(m.ErrorMessage, "; ")
			if len(parts) != 2 || !strings.HasPrefix(parts[0], `tool call "exec" (call_1) dropped: malformed arguments that could not be repaired (`) ||
				!strings.HasPrefix(parts[1], `tool call "exec" (call_3) dropped: malformed arguments that could not be repaired (`) {
				t.Fatalf("error message %q", m.ErrorMessage)
			}
		})
	}
}

func TestExtendedAllCallsUnrepairableFailsTurn(t *testing.T) {
	body := chatSSE("tool_calls", chatCall{"exec", badArgs}, chatCall{"read", `{"path":` + badArgs[5:]})
	for _, how := range []string{"stage", "deferred", "chain"} {
		t.Run(how, func(t *testing.T) {
			m, evs := dropRun(t, how, repair.ProfileExtended, body)
			if m.StopReason != llm.StopError || evs[len(evs)-1] != "error:error" {
				t.Fatalf("stop %v events %v", m.StopReason, evs)
			}
			if want := `tool call "exec" (call_1) has malformed arguments that could not be repaired (syntax) (and 1 more)`; m.ErrorMessage != want {
				t.Fatalf("error message %q, want %q", m.ErrorMessage, want)
			}
		})
	}
}

// Truncation keeps refusing the whole turn, good and malformed calls alike.
func TestExtendedTruncatedStillRefusesTurn(t *testing.T) {
	cases := []struct {
		name, finish string
		stop         llm.StopReason
		last, msg    string
	}{
		{"length", "length", llm.StopLength, "done:length",
			`tool call "write" (call_3) was cut off before its arguments were complete; the model stopped at its output limit`},
		// Cut by the stream's end: both calls are still open (the first is
		// whole, and the chain's OpenClaw repair has already given it
		// arguments while streaming, so only the chain counts it decided).
		{"eof", "", llm.StopError, "error:error", "was cut off before its arguments were complete"},
	}
	for _, c := range cases {
		body := chatSSE(c.finish, chatCall{"read", `{"path":"a.txt"}`}, chatCall{"write", `{"path":"b.txt","content":"hal`})
		body = bytes.Replace(body, []byte(`"call_2"`), []byte(`"call_3"`), 1)
		for _, how := range []string{"stage", "deferred", "chain"} {
			t.Run(c.name+"/"+how, func(t *testing.T) {
				m, evs := dropRun(t, how, repair.ProfileExtended, body)
				if m.StopReason != c.stop || evs[len(evs)-1] != c.last {
					t.Fatalf("stop %v events %v (%s)", m.StopReason, evs, m.ErrorMessage)
				}
				if c.name == "length" && m.ErrorMessage != c.msg || c.name == "eof" && !strings.Contains(m.ErrorMessage, c.msg) {
					t.Fatalf("error message %q, want %q", m.ErrorMessage, c.msg)
				}
				if strings.Contains(m.ErrorMessage, "dropped") || len(m.ToolCalls(nil)) != 2 {
					t.Fatalf("a truncated turn dropped calls: %s", m.AppendJSON(nil))
				}
			})
		}
		// With an unrepairable call besides the cut one, the turn is refused
		// too, nothing dropped.
		body = chatSSE(c.finish, chatCall{"read", `{"path":"a.txt"}`}, chatCall{"exec", badArgs}, chatCall{"write", `{"path":"b.txt","content":"hal`})
		t.Run(c.name+"/with-malformed", func(t *testing.T) {
			m, _ := dropRun(t, "chain", repair.ProfileExtended, body)
			if m.StopReason == llm.StopToolUse || strings.Contains(m.ErrorMessage, "dropped") || len(m.ToolCalls(nil)) != 3 {
				t.Fatalf("got %s", m.AppendJSON(nil))
			}
		})
	}
}

func TestOffRefusesWholeTurn(t *testing.T) {
	body := chatSSE("tool_calls", chatCall{"read", `{"path":"a.txt"}`}, chatCall{"exec", badArgs}, chatCall{"write", `{"path":"b.txt"}`})
	for _, how := range []string{"stage", "deferred", "chain"} {
		t.Run(how, func(t *testing.T) {
			m, evs := dropRun(t, how, repair.ProfileOff, body)
			if m.StopReason != llm.StopError || evs[len(evs)-1] != "error:error" {
				t.Fatalf("stop %v events %v", m.StopReason, evs)
			}
			if want := `tool call "exec" (call_2) has malformed arguments (repair is off)`; m.ErrorMessage != want {
				t.Fatalf("error message %q, want %q", m.ErrorMessage, want)
			}
		})
	}
}

// The deferred drop costs nothing on a steady turn: ArgumentStage with the
// drop deferred and the drop stage allocate nothing per stream.
func TestDropStageZeroAllocsPerEvent(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under -race")
	}
	ok := chatSSE("tool_calls", chatCall{"read", `{"path":"a.txt"}`}, chatCall{"write", `{"path":"b.txt"}`})
	rd := bytes.NewReader(ok)
	d := provider.GetDecoder(provider.WireOpenAIChat, rd, provider.Options{})
	f := DropUnrepairedToolCalls(argumentStage(func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		rd.Reset(ok)
		d.Reset(provider.WireOpenAIChat, rd, provider.Options{})
		return noClose{d}, nil
	}, repair.ProfileExtended, true))
	run := func() {
		s, _ := f(context.Background(), chatReq())
		for s.Next() {
		}
		s.Close()
	}
	run()
	if a := testing.AllocsPerRun(100, run); a != 0 {
		t.Fatalf("a turn through ArgumentStage and the drop stage allocated %v times", a)
	}
}

type noClose struct{ *provider.Decoder }

func (noClose) Close() error { return nil }
