package llm

import (
	"errors"
	"strings"
	"testing"
)

func TestParseAPI(t *testing.T) {
	for _, a := range APIs {
		if got, err := ParseAPI(string(a)); got != a || err != nil {
			t.Errorf("%s: %v %v", a, got, err)
		}
	}
	for in, suggest := range map[string]string{
		"openai-completion": "openai-completions", "openai-chat": "openai-completions", "anthropic": "anthropic-messages",
		"responses": "openai-responses", "openai-respones": "openai-responses", "anthropic-mesages": "anthropic-messages",
		"google-gemini": "", "": "",
	} {
		_, err := ParseAPI(in)
		var me *ModelError
		if !errors.Is(err, ErrUnknownAPI) || !errors.As(err, &me) || me.Suggest != suggest || me.Field != "api" {
			t.Errorf("%q: %v (suggest %q)", in, err, suggest)
		}
	}
}

func TestParseProvider(t *testing.T) {
	for _, ok := range []string{"", "openai", "anthropic", "kimi", "kimi-coding", "openai-codex", "openrouter", "local", "my.vllm_1", "OpenAI", "xai", "ollama", "amazon-bedrock"} {
		if _, err := ParseProvider(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for in, suggest := range map[string]string{
		"opneai": "openai", "antropic": "anthropic", "anthropics": "anthropic", "kimj": "kimi",
		"openai-compatable": "openai-compatible", "scriptd": "scripted",
		"open ai": "", "openai/gpt": "", strings.Repeat("a", 129): "",
	} {
		_, err := ParseProvider(in)
		var me *ModelError
		if !errors.Is(err, ErrInvalidModel) || !errors.As(err, &me) || me.Suggest != suggest {
			t.Errorf("%q: %v (want suggestion %q)", in, err, suggest)
		}
	}
}

func TestModelValidate(t *testing.T) {
	good := []Model{
		{},
		{ID: "gpt-x", API: APIOpenAICompletions, Provider: ProviderOpenAICompatible, BaseURL: "http://127.0.0.1:8000/v1"},
		{ID: "c", API: APIAnthropicMessages, Compat: &Compat{MaxTokensField: MaxTokensName, KeyEnv: "MY_KEY_2", RepairToolCallArgs: RepairAlways}},
	}
	for _, m := range good {
		if err := m.Validate(); err != nil {
			t.Errorf("%+v: %v", m, err)
		}
	}
	for field, m := range map[string]Model{
		"api":                       {API: "openai"},
		"provider":                  {Provider: "opneai"},
		"baseUrl":                   {BaseURL: "localhost:8000/v1"},
		"limits":                    {MaxTokens: -1},
		"compat.maxTokensField":     {Compat: &Compat{MaxTokensField: "max_completion_token"}},
		"compat.repairToolCallArgs": {Compat: &Compat{RepairToolCallArgs: 3}},
		"compat.keyEnv":             {Compat: &Compat{KeyEnv: "1KEY"}},
	} {
		err := m.Validate()
		var me *ModelError
		if !errors.As(err, &me) || me.Field != field {
			t.Errorf("%s: %v", field, err)
		}
	}
	err := (&Model{Provider: "antropic"}).Validate()
	if want := `llm: model provider "antropic": is not a provider id this module knows, but close to one (did you mean "anthropic"?)`; err == nil || err.Error() != want {
		t.Errorf("message %v", err)
	}
}
