package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPromptCommand(t *testing.T) {
	var out, errb bytes.Buffer
	if rc := run([]string{"prompt"}, &out, &errb); rc != 0 {
		t.Fatalf("rc %d: %s", rc, errb.String())
	}
	s := out.String()
	if !strings.HasPrefix(s, "You are a personal assistant running inside OpenClaw.\n## Tooling") ||
		!strings.Contains(s, "\n\n<!-- OPENCLAW_CACHE_BOUNDARY -->\n\n") || !strings.Contains(s, "# AGENTS.md - Your Workspace") {
		t.Fatalf("unexpected prompt:\n%s", s[:min(len(s), 400)])
	}

	out.Reset()
	if rc := run([]string{"prompt", "--mode", "none"}, &out, &errb); rc != 0 || out.String() != "You are a personal assistant running inside OpenClaw.\n" {
		t.Fatalf("none: rc %d %q", rc, out.String())
	}

	out.Reset()
	if rc := run([]string{"prompt", "--report", "--json", "--mode", "minimal"}, &out, &errb); rc != 0 {
		t.Fatalf("rc %d: %s", rc, errb.String())
	}
	var rep struct {
		Mode     string `json:"mode"`
		Boundary struct {
			Present          bool   `json:"present"`
			StableTokens     int    `json:"stableTokens"`
			StablePrefixHash string `json:"stablePrefixHash"`
		} `json:"boundary"`
		Files []struct {
			Name     string `json:"name"`
			Injected bool   `json:"injected"`
		} `json:"files"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Mode != "minimal" || !rep.Boundary.Present || rep.Boundary.StableTokens <= 0 || len(rep.Boundary.StablePrefixHash) != 16 {
		t.Fatalf("report %+v", rep)
	}

	out.Reset()
	if rc := run([]string{"prompt", "--report"}, &out, &errb); rc != 0 || !strings.Contains(out.String(), "Cache boundary: at char") || !strings.Contains(out.String(), "Stable-prefix hash:") {
		t.Fatalf("text report rc %d:\n%s", rc, out.String())
	}
}

func TestPromptCommandWorkspaceAndErrors(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "AGENTS.md"), []byte(strings.Repeat("z", 20000)), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if rc := run([]string{"prompt", "--workspace", dir, "--report"}, &out, &errb); rc != 0 {
		t.Fatalf("rc %d: %s", rc, errb.String())
	}
	if !strings.Contains(out.String(), "TRUNCATED") || !strings.Contains(out.String(), "MISSING") {
		t.Fatalf("report:\n%s", out.String())
	}
	errb.Reset()
	if rc := run([]string{"prompt", "--workspace", filepath.Join(dir, "nope")}, &out, &errb); rc != 1 || !strings.Contains(errb.String(), "workspace") {
		t.Fatalf("missing workspace: rc %d %q", rc, errb.String())
	}
	if rc := run([]string{"prompt", "--mode", "maximal"}, &out, &errb); rc != 2 {
		t.Fatalf("bad mode rc %d", rc)
	}
}

// TestPromptSampleHashStable: the built-in sample lives at a fixed path, so
// its stable-prefix hash is the same on every run, even after the files
// there were changed or added to.
func TestPromptSampleHashStable(t *testing.T) {
	hash := func() string {
		var o, e bytes.Buffer
		if code := run([]string{"prompt", "--report"}, &o, &e); code != 0 {
			t.Fatalf("exit %d: %s", code, e.String())
		}
		for _, l := range strings.Split(o.String(), "\n") {
			if strings.HasPrefix(l, "Stable-prefix hash:") {
				return l
			}
		}
		t.Fatalf("no hash line:\n%s", o.String())
		return ""
	}
	first := hash()
	dir := filepath.Join(os.TempDir(), sampleDirName)
	if err := os.WriteFile(filepath.Join(dir, "AGENTS.md"), []byte("tampered"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "BOOTSTRAP.md"), []byte("not in the sample"), 0o644); err != nil {
		t.Fatal(err)
	}
	if again := hash(); again != first {
		t.Errorf("hash changed between runs: %q then %q", first, again)
	}
	if _, err := os.Stat(filepath.Join(dir, "BOOTSTRAP.md")); err == nil {
		t.Error("a file that is not part of the sample was left in the sample workspace")
	}
}

// TestCacheProfileSampleHashStable: cache-profile --workspace sample uses
// the sample's fixed path (the path is part of the prompt), so the stable
// hash is the same on every run, also after the files there were tampered
// with.
func TestCacheProfileSampleHashStable(t *testing.T) {
	hash := func() string {
		var out, errb bytes.Buffer
		if code := run([]string{"cache-profile", "--workspace", "sample", "--turns", "1", "--json"}, &out, &errb); code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		var wr struct {
			Turns []struct {
				StableHash string `json:"stableHash"`
			} `json:"turns"`
		}
		if err := json.Unmarshal(out.Bytes(), &wr); err != nil || len(wr.Turns) != 1 || wr.Turns[0].StableHash == "" {
			t.Fatalf("json: %v %s", err, out.String())
		}
		return wr.Turns[0].StableHash
	}
	first := hash()
	if err := os.WriteFile(filepath.Join(os.TempDir(), sampleDirName, "SOUL.md"), []byte("tampered"), 0o644); err != nil {
		t.Fatal(err)
	}
	if again := hash(); again != first {
		t.Errorf("stable hash changed between runs: %s then %s", first, again)
	}
}
