package transcript

import (
	"encoding/json"
	"github.com/ocbench/ocbench/internal/specases"
	"os"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/llm"
	"github.com/valyala/fastjson"
)

// The spec's input -> exact output cases of OpenClaw 2026.5.7 (sections
// history, toolResultTruncation, piSessionContext of prompt-cases.json).

type specCase struct {
	Name        string          `json:"name"`
	Fn          string          `json:"fn"`
	Input       json.RawMessage `json:"input"`
	Expected    json.RawMessage `json:"expected"`
	ExpectedLlm json.RawMessage `json:"expectedLlm"`
}

func loadCases(t *testing.T, section string) []specCase {
	t.Helper()
	b, err := os.ReadFile("../testdata/spec/prompt-cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatal(err)
	}
	var cases []specCase
	if err := json.Unmarshal(all[section], &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatalf("no cases in %s", section)
	}
	for i := range cases {
		var v any
		if err := json.Unmarshal(cases[i].Input, &v); err != nil {
			t.Fatal(err)
		}
		cases[i].Input, _ = json.Marshal(specases.Expand(v))
	}
	return cases
}

func parseMessages(t *testing.T, raw []byte) []llm.Message {
	t.Helper()
	var p fastjson.Parser
	v, err := p.ParseBytes(raw)
	if err != nil {
		t.Fatal(err)
	}
	var out []llm.Message
	for _, mv := range v.GetArray() {
		m, err := llm.ParseMessage(mv)
		if err != nil {
			t.Fatalf("message %s: %v", mv, err)
		}
		out = append(out, m)
	}
	return out
}

func parseMessage(t *testing.T, raw []byte) llm.Message {
	return parseMessages(t, append(append([]byte{'['}, raw...), ']'))[0]
}

func messagesEqual(t *testing.T, name string, got, want []llm.Message) {
	t.Helper()
	if g, w := messagesJSON(got), messagesJSON(want); g != w {
		t.Errorf("%s:\n got %s\nwant %s", name, g, w)
	}
}

func TestSpecHistoryCases(t *testing.T) {
	for _, c := range loadCases(t, "history") {
		t.Run(c.Name, func(t *testing.T) {
			var in struct {
				Messages        json.RawMessage `json:"messages"`
				HeartbeatPrompt string          `json:"heartbeatPrompt"`
				AckMaxChars     *int            `json:"ackMaxChars"`
				Limit           int             `json:"limit"`
				SessionKey      string          `json:"sessionKey"`
				Config          struct {
					Channels map[string]ChannelHistoryLimits `json:"channels"`
				} `json:"config"`
			}
			if err := json.Unmarshal(c.Input, &in); err != nil {
				t.Fatal(err)
			}
			switch {
			case strings.HasPrefix(c.Fn, "filterHeartbeatPairs"):
				ack := -1
				if in.AckMaxChars != nil {
					ack = *in.AckMaxChars
				}
				got := FilterHeartbeatPairs(parseMessages(t, in.Messages), ack, in.HeartbeatPrompt)
				messagesEqual(t, c.Name, got, parseMessages(t, c.Expected))
			case strings.HasPrefix(c.Fn, "limitHistoryTurns"):
				got := LimitHistoryTurns(parseMessages(t, in.Messages), in.Limit)
				messagesEqual(t, c.Name, got, parseMessages(t, c.Expected))
			case strings.HasPrefix(c.Fn, "getHistoryLimitFromSessionKey"):
				limit, ok := HistoryLimitFromSessionKey(in.SessionKey, in.Config.Channels)
				var want *int
				if err := json.Unmarshal(c.Expected, &want); err != nil {
					t.Fatal(err)
				}
				if (want == nil) != !ok || (want != nil && *want != limit) {
					t.Errorf("got %d,%v want %s", limit, ok, c.Expected)
				}
			default:
				t.Fatalf("unhandled case fn %q", c.Fn)
			}
		})
	}
}

