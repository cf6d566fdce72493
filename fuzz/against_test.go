package fuzz

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/provider"
	"github.com/ocbench/ocbench/streamwrap/repair"
)

// The differential runner is tested against this test binary acting as a
// replay implementation (the helper below): once faithful (ocbench's own
// openclaw chain, so every case must agree), once lying about one field of
// every toolUse turn (every such case must be reported, with a reproducer
// holding both outputs).

func TestMain(m *testing.M) {
	if mode := os.Getenv("OCBENCH_AGAINST_HELPER"); mode != "" {
		os.Exit(againstHelper(mode, os.Args[1:]))
	}
	os.Exit(m.Run())
}

// againstHelper speaks the replay contract: FLAGS FILE (last line is the
// final message), or --batch DIR --out OUT.
func againstHelper(mode string, args []string) int {
	// Drop the test binary's own flags.
	for len(args) > 0 && strings.HasPrefix(args[0], "-test.") {
		args = args[1:]
	}
	one := func(flags []string, body []byte) []byte {
		fs := flag.NewFlagSet("helper", flag.ContinueOnError)
		wire := fs.String("wire", "", "")
		tools := fs.String("tools", "", "")
		fs.String("repair", "", "")
		html := fs.Bool("html-entities", false, "")
		reasoning := fs.Bool("reasoning", false, "")
		if err := fs.Parse(flags); err != nil {
			return nil
		}
		w, _ := provider.ParseWire(*wire)
		// As `ocbench replay --repair openclaw`: the model the body names.
		model, _ := provider.DetectModel(body)
		if model == "" {
			model = "replay"
		}
		c := &Case{Wire: w, Tools: strings.Split(*tools, ","), HTMLEntities: *html, Reasoning: *reasoning, Body: body, Model: model}
		var r runner
		out := r.turn(context.Background(), c, repair.ProfileOpenClaw).AppendJSON(nil)
		if mode == "lie" {
			out = []byte(strings.Replace(string(out), `"stopReason":"toolUse"`, `"stopReason":"stop"`, 1))
		}
		return out
	}
	if len(args) == 4 && args[0] == "--batch" && args[2] == "--out" {
		files, _ := filepath.Glob(filepath.Join(args[1], "*.sse"))
		for _, f := range files {
			name := strings.TrimSuffix(filepath.Base(f), ".sse")
			body, _ := os.ReadFile(f)
			flags, _ := os.ReadFile(strings.TrimSuffix(f, ".sse") + ".flags")
			if name == "fuzz-9-3" && mode == "lie" {
				continue // a case the implementation gives no message for
			}
			os.WriteFile(filepath.Join(args[3], name+".json"), one(strings.Fields(string(flags)), body), 0o644)
		}
		return 0
	}
	body, err := os.ReadFile(args[len(args)-1])
	if err != nil {
		return 2
	}
	os.Stdout.Write(append(one(args[:len(args)-1], body), '\n'))
	return 0
}

// helperEnv makes this test binary a replay helper for the processes the
// test starts. Under -race each process that exits normally would sleep a
// second first (the race runtime's atexit_sleep_ms): 60 one-case helpers
// on two jobs were 30 s of the test's 36; the helpers' own races are not
// what it checks.
func helperEnv(t *testing.T, mode string) {
	t.Setenv("OCBENCH_AGAINST_HELPER", mode)
	t.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
}

func TestAgainstAgreesWithItself(t *testing.T) {
	helperEnv(t, "self")
	for _, batch := range []bool{false, true} {
		rep, err := Against(context.Background(), AgainstOptions{N: 60, Seed: 9, Command: []string{os.Args[0]}, Batch: batch, BatchSize: 25, Jobs: 2})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Cases != 60 || rep.Agree != 60 || !rep.OK() || len(rep.PerWire) != 3 {
			t.Fatalf("batch=%v: %+v", batch, rep)
		}
	}
}

