package redact

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strings"
	"testing"
)

func TestLiteralForms(t *testing.T) {
	key := `k3y"with<odd>&\chars/é`
	r := New(key)
	htmlJSON, _ := json.Marshal(key) // Go's default: HTML-escaped
	var plain bytes.Buffer
	enc := json.NewEncoder(&plain)
	enc.SetEscapeHTML(false)
	enc.Encode(key)
	inner, _ := json.Marshal(string(htmlJSON))
	for name, text := range map[string]string{
		"raw":          "upstream said: " + key + " is wrong",
		"json html":    `{"error":{"message":` + string(htmlJSON) + `}}`,
		"json plain":   `{"error":` + strings.TrimSpace(plain.String()) + `}`,
		"json ascii":   `{"e":"k3y\"with<odd>&\\chars/\u00e9"}`,
		"double json":  `{"body":` + string(inner) + `}`,
		"query":        "GET /v1?key=" + url.QueryEscape(key) + "&x=1",
		"path":         "/keys/" + url.PathEscape(key),
		"twice":        key + key,
		"at both ends": key + " middle " + key,
	} {
		got := r.String(text)
		if strings.Contains(got, "k3y") || !strings.Contains(got, Marker) {
			t.Errorf("%s: %q -> %q", name, text, got)
		}
	}
}

func TestPatterns(t *testing.T) {
	r := New()
	for _, c := range []struct{ in, want string }{
		{"key sk-ant-api03-abcdefghijklmnop1234 end", "key [REDACTED] end"},
		{"Authorization: Bearer abc.def-ghi_jkl", "Authorization: [REDACTED]"},
		{"Basic dXNlcjpwYXNzd29yZA==", "[REDACTED]"},
		{"AIzaSyA1234567890abcdefghij", "[REDACTED]"},
		{"task-sk-abcdefghijklmnopqrstu", "task-sk-abcdefghijklmnopqrstu"}, // not at a word start
		{"sk-short", "sk-short"},
		{"Bearer short", "Bearer short"},
		{"nothing here", "nothing here"},
	} {
		if got := r.String(c.in); got != c.want {
			t.Errorf("%q -> %q, want %q", c.in, got, c.want)
		}
	}
	var nilR *Redactor
	if got := nilR.String("Bearer abcdefghijk"); got != Marker {
		t.Errorf("nil redactor: %q", got)
	}
}

func TestShortAndEmptySecretsIgnored(t *testing.T) {
	r := New("", "k", "short")
	if got := r.String("a k in a short text"); got != "a k in a short text" {
		t.Fatal(got)
	}
}

func TestStringDoesNotAllocateWithoutSecrets(t *testing.T) {
	r := New("a-configured-key-123", "another-key-4567")
	s := strings.Repeat("a plain log line with sk- and Bearer but no secret; ", 20)
	if n := testing.AllocsPerRun(100, func() { _ = r.String(s) }); n != 0 {
		t.Fatalf("%v allocs", n)
	}
}

func TestError(t *testing.T) {
	r := New("secret-value-123")
	base := fmt.Errorf("upstream 401: invalid key secret-value-123: %w", fs.ErrPermission)
	err := r.Error(base)
	if strings.Contains(err.Error(), "secret-value-123") || !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("%v", err)
	}
	clean := errors.New("no secret")
	if r.Error(clean) != clean || r.Error(nil) != nil {
		t.Fatal("clean errors must be returned as they are")
	}
}

func TestWriterSplits(t *testing.T) {
	key := "the-configured-key-0123456789"
	r := New(key)
	text := "data: {\"error\":\"bad key " + key + "\"}\n\nmore Bearer tok_abcdefghij and sk-abcdefghijklmnopqrstuvwxyz tail " + key
	want := r.String(text)
	for cut := 0; cut <= len(text); cut++ {
		var out bytes.Buffer
		w := NewWriter(r, &out)
		w.Write([]byte(text[:cut]))
		w.Write([]byte(text[cut:]))
		w.Flush()
		if got := out.String(); strings.Contains(got, key) || strings.Contains(got, "tok_abcdefghij") || got != want {
			t.Fatalf("cut %d: %q\nwant %q", cut, got, want)
		}
	}
	// After a newline nothing is held back.
	var out bytes.Buffer
	w := NewWriter(r, &out)
	w.Write([]byte("data: {\"x\":1}\n\n"))
	if out.String() != "data: {\"x\":1}\n\n" {
		t.Fatalf("held back %q", out.String())
	}
}

func TestEnviron(t *testing.T) {
	env := []string{"HOME=/root", "OPENAI_API_KEY=sk-live-123456789", "GITHUB_TOKEN=ghp_x", "PATH=/bin", "DB_PASSWORD=hunter2hunter2", "MY_AUTH=abcdefgh12"}
	got := FromEnviron(env)
	want := []string{"sk-live-123456789", "hunter2hunter2", "abcdefgh12"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%q", got)
	}
	for _, n := range []string{"ANTHROPIC_API_KEY", "aws_secret_access_key", "GH_TOKEN", "PGPASSWORD", "PRIVATE_PEM", "X_AUTH"} {
		if !IsSecretEnvName(n) {
			t.Errorf("%s not secret", n)
		}
	}
	for _, n := range []string{"HOME", "PATH", "LANG", "TERM", "AUTHOR"} {
		if IsSecretEnvName(n) {
			t.Errorf("%s secret", n)
		}
	}
}

func FuzzRedact(f *testing.F) {
	f.Add("upstream echoed sk-abc and the-key-value-1 here", "the-key-value-1", 7)
	f.Add(`{"m":"the-key-\"value-1"}`, `the-key-"value-1`, 3)
	f.Add("aaaaaaaaaaaaaaaa", "aaaaaaaa", 5)
	f.Fuzz(func(t *testing.T, text, key string, cut int) {
		r := New(key)
		got := r.String(text)
		check := len(key) >= MinSecretLen && !strings.ContainsAny(key, "[]") && !strings.Contains(Marker, key)
		if check && strings.Contains(got, key) {
			t.Fatalf("key %q survives in %q", key, got)
		}
		var out bytes.Buffer
		w := NewWriter(r, &out)
		if cut < 0 {
			cut = -cut
		}
		if len(text) > 0 {
			cut %= len(text) + 1
		} else {
			cut = 0
		}
		w.Write([]byte(text[:cut]))
		w.Write([]byte(text[cut:]))
		w.Flush()
		if check && strings.Contains(out.String(), key) {
			t.Fatalf("writer: key %q survives in %q", key, out.String())
		}
	})
}
