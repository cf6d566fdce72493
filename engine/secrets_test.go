package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider/scripted"
)

// testKey has characters that JSON escapes, so that both its raw and its
// escaped forms must be caught.
const testKey = `live-key<"0123456789>`

// secretForms are the ways testKey could be written to a file or output.
func secretForms(key string) []string {
	esc, _ := json.Marshal(key)
	var plain bytes.Buffer
	enc := json.NewEncoder(&plain)
	enc.SetEscapeHTML(false)
	enc.Encode(key)
	return []string{key, strings.Trim(string(esc), `"`), strings.Trim(strings.TrimSpace(plain.String()), `"`), "0123456789"}
}

// eventText renders everything an OnEvent callback can read of e.
func eventText(e *Event) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s %s", e.Kind, e.Text, e.ToolName, e.Args)
	if e.Err != nil {
		b.WriteString(" err=" + e.Err.Error())
	}
	if e.Message != nil {
		b.Write(e.Message.AppendJSON(nil))
	}
	if e.Result != nil {
		b.Write(e.Result.AppendJSON(nil))
	}
	if e.Compaction != nil {
		b.WriteString(e.Compaction.Reason + e.Compaction.Summary)
	}
	return b.String()
}

func assertNoSecret(t *testing.T, where, text string, key string) {
	t.Helper()
	for _, f := range secretForms(key) {
		if strings.Contains(text, f) {
			t.Errorf("%s holds the secret (%q): %.300s", where, f, text)
			return
		}
	}
}

// TestUpstreamEchoingTheKeyIsRedacted: an upstream that puts the key in
// its errors (a refusal, a rate limit that is retried, an in-band error)
// must not get it into the returned error, the Result, the events or the
// session file.
func TestUpstreamEchoingTheKeyIsRedacted(t *testing.T) {
	cases := map[string][]scripted.Turn{
		"refusal": {{HTTPError: &scripted.HTTPError{Status: 401, Type: "authentication_error", Message: "invalid x-api-key " + testKey}}},
		"retried 429 then in-band error": {
			{HTTPError: &scripted.HTTPError{Status: 429, RetryAfter: time.Millisecond, Type: "rate_limit_error", Message: "slow down, " + testKey}},
			{Steps: []scripted.Step{scripted.Text("partial"), scripted.InBandError("api_error", "upstream failed for key "+testKey)}},
		},
	}
	for name, turns := range cases {
		forEachWire(t, func(t *testing.T, api llm.API) {
			t.Run(name, func(t *testing.T) {
				n := 0
				pick := func(req *llm.Request) (*scripted.Script, *scripted.Turn) {
					s := &scripted.Script{Turns: turns}
					i := min(n, len(turns)-1)
					n++
					return s, &s.Turns[i]
				}
				e := startE2E(t, api, scripted.Options{Pick: pick})
				p := e.params("hello")
				p.APIKey = testKey
				p.MaxRetryWait = time.Second
				var events strings.Builder
				p.OnEvent = func(ev *Event) { events.WriteString(eventText(ev) + "\n") }
				res, err := Run(context.Background(), p)
				if err == nil {
					t.Fatal("the run succeeded")
				}
				assertNoSecret(t, "the error", err.Error(), testKey)
				if res.Final == nil || !strings.Contains(res.Final.ErrorMessage, "[REDACTED]") {
					t.Errorf("final message %+v", res.Final)
				} else {
					assertNoSecret(t, "Result.Final", string(res.Final.AppendJSON(nil)), testKey)
				}
				assertNoSecret(t, "Result.Notes", strings.Join(res.Notes, "\n"), testKey)
				assertNoSecret(t, "the events", events.String(), testKey)
				data, _ := os.ReadFile(e.session)
				if len(data) == 0 {
					t.Fatal("no session file")
				}
				assertNoSecret(t, "the session file", string(data), testKey)
			})
		})
	}
}

// TestToolOutputWithSecretsIsRedacted: a tool whose output carries a
// configured key, a key from the environment or a key-shaped token: the
// model, the transcript and the events see [REDACTED].
func TestToolOutputWithSecretsIsRedacted(t *testing.T) {
	const envKey = "env-secret-value-42"
	t.Setenv("OCBENCH_TEST_SERVICE_TOKEN", envKey)
	leak := MustNewSchemaTool("leak", "prints secrets", []byte(`{"type":"object"}`), func(context.Context, []byte) (ToolOutput, error) {
		return ToolOutput{Text: "config: key=" + testKey + " token=" + envKey + " other=sk-proj-abcdefghijklmnopqrstuvwx"}, nil
	})
	e := newRunEnv(t,
		fakeTurn{msg: assistantCalls([3]string{"c1", "leak", `{}`})},
		fakeTurn{msg: assistantText("done")},
	)
	p := e.params("go")
	p.APIKey = testKey
	p.Tools = []*Tool{leak}
	var events strings.Builder
	p.OnEvent = func(ev *Event) { events.WriteString(eventText(ev) + "\n") }
	if _, err := Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(e.session)
	for _, s := range []string{testKey, envKey} {
		assertNoSecret(t, "the session file", string(data), s)
		assertNoSecret(t, "the events", events.String(), s)
	}
	if strings.Contains(string(data), "sk-proj-") {
		t.Error("a key-shaped token reached the session file")
	}
	var sent strings.Builder
	for _, m := range e.fp.reqs[len(e.fp.reqs)-1] {
		sent.Write(m.AppendJSON(nil))
	}
	assertNoSecret(t, "the next request", sent.String(), testKey)
	if !strings.Contains(sent.String(), "[REDACTED]") {
		t.Errorf("the tool result sent to the model: %s", sent.String())
	}
}

