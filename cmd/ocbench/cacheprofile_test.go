package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const largeSessionFile = "../../testdata/sessions/pi-v1-anthropic-large-session.jsonl"

func TestCacheProfileJSON(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"cache-profile", largeSessionFile, "--json"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var doc struct {
		Sessions []struct {
			File  string `json:"file"`
			Calls []struct {
				Line      int64 `json:"line"`
				Predicted struct {
					CacheRead  *int   `json:"cacheRead"`
					CacheWrite *int   `json:"cacheWrite"`
					Reason     string `json:"reason"`
				} `json:"predicted"`
				Recorded *struct {
					CacheRead  *int64 `json:"cacheRead"`
					CacheWrite *int64 `json:"cacheWrite"`
				} `json:"recorded"`
			} `json:"calls"`
			Summary struct {
				Calls    int `json:"calls"`
				ToolLoop struct {
					Calls int `json:"calls"`
					Agree int `json:"agree"`
				} `json:"toolLoopAgreement"`
				UnexplainedMisses int `json:"unexplainedMisses"`
			} `json:"summary"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("invalid JSON: %v", err)
	}
	if len(doc.Sessions) != 1 {
		t.Fatalf("%d sessions", len(doc.Sessions))
	}
	s := doc.Sessions[0]
	if len(s.Calls) != 439 || s.Summary.Calls != 439 {
		t.Fatalf("%d calls, summary %d; want 439", len(s.Calls), s.Summary.Calls)
	}
	for _, c := range s.Calls {
		if c.Predicted.CacheRead == nil || c.Predicted.CacheWrite == nil || c.Predicted.Reason == "" {
			t.Fatalf("line %d: predicted fields missing", c.Line)
		}
		if c.Recorded == nil || c.Recorded.CacheRead == nil || c.Recorded.CacheWrite == nil {
			t.Fatalf("line %d: recorded fields missing", c.Line)
		}
	}
	if tl := s.Summary.ToolLoop; tl.Calls == 0 || float64(tl.Agree) < 0.98*float64(tl.Calls) {
		t.Errorf("tool-loop agreement %d/%d", tl.Agree, tl.Calls)
	}
}

func TestCacheProfileTextAndHTML(t *testing.T) {
	html := filepath.Join(t.TempDir(), "r.html")
	var out, errb bytes.Buffer
	if code := run([]string{"cache-profile", "--html", html, largeSessionFile}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"calls          439", "cache read", "without any cache", "most expensive misses", "UNEXPLAINED misses", "agreement on hit/miss"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("text lacks %q", want)
		}
	}
	b, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	if !strings.Contains(page, "<svg") || !strings.Contains(page, "<rect") {
		t.Error("HTML has no inline SVG chart")
	}
	// Self-contained: nothing to fetch, no scripts.
	rest := strings.ReplaceAll(page, `xmlns="http://www.w3.org/2000/svg"`, "")
	for _, bad := range []string{"<script", "http://", "https://", "<link", "@import"} {
		if strings.Contains(rest, bad) {
			t.Errorf("HTML contains %q", bad)
		}
	}
}

func TestCacheProfileBadInput(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "config.json")
	os.WriteFile(other, []byte(`{"editor":"vim"}`+"\n"), 0o644)
	var out, errb bytes.Buffer
	if code := run([]string{"cache-profile", other}, &out, &errb); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if !strings.Contains(errb.String(), "not an OpenClaw or pi session") || !strings.Contains(errb.String(), other) {
		t.Errorf("stderr: %s", errb.String())
	}
	errb.Reset()
	if code := run([]string{"cache-profile"}, &out, &errb); code != 2 {
		t.Errorf("no files: exit %d, want 2", code)
	}
}

func TestCacheProfileWorkspace(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"cache-profile", "--workspace", "sample", "--turns", "4"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"stable hash", "stable prefix: constant over all turns", "dynamic system part"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if code := run([]string{"cache-profile", "--workspace", "sample", "--turns", "3", "--json"}, &out, &errb); code != 0 {
		t.Fatalf("json exit %d: %s", code, errb.String())
	}
	var wr struct {
		Turns []struct {
			StableHash   string `json:"stableHash"`
			StableTokens int    `json:"stableTokens"`
		} `json:"turns"`
	}
	if err := json.Unmarshal(out.Bytes(), &wr); err != nil || len(wr.Turns) != 3 || wr.Turns[0].StableHash == "" || wr.Turns[0].StableTokens <= 0 {
		t.Errorf("json: %v %+v", err, wr)
	}
	if code := run([]string{"cache-profile", "--workspace", filepath.Join(t.TempDir(), "nope")}, &out, &errb); code != 1 {
		t.Errorf("missing workspace: exit %d", code)
	}
}
