package peers

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	anthropicopt "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/ocbench/ocbench/gateway"
	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider/scripted"
)

// startGateway runs the gateway with cfg in front of a scripted upstream
// playing turns, both on loopback, and returns the gateway's base URL.
func startGateway(t *testing.T, cfg gateway.Config, turns ...scripted.Turn) string {
	t.Helper()
	if len(turns) == 0 {
		turns = []scripted.Turn{{Steps: []scripted.Step{scripted.Text("ok")}}}
	}
	s := &scripted.Script{Turns: turns}
	_, up, err := scripted.Start(scripted.Options{Script: s, Pick: scripted.Sequential(s)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Close() })
	cfg.Upstream = up.URL + "/v1"
	srv, err := gateway.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln, 5*time.Second) }()
	t.Cleanup(func() { cancel(); <-done })
	return "http://" + ln.Addr().String()
}

func openaiClient(base string) openai.Client {
	return openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey("sk-test"), option.WithMaxRetries(0))
}

func anthropicClient(base string) anthropic.Client {
	return anthropic.NewClient(anthropicopt.WithBaseURL(base), anthropicopt.WithAPIKey("sk-ant-test"), anthropicopt.WithMaxRetries(0))
}

var weatherTool = openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
	Name: "get_weather", Parameters: openai.FunctionParameters{"type": "object"}})

// failingTurns are the bad days of the drop-in issue: an in-band error
// after some text, a body cut inside a tool call's arguments, a stall
// past the idle timeout.
var failingTurns = []struct {
	name   string
	turn   scripted.Turn
	status int
	typ    string // Anthropic error type kept
}{
	{"in-band error", scripted.Turn{Steps: []scripted.Step{scripted.Text("Partial"), scripted.InBandError("overloaded_error", "Overloaded")}}, 529, "overloaded_error"},
	{"cut in tool call", scripted.Turn{Steps: []scripted.Step{scripted.Text("Checking."),
		{Kind: scripted.StepTools, Calls: []scripted.Call{{ID: "call_1", Name: "get_weather", Args: `{"city":"Paris"}`, Cut: 6}}}}}, 502, "api_error"},
	{"stall", scripted.Turn{Steps: []scripted.Step{scripted.Text("hello"), scripted.Stall(5 * time.Second), scripted.Text("late")}}, 504, "timeout_error"},
}

// Non-streaming requests whose upstream stream fails give the SDK's
// error, never a message.
func TestOpenAINonStreamingFailuresAreErrors(t *testing.T) {
	for _, tc := range failingTurns {
		t.Run(tc.name, func(t *testing.T) {
			base := startGateway(t, gateway.Config{IdleTimeout: 200 * time.Millisecond}, tc.turn)
			c := openaiClient(base)
			msg, err := c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
				Model:    "scripted-1",
				Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("weather in Paris?")},
				Tools:    []openai.ChatCompletionToolUnionParam{weatherTool},
			})
			var apiErr *openai.Error
			if !errors.As(err, &apiErr) {
				t.Fatalf("got a message %+v, err %v; want an *openai.Error", msg, err)
			}
			if apiErr.StatusCode != tc.status {
				t.Errorf("status %d, want %d (%s)", apiErr.StatusCode, tc.status, apiErr.RawJSON())
			}
		})
	}
}

func TestAnthropicNonStreamingFailuresAreErrors(t *testing.T) {
	for _, tc := range failingTurns {
		t.Run(tc.name, func(t *testing.T) {
			base := startGateway(t, gateway.Config{IdleTimeout: 200 * time.Millisecond}, tc.turn)
			c := anthropicClient(base)
			msg, err := c.Messages.New(context.Background(), anthropic.MessageNewParams{
				Model: "scripted-1", MaxTokens: 256,
				Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("weather in Paris?"))},
				Tools: []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{Name: "get_weather",
					InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"city": map[string]any{"type": "string"}}}}}},
			})
			var apiErr *anthropic.Error
			if !errors.As(err, &apiErr) {
				t.Fatalf("got a message %+v, err %v; want an *anthropic.Error", msg, err)
			}
			if apiErr.StatusCode != tc.status || !strings.Contains(apiErr.RawJSON(), `"type":"`+tc.typ+`"`) {
				t.Errorf("status %d, want %d with type %s: %s", apiErr.StatusCode, tc.status, tc.typ, apiErr.RawJSON())
			}
		})
	}
}

// The same failures streamed end in the SDK's stream error.
func TestStreamingFailuresAreErrors(t *testing.T) {
	for _, tc := range failingTurns {
		t.Run(tc.name, func(t *testing.T) {
			base := startGateway(t, gateway.Config{IdleTimeout: 200 * time.Millisecond}, tc.turn, tc.turn)
			oc := openaiClient(base)
			st := oc.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
				Model:    "scripted-1",
				Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("weather in Paris?")},
				Tools:    []openai.ChatCompletionToolUnionParam{weatherTool},
			})
			var acc openai.ChatCompletionAccumulator
			for st.Next() {
				acc.AddChunk(st.Current())
			}
			if st.Err() == nil {
				t.Errorf("openai stream ended without error: %+v", acc.Choices)
			}
			for _, ch := range acc.Choices {
				for _, tcall := range ch.Message.ToolCalls {
					t.Errorf("a cut-off tool call reached the client: %+v", tcall)
				}
			}
			ac := anthropicClient(base)
			ast := ac.Messages.NewStreaming(context.Background(), anthropic.MessageNewParams{
				Model: "scripted-1", MaxTokens: 256,
				Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("weather?"))},
			})
			var msg anthropic.Message
			for ast.Next() {
				msg.Accumulate(ast.Current())
			}
			if ast.Err() == nil {
				t.Errorf("anthropic stream ended without error: %+v", msg)
			}
		})
	}
}

