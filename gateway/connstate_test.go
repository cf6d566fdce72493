package gateway

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider"
	"github.com/ocbench/ocbench/provider/scripted"
)

// A connection's requests reuse its chain only for the tools it was built
// for: requests declaring other tools (or none), on other wires, in any
// order on one connection, are answered as each is on a connection of its
// own, and the model and tool list each declares are the ones used.
func TestConnStateKeepsRequestsApart(t *testing.T) {
	// A name only the declared tools resolve (case-insensitively).
	r := startRig(t, &scripted.Script{Turns: []scripted.Turn{{Steps: []scripted.Step{scripted.Text("Reading it."),
		scripted.ToolCall("call_1", " READ ", `{"path": "a.txt",}`).Chunked(3)}}}}, Config{})
	chat := func(tools string) string {
		return `{"model":"m1","stream":true,"messages":[{"role":"user","content":"read a.txt"}]` + tools + `}`
	}
	other := `,"tools":[{"type":"function","function":{"name":"write","parameters":{"type":"object"}}}]`
	reqs := []struct {
		path, body string
		wire       provider.Wire
	}{
		{"/v1/chat/completions", chat("," + readTool), provider.WireOpenAIChat},
		{"/v1/chat/completions", chat(other), provider.WireOpenAIChat},
		{"/v1/messages", `{"model":"m2","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"x"}],"tools":[{"name":"read","input_schema":{"type":"object"}}]}`, provider.WireAnthropic},
		{"/v1/chat/completions", chat(""), provider.WireOpenAIChat},
		{"/v1/chat/completions", strings.Replace(chat(","+readTool), `"m1"`, `"m3"`, 1), provider.WireOpenAIChat},
		{"/v1/chat/completions", chat("," + readTool), provider.WireOpenAIChat},
	}
	summary := func(w provider.Wire, body string) string {
		m := decodeSSE(t, w, strings.NewReader(body))
		var b strings.Builder
		b.WriteString(m.StopReason.String() + " " + m.Model + " " + m.ErrorMessage)
		for i := range m.Content {
			c := &m.Content[i]
			b.WriteString("|" + string(c.Text) + string(c.Name) + string(c.Arguments))
		}
		return b.String()
	}
	var alone []string
	var all strings.Builder
	for _, q := range reqs {
		rs := rawExchange(t, r.url, rawRequest(q.path, q.body), 1)
		alone = append(alone, summary(q.wire, respBody(rs[0])))
		all.WriteString(rawRequest(q.path, q.body))
	}
	shared := rawExchange(t, r.url, all.String(), len(reqs))
	for i, q := range reqs {
		if got := summary(q.wire, respBody(shared[i])); got != alone[i] {
			t.Errorf("request %d on a shared connection: %s\nalone: %s", i, got, alone[i])
		}
	}
	// The tools decide the name repair: " read " is the declared read.
	if !strings.Contains(alone[0], llm.StopToolUse.String()+" m1 |Reading it.|read{") || !strings.Contains(alone[4], " m3 ") {
		t.Errorf("answers: %q", alone)
	}
	if alone[0] == alone[1] {
		t.Errorf("declaring write instead of read changed nothing: %q", alone[1])
	}
}

// What a connection's previous request left (its model and tool list) never
// changes how the next body is read: parsed after any other body, on any
// wire, a body gives what it gives alone.
func FuzzParseProxyRequestReuse(f *testing.F) {
	f.Add(uint8(0), []byte(chatBody(true)), []byte(chatBody(false)))
	f.Add(uint8(0), []byte(`{"model":"a","messages":[],"tools":[{"function":{"name":"x"}},{"function":{"name":"y"}}]}`),
		[]byte(`{"model":"a","messages":[],"tools":[{"function":{"name":"x"}},{"function":{}},{"function":{"name":"y"}},{"function":{"name":"z"}}]}`))
	f.Add(uint8(1), []byte(`{"model":"b","messages":[],"tools":[{"name":"x"}]}`), []byte(`{"model":"b","messages":[],"tools":[]}`))
	f.Add(uint8(2), []byte(`{"model":"c","input":"x","tools":[{"name":"x"},{"name":""}]}`), []byte(`{"model":"c","input":"x","tools":[{"name":"x"}]}`))
	f.Fuzz(func(t *testing.T, wi uint8, prev, body []byte) {
		w := []provider.Wire{provider.WireOpenAIChat, provider.WireAnthropic, provider.WireOpenAIResponses}[int(wi)%3]
		alone, errAlone := parseProxyRequest(w, body, nil)
		ps := &proxyState{}
		if p, err := parseProxyRequest(w, prev, ps); err == nil {
			ps.tools = p.tools
		}
		got, err := parseProxyRequest(w, body, ps)
		sameTools := equalStrings(got.tools, alone.tools) // nil or empty alike
		gotRest, aloneRest := got, alone
		gotRest.tools, aloneRest.tools = nil, nil
		if (err == nil) != (errAlone == nil) || !sameTools || !reflect.DeepEqual(gotRest, aloneRest) {
			t.Fatalf("after %q: %+v %v, alone %+v %v", prev, got, err, alone, errAlone)
		}
	})
}
