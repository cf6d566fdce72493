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
	for _, ok := range []string{"", "openai", "anthropic", "kimi", "kimi-coding", "openai-codex", "openrouter", "local", "my.vllm_1", "MyServer", "xai", "ollama", "amazon-bedrock"} {
		if _, err := ParseProvider(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for in, suggest := range map[string]string{
		"opneai": "openai", "antropic": "anthropic", "OpenAI": "openai", "KIMI": "kimi", "anthropics": "anthropic", "kimj": "kimi",
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

// FuzzModelNames: ParseAPI, ParseProvider and Validate never panic; what
// they accept is well-formed, what they refuse is a typed *ModelError,
// and a suggestion is always a known value.
func FuzzModelNames(f *testing.F) {
	for _, s := range []string{"openai", "opneai", "openai-completions", "anthropic-mesages", "kimi-coding", "a b", "", "\xff", "OPENAI"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, api, prov string) {
		check := func(err error, known []string) {
			if err == nil {
				return
			}
			var me *ModelError
			if !errors.As(err, &me) || me.Err == nil || !errors.Is(err, me.Err) {
				t.Fatalf("untyped refusal %v", err)
			}
			if me.Suggest != "" && !slicesContains(known, me.Suggest) {
				t.Fatalf("suggested %q, not a known value", me.Suggest)
			}
		}
		a, err := ParseAPI(api)
		if err == nil && (!a.Known() || string(a) != api) {
			t.Fatalf("ParseAPI(%q) = %q", api, a)
		}
		check(err, []string{string(APIOpenAICompletions), string(APIOpenAIResponses), string(APIAnthropicMessages)})
		p, err := ParseProvider(prov)
		if err == nil {
			if p != prov || len(p) > 128 || strings.Trim(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != "" {
				t.Fatalf("ParseProvider(%q) = %q", prov, p)
			}
		}
		var known []string
		for _, k := range Providers {
			known = append(known, k)
		}
		check(err, known)
		m := Model{API: API(api), Provider: prov, BaseURL: prov}
		check(m.Validate(), append(known, string(APIOpenAICompletions), string(APIOpenAIResponses), string(APIAnthropicMessages)))
		if d1, d2 := editDistance(api, prov), editDistance(prov, api); d1 != d2 {
			t.Fatalf("distance not symmetric: %d %d", d1, d2)
		}
	})
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
