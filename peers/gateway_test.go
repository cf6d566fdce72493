package peers

import (
	"context"
	"encoding/json"
	"net"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	anthropicopt "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/ocbench/ocbench/gateway"
	"github.com/ocbench/ocbench/provider/scripted"
)

// startProxy runs the gateway in front of a scripted upstream that sends a
// malformed tool call: a padded name and arguments with a trailing comma,
// in 3-byte fragments.
func startProxy(t *testing.T) string {
	t.Helper()
	s := &scripted.Script{Turns: []scripted.Turn{{Steps: []scripted.Step{
		scripted.Text("Checking."),
		scripted.ToolCall("call_1", " get_weather ", `{"city": "Paris", "unit": "celsius",}`).Chunked(3),
	}}}}
	_, up, err := scripted.Start(scripted.Options{Script: s})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Close() })
	srv, err := gateway.New(gateway.Config{Upstream: up.URL})
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

func checkArgs(t *testing.T, name, args string) {
	t.Helper()
	var v struct{ City, Unit string }
	if err := json.Unmarshal([]byte(args), &v); err != nil {
		t.Fatalf("arguments %q do not parse: %v", args, err)
	}
	if name != "get_weather" || v.City != "Paris" || v.Unit != "celsius" {
		t.Errorf("tool call %q %+v", name, v)
	}
}

// The official OpenAI client streams through the proxy and gets a clean,
// parseable tool call.
func TestOpenAIClientThroughProxy(t *testing.T) {
	base := startProxy(t)
	client := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey("sk-test"), option.WithMaxRetries(0))
	st := client.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Model:    "scripted-1",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("weather in Paris?")},
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
			Name: "get_weather", Parameters: openai.FunctionParameters{"type": "object"}})},
	})
	var acc openai.ChatCompletionAccumulator
	for st.Next() {
		acc.AddChunk(st.Current())
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	if len(acc.Choices) != 1 || len(acc.Choices[0].Message.ToolCalls) != 1 {
		t.Fatalf("accumulated %+v", acc.Choices)
	}
	tc := acc.Choices[0].Message.ToolCalls[0]
	checkArgs(t, tc.Function.Name, tc.Function.Arguments)
	if acc.Choices[0].FinishReason != "tool_calls" {
		t.Errorf("finish reason %q", acc.Choices[0].FinishReason)
	}
}

// Likewise the official Anthropic client.
func TestAnthropicClientThroughProxy(t *testing.T) {
	base := startProxy(t)
	client := anthropic.NewClient(anthropicopt.WithBaseURL(base), anthropicopt.WithAPIKey("sk-ant-test"), anthropicopt.WithMaxRetries(0))
	st := client.Messages.NewStreaming(context.Background(), anthropic.MessageNewParams{
		Model: "scripted-1", MaxTokens: 256,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("weather in Paris?"))},
		Tools: []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{Name: "get_weather",
			InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"city": map[string]any{"type": "string"}}}}}},
	})
	var msg anthropic.Message
	for st.Next() {
		if err := msg.Accumulate(st.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, b := range msg.Content {
		if b.Type == "tool_use" {
			found = true
			checkArgs(t, b.Name, string(b.Input))
		}
	}
	if !found || msg.StopReason != "tool_use" {
		t.Errorf("message %+v", msg)
	}
}
