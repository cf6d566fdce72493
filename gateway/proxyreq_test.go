package gateway

import (
	"fmt"
	"net/http"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/valyala/fastjson"

	"github.com/ocbench/ocbench/provider"
)

// The one pass over a body's members reads each field as a lookup of its
// path would (the first of repeated keys, wrong types as absent).
func FuzzParseProxyRequestFields(f *testing.F) {
	f.Add(uint8(0), []byte(chatBody(true)))
	f.Add(uint8(0), []byte(`{"model":"a","model":"b","stream":true,"stream":false,"messages":[],"stream_options":{"include_usage":true},"max_tokens":1,"prompt_cache_key":"k","max_completion_tokens":null}`))
	f.Add(uint8(0), []byte(`{"model":"a","messages":1,"stream":"true","stream_options":[1],"tools":{"a":1},"tools":[{"function":{"name":"x"}}]}`))
	f.Add(uint8(1), []byte(`{"model":"a","messages":[],"max_tokens":5,"tools":[{"name":"x"},{"name":1}]}`))
	f.Add(uint8(2), []byte(`{"mod\u0065l":"a","input":null,"stream":true}`))
	// What the scan skips, as fastjson's grammar has it.
	f.Add(uint8(0), []byte(` {"messages":[NaN,-Inf,1e5,-,"a\\\"b",{"k\"":[[]]},null,true,false],"model":"m","stream" : true } `))
	f.Add(uint8(0), []byte(`{"model":"m","messages":[`+strings.Repeat("[", 298)+strings.Repeat("]", 298)+`]}`))
	f.Add(uint8(0), []byte(`{"model":"m","messages":[`+strings.Repeat("[", 299)+strings.Repeat("]", 299)+`]}`))
	f.Add(uint8(0), []byte(`{"model":"m","messages":[nul]}`))
	f.Add(uint8(0), []byte(`{"model":"m","messages":[]}x`))
	f.Add(uint8(0), []byte(`[{"model":"m","messages":[]}]`))
	f.Fuzz(func(t *testing.T, wi uint8, body []byte) {
		w := []provider.Wire{provider.WireOpenAIChat, provider.WireAnthropic, provider.WireOpenAIResponses}[int(wi)%3]
		got, err := parseProxyRequest(w, body, nil)
		var p fastjson.Parser
		v, perr := p.ParseBytes(body)
		if perr != nil || v.Type() != fastjson.TypeObject {
			if err == nil {
				t.Fatalf("%q accepted", body)
			}
			return
		}
		mv := v.Get("model")
		if mv == nil || mv.Type() != fastjson.TypeString || len(mv.GetStringBytes()) == 0 {
			if err == nil {
				t.Fatalf("%q accepted without a model", body)
			}
			return
		}
		chat := w == provider.WireOpenAIChat
		want := proxyRequest{model: string(mv.GetStringBytes()), stream: v.GetBool("stream")}
		if chat {
			want.includeUsage = v.GetBool("stream_options", "include_usage")
			want.hasStreamOptions = v.Get("stream_options") != nil
			want.hasMaxTokens = v.Get("max_tokens") != nil
			want.hasMaxCompletion = v.Get("max_completion_tokens") != nil
			want.hasCacheKey = v.Get("prompt_cache_key") != nil
		}
		for _, tv := range v.GetArray("tools") {
			n := tv.GetStringBytes("name")
			if chat {
				n = tv.GetStringBytes("function", "name")
			}
			if len(n) > 0 {
				want.tools = append(want.tools, string(n))
			}
		}
		wantErr := w == provider.WireOpenAIResponses && v.Get("input") == nil ||
			w != provider.WireOpenAIResponses && v.Get("messages") == nil
		gotRest, wantRest := got, want
		gotRest.tools, wantRest.tools = nil, nil
		if (err != nil) != wantErr || !reflect.DeepEqual(gotRest, wantRest) || !equalStrings(got.tools, want.tools) {
			t.Fatalf("%q on %v: %+v %v, paths give %+v (error %v)", body, w, got, err, want, wantErr)
		}
	})
}

