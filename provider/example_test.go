package provider_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider"
)

// Decoding an Anthropic body: events come out one at a time and the
// message is built in place.
func ExampleDecoder() {
	body := `event: message_start
data: {"type":"message_start","message":{"id":"msg_1","model":"claude-x","usage":{"input_tokens":12,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"read","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"path\":"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"\"a.txt\"}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}

event: message_stop
data: {"type":"message_stop"}

`
	d := provider.GetDecoder(provider.WireAnthropic, strings.NewReader(body), provider.Options{Provider: "anthropic"})
	defer provider.PutDecoder(d)
	for d.Next() {
		e := d.Event()
		if e.Type == llm.EventToolCallDelta {
			fmt.Printf("%s %q\n", e.Type, e.Delta)
		} else {
			fmt.Println(e.Type)
		}
	}
	m := d.Message()
	fmt.Println(string(m.Content[0].Arguments), m.StopReason, m.Usage.TotalTokens, string(d.RawStopReason()))
	// Output:
	// start
	// toolcall_start
	// toolcall_delta "{\"path\":"
	// toolcall_delta "\"a.txt\"}"
	// toolcall_end
	// done
	// {"path":"a.txt"} toolUse 21 tool_use
}

// A body cut mid-stream keeps what was decoded and reports ErrTruncated.
func ExampleDecoder_truncated() {
	body := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello\"}}]}\n\ndata: {\"choices\":[{\"ind"
	d := provider.NewDecoder(provider.WireOpenAIChat, strings.NewReader(body), provider.Options{})
	m, err := llm.Drain(d)
	fmt.Println(m.TextContent(), m.StopReason, err == provider.ErrTruncated)
	// Output: Hello error true
}

// The transport sends a request in the wire format of req.Model.API and
// returns the decoded stream.
func ExampleClient_Stream() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"model\":\"gpt-x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi!\"}}]}\n\n")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
		fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2}}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	c, _ := provider.NewClient()
	req := &llm.Request{
		Model:    llm.Model{ID: "gpt-x", API: "openai-completions", Provider: "local", BaseURL: srv.URL + "/v1"},
		Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "Say hi")},
		APIKey:   "test-key",
	}
	s, err := c.Stream(context.Background(), req)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	m, err := llm.Drain(s)
	fmt.Println(m.TextContent(), m.StopReason, m.Usage.TotalTokens, m.Model, err)
	// Output: Hi! stop 7 gpt-x <nil>
}

// The request body of each wire is available to re-encode.
func ExampleAppendRequestJSON() {
	req := &llm.Request{
		Model:         llm.Model{ID: "claude-x", API: "anthropic-messages"},
		System:        "You are terse. Today is Monday.",
		CacheBoundary: len("You are terse."),
		MaxTokens:     256,
		Messages:      []llm.Message{llm.TextMessage(llm.RoleUser, "hi")},
	}
	body, err := provider.AppendRequestJSON(nil, provider.WireAnthropic, req)
	fmt.Println(string(body), err)
	// Output: {"model":"claude-x","max_tokens":256,"stream":true,"system":[{"type":"text","text":"You are terse.","cache_control":{"type":"ephemeral"}},{"type":"text","text":" Today is Monday."}],"messages":[{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]}]} <nil>
}

