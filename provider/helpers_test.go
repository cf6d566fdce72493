package provider

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/llm"
)

// recEvent is an event with its delta copied.
type recEvent struct {
	Type  llm.EventType
	CI    int
	Delta string
	Why   llm.StopReason
}

type result struct {
	events []recEvent
	msg    *llm.Message
	err    error
	raw    string
	d      *Decoder
}

func decodeBytes(w Wire, body []byte, o Options) result {
	d := NewDecoder(w, bytes.NewReader(body), o)
	return drain(d)
}

func drain(d *Decoder) result {
	var r result
	for d.Next() {
		e := d.Event()
		r.events = append(r.events, recEvent{e.Type, e.ContentIndex, string(e.Delta), e.Reason})
	}
	r.msg = d.Message().Clone()
	r.err = d.Err()
	r.raw = string(d.RawStopReason())
	r.d = d
	return r
}

func readStream(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("../testdata/streams/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkInvariants checks the event contract on any decoded stream: start
// first, exactly one terminal event last, content indexes in range and in
// block order, deltas of each block concatenating to its text or
// arguments, and the message's stop reason matching the terminal event.
func checkInvariants(r result, argMismatches int) error {
	ev := r.events
	if len(ev) < 2 {
		return fmt.Errorf("only %d events", len(ev))
	}
	if ev[0].Type != llm.EventStart {
		return fmt.Errorf("first event %v", ev[0].Type)
	}
	last := ev[len(ev)-1]
	if !last.Type.IsTerminal() {
		return fmt.Errorf("last event %v", last.Type)
	}
	for _, e := range ev[1 : len(ev)-1] {
		if e.Type.IsTerminal() || e.Type == llm.EventStart {
			return fmt.Errorf("event %v in the middle", e.Type)
		}
	}
	if r.msg.StopReason != last.Why {
		return fmt.Errorf("message stop %v, terminal %v", r.msg.StopReason, last.Why)
	}
	switch last.Type {
	case llm.EventDone:
		if r.err != nil {
			return fmt.Errorf("done with err %v", r.err)
		}
		switch last.Why {
		case llm.StopStop, llm.StopLength, llm.StopToolUse:
		default:
			return fmt.Errorf("done with reason %v", last.Why)
		}
	case llm.EventError:
		if r.err == nil || r.msg.ErrorMessage == "" {
			return fmt.Errorf("error event without err (%v) or message (%q)", r.err, r.msg.ErrorMessage)
		}
	}
	n := len(r.msg.Content)
	deltas := make([]strings.Builder, n)
	started := make([]bool, n)
	ended := make([]bool, n)
	next := 0
	for _, e := range ev[1 : len(ev)-1] {
		if e.CI < 0 || e.CI >= n {
			return fmt.Errorf("%v content index %d of %d", e.Type, e.CI, n)
		}
		b := &r.msg.Content[e.CI]
		switch e.Type {
		case llm.EventTextStart, llm.EventThinkingStart, llm.EventToolCallStart:
			if e.CI != next {
				return fmt.Errorf("block %d started, expected %d", e.CI, next)
			}
			next++
			started[e.CI] = true
			want := map[llm.EventType]llm.BlockType{llm.EventTextStart: llm.BlockText, llm.EventThinkingStart: llm.BlockThinking, llm.EventToolCallStart: llm.BlockToolCall}[e.Type]
			if b.Type != want {
				return fmt.Errorf("block %d is %v, started as %v", e.CI, b.Type, e.Type)
			}
		case llm.EventTextDelta, llm.EventThinkingDelta, llm.EventToolCallDelta:
			if !started[e.CI] || ended[e.CI] {
				return fmt.Errorf("delta on block %d not open", e.CI)
			}
			deltas[e.CI].WriteString(e.Delta)
		case llm.EventTextEnd, llm.EventThinkingEnd, llm.EventToolCallEnd:
			if !started[e.CI] || ended[e.CI] {
				return fmt.Errorf("end of block %d not open", e.CI)
			}
			ended[e.CI] = true
		}
	}
	if next != n {
		return fmt.Errorf("%d blocks started, message has %d", next, n)
	}
	for i := range r.msg.Content {
		b := &r.msg.Content[i]
		got := deltas[i].String()
		switch b.Type {
		case llm.BlockToolCall:
			if got != string(b.RawArgs) && argMismatches == 0 {
				return fmt.Errorf("block %d: deltas %q != RawArgs %q", i, got, b.RawArgs)
			}
			if ended[i] && len(b.Arguments) == 0 && bytes.TrimSpace(b.RawArgs) != nil && validJSON(b.RawArgs) {
				return fmt.Errorf("block %d: valid args %q left undecided", i, b.RawArgs)
			}
			if !ended[i] && len(b.Arguments) != 0 {
				return fmt.Errorf("block %d: open call has Arguments %q", i, b.Arguments)
			}
		default:
			if !b.Redacted && got != string(b.Text) {
				return fmt.Errorf("block %d: deltas %q != text %q", i, got, b.Text)
			}
		}
		if last.Type == llm.EventDone && !ended[i] {
			return fmt.Errorf("done with block %d open", i)
		}
	}
	u := r.msg.Usage
	if u.TotalTokens != u.Input+u.Output+u.CacheRead+u.CacheWrite {
		return fmt.Errorf("usage total %+v", u)
	}
	return nil
}

func validJSON(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && jsonValid(b)
}

// sse frames payloads as data-only events.
func sse(payloads ...string) []byte {
	var b []byte
	for _, p := range payloads {
		b = append(b, "data: "+p+"\n\n"...)
	}
	return b
}

// named frames (type, payload) pairs as named events.
func named(pairs ...string) []byte {
	var b []byte
	for i := 0; i+1 < len(pairs); i += 2 {
		b = append(b, "event: "+pairs[i]+"\ndata: "+pairs[i+1]+"\n\n"...)
	}
	return b
}