// The headers passed upstream, found by one pass over a small header or
// by lookups in a larger one, come in the same order and number.
func TestUpstreamHeadersPassed(t *testing.T) {
	small := http.Header{"Authorization": {"Bearer c"}, "Anthropic-Beta": {"b1", "b2"}, "Openai-Project": {"p"}, "User-Agent": {"x"}}
	large := small.Clone()
	for _, k := range []string{"A", "B", "C", "D"} {
		large[k] = []string{k}
	}
	for _, cfg := range []Config{{}, {AuthKey: "g"}, {UpstreamKey: "u"}} {
		for _, w := range []provider.Wire{provider.WireOpenAIChat, provider.WireAnthropic} {
			var got [2][]string
			for i, h := range []http.Header{small, large} {
				(&Server{cfg: cfg}).eachUpstreamHeader(h, w, func(k, v string) error {
					got[i] = append(got[i], k+": "+v)
					return nil
				})
			}
			want := []string{"Authorization: Bearer c", "Anthropic-Beta: b1", "Anthropic-Beta: b2", "Openai-Project: p"}
			switch {
			case cfg.UpstreamKey != "" && w == provider.WireAnthropic:
				want[0] = "X-Api-Key: u"
			case cfg.UpstreamKey != "":
				want[0] = "Authorization: Bearer u"
			case cfg.AuthKey != "":
				want = want[1:]
			}
			if !reflect.DeepEqual(got[0], want) || !reflect.DeepEqual(got[1], want) {
				t.Errorf("%+v %v: %q and %q, want %q", cfg, w, got[0], got[1], want)
			}
		}
	}
}

// bigChatBody is a chat request as an agent sends it late in a session:
// about 150 KiB, nearly all of it the history.
func bigChatBody() []byte {
	var b strings.Builder
	b.WriteString(`{"model":"gpt-4o","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"system","content":"You are a coding agent."}`)
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&b, `,{"role":"user","content":"message %d: %s"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_%d","type":"function","function":{"name":"read","arguments":"{\"path\":\"src/file%d.go\"}"}}]},{"role":"tool","tool_call_id":"call_%d","content":"%s"}`,
			i, strings.Repeat("lorem ipsum dolor sit amet ", 8), i, i, i, strings.Repeat(`package main\nfunc f() {}\n`, 10))
	}
	b.WriteString(`],"tools":[{"type":"function","function":{"name":"read","parameters":{"type":"object","properties":{"path":{"type":"string"}}}}},{"type":"function","function":{"name":"write","parameters":{"type":"object"}}}]}`)
	return []byte(b.String())
}

// BenchmarkParseProxyRequest reads the fields the proxy acts on from a
// small body (the load test's) and from an agent's 150 KiB one.
func BenchmarkParseProxyRequest(b *testing.B) {
	for _, c := range []struct {
		name string
		body []byte
	}{{"small", []byte(chatBody(true))}, {"agent-150KiB", bigChatBody()}} {
		b.Run(c.name, func(b *testing.B) {
			if _, err := parseProxyRequest(provider.WireOpenAIChat, c.body, nil); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(c.body)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				parseProxyRequest(provider.WireOpenAIChat, c.body, nil)
			}
		})
	}
}

// Reading an agent's 150 KiB body grows no parser by its history: the scan
// builds nothing for the members it skips. fastjson's parser copied the
// body and made a value for each of its nodes, 1.2 MiB kept by each pooled
// parser that had read one.
func TestParseProxyRequestKeepsNoHistory(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation allocates")
	}
	body := bigChatBody()
	saved := parserPool
	parserPool = new(fastjson.ParserPool) // a fresh parser, whose growth counts
	defer func() { parserPool = saved }()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	pr, err := parseProxyRequest(provider.WireOpenAIChat, body, nil)
	runtime.ReadMemStats(&m1)
	if err != nil || pr.model != "gpt-4o" || !pr.stream || !pr.includeUsage || len(pr.tools) != 2 {
		t.Fatalf("%+v %v", pr, err)
	}
	if grew := m1.TotalAlloc - m0.TotalAlloc; grew > 32<<10 {
		t.Errorf("reading a %d-byte body allocated %d bytes", len(body), grew)
	}
}
