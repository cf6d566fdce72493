package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider"
	"github.com/ocbench/ocbench/streamwrap"
	"github.com/ocbench/ocbench/streamwrap/repair"
)

func init() {
	register("replay", "run a recorded provider stream through the decoder and the decorator chain", runReplay)
}

// replayConfig is what the replay flags select (spec/replay.md).
type replayConfig struct {
	wire         provider.Wire
	wireSet      bool
	tools        []string
	provider     string
	api          string
	htmlEntities bool
	reasoning    bool
	model        string
	profile      repair.Profile
	threshold    int
	idleTimeout  time.Duration
	events       bool
	// plainProvider drops @openclaw/ai's transport checks from the
	// openclaw profile (OpenClaw's wrappers over a provider that refuses
	// nothing): the superset test compares extended with it.
	plainProvider bool
}

// parseReplayFlags parses the flags; it returns the FILE argument.
func parseReplayFlags(args []string, stderr io.Writer) (replayConfig, string, error) {
	var c replayConfig
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	wire := fs.String("wire", "", "wire format: openai-chat, openai-responses or anthropic (default: detected)")
	tools := fs.String("tools", "", "live tool allowlist, comma separated")
	fs.StringVar(&c.provider, "provider", "openai-compatible", "provider id")
	fs.StringVar(&c.api, "api", "", "model api id (default: implied by the wire)")
	fs.BoolVar(&c.htmlEntities, "html-entities", false, "tool-call arguments are HTML-entity encoded")
	fs.StringVar(&c.model, "model", "", "the configured model id (with --repair openclaw the message's model, as in OpenClaw; otherwise the stream's model wins)")
	fs.BoolVar(&c.reasoning, "reasoning", false, "the model is a reasoning model (model.reasoning): OpenAI-chat reasoning deltas are kept")
	prof := fs.String("repair", "extended", "argument-repair profile: openclaw, extended or off")
	fs.IntVar(&c.threshold, "unknown-tool-threshold", streamwrap.DefaultUnknownToolThreshold, "unknown-tool loop guard threshold")
	fs.DurationVar(&c.idleTimeout, "idle-timeout", 0, "idle timeout between events (0: off)")
	fs.BoolVar(&c.events, "events", false, "print every event before the final message")
	fs.Bool("json", true, "output JSON (implied)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "usage: ocbench replay [flags] FILE   (FILE - reads stdin)")
			fs.SetOutput(stderr)
			fs.PrintDefaults()
		}
		return c, "", err
	}
	if *wire != "" {
		w, ok := provider.ParseWire(*wire)
		if !ok {
			return c, "", fmt.Errorf("unknown --wire %q (want openai-chat, openai-responses or anthropic)", *wire)
		}
		c.wire, c.wireSet = w, true
	}
	p, ok := repair.ParseProfile(*prof)
	if !ok || *prof == "" {
		return c, "", fmt.Errorf("unknown --repair %q (want openclaw, extended or off)", *prof)
	}
	c.profile = p
	if c.threshold < 0 {
		return c, "", fmt.Errorf("--unknown-tool-threshold must not be negative, got %d", c.threshold)
	}
	if c.idleTimeout < 0 {
		return c, "", fmt.Errorf("--idle-timeout must not be negative, got %s", c.idleTimeout)
	}
	for _, t := range strings.Split(*tools, ",") {
		if t = strings.TrimSpace(t); t != "" {
			c.tools = append(c.tools, t)
		}
	}
	if fs.NArg() != 1 {
		return c, "", fmt.Errorf("want exactly one FILE (or - for stdin), got %d arguments", fs.NArg())
	}
	return c, fs.Arg(0), nil
}

func runReplay(args []string, stdout, stderr io.Writer) int {
	c, file, err := parseReplayFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 2
		}
		fmt.Fprintln(stderr, "ocbench replay:", err)
		return 2
	}
	var in *os.File
	if file == "-" {
		in = os.Stdin
	} else {
		f, err := os.Open(file)
		if err != nil {
			fmt.Fprintln(stderr, "ocbench replay:", err)
			return 2
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil && st.IsDir() {
			fmt.Fprintf(stderr, "ocbench replay: %s is a directory\n", file)
			return 2
		}
		in = f
	}
	out := bufio.NewWriterSize(stdout, 64<<10)
	defer out.Flush()
	chain := newReplayChain(c)
	if err := replayOne(context.Background(), chain, c, in, out); err != nil {
		out.Flush()
		fmt.Fprintln(stderr, "ocbench replay:", err)
		return 2
	}
	return 0
}

