package scripted

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider"
	"github.com/ocbench/ocbench/provider/wireenc"
)

func TestMalformExact(t *testing.T) {
	const args = `{"path":"a.txt","all":true,"n":null,"q":"say \"hi\" & <b>","ok":false}`
	for _, tc := range []struct {
		q    Quirk
		want string
	}{
		{QuirkTrailingComma, `{"path":"a.txt","all":true,"n":null,"q":"say \"hi\" & <b>","ok":false,}`},
		{QuirkFence, "```json\n" + args + "\n```"},
		{QuirkDoubleEncode, `"{\"path\":\"a.txt\",\"all\":true,\"n\":null,\"q\":\"say \\\"hi\\\" & <b>\",\"ok\":false}"`},
		{QuirkPython, `{"path":"a.txt","all":True,"n":None,"q":"say \"hi\" & <b>","ok":False}`},
		{QuirkSingleQuotes, `{'path':'a.txt','all':true,'n':null,'q':'say "hi" & <b>','ok':false}`},
		{QuirkConcat, args + args},
		{QuirkHTMLEntities, `{"path":"a.txt","all":true,"n":null,"q":"say &quot;hi&quot; &amp; &lt;b&gt;","ok":false}`},
		{QuirkTruncate, args[:len(args)*2/3]},
		{QuirkNull, "null"},
		{QuirkEmpty, ""},
		{QuirkPadName, args},
	} {
		if got := Malform(args, tc.q); got != tc.want {
			t.Errorf("%v:\n got %s\nwant %s", tc.q, got, tc.want)
		}
		if back, ok := ParseQuirk(tc.q.String()); !ok || back != tc.q {
			t.Errorf("%v does not round-trip its name", tc.q)
		}
	}
	if got := MalformName("read", QuirkPadName, QuirkNamespace); got != "functions. read " {
		t.Errorf("name quirks: %q", got)
	}
	if got := Malform(`{"s":"it's"}`, QuirkSingleQuotes); got != `{'s':'it\'s'}` {
		t.Errorf("single quote inside a string: %s", got)
	}
	if got := Malform(`{"s":"true null"}`, QuirkPython); got != `{"s":"true null"}` {
		t.Errorf("python literals changed a string: %s", got)
	}
}

// Every argument and name quirk reaches the decoder byte for byte, on every
// wire and both ways of playing.
func TestMalformationsArriveByteExact(t *testing.T) {
	const args = `{"command":"source .env && psql \"$DB\" -c 'SELECT 1'","all":true,"n":null}`
	var steps []Step
	for q := QuirkTrailingComma; q < numQuirks; q++ {
		steps = append(steps, Step{Kind: StepTools, Chunk: 7, Calls: []Call{{
			ID: fmt.Sprintf("call_%d", q), Name: MalformName("exec", q), Args: Malform(args, q)}}})
	}
	turn := Turn{Steps: steps}
	p := MustNew(Options{Script: &Script{Turns: []Turn{turn}}})
	for mode, play := range modes(t, p) {
		for _, w := range wireenc.Wires {
			m, _, err := play(t, context.Background(), w, userReq("hi"))
			if err != nil {
				t.Fatalf("%s/%v: %v", mode, w, err)
			}
			checkTurn(t, w, &turn, m)
			for i := range m.Content {
				b := &m.Content[i]
				valid := len(bytes.TrimSpace(b.RawArgs)) == 0 || isJSON(b.RawArgs)
				if !valid && len(b.Arguments) != 0 {
					t.Errorf("%s/%v: invalid %q decided as %q", mode, w, b.RawArgs, b.Arguments)
				}
			}
		}
	}
}

func isJSON(b []byte) bool {
	var p = bytes.TrimSpace(b)
	return len(p) > 0 && validJSON(p)
}

func TestIndexQuirksOnChat(t *testing.T) {
	// A reused index with a new id must still be two calls; a missing index
	// is keyed by id.
	for name, calls := range map[string][]Call{
		"reused index": {{ID: "call_1", Name: "read", Args: `{"path":"a"}`}, {ID: "call_2", Name: "read", Args: `{"path":"b"}`, ReuseIndex: true}},
		"no index":     {{ID: "call_1", Name: "read", Args: `{"path":"a"}`, NoIndex: true}, {ID: "call_2", Name: "read", Args: `{"path":"b"}`, NoIndex: true}},
	} {
		turn := Turn{Steps: []Step{{Kind: StepTools, Calls: calls, Chunk: 4}}}
		p := MustNew(Options{Script: &Script{Turns: []Turn{turn}}})
		m, _, err := playInProcess(t, context.Background(), p, wireenc.OpenAIChat, userReq("x"))
		if err != nil {
			t.Fatal(err)
		}
		checkTurn(t, wireenc.OpenAIChat, &turn, m)
		// and on the wire, the index really is reused / missing
		raw := encodeTurn(t, p, wireenc.OpenAIChat, &turn)
		switch name {
		case "reused index":
			if bytes.Contains(raw, []byte(`"index":1`)) || !bytes.Contains(raw, []byte(`"id":"call_2"`)) {
				t.Errorf("%s: %s", name, raw)
			}
		case "no index":
			if bytes.Contains(raw, []byte(`"tool_calls":[{"index"`)) {
				t.Errorf("%s: %s", name, raw)
			}
		}
	}
}

