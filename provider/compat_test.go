package provider

import (
	"strings"
	"testing"

	"github.com/ocbench/ocbench/llm"
)

func TestDetectCompat(t *testing.T) {
	for _, tc := range []struct {
		base, provider string
		want           Compat
	}{
		{"", "", CompatOpenAI},
		{"", "openai", CompatOpenAI},
		{"https://api.openai.com/v1", "openai-compatible", CompatOpenAI},
		{"https://myres.openai.azure.com/openai/v1", "", CompatOpenAI},
		{"http://127.0.0.1:8000/v1", "openai", CompatOpenAI},
		{"http://127.0.0.1:8000/v1", "openai-compatible", CompatGeneric},
		{"https://openrouter.ai/api/v1", "", CompatGeneric},
		{"", "xai", CompatGeneric},
	} {
		if got := DetectCompat(tc.base, tc.provider); got != tc.want {
			t.Errorf("DetectCompat(%q, %q) = %+v, want %+v", tc.base, tc.provider, got, tc.want)
		}
	}
}

// The chat body follows the endpoint's Compat: max_tokens and no
// prompt_cache_key on a generic server, OpenAI's names on OpenAI, and an
// override wins over detection.
func TestChatRequestFollowsCompat(t *testing.T) {
	req := &llm.Request{Model: llm.Model{ID: "m", Provider: "openai-compatible", BaseURL: "http://127.0.0.1:9/v1"},
		MaxTokens: 100, SessionID: "s1", Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "hi")}}
	body := mustEncode(t, WireOpenAIChat, req)
	if !strings.Contains(body, `"max_tokens":100`) || strings.Contains(body, "prompt_cache_key") || !strings.Contains(body, `"stream_options"`) {
		t.Errorf("generic: %s", body)
	}
	req.Model.BaseURL = "https://api.openai.com/v1"
	body = mustEncode(t, WireOpenAIChat, req)
	if !strings.Contains(body, `"max_completion_tokens":100`) || !strings.Contains(body, `"prompt_cache_key":"s1"`) {
		t.Errorf("openai: %s", body)
	}
	SetCompat("http://127.0.0.2:9/v1/", Compat{MaxTokensField: "max_completion_tokens"})
	req.Model.BaseURL = "http://127.0.0.2:9/v1"
	body = mustEncode(t, WireOpenAIChat, req)
	if !strings.Contains(body, `"max_completion_tokens":100`) || strings.Contains(body, "stream_options") {
		t.Errorf("override: %s", body)
	}
}

// Earlier assistant messages in a Responses input carry an id.
func TestResponsesAssistantItemsHaveIDs(t *testing.T) {
	req := &llm.Request{Model: llm.Model{ID: "m"}, Messages: []llm.Message{
		llm.TextMessage(llm.RoleUser, "hi"), llm.TextMessage(llm.RoleAssistant, "hello"), llm.TextMessage(llm.RoleUser, "again")}}
	body := mustEncode(t, WireOpenAIResponses, req)
	if !strings.Contains(body, `{"type":"message","role":"assistant","id":"msg_1","status":"completed"`) {
		t.Errorf("%s", body)
	}
}