func TestAgainstReportsDisagreements(t *testing.T) {
	helperEnv(t, "lie")
	dir := t.TempDir()
	rep, err := Against(context.Background(), AgainstOptions{N: 40, Seed: 9, Command: []string{os.Args[0]}, Batch: true, BatchSize: 40, OutDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	want := uint64(0)
	var r runner
	for i := uint64(0); i < 40; i++ {
		c := GenerateVariant(9, i)
		if i != 3 && strings.Contains(string(r.turn(context.Background(), c, repair.ProfileOpenClaw).AppendJSON(nil)), `"stopReason":"toolUse"`) {
			want++
		}
	}
	if want == 0 || rep.Disagree != want || rep.Failed != 1 || rep.OK() {
		t.Fatalf("want %d disagreements and 1 failure: %+v", want, rep)
	}
	note, err := os.ReadFile(strings.TrimSuffix(rep.Files[0], ".sse") + ".txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"differs: ", "ours:   {", "theirs: ", "replay: ocbench replay --wire"} {
		if !strings.Contains(string(note), s) {
			t.Errorf("reproducer lacks %q:\n%s", s, note)
		}
	}
	if _, err := os.Stat(strings.TrimSuffix(rep.Files[0], ".sse") + ".flags"); err != nil {
		t.Error(err)
	}
}

func TestCompareFinal(t *testing.T) {
	ours := `{"role":"assistant","content":[{"type":"text","text":"a","textSignature":"{\"v\":1,\"id\":\"commentary-0-0123456789abcdef01234567\",\"phase\":\"commentary\"}"},{"type":"toolCall","id":"call_0123456789abcdef01234567","name":"read","arguments":{"n":1.0}}],"stopReason":"toolUse","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"reasoningTokens":0,"totalTokens":3},"api":"x","provider":"p","model":"m","responseId":"r","timestamp":5}`
	theirs := `{"role":"assistant","content":[{"type":"text","text":"a","textSignature":"{\"v\":1,\"id\":\"commentary-0-fedcba9876543210fedcba98\",\"phase\":\"commentary\"}"},{"type":"toolCall","id":"call_fedcba9876543210fedcba98","name":"read","arguments":{"n":1}}],"stopReason":"toolUse","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"total":0},"reasoningTokens":0},"api":"x","provider":"p","model":"m"}`
	if d := CompareFinal([]byte(ours), []byte(theirs)); len(d) != 0 {
		t.Fatalf("equal messages differ: %v", d)
	}
	// A generated Responses call id keeps its item part.
	withItem := func(m, id string) string { return strings.Replace(m, `"id":"`+id+`"`, `"id":"`+id+`|fc_1"`, 1) }
	if d := CompareFinal([]byte(withItem(ours, "call_0123456789abcdef01234567")), []byte(withItem(theirs, "call_fedcba9876543210fedcba98"))); len(d) != 0 {
		t.Fatalf("generated call ids with one item id differ: %v", d)
	}
	for _, change := range [][2]string{
		{`"id":"call_fedcba9876543210fedcba98"`, `"id":"call_1"`},
		{`"n":1}`, `"n":2}`},
		{`"stopReason":"toolUse"`, `"stopReason":"stop"`},
		{`commentary-0-`, `commentary-1-`},
		{`"reasoningTokens":0`, `"reasoningTokens":2`},
		{`"id":"call_fedcba9876543210fedcba98"`, `"id":"call_fedcba9876543210fedcba98|fc_1"`},
		{`"model":"m"}`, `"model":"m","errorMessage":"x"}`},
	} {
		if d := CompareFinal([]byte(ours), []byte(strings.Replace(theirs, change[0], change[1], 1))); len(d) == 0 {
			t.Errorf("%s -> %s not reported", change[0], change[1])
		}
	}
	if d := CompareFinal([]byte(ours), []byte("not json")); len(d) != 1 {
		t.Errorf("garbage: %v", d)
	}
}

func TestSplitCommand(t *testing.T) {
	got, err := SplitCommand(`node "/a b/replay.mjs" --pace-ms 0 'x y' z\ w`)
	if err != nil || strings.Join(got, "|") != "node|/a b/replay.mjs|--pace-ms|0|x y|z w" {
		t.Fatalf("%q %v", got, err)
	}
	if _, err := SplitCommand(`a "b`); err == nil {
		t.Error("unclosed quote accepted")
	}
	if _, err := SplitCommand("  "); err == nil {
		t.Error("empty command accepted")
	}
}
