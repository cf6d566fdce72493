package cacheprofile

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ocbench/ocbench/prompt"
)

func TestWorkspaceStablePrefix(t *testing.T) {
	dir := t.TempDir()
	if err := prompt.MaterializeSample(dir); err != nil {
		t.Fatal(err)
	}
	wr, err := ProfileWorkspace(dir, 6, WorkspaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !wr.StableConstant || len(wr.Breakers) != 0 {
		t.Fatalf("stable prefix changed with only dynamic inputs changing: %v", wr.Breakers)
	}
	for i, tu := range wr.Turns {
		if tu.StableTokens <= 0 || tu.StableHash != wr.Turns[0].StableHash {
			t.Errorf("turn %d: stable %d tokens, hash %s", i+1, tu.StableTokens, tu.StableHash)
		}
		if i > 0 && tu.DynamicHash == wr.Turns[i-1].DynamicHash {
			t.Errorf("turn %d: the dynamic part did not change", i+1)
		}
		// Every turn's first call reads at least the stable prefix; the
		// call after the tool result reads everything before it.
		if i > 0 && tu.Calls[0].CacheRead < tu.StableTokens {
			t.Errorf("turn %d: first call read %d < stable %d", i+1, tu.Calls[0].CacheRead, tu.StableTokens)
		}
		if tu.Calls[1].Reason != "hit" {
			t.Errorf("turn %d: call after the tool result: %+v", i+1, tu.Calls[1])
		}
	}
}

func TestWorkspaceStableInputBreaksCache(t *testing.T) {
	dir := t.TempDir()
	if err := prompt.MaterializeSample(dir); err != nil {
		t.Fatal(err)
	}
	wr, err := ProfileWorkspace(dir, 5, WorkspaceOptions{BeforeTurn: func(turn int, ws string) {
		if turn == 2 {
			f := filepath.Join(ws, "AGENTS.md")
			b, _ := os.ReadFile(f)
			os.WriteFile(f, append(b, "\nUpdated rule: always run the tests.\n"...), 0o644)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if wr.StableConstant {
		t.Fatal("editing AGENTS.md did not change the stable prefix")
	}
	tu := wr.Turns[2]
	if !slices.Contains(tu.StableChanged, "file AGENTS.md") {
		t.Errorf("turn 3 stable changes = %v, want AGENTS.md", tu.StableChanged)
	}
	if c := tu.Calls[0]; c.CacheRead != 0 || c.Reason != "prefix-changed" || c.ChangedAt != "stable system prefix" {
		t.Errorf("turn 3 first call: %+v", c)
	}
	if len(wr.Turns[3].StableChanged) != 0 {
		t.Errorf("turn 4 reports changes %v", wr.Turns[3].StableChanged)
	}
	if len(wr.Breakers) != 1 {
		t.Errorf("breakers %v", wr.Breakers)
	}
}