// TestExecEnvironmentScrubbed: exec commands do not inherit API keys or
// other secret variables unless allowed by name.
func TestExecEnvironmentScrubbed(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-test-openai-key-value")
	t.Setenv("ANTHROPIC_API_KEY", "anthropic-key-value-123")
	t.Setenv("OCBENCH_DB_PASSWORD", "hunter2hunter2")
	t.Setenv("OCBENCH_VISIBLE", "plain-value")
	t.Setenv("OCBENCH_ALLOWED_TOKEN", "allowed-token-value")
	ws, _ := newTestWorkspace(t)
	reg := builtinRegistry(t, ws, BuiltinOptions{Exec: true, ExecEnvAllow: []string{"OCBENCH_ALLOWED_TOKEN"}})
	res := reg.Call(context.Background(), "exec", []byte(`{"command":"env"}`))
	if res.IsError {
		t.Fatal(res.Text)
	}
	for _, name := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OCBENCH_DB_PASSWORD"} {
		if strings.Contains(res.Text, name+"=") {
			t.Errorf("exec inherited %s", name)
		}
	}
	for _, kv := range []string{"OCBENCH_VISIBLE=plain-value", "OCBENCH_ALLOWED_TOKEN=allowed-token-value", "PATH="} {
		if !strings.Contains(res.Text, kv) {
			t.Errorf("exec lost %s", kv)
		}
	}
}

// TestEnvironmentSecretsFollowTheEnvironment: the environment's secrets
// are remembered between runs only while the environment is unchanged: a
// variable set, changed or removed after a run counts from the next one.
func TestEnvironmentSecretsFollowTheEnvironment(t *testing.T) {
	const name = "OCBENCH_TEST_ROTATING_TOKEN"
	echo := func(value string) string {
		t.Helper()
		e := newRunEnv(t, fakeTurn{msg: assistantText("the value is " + value)})
		res, err := Run(context.Background(), e.params("go")) // no APIKey: the environment's redactor alone
		if err != nil {
			t.Fatal(err)
		}
		return res.FinalText()
	}
	if got := echo("first-token-value-1"); !strings.Contains(got, "first-token-value-1") {
		t.Fatalf("redacted before the variable was set: %q", got)
	}
	t.Setenv(name, "first-token-value-1")
	if got := echo("first-token-value-1"); strings.Contains(got, "first-token-value-1") {
		t.Fatalf("set: %q", got)
	}
	t.Setenv(name, "second-token-value-2")
	if got := echo("second-token-value-2"); strings.Contains(got, "second-token-value-2") {
		t.Fatalf("changed: %q", got)
	}
	os.Unsetenv(name)
	if got := echo("second-token-value-2"); !strings.Contains(got, "second-token-value-2") {
		t.Fatalf("still redacted after the variable was removed: %q", got)
	}
}

// TestToolCallArgumentsWithSecretsAreRedacted: a key in a tool call's
// arguments is redacted in the final arguments and in the streamed text,
// whether the two are the same bytes (no repair: redacted once) or not.
func TestToolCallArgumentsWithSecretsAreRedacted(t *testing.T) {
	for _, raw := range []string{"same", "different"} {
		t.Run(raw, func(t *testing.T) {
			args := `{"path":"` + testKey + `"}`
			msg := assistantCalls([3]string{"c1", "ls", args})
			msg.Content[0].RawArgs = []byte(args)
			if raw == "different" {
				msg.Content[0].RawArgs = []byte(`{"path": "` + testKey + `"}`)
			}
			e := newRunEnv(t, fakeTurn{msg: msg}, fakeTurn{msg: assistantText("done")})
			p := e.params("go")
			p.APIKey = testKey
			res, err := Run(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			b := res.NewMessages[1].Content[0]
			for _, f := range [][]byte{b.Arguments, b.RawArgs} {
				if strings.Contains(string(f), testKey) || !strings.Contains(string(f), "[REDACTED]") {
					t.Fatalf("arguments %q, streamed %q", b.Arguments, b.RawArgs)
				}
			}
			if len(b.Arguments) > 0 && len(b.RawArgs) > 0 && &b.Arguments[0] == &b.RawArgs[0] {
				t.Fatal("the arguments and the streamed text share their bytes")
			}
			data, _ := os.ReadFile(e.session)
			assertNoSecret(t, "the session file", string(data), testKey)
		})
	}
}