// Pointing at a local OpenAI-compatible server (vLLM, llama.cpp, Ollama,
// LM Studio...): the model names its endpoint, the profile shows what
// detection made of it (max_tokens, no prompt_cache_key: not OpenAI's own
// host), and the request options go out under Chat Completions' names.
func Example_localServer() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var got struct {
			MaxTokens      int      `json:"max_tokens"`
			Stop           []string `json:"stop"`
			Seed           int      `json:"seed"`
			ResponseFormat struct {
				JSONSchema struct{ Name string } `json:"json_schema"`
			} `json:"response_format"`
		}
		_ = json.NewDecoder(r.Body).Decode(&got)
		fmt.Printf("server: %s max_tokens=%d schema=%s stop=%q seed=%d\n", r.URL.Path, got.MaxTokens, got.ResponseFormat.JSONSchema.Name, got.Stop, got.Seed)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"model\":\"qwen3\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"{\\\"sum\\\":4}\"}}]}\n\n")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":5}}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()

	model := llm.Model{ID: "qwen3", API: llm.APIOpenAICompletions, Provider: llm.ProviderOpenAICompatible, BaseURL: srv.URL + "/v1"}
	profile, err := provider.ProfileOf(&model)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(strings.Replace(profile.String(), srv.URL, "$SERVER", 1))

	c, _ := provider.NewClient()
	req := &llm.Request{
		Model:     model,
		Messages:  []llm.Message{llm.TextMessage(llm.RoleUser, "2+2? Answer as JSON.")},
		MaxTokens: 64,
		Options: llm.RequestOptions{
			ResponseFormat: &llm.ResponseFormat{Type: llm.ResponseJSONSchema, Name: "sum",
				Schema: []byte(`{"type":"object","properties":{"sum":{"type":"integer"}},"required":["sum"]}`)},
			Stop:      []string{"\n\n"},
			ExtraBody: []byte(`{"seed":42}`), // a field of this server's own
		},
	}
	s, err := c.Stream(context.Background(), req)
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := llm.Drain(s)
	s.Close()
	fmt.Println(m.TextContent(), m.StopReason, m.Usage.TotalTokens, err)

	// The same options on the Responses API: it has no stop sequences,
	// so the request is refused before anything is sent.
	req.Model.API = llm.APIOpenAIResponses
	_, err = c.Stream(context.Background(), req)
	fmt.Println(errors.Is(err, provider.ErrUnsupportedOption), err)
	// Output:
	// openai-chat $SERVER/v1/chat/completions: max_tokens, stream_options, no prompt_cache_key, repair openclaw, key $OPENAI_COMPATIBLE_API_KEY or $OPENAI_API_KEY
	// server: /v1/chat/completions max_tokens=64 schema=sum stop=["\n\n"] seed=42
	// {"sum":4} stop 14 <nil>
	// true provider: request option stop refused for openai-responses: the Responses API has no stop sequences
}

// A typo in the model's description fails before any request, saying
// what was meant.
func ExampleProfileOf_typo() {
	_, err := provider.ProfileOf(&llm.Model{ID: "gpt-x", API: "openai-completion"})
	fmt.Println(err)
	_, err = provider.ProfileOf(&llm.Model{ID: "gpt-x", API: llm.APIOpenAICompletions, Provider: "opneai"})
	fmt.Println(err)
	// Output:
	// llm: model api "openai-completion": is not one of openai-completions, openai-responses, anthropic-messages (did you mean "openai-completions"?)
	// llm: model provider "opneai": is not a provider id this module knows, but close to one (did you mean "openai"?)
}

// Detection reads the provider id and the base URL; a model's own Compat
// overrides it, here for a server that refuses stream_options and wants
// its key in LLAMA_KEY.
func ExampleCompatFor() {
	for _, m := range []llm.Model{
		{API: llm.APIOpenAICompletions},                                      // OpenAI's default endpoint
		{API: llm.APIOpenAICompletions, BaseURL: "http://localhost:8080/v1"}, // a local server
		{API: llm.APIOpenAICompletions, Provider: llm.ProviderOpenAI, BaseURL: "https://proxy.example/v1"},
		{API: llm.APIOpenAICompletions, BaseURL: "http://localhost:8080/v1", Compat: &llm.Compat{KeyEnv: "LLAMA_KEY"}},
	} {
		c := provider.CompatFor(&m)
		fmt.Printf("%s stream_options=%v prompt_cache_key=%v key=%q\n", c.MaxTokensField, c.StreamOptions, c.PromptCacheKey, c.KeyEnv)
	}
	// Output:
	// max_completion_tokens stream_options=true prompt_cache_key=true key=""
	// max_tokens stream_options=true prompt_cache_key=false key=""
	// max_completion_tokens stream_options=true prompt_cache_key=true key=""
	// max_tokens stream_options=false prompt_cache_key=false key="LLAMA_KEY"
}