// encodeTurn returns the raw body a turn is played as.
func encodeTurn(t testing.TB, p *Provider, w wireenc.Wire, turn *Turn) []byte {
	t.Helper()
	var b body
	meta := p.meta(w, nil)
	meta.Stream = 1 // the same bytes for every call, as each answer numbers its ids
	b.pl.reset(w, meta, wireenc.Options{}, &Script{}, turn, 0)
	b.cutAt = turn.CutAt
	out, err := io.ReadAll(&b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestTruncation(t *testing.T) {
	const args = `{"path":"a/very/long/path/to/a/file.txt"}`
	// Cut inside the arguments of a call: the call stays open with the
	// bytes sent so far, and the stream fails as truncated.
	turn := Turn{Steps: []Step{Text("working"), {Kind: StepTools, Chunk: 5, Calls: []Call{{ID: "call_1", Name: "read", Args: args, Cut: 17}}}}}
	p := MustNew(Options{Script: &Script{Turns: []Turn{turn}}})
	for mode, play := range modes(t, p) {
		for _, w := range wireenc.Wires {
			m, types, err := play(t, context.Background(), w, userReq("x"))
			if !errors.Is(err, provider.ErrTruncated) || m.StopReason != llm.StopError {
				t.Fatalf("%s/%v: %v %v", mode, w, err, types)
			}
			calls := m.ToolCalls(nil)
			if len(calls) != 1 || string(m.Content[calls[0]].RawArgs) != args[:17] || len(m.Content[calls[0]].Arguments) != 0 {
				t.Errorf("%s/%v: %s", mode, w, m.AppendJSON(nil))
			}
		}
	}
	// Cut the body at every byte offset: the decoder sees exactly that
	// many bytes, and never a clean end before the last one.
	full := Turn{Steps: []Step{Text("hello"), ToolCall("call_1", "read", args).Chunked(6)}}
	p0 := MustNew(Options{})
	for _, w := range wireenc.Wires {
		whole := encodeTurn(t, p0, w, &full)
		for off := 1; off < len(whole); off += 7 {
			cut := full
			cut.CutAt = off
			got := encodeTurn(t, p0, w, &cut)
			if !bytes.Equal(got, whole[:off]) {
				t.Fatalf("%v cut at %d: got %d bytes", w, off, len(got))
			}
			p := MustNew(Options{Script: &Script{Turns: []Turn{cut}}})
			m, _, err := playInProcess(t, context.Background(), p, w, userReq("x"))
			// The decoders accept a body that ends after the event carrying
			// the stop reason (a lost chat usage chunk or [DONE], a lost
			// Anthropic message_stop); any earlier cut is an error.
			stopEnd := len(whole)
			switch w {
			case wireenc.OpenAIChat:
				fin := `"finish_reason":"tool_calls"}]}` + "\n\n"
				stopEnd = bytes.Index(whole, []byte(fin)) + len(fin)
			case wireenc.Anthropic:
				stopEnd = bytes.Index(whole, []byte("event: message_stop"))
			}
			trailing := off >= stopEnd
			if err == nil && !trailing {
				t.Fatalf("%v cut at %d/%d decoded cleanly: %s", w, off, len(whole), m.AppendJSON(nil))
			}
		}
	}
	// Over loopback the body really ends at the offset.
	cut := full
	cut.CutAt = 100
	p = MustNew(Options{Script: &Script{Turns: []Turn{cut}}})
	base := modesServer(t, p, "loopback")
	resp, err := post(context.Background(), base, wireenc.Anthropic, requestBody(wireenc.Anthropic, userReq("x"), true))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if len(got) != 100 {
		t.Errorf("loopback body of %d bytes, want 100", len(got))
	}
}

func TestRawAndEOFSteps(t *testing.T) {
	turn := Turn{Steps: []Step{Raw("", `{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"raw"}}]}`), EOF(), Text("never")}}
	p := MustNew(Options{Script: &Script{Turns: []Turn{turn}}})
	m, _, err := playInProcess(t, context.Background(), p, wireenc.OpenAIChat, userReq("x"))
	if !errors.Is(err, provider.ErrTruncated) || m.TextContent() != "raw" {
		t.Errorf("%v %s", err, m.AppendJSON(nil))
	}
}

func TestCommentsAreKeepAlives(t *testing.T) {
	turn := Turn{Steps: []Step{Comment("OPENROUTER PROCESSING"), Text("a"), Comment("still here"), ToolCall("call_1", "read", `{}`)}}
	p := MustNew(Options{Script: &Script{Turns: []Turn{turn}}})
	for _, w := range wireenc.Wires {
		raw := encodeTurn(t, p, w, &turn)
		if !bytes.Contains(raw, []byte("\n\n: OPENROUTER PROCESSING\n\n")) || !bytes.Contains(raw, []byte("\n\n: still here\n\n")) {
			t.Fatalf("%v: %q", w, raw)
		}
		m, _, err := playInProcess(t, context.Background(), p, w, userReq("x"))
		if err != nil {
			t.Fatal(err)
		}
		checkTurn(t, w, &turn, m)
	}
}
