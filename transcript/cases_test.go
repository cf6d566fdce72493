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

// promptCasesFile is the case file the spec harnesses run: the project's
// copy of the spec's prompt-cases.json, or any file of that format named
// by OCBENCH_PROMPT_CASES (new cases from OpenClaw's tests drop in without
// code changes).
func promptCasesFile() string {
	if f := os.Getenv("OCBENCH_PROMPT_CASES"); f != "" {
		return f
	}
	return "../testdata/spec/prompt-cases.json"
}

// loadCases returns the cases of one section of the case file (none when
// the file has no such section); the file as a whole must hold cases.
func loadCases(t *testing.T, section string) []specCase {
	t.Helper()
	b, err := os.ReadFile(promptCasesFile())
	if err != nil {
		t.Fatal(err)
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatal(err)
	}
	total := 0
	for k, raw := range all {
		var list []json.RawMessage
		if k != "meta" && json.Unmarshal(raw, &list) == nil {
			total += len(list)
		}
	}
	if total == 0 {
		t.Fatalf("%s holds no cases", promptCasesFile())
	}
	var cases []specCase
	if raw, ok := all[section]; ok {
		if err := json.Unmarshal(raw, &cases); err != nil {
			t.Fatal(err)
		}
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

// fnName is a case's function without its source file.
func fnName(fn string) string {
	name, _, _ := strings.Cut(strings.TrimSpace(fn), " ")
	return name
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
			// Every parameter of the three functions (§3.3, §3.4).
			var in struct {
				Messages        json.RawMessage `json:"messages"`
				HeartbeatPrompt string          `json:"heartbeatPrompt"`
				AckMaxChars     *int            `json:"ackMaxChars"`
				Limit           *int            `json:"limit"`
				SessionKey      string          `json:"sessionKey"`
				Config          struct {
					Channels map[string]ChannelHistoryLimits `json:"channels"`
				} `json:"config"`
			}
			if err := json.Unmarshal(c.Input, &in); err != nil {
				t.Fatal(err)
			}
			msgs := func() []llm.Message {
				if len(in.Messages) == 0 || string(in.Messages) == "null" {
					return nil
				}
				return parseMessages(t, in.Messages)
			}
			switch fnName(c.Fn) {
			case "filterHeartbeatPairs":
				ack := -1
				if in.AckMaxChars != nil {
					ack = *in.AckMaxChars
				}
				got := FilterHeartbeatPairs(msgs(), ack, in.HeartbeatPrompt)
				messagesEqual(t, c.Name, got, parseMessages(t, c.Expected))
			case "limitHistoryTurns":
				limit := 0 // undefined: unchanged
				if in.Limit != nil {
					limit = *in.Limit
				}
				got := LimitHistoryTurns(msgs(), limit)
				messagesEqual(t, c.Name, got, parseMessages(t, c.Expected))
			case "getHistoryLimitFromSessionKey":
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
			switch fnName(c.Fn) {
			case "formatContextLimitTruncationNotice":
				// formatContextLimitTruncationNotice(truncatedChars): a number,
				// or an object naming it.
				var n int
				if err := json.Unmarshal(c.Input, &n); err != nil {
					var in struct {
						TruncatedChars int `json:"truncatedChars"`
					}
					if err := json.Unmarshal(c.Input, &in); err != nil {
						t.Fatal(err)
					}
					n = in.TruncatedChars
				}
				var want string
				json.Unmarshal(c.Expected, &want)
				if got := ContextLimitTruncationNotice(n); got != want {
					t.Errorf("got %q want %q", got, want)
				}
			case "resolveLiveToolResultMaxChars":
				// resolveLiveToolResultMaxChars({contextWindowTokens, cfg}),
				// one call or a list of them; cfg's
				// agents.defaults.contextLimits.toolResultMaxChars caps it.
				type call struct {
					ContextWindowTokens int `json:"contextWindowTokens"`
					Cfg                 struct {
						Agents struct {
							Defaults struct {
								ContextLimits struct {
									ToolResultMaxChars int `json:"toolResultMaxChars"`
								} `json:"contextLimits"`
							} `json:"defaults"`
						} `json:"agents"`
					} `json:"cfg"`
				}
				var in []call
				var want []int
				if json.Unmarshal(c.Input, &in) != nil {
					var one call
					if err := json.Unmarshal(c.Input, &one); err != nil {
						t.Fatal(err)
					}
					in = []call{one}
					var w int
					json.Unmarshal(c.Expected, &w)
					want = []int{w}
				} else {
					json.Unmarshal(c.Expected, &want)
				}
				if len(in) != len(want) || len(in) == 0 {
					t.Fatalf("bad case: %d inputs, %d expected values", len(in), len(want))
				}
				for i := range in {
					if got := LiveToolResultMaxChars(in[i].ContextWindowTokens, in[i].Cfg.Agents.Defaults.ContextLimits.ToolResultMaxChars); got != want[i] {
						t.Errorf("%d tokens: got %d want %d", in[i].ContextWindowTokens, got, want[i])
					}
				}
			case "truncateToolResultMessage":
				// truncateToolResultMessage(message, maxChars, {minKeepChars}).
				var in struct {
					Message  json.RawMessage `json:"message"`
					MaxChars int             `json:"maxChars"`
					Options  struct {
						MinKeepChars *int `json:"minKeepChars"`
					} `json:"options"`
					MinKeepChars *int `json:"minKeepChars"`
				}
				if err := json.Unmarshal(c.Input, &in); err != nil {
					t.Fatal(err)
				}
				minKeep := -1
				if in.Options.MinKeepChars != nil {
					minKeep = *in.Options.MinKeepChars
				} else if in.MinKeepChars != nil {
					minKeep = *in.MinKeepChars
				}
				got := TruncateToolResultMessage(parseMessage(t, in.Message), in.MaxChars, minKeep)
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
			// buildSessionContext(entries, leafId): leafId absent walks from
			// the last entry, null gives an empty context. A header (an
			// entry of type session, or input.header) sets the version.
			var in struct {
				Entries []json.RawMessage `json:"entries"`
				LeafID  json.RawMessage   `json:"leafId"`
				Header  json.RawMessage   `json:"header"`
			}
			if err := json.Unmarshal(c.Input, &in); err != nil {
				t.Fatal(err)
			}
			var file strings.Builder
			hdr := `{"type":"session","version":3,"id":"case","timestamp":"2026-05-01T00:00:00.000Z","cwd":"/"}`
			if len(in.Header) > 0 {
				hdr = string(in.Header)
			}
			body := in.Entries
			if len(body) > 0 && strings.Contains(string(body[0]), `"type":"session"`) {
				hdr, body = string(body[0]), body[1:]
			}
			file.WriteString(hdr + "\n")
			for _, e := range body {
				file.Write(e)
				file.WriteByte('\n')
			}
			r := NewReader(strings.NewReader(file.String()), Options{Strict: true, KeepUnknown: true})
			entries := readAll(t, r)
			if len(entries) != len(body) {
				t.Fatalf("read %d entries of %d", len(entries), len(body))
			}
			var sc SessionContext
			switch leaf := strings.TrimSpace(string(in.LeafID)); {
			case leaf == "":
				sc = BuildSessionContextVersion(entries, r.Header().Version)
			case leaf == "null":
				sc = SessionContext{ThinkingLevel: "off"}
			default:
				var id string
				if err := json.Unmarshal(in.LeafID, &id); err != nil {
					t.Fatal(err)
				}
				sc = buildSessionContextAt(entries, id)
			}
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
