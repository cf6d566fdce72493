package provider

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/llm"
)

func withKey(c Compat, env string) Compat {
	c.KeyEnv = env
	return c
}

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
		{"https://openrouter.ai/api/v1", "", withKey(CompatGeneric, "OPENROUTER_API_KEY")},
		{"https://openrouter.ai/api/v1", "openrouter", CompatGeneric},
		{"https://api.openai.com/v1", "", withKey(CompatOpenAI, "OPENAI_API_KEY")},
		{"http://localhost:11434/v1", "", CompatGeneric},
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

// A model's own Compat wins over SetCompat and detection; an empty
// MaxTokensField in it keeps the detected one.
func TestModelCompatWins(t *testing.T) {
	SetCompat("http://127.0.0.3:9/v1", Compat{MaxTokensField: llm.MaxCompletionTokens, PromptCacheKey: true})
	m := llm.Model{ID: "m", API: llm.APIOpenAICompletions, BaseURL: "http://127.0.0.3:9/v1", Compat: &llm.Compat{StreamOptions: false}}
	if got := CompatFor(&m); got != (Compat{MaxTokensField: llm.MaxTokensName}) {
		t.Errorf("model compat: %+v", got)
	}
	req := &llm.Request{Model: m, MaxTokens: 5, SessionID: "s", Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "hi")}}
	body := mustEncode(t, WireOpenAIChat, req)
	if !strings.Contains(body, `"max_tokens":5`) || strings.Contains(body, "stream_options") || strings.Contains(body, "prompt_cache_key") {
		t.Errorf("body %s", body)
	}
	m.Compat = nil
	if got := CompatFor(&m); got.MaxTokensField != llm.MaxCompletionTokens || !got.PromptCacheKey {
		t.Errorf("SetCompat: %+v", got)
	}
	// The chain reads the repair override from the model only, so the
	// endpoint registry keeps OpenClaw's gate (and the profile says so).
	SetCompat("http://127.0.0.4:9/v1", Compat{RepairToolCallArgs: llm.RepairNever})
	if got := CompatFor(&llm.Model{BaseURL: "http://127.0.0.4:9/v1"}); got.RepairToolCallArgs != llm.RepairAsOpenClaw {
		t.Errorf("SetCompat kept a repair override: %+v", got)
	}
}

// The profile says what the transport will do, and a typo fails there,
// before any request.
func TestProfileOf(t *testing.T) {
	for _, tc := range []struct {
		m    llm.Model
		want string
	}{
		{llm.Model{ID: "m", API: llm.APIOpenAICompletions, Provider: "local", BaseURL: "http://127.0.0.1:8000/v1"},
			"openai-chat http://127.0.0.1:8000/v1/chat/completions: max_tokens, stream_options, no prompt_cache_key, repair openclaw, key $LOCAL_API_KEY or $OPENAI_API_KEY"},
		{llm.Model{ID: "m", API: llm.APIOpenAICompletions},
			"openai-chat https://api.openai.com/v1/chat/completions: max_completion_tokens, stream_options, prompt_cache_key, repair openclaw, key $OPENAI_API_KEY"},
		{llm.Model{ID: "m", API: llm.APIOpenAICompletions, BaseURL: "https://openrouter.ai/api/v1"},
			"openai-chat https://openrouter.ai/api/v1/chat/completions: max_tokens, stream_options, no prompt_cache_key, repair openclaw, key $OPENROUTER_API_KEY"},
		{llm.Model{ID: "k", API: llm.APIAnthropicMessages, Provider: llm.ProviderKimi, BaseURL: "https://api.moonshot.ai/anthropic"},
			"anthropic https://api.moonshot.ai/anthropic/v1/messages: repair openclaw, key $KIMI_API_KEY or $ANTHROPIC_API_KEY"},
		{llm.Model{ID: "r", API: llm.APIOpenAIResponses, Compat: &llm.Compat{KeyEnv: "MY_KEY", RepairToolCallArgs: llm.RepairNever}},
			"openai-responses https://api.openai.com/v1/responses: repair never, key $MY_KEY"},
	} {
		p, err := ProfileOf(&tc.m)
		if err != nil || p.String() != tc.want {
			t.Errorf("%+v:\n got %v %q\nwant %q", tc.m, err, p.String(), tc.want)
		}
	}
	for _, m := range []llm.Model{
		{ID: "m", API: "openai-completion"},
		{ID: "m"},
		{ID: "m", API: llm.APIOpenAICompletions, Provider: "opneai"},
		{ID: "m", API: llm.APIOpenAICompletions, BaseURL: "127.0.0.1:8000/v1"},
		{ID: "m", API: llm.APIOpenAICompletions, Compat: &llm.Compat{MaxTokensField: "max_token"}},
	} {
		var me *llm.ModelError
		if _, err := ProfileOf(&m); !errors.As(err, &me) {
			t.Errorf("%+v: %v", m, err)
		}
	}
}

// The key is read from the profile's variables, in order; a model that
// names no provider on a known host never falls back to another service's
// variable.
func TestClientKeyVariables(t *testing.T) {
	env := map[string]string{"OPENAI_API_KEY": "sk-openai", "LOCAL_API_KEY": "sk-local", "MY_KEY": "sk-mine"}
	c, _ := NewClient(WithGetenv(func(k string) string { return env[k] }))
	for _, tc := range []struct {
		m    llm.Model
		want string
	}{
		{llm.Model{API: llm.APIOpenAICompletions, Provider: "local", BaseURL: "http://127.0.0.1:1/v1"}, "sk-local"},
		{llm.Model{API: llm.APIOpenAICompletions, Provider: "other", BaseURL: "http://127.0.0.1:1/v1"}, "sk-openai"},
		{llm.Model{API: llm.APIOpenAICompletions, BaseURL: "https://openrouter.ai/api/v1"}, ""},
		{llm.Model{API: llm.APIOpenAICompletions, Provider: "local", Compat: &llm.Compat{KeyEnv: "MY_KEY"}}, "sk-mine"},
		{llm.Model{API: llm.APIAnthropicMessages}, ""},
	} {
		w, _ := WireOf(tc.m.API)
		if got := c.apiKey(w, &llm.Request{Model: tc.m}); got != tc.want {
			t.Errorf("%+v: key %q, want %q", tc.m, got, tc.want)
		}
	}
}

// hostOf agrees with net/url on base URLs.
func TestHostOf(t *testing.T) {
	for _, u := range []string{
		"https://api.openai.com/v1", "http://127.0.0.1:8000/v1", "https://user:pw@Api.OpenAI.com:443/v1?x=1", "http://[::1]:9/v1",
		"https://myres.openai.azure.com", "http://localhost", "https://openrouter.ai/api/v1#frag", "api.openai.com/v1", "", "http://",
	} {
		want := ""
		if p, err := url.Parse(u); err == nil {
			want = p.Hostname()
		}
		if got := hostOf(u); got != want {
			t.Errorf("hostOf(%q) = %q, net/url %q", u, got, want)
		}
	}
}

// FuzzHostOf: for every base URL Model.Validate accepts (net/url parses it,
// http or https, with a host), hostOf reads the host net/url reads.
func FuzzHostOf(f *testing.F) {
	for _, s := range []string{"https://api.openai.com/v1", "http://[::1]:9/v1", "https://u:p@h:1/x?y#z", "http://a@b@c/", "http://h/p:q", "http://h?x=/y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := hostOf(s)
		u, err := url.Parse(s)
		if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
			return
		}
		if want := u.Hostname(); got != want {
			t.Fatalf("hostOf(%q) = %q, net/url %q", s, got, want)
		}
	})
}
