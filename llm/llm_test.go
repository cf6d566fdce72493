package llm

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/valyala/fastjson"
)

func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "quote\" back\\ nl\n tab\t cr\r", "\x00\x1f", "é — ü", "\u2028\u2029", "<html>&"} {
		got := AppendJSONString(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("%q: invalid JSON %s: %v", s, got, err)
		}
		if back != s {
			t.Errorf("round trip %q -> %s -> %q", s, got, back)
		}
		if string(AppendJSONString(nil, []byte(s))) != string(got) {
			t.Errorf("string and []byte forms differ for %q", s)
		}
	}
	// Each invalid byte is one U+FFFD, the character itself (a rewrite of
	// what was read back gives the same bytes).
	if got := string(AppendJSONString(nil, "a\xff\xfeb")); got != "\"a\uFFFD\uFFFDb\"" {
		t.Errorf("invalid UTF-8: got %s", got)
	}
}

func TestMessageJSONRoundTrip(t *testing.T) {
	m := Message{Role: RoleAssistant, StopReason: StopToolUse, API: "openai-completions", Provider: "openai", Model: "gpt",
		Usage: Usage{Input: 10, Output: 5, CacheRead: 2, TotalTokens: 17}}
	_, b := m.AddBlock(BlockText)
	b.Text = append(b.Text, "hi \"there\""...)
	_, b = m.AddBlock(BlockToolCall)
	b.ID = append(b.ID, "call_1"...)
	b.Name = append(b.Name, "read"...)
	b.Arguments = append(b.Arguments, `{"path":"a.txt"}`...)
	out := m.AppendJSON(nil)
	want := `{"role":"assistant","content":[{"type":"text","text":"hi \"there\""},{"type":"toolCall","id":"call_1","name":"read","arguments":{"path":"a.txt"}}],"stopReason":"toolUse","usage":{"input":10,"output":5,"cacheRead":2,"cacheWrite":0,"totalTokens":17},"api":"openai-completions","provider":"openai","model":"gpt"}`
	if string(out) != want {
		t.Fatalf("got  %s\nwant %s", out, want)
	}
	v, err := fastjson.ParseBytes(out)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseMessage(v)
	if err != nil {
		t.Fatal(err)
	}
	if got := back.AppendJSON(nil); string(got) != want {
		t.Fatalf("round trip: %s", got)
	}
}

func TestResetReusesBuffers(t *testing.T) {
	var m Message
	_, b := m.AddBlock(BlockText)
	b.Text = append(b.Text, make([]byte, 100)...)
	m.Reset()
	allocs := testing.AllocsPerRun(100, func() {
		m.Reset()
		_, b := m.AddBlock(BlockText)
		b.Text = append(b.Text, "hello"...)
	})
	if allocs != 0 {
		t.Fatalf("AddBlock after Reset allocated %v times", allocs)
	}
}

func TestNamesRoundTrip(t *testing.T) {
	for ty := EventStart; ty < numEventTypes; ty++ {
		if back, ok := ParseEventType(ty.String()); !ok || back != ty {
			t.Errorf("event type %v", ty)
		}
	}
	for r := StopStop; r < numStopReasons; r++ {
		if back, ok := ParseStopReason(r.String()); !ok || back != r {
			t.Errorf("stop reason %v", r)
		}
	}
	if _, err := ParseMessage(fastjson.MustParse(`{"role":"robot"}`)); err == nil {
		t.Error("unknown role accepted")
	}
}

// A message is one line of JSON whatever line breaks the model put between
// the tokens of its arguments; line breaks inside strings are escapes.
func TestAppendJSONOneLine(t *testing.T) {
	var m Message
	_, b := m.AddBlock(BlockToolCall)
	b.Arguments = []byte("{\"a\":\"x\\ny\",\n\t\"b\": [1,\r\n2]}")
	got := string(m.AppendJSON(nil))
	if strings.ContainsAny(got, "\n\r\t") || !strings.Contains(got, `"arguments":{"a":"x\ny","b": [1,2]}`) {
		t.Fatalf("%s", got)
	}
}