func TestSpecToolResultTruncationCases(t *testing.T) {
	for _, c := range loadCases(t, "toolResultTruncation") {
		t.Run(c.Name, func(t *testing.T) {
			switch c.Fn {
			case "formatContextLimitTruncationNotice":
				var n int
				var want string
				json.Unmarshal(c.Input, &n)
				json.Unmarshal(c.Expected, &want)
				if got := ContextLimitTruncationNotice(n); got != want {
					t.Errorf("got %q want %q", got, want)
				}
			case "resolveLiveToolResultMaxChars":
				var in []struct {
					ContextWindowTokens int `json:"contextWindowTokens"`
				}
				var want []int
				json.Unmarshal(c.Input, &in)
				json.Unmarshal(c.Expected, &want)
				if len(in) != len(want) || len(in) == 0 {
					t.Fatalf("bad case")
				}
				for i := range in {
					if got := LiveToolResultMaxChars(in[i].ContextWindowTokens, 0); got != want[i] {
						t.Errorf("%d tokens: got %d want %d", in[i].ContextWindowTokens, got, want[i])
					}
				}
			case "truncateToolResultMessage":
				var in struct {
					Message  json.RawMessage `json:"message"`
					MaxChars int             `json:"maxChars"`
				}
				json.Unmarshal(c.Input, &in)
				got := TruncateToolResultMessage(parseMessage(t, in.Message), in.MaxChars, -1)
				want := parseMessage(t, c.Expected)
				messagesEqual(t, c.Name, []llm.Message{got}, []llm.Message{want})
				if n := ToolResultTextLength(&got); n > in.MaxChars {
					t.Errorf("length %d > %d", n, in.MaxChars)
				}
			default:
				t.Fatalf("unhandled case fn %q", c.Fn)
			}
		})
	}
}

func TestSpecPiSessionContextCases(t *testing.T) {
	for _, c := range loadCases(t, "piSessionContext") {
		t.Run(c.Name, func(t *testing.T) {
			var in struct {
				Entries []json.RawMessage `json:"entries"`
			}
			if err := json.Unmarshal(c.Input, &in); err != nil {
				t.Fatal(err)
			}
			// Feed the entries through the Reader as a version 3 file.
			var file strings.Builder
			file.WriteString(`{"type":"session","version":3,"id":"case","timestamp":"2026-05-01T00:00:00.000Z","cwd":"/"}` + "\n")
			for _, e := range in.Entries {
				file.Write(e)
				file.WriteByte('\n')
			}
			r := NewReader(strings.NewReader(file.String()), Options{Strict: true, KeepUnknown: true})
			entries := readAll(t, r)
			if len(entries) != len(in.Entries) {
				t.Fatalf("read %d entries of %d", len(entries), len(in.Entries))
			}
			sc := BuildSessionContext(entries)
			var want struct {
				Messages []struct {
					Role      string `json:"role"`
					Timestamp int64  `json:"timestamp"`
				} `json:"messages"`
				ThinkingLevel string `json:"thinkingLevel"`
				Model         struct {
					Provider string `json:"provider"`
					ModelID  string `json:"modelId"`
				} `json:"model"`
			}
			if err := json.Unmarshal(c.Expected, &want); err != nil {
				t.Fatal(err)
			}
			if sc.ThinkingLevel != want.ThinkingLevel || sc.Provider != want.Model.Provider || sc.ModelID != want.Model.ModelID {
				t.Errorf("settings %q %q %q, want %+v", sc.ThinkingLevel, sc.Provider, sc.ModelID, want)
			}
			if len(sc.Messages) != len(want.Messages) {
				t.Fatalf("%d messages, want %d", len(sc.Messages), len(want.Messages))
			}
			for i, w := range want.Messages {
				if sc.Messages[i].Timestamp != w.Timestamp {
					t.Errorf("message %d (%s): timestamp %d want %d", i, w.Role, sc.Messages[i].Timestamp, w.Timestamp)
				}
			}
			messagesEqual(t, c.Name, sc.Messages, parseMessages(t, c.ExpectedLlm))
		})
	}
}
