package fuzz

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/provider"
)

func TestEmbeddedRecordings(t *testing.T) {
	rs := EmbeddedRecordings()
	if len(rs) < 10 {
		t.Fatalf("%d recordings", len(rs))
	}
	for _, r := range rs {
		want := provider.WireOpenAIChat
		switch {
		case strings.HasPrefix(r.Name, "anthropic-"):
			want = provider.WireAnthropic
		case strings.HasPrefix(r.Name, "openai-responses-"):
			want = provider.WireOpenAIResponses
		}
		if r.Wire != want || len(r.Body) == 0 {
			t.Errorf("%s: wire %v, %d bytes", r.Name, r.Wire, len(r.Body))
		}
	}
	// The tools of a recording without flags are the names its calls carry.
	for _, r := range rs {
		if r.Name == "openai-chat-toolcall-gpt4turbo.sse" && strings.Join(r.Tools, ",") != "get_current_weather" {
			t.Errorf("%s: tools %q", r.Name, r.Tools)
		}
	}
}

func TestLoadRecordings(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.sse", "data: {\"choices\":[]}\n\n")
	write("a.flags", "--wire anthropic --tools read,exec --repair openclaw --reasoning\n")
	write("sub/b.sse", "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n")
	rs, err := LoadRecordings(dir)
	if err != nil || len(rs) != 2 {
		t.Fatalf("%v %+v", err, rs)
	}
	a, b := rs[0], rs[1]
	if a.Name != "a.sse" || a.Wire != provider.WireAnthropic || strings.Join(a.Tools, ",") != "read,exec" || !a.Reasoning {
		t.Errorf("a: %+v", a)
	}
	if b.Name != "sub/b.sse" || b.Wire != provider.WireAnthropic || len(b.Tools) != 0 || b.Reasoning {
		t.Errorf("b (wire detected): %+v", b)
	}
	write("a.flags", "--wire anthropic --idle-timeout 1s\n")
	if _, err := LoadRecordings(dir); err == nil || !strings.Contains(err.Error(), "--idle-timeout") {
		t.Errorf("a flag a mutant does not replay with: %v", err)
	}
	if _, err := LoadRecordings(t.TempDir()); err == nil {
		t.Error("an empty directory gave recordings")
	}
}

// TestGenerateMutant: mutants are reproducible from their seed, start from
// both kinds of origin on every wire, carry what was done to them, and
// differ from their origin.
func TestGenerateMutant(t *testing.T) {
	rs := EmbeddedRecordings()
	origin := map[string]*Recording{}
	for i := range rs {
		origin["from "+rs[i].Name] = &rs[i]
	}
	wires := map[provider.Wire]int{}
	kinds := map[string]int{}
	changed := 0
	const n = 300
	for i := uint64(0); i < n; i++ {
		c := GenerateMutant(rs, 5, i)
		again := GenerateMutant(rs, 5, i)
		if !bytes.Equal(c.Body, again.Body) || strings.Join(c.Variant, "|") != strings.Join(again.Variant, "|") {
			t.Fatalf("case %d is not reproducible", i)
		}
		if !c.Mutant || c.Model == "" || len(c.Variant) < 2 || len(c.Calls) != 0 {
			t.Fatalf("case %d: %+v", i, c)
		}
		if bytes.Contains(c.Body, []byte(placeholder)) {
			t.Fatalf("case %d keeps the placeholder: %q", i, c.Body)
		}
		wires[c.Wire]++
		var from []byte
		if r := origin[c.Variant[0]]; r != nil {
			kinds["recorded"]++
			from = r.Body
		} else if strings.HasPrefix(c.Variant[0], "from generated case ") {
			kinds["generated"]++
			from = GenerateVariant(5, i).Body
		} else {
			t.Fatalf("case %d: origin %q", i, c.Variant[0])
		}
		if !bytes.Equal(c.Body, from) {
			changed++
		}
	}
	if len(wires) != 3 || kinds["recorded"] < n/4 || kinds["generated"] < n/4 {
		t.Errorf("wires %v, origins %v", wires, kinds)
	}
	// A mutation can undo itself (a swap of equal events, a value replaced
	// by itself), rarely.
	if changed < n*9/10 {
		t.Errorf("%d of %d mutants differ from their origin", changed, n)
	}
}

func TestAgainstMutantsAgreeWithItself(t *testing.T) {
	helperEnv(t, "self")
	rep, err := Against(context.Background(), AgainstOptions{N: 80, Seed: 3, Command: []string{os.Args[0]}, Batch: true, BatchSize: 40, Jobs: 2, Mutants: EmbeddedRecordings()})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Cases != 80 || rep.Agree != 80 || !rep.OK() || len(rep.PerWire) != 3 {
		t.Fatalf("%+v", rep)
	}
}