// newReplayChain builds the decorator chain replay runs (one chain: the
// unknown-tool streak carries over between streams replayed through it).
func newReplayChain(c replayConfig) func(base llm.StreamFunc) llm.StreamFunc {
	threshold := c.threshold
	if threshold == 0 {
		threshold = -1 // 0 on the command line: the loop guard is off
	}
	opts := streamwrap.Options{
		Profile:              c.profile,
		LiveTools:            streamwrap.NewAllowlist(c.tools...),
		UnknownToolThreshold: threshold,
		IdleTimeout:          c.idleTimeout,
	}
	var cur llm.StreamFunc
	// The chain is built once around a base that delegates to the stream of
	// the current replay, so that its per-run state is kept.
	shared := streamwrap.Chain(func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		return cur(ctx, req)
	}, opts)
	return func(base llm.StreamFunc) llm.StreamFunc {
		cur = base
		return shared
	}
}

// replayOne decodes r through the chain and writes the events (with
// --events) and the final message, one JSON object per line.
//
// The final message is what counts. With the extended profile a tool call
// whose arguments could not be repaired is dropped on its own at the done
// event (streamwrap.ArgumentStage): its toolcall_start, deltas and
// toolcall_end (arguments {}, undecided) are printed as they went out, the
// done line keeps reason toolUse, and the last line lacks the call and
// names it in errorMessage; contentIndex values of the events index the
// content as it was streamed, not the final message's.
func replayOne(ctx context.Context, chain func(llm.StreamFunc) llm.StreamFunc, c replayConfig, r io.Reader, out io.Writer) error {
	br := bufio.NewReaderSize(r, 1<<20) // the room detectWire and detectModel look in
	w := c.wire
	if !c.wireSet {
		w = detectWire(br)
	}
	model := c.model
	if model == "" && c.profile == repair.ProfileOpenClaw {
		// OpenClaw's messages name the configured model: the replay
		// tool configures the one the stream names first, else "replay".
		model = detectModel(br)
	}
	api := llm.API(c.api)
	if api == "" {
		api = w.API()
	}
	if f, ok := r.(*os.File); ok && c.idleTimeout > 0 {
		// Cancellation must reach a read blocked on a pipe or terminal: a
		// read deadline (ignored by regular files, which never block).
		ctx2, cancel := context.WithCancel(ctx)
		defer cancel()
		stop := context.AfterFunc(ctx2, func() { f.SetReadDeadline(time.Now()) })
		defer stop()
		ctx = ctx2
	}
	base := func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		d := provider.NewDecoder(w, br, provider.Options{API: req.Model.API, Provider: req.Model.Provider, Model: req.Model.ID, BaseURL: provider.ReplayBaseURL,
			Reasoning: req.Model.Reasoning, OpenClaw: c.profile == repair.ProfileOpenClaw && !c.plainProvider})
		d.SetContext(ctx)
		return d, nil
	}
	req := &llm.Request{Model: llm.Model{ID: model, API: api, Provider: c.provider, HTMLEntityArgs: c.htmlEntities, Reasoning: c.reasoning}}
	s, err := chain(base)(ctx, req)
	if err != nil {
		return err
	}
	defer s.Close()
	buf := make([]byte, 0, 4096)
	for s.Next() {
		if c.events {
			buf = llm.AppendEventJSON(buf[:0], s.Event(), s.Message())
			buf = append(buf, '\n')
			if _, err := out.Write(buf); err != nil {
				return err
			}
		}
	}
	m := s.Message()
	buf = m.AppendJSON(buf[:0])
	buf = append(buf, '\n')
	_, err = out.Write(buf)
	return err
}

// detectWire peeks at growing prefixes of the input until the wire format
// shows (provider.DetectWire), up to 1 MiB or the end of the input; Chat
// Completions when it never does, as OpenClaw's replay tool takes it.
func detectWire(br *bufio.Reader) provider.Wire {
	for n := 512; ; n *= 2 {
		head, err := br.Peek(min(n, br.Size()))
		if w, ok := provider.DetectWire(head); ok {
			return w
		}
		if err != nil || n >= br.Size() {
			return provider.WireOpenAIChat
		}
	}
}

// detectModel peeks at growing prefixes of the input until
// provider.DetectModel finds the model or has searched 200 fields, up to
// the reader's size or the end of the input; "replay" when it finds none,
// as OpenClaw's replay tool names such a stream's model.
func detectModel(br *bufio.Reader) string {
	for n := 512; ; n *= 2 {
		head, err := br.Peek(min(n, br.Size()))
		if m, fields := provider.DetectModel(head); m != "" {
			return m
		} else if fields >= 200 || err != nil || n >= br.Size() {
			return "replay"
		}
	}
}