// The Responses API through the gateway, streamed and not, with a tool
// call the chain repairs (padded name, trailing comma, 3-byte fragments).
func TestResponsesClientThroughProxy(t *testing.T) {
	turn := scripted.Turn{Steps: []scripted.Step{
		scripted.Text("Checking."),
		scripted.ToolCall("call_1", " get_weather ", `{"city": "Paris", "unit": "celsius",}`).Chunked(3),
	}}
	base := startGateway(t, gateway.Config{}, turn, turn)
	c := openaiClient(base)
	params := responses.ResponseNewParams{
		Model: "scripted-1",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("weather in Paris?")},
		Tools: []responses.ToolUnionParam{{OfFunction: &responses.FunctionToolParam{Name: "get_weather", Parameters: map[string]any{"type": "object"}}}},
	}
	resp, err := c.Responses.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, item := range resp.Output {
		if item.Type == "function_call" {
			found = true
			checkArgs(t, item.Name, item.Arguments.OfString)
		}
	}
	if !found || resp.Status != "completed" {
		t.Errorf("non-streamed response %s", resp.RawJSON())
	}

	st := c.Responses.NewStreaming(context.Background(), params)
	var done *responses.ResponseFunctionToolCall
	var completed bool
	for st.Next() {
		ev := st.Current()
		switch ev.Type {
		case "response.output_item.done":
			if ev.Item.Type == "function_call" {
				fc := ev.Item.AsFunctionCall()
				done = &fc
			}
		case "response.completed":
			completed = true
		}
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	if done == nil || !completed {
		t.Fatalf("stream: call %v completed %v", done, completed)
	}
	checkArgs(t, done.Name, done.Arguments)
}

// count_tokens through the official Anthropic client, counted with the
// project's tokenizer.
func TestCountTokensWithSDK(t *testing.T) {
	base := startGateway(t, gateway.Config{})
	c := anthropicClient(base)
	short, err := c.Messages.CountTokens(context.Background(), anthropic.MessageCountTokensParams{
		Model:    "claude-sonnet-4-5",
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hello"))},
	})
	if err != nil {
		t.Fatal(err)
	}
	long, err := c.Messages.CountTokens(context.Background(), anthropic.MessageCountTokensParams{
		Model:    "claude-sonnet-4-5",
		System:   anthropic.MessageCountTokensParamsSystemUnion{OfString: anthropic.String(strings.Repeat("You are a careful assistant. ", 20))},
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hello"))},
	})
	if err != nil {
		t.Fatal(err)
	}
	if short.InputTokens <= 0 || long.InputTokens < short.InputTokens+100 {
		t.Errorf("counts %d and %d", short.InputTokens, long.InputTokens)
	}
}

// GET /v1/models/{id} through the OpenAI client.
func TestModelsGetWithSDK(t *testing.T) {
	base := startGateway(t, gateway.Config{Models: []string{"scripted-1"}})
	c := openaiClient(base)
	m, err := c.Models.Get(context.Background(), "scripted-1")
	if err != nil || m.ID != "scripted-1" {
		t.Fatalf("model %+v, %v", m, err)
	}
	_, err = c.Models.Get(context.Background(), "nope")
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 404 {
		t.Errorf("unknown model: %v", err)
	}
}

// Usage as the SDK sees it: present when the upstream reported it and the
// client asked; absent from a stream that did not ask.
func TestUsageWithSDK(t *testing.T) {
	turn := scripted.Turn{Usage: llm.Usage{Input: 1200, CacheRead: 300, Output: 42}, Steps: []scripted.Step{scripted.Text("hi")}}
	base := startGateway(t, gateway.Config{}, turn, turn, turn)
	c := openaiClient(base)
	params := openai.ChatCompletionNewParams{Model: "scripted-1", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}}
	resp, err := c.Chat.Completions.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Usage.PromptTokens != 1500 || resp.Usage.CompletionTokens != 42 || resp.Usage.PromptTokensDetails.CachedTokens != 300 {
		t.Errorf("non-streaming usage %+v", resp.Usage)
	}
	st := c.Chat.Completions.NewStreaming(context.Background(), params)
	for st.Next() {
		if st.Current().JSON.Usage.Valid() {
			t.Errorf("usage in a stream that did not ask: %s", st.Current().RawJSON())
		}
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	st = c.Chat.Completions.NewStreaming(context.Background(), params)
	var got int64
	for st.Next() {
		if ch := st.Current(); ch.JSON.Usage.Valid() {
			got = ch.Usage.CompletionTokens
		}
	}
	if err := st.Err(); err != nil || got != 42 {
		t.Errorf("asked-for usage: completion tokens %d, %v", got, err)
	}
}
