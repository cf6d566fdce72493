package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/ocbench/ocbench/engine"
	"github.com/ocbench/ocbench/internal/redact"
	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/prompt"
	"github.com/ocbench/ocbench/provider"
	"github.com/ocbench/ocbench/provider/scripted"
	"github.com/ocbench/ocbench/transcript"
)

func init() {
	register("run", "run one agent turn loop (scripted provider over loopback unless --base-url)", runRunCmd)
}

func runRunCmd(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("run", flag.ContinueOnError)
	fl.SetOutput(stderr)
	workspace := fl.String("workspace", "", "workspace directory (default: the built-in sample workspace in a temporary directory)")
	session := fl.String("session", "", "session transcript file (default: a file in a temporary directory, removed afterwards)")
	sessions := fl.String("sessions", "", "session store instead of --session: sqlite:PATH (OpenClaw's database), postgres://..., or a JSONL directory")
	sessionID := fl.String("session-id", "", "the session in --sessions to create or continue (default: a new one)")
	wire := fl.String("wire", "openai-chat", "wire format: openai-chat, openai-responses or anthropic (pi-ai api ids work too)")
	fl.StringVar(wire, "api", "openai-chat", "alias of --wire")
	baseURL := fl.String("base-url", "", "a real endpoint (OpenAI-compatible or Anthropic); the key comes from the environment")
	compat := fl.String("compat", "auto", "what --base-url's chat endpoint accepts: auto (OpenAI's own host, or a generic compatible server), openai, or generic (max_tokens, no prompt_cache_key); add ,no-stream-options for a server that refuses stream_options")
	model := fl.String("model", "", "model id (default: scripted-1, or required with --base-url)")
	providerName := fl.String("provider", "", "provider name (key variable <PROVIDER>_API_KEY; default: scripted, or openai/anthropic by wire)")
	scriptFile := fl.String("script", "", "scripted provider: a JSON script to play instead of the built-in one")
	execOn := fl.Bool("exec", false, "offer the exec tool (shell commands in the workspace)")
	maxTurns := fl.Int("max-turns", engine.DefaultMaxTurns, "maximum model calls")
	idle := fl.Duration("idle-timeout", 0, "LLM idle timeout between stream events (0: OpenClaw's default for the endpoint, off for local ones; negative: off)")
	contextWindow := fl.Int("context-window", 0, "the model's context window in tokens (0: unknown, 200000 assumed)")
	maxTokens := fl.Int("max-tokens", 0, "maximum output tokens per model call (0: the provider's default)")
	reasoning := fl.String("reasoning", "", "reasoning effort hint: low, medium or high")
	steer := fl.String("steer", "", "a message queued as steering when the first tool call starts (delivered before the next model call)")
	followUp := fl.String("followup", "", "a message queued as a follow-up (delivered when the model stops)")
	asJSON := fl.Bool("json", false, "print events as JSON lines and the result as a JSON object")
	quiet := fl.Bool("quiet", false, "print only the summary (or, with --json, only the result)")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	msg := strings.TrimSpace(strings.Join(fl.Args(), " "))
	if msg == "" {
		fmt.Fprintln(stderr, "ocbench run: a MESSAGE is required, e.g.: ocbench run \"read AGENTS.md and summarize it\"")
		return 2
	}
	w, ok := provider.ParseWire(*wire)
	if !ok {
		fmt.Fprintf(stderr, "ocbench run: unknown wire %q (openai-chat, openai-responses, anthropic)\n", *wire)
		return 2
	}

	p := engine.Params{
		Prompt:   msg,
		MaxTurns: *maxTurns,
		// OpenClaw's defaults, chosen explicitly: its assembled prompt
		// and its built-in tools.
		OpenClawPrompt: true, BuiltinTools: true,
		Builtins: engine.BuiltinOptions{Exec: *execOn},
	}
	p.Stream.IdleTimeout = *idle
	p.MaxTokens, p.Reasoning = *maxTokens, *reasoning
	p.Model = llm.Model{API: w.API(), ID: *model, Provider: *providerName, BaseURL: *baseURL, ContextWindow: *contextWindow}

	// The provider: a real endpoint, or the scripted one over loopback.
	if *baseURL == "" {
		o := scripted.Options{Wire: w}
		if *scriptFile != "" {
			s, err := scripted.Load(*scriptFile)
			if err != nil {
				fmt.Fprintln(stderr, "ocbench run:", err)
				return 1
			}
			o.Script = s
		}
		_, srv, err := scripted.Start(o)
		if err != nil {
			fmt.Fprintln(stderr, "ocbench run:", err)
			return 1
		}
		defer srv.Close()
		p.Model.BaseURL = srv.URL
		if p.Model.ID == "" {
			p.Model.ID = "scripted-1"
		}
		if p.Model.Provider == "" {
			p.Model.Provider = "scripted"
		}
		p.APIKey = "scripted"
	} else {
		if p.Model.ID == "" {
			fmt.Fprintln(stderr, "ocbench run: --model is required with --base-url")
			return 2
		}
		if p.Model.Provider == "" {
			p.Model.Provider = "openai"
			if w == provider.WireAnthropic {
				p.Model.Provider = "anthropic"
			}
		}
		// The request fields follow the endpoint, not the provider name
		// the key variable comes from: a local server under the default
		// provider "openai" still gets max_tokens and no prompt_cache_key.
		c, err := parseCompat(*compat, *baseURL)
		if err != nil {
			fmt.Fprintln(stderr, "ocbench run:", err)
			return 2
		}
		if c == nil {
			d := provider.DetectCompat(*baseURL, "")
			c = &d
		}
		provider.SetCompat(*baseURL, *c)
	}

	// Workspace and session.
	p.Workspace = *workspace
	if p.Workspace == "" {
		dir, cleanup, err := prompt.SampleDir()
		if err != nil {
			fmt.Fprintln(stderr, "ocbench run:", err)
			return 1
		}
		defer cleanup()
		p.Workspace = dir
		cfg := prompt.SampleConfig()
		p.PromptOptions.Config = cfg
	}
	p.SessionFile = *session
	if p.SessionFile == "" {
		dir, err := os.MkdirTemp("", "ocbench-session-")
		if err != nil {
			fmt.Fprintln(stderr, "ocbench run:", err)
			return 1
		}
		defer os.RemoveAll(dir)
		p.SessionFile = filepath.Join(dir, "session.jsonl")
	}
	if *sessions != "" {
		st, err := transcript.OpenStore(context.Background(), *sessions)
		if err != nil {
			fmt.Fprintln(stderr, "ocbench run:", err)
			return 1
		}
		defer st.Close()
		id := *sessionID
		if id == "" {
			id = transcript.NewSessionID()
		}
		p.SessionStore, p.SessionID, p.SessionFile = st, id, ""
		defer fmt.Fprintf(stderr, "session %s in %s\n", id, *sessions)
	}

	// Everything printed goes through the redactor too: the streamed text
	// is printed as it arrives, before the engine's own redaction of the
	// final message (the key is --base-url's from the environment, or
	// the scripted one).
	red := redact.New(append([]string{p.APIKey}, redact.FromEnviron(os.Environ())...)...)
	out := redact.NewWriter(red, stdout)
	defer out.Flush()
	pr := &runPrinter{w: out, json: *asJSON, quiet: *quiet}
	p.OnEvent = pr.event
	if *steer != "" || *followUp != "" {
		q := &engine.Queue{}
		p.Queue = q
		if *followUp != "" {
			q.Push(engine.FollowUp, *followUp)
		}
		if *steer != "" {
			pending := *steer
			p.OnEvent = func(e *engine.Event) {
				if e.Kind == engine.EventToolStart && pending != "" {
					q.Push(engine.Steer, pending)
					pending = ""
				}
				pr.event(e)
			}
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := engine.Run(ctx, p)
	pr.finish(&res, err, p.SessionFile, *session != "")
	if err != nil {
		fmt.Fprintln(stderr, "ocbench run:", red.Error(err))
		return 1
	}
	if res.StopReason == llm.StopLength {
		// Cut at the output limit: the answer is incomplete, which a
		// script must be able to tell from a finished turn.
		return exitLength
	}
	return 0
}

// exitLength is the exit status of a run whose last turn stopped on the
// output-token limit (stop reason "length").
const exitLength = 3

// runPrinter prints a run's events as they happen: text as it streams,
// tool activity, steering and compaction; or, with --json, one JSON object
// per event.
type runPrinter struct {
	w      io.Writer
	json   bool
	quiet  bool
	inText bool
	buf    []byte
}

func (pr *runPrinter) endText() {
	if pr.inText {
		fmt.Fprintln(pr.w)
		pr.inText = false
	}
}

func (pr *runPrinter) event(e *engine.Event) {
	if pr.quiet {
		return
	}
	if pr.json {
		pr.eventJSON(e)
		return
	}
	switch e.Kind {
	case engine.EventStream:
		if e.Stream.Type == llm.EventTextDelta {
			pr.w.Write(e.Stream.Delta)
			pr.inText = true
		}
	case engine.EventTurnStart:
		pr.endText()
	case engine.EventToolStart:
		pr.endText()
		fmt.Fprintf(pr.w, "→ %s %s\n", e.ToolName, runClip(string(e.Args), 120))
	case engine.EventToolEnd:
		status := "ok"
		if e.Result.IsError {
			status = "error: " + runClip(runFirstLine(e.Result.TextContent()), 100)
		}
		fmt.Fprintf(pr.w, "← %s (%d bytes, %s) %s\n", e.ToolName, len(e.Result.TextContent()), e.Duration.Round(time.Microsecond), status)
	case engine.EventSteer:
		pr.endText()
		fmt.Fprintf(pr.w, "» [%s] %s\n", e.Mode, e.Text)
	case engine.EventRetry:
		pr.endText()
		fmt.Fprintf(pr.w, "… retrying in %s: %v\n", e.Wait, e.Err)
	case engine.EventCompactionStart:
		pr.endText()
		fmt.Fprintf(pr.w, "… compacting (%s)\n", e.Compaction.Trigger)
	case engine.EventCompactionEnd:
		c := e.Compaction
		if c.Compacted {
			fmt.Fprintf(pr.w, "… compacted: ~%d → ~%d tokens\n", c.TokensBefore, c.TokensAfter)
		} else {
			fmt.Fprintf(pr.w, "… not compacted: %s\n", c.Reason)
		}
	case engine.EventRunEnd:
		pr.endText()
	}
}

func (pr *runPrinter) eventJSON(e *engine.Event) {
	b := append(pr.buf[:0], `{"event":`...)
	b = llm.AppendJSONString(b, e.Kind.String())
	b = append(b, `,"turn":`...)
	b = fmt.Appendf(b, "%d", e.Turn)
	switch e.Kind {
	case engine.EventStream:
		b = append(b, `,"stream":`...)
		b = llm.AppendEventJSON(b, e.Stream, e.Message)
	case engine.EventTurnEnd:
		b = append(b, `,"message":`...)
		b = e.Message.AppendJSON(b)
	case engine.EventToolStart:
		b = append(b, `,"tool":`...)
		b = llm.AppendJSONString(b, e.ToolName)
		b = append(b, `,"id":`...)
		b = llm.AppendJSONString(b, e.ToolCallID)
		b = append(b, `,"args":`...)
		b = llm.AppendJSONString(b, e.Args)
	case engine.EventToolEnd:
		b = append(b, `,"result":`...)
		b = e.Result.AppendJSON(b)
	case engine.EventSteer:
		b = append(b, `,"mode":`...)
		b = llm.AppendJSONString(b, e.Mode.String())
		b = append(b, `,"text":`...)
		b = llm.AppendJSONString(b, e.Text)
	case engine.EventRetry, engine.EventRunEnd:
		if e.Err != nil {
			b = append(b, `,"error":`...)
			b = llm.AppendJSONString(b, e.Err.Error())
		}
	case engine.EventCompactionEnd:
		b = append(b, `,"compacted":`...)
		b = fmt.Appendf(b, "%t", e.Compaction.Compacted)
		b = append(b, `,"reason":`...)
		b = llm.AppendJSONString(b, e.Compaction.Reason)
	}
	b = append(b, "}\n"...)
	pr.buf = b
	pr.w.Write(b)
}

type runResultJSON struct {
	Text        string          `json:"text"`
	StopReason  string          `json:"stopReason"`
	Turns       int             `json:"turns"`
	ToolCalls   []toolCallJSON  `json:"toolCalls"`
	Repairs     int             `json:"repairs"`
	Steered     int             `json:"steered"`
	Retries     int             `json:"retries"`
	Usage       json.RawMessage `json:"usage"`
	Compaction  *compactionJSON `json:"compaction,omitempty"`
	Preemptive  string          `json:"preemptiveRoute"`
	Harness     string          `json:"harness"`
	Aborted     bool            `json:"aborted"`
	TurnLimit   bool            `json:"turnLimit"`
	Error       string          `json:"error,omitempty"`
	Notes       []string        `json:"notes,omitempty"`
	DurationMS  float64         `json:"durationMs"`
	SessionFile string          `json:"sessionFile,omitempty"`
}

type toolCallJSON struct {
	Turn    int    `json:"turn"`
	ID      string `json:"id"`
	Name    string `json:"name"`
	IsError bool   `json:"isError"`
	Error   string `json:"error,omitempty"`
}

type compactionJSON struct {
	Trigger   string `json:"trigger"`
	Compacted bool   `json:"compacted"`
	TimedOut  bool   `json:"timedOut"`
	Reason    string `json:"reason,omitempty"`
}

func (pr *runPrinter) finish(res *engine.Result, err error, sessionFile string, keep bool) {
	pr.endText()
	if pr.json {
		out := runResultJSON{
			Text: res.FinalText(), StopReason: res.StopReason.String(), Turns: res.Turns, Repairs: res.Repairs,
			Steered: res.Steered, Retries: res.Retries, Usage: res.Usage.AppendJSON(nil),
			Preemptive: res.Preemptive.Route.String(), Harness: res.Harness.ID, Aborted: res.Aborted,
			TurnLimit: res.TurnLimit, Notes: res.Notes, DurationMS: float64(res.Duration.Microseconds()) / 1000,
			ToolCalls: []toolCallJSON{},
		}
		if keep {
			out.SessionFile = sessionFile
		}
		if err != nil {
			out.Error = err.Error()
		}
		for _, c := range res.ToolCalls {
			tc := toolCallJSON{Turn: c.Turn, ID: c.ID, Name: c.Name, IsError: c.IsError}
			if c.Err != nil {
				tc.Error = c.Err.Error()
			}
			out.ToolCalls = append(out.ToolCalls, tc)
		}
		if res.Compaction.Attempted {
			c := res.Compaction
			out.Compaction = &compactionJSON{Trigger: c.Trigger, Compacted: c.Compacted, TimedOut: c.TimedOut, Reason: c.Reason}
		}
		// JSON Lines: the result is the last line, like every event.
		json.NewEncoder(pr.w).Encode(out)
		return
	}
	errs := 0
	for _, c := range res.ToolCalls {
		if c.IsError {
			errs++
		}
	}
	u := res.Usage
	fmt.Fprintf(pr.w, "\n--\nturns %d · tool calls %d (%d errors) · repairs %d · tokens in %d out %d · cache read %d write %d · %s\n",
		res.Turns, len(res.ToolCalls), errs, res.Repairs, u.Input, u.Output, u.CacheRead, u.CacheWrite, res.Duration.Round(time.Microsecond))
	if res.StopReason != 0 {
		fmt.Fprintf(pr.w, "stop: %s", res.StopReason)
		if res.Final != nil && res.Final.ErrorMessage != "" {
			fmt.Fprintf(pr.w, " (%s)", res.Final.ErrorMessage)
		}
		fmt.Fprintln(pr.w)
	}
	if res.Compaction.Attempted {
		fmt.Fprintf(pr.w, "compaction (%s): compacted=%t %s\n", res.Compaction.Trigger, res.Compaction.Compacted, res.Compaction.Reason)
	}
	for _, n := range res.Notes {
		fmt.Fprintln(pr.w, "note:", n)
	}
	if keep {
		fmt.Fprintln(pr.w, "session:", sessionFile)
	}
}

func runClip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func runFirstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
