package redact

import (
	"strings"
	"testing"
)

// refIndex is index written plainly: each byte tested against every
// literal's first byte and the pattern letters, token bytes by their
// definition. FuzzIndexMatchesReference holds the table-driven index to it.
func refIndex(r *Redactor, s []byte) (int, int) {
	token := func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		atWord := i == 0 || !token(s[i-1])
		cand := false
		if r != nil {
			for _, n := range r.needles {
				cand = cand || n[0] == c
			}
		}
		switch c {
		case 'B', 'b', 's', 'x', 'g', 'A', 'h', 'p':
			cand = cand || atWord
		}
		if !cand {
			continue
		}
		if n := r.match(s[i:], atWord); n > 0 {
			return i, n
		}
	}
	return -1, 0
}

func FuzzIndexMatchesReference(f *testing.F) {
	f.Add("see sk-abcdefghijklmnopqrstu and Bearer abcdefghij", "the-key-value-1")
	f.Add("xsk-abcdefghijklmnopqrstu bsk-abcdefghijklmnopqrstuv", "")
	f.Add(`{"error":"bad key the-key-value-1"}`, "the-key-value-1")
	f.Add("Basic abcdefgh", "")
	f.Add("k:12345678", "12345678")
	f.Fuzz(func(t *testing.T, text, key string) {
		for _, r := range []*Redactor{nil, New(), New(key)} {
			i, n := r.index([]byte(text))
			ri, rn := refIndex(r, []byte(text))
			if i != ri || n != rn {
				t.Fatalf("index(%q) with key %q = %d,%d; the reference says %d,%d", text, key, i, n, ri, rn)
			}
			// String, Bytes and Contains skip a text shorter than minMatch.
			if i >= 0 && n < minMatch {
				t.Fatalf("index(%q) with key %q matched %d bytes, fewer than minMatch", text, key, n)
			}
		}
	})
}

// BenchmarkIndexProse scans 2 KB of ordinary text that holds no secret
// (what most tool results, log lines and events are) with a Redactor of
// two configured keys.
func BenchmarkIndexProse(b *testing.B) {
	r := New("sk-proj-configured-key-0123456789", "another-secret-value")
	text := []byte(strings.Repeat("The assistant read the file, patched both handlers and ran go test; all 42 passed. ", 25))
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if i, _ := r.index(text); i >= 0 {
			b.Fatal("found a secret in prose")
		}
	}
}

// BenchmarkIndexText scans 2 KB of other text that holds no secret: a
// command's numeric output, and Russian and Chinese prose (bytes of
// non-Latin scripts start no secret).
func BenchmarkIndexText(b *testing.B) {
	r := New("sk-proj-configured-key-0123456789", "another-secret-value")
	for _, c := range []struct{ name, line string }{
		{"numbers", "2026-12-02 19:30:27  1024  0.75  42.0  13  7 -\n"},
		{"russian", "Ассистент прочитал файл, исправил оба обработчика и запустил тесты; все 42 прошли. "},
		{"chinese", "助手读取了文件，修复了两个处理程序并运行了测试；全部四十二个都通过了。"},
	} {
		b.Run(c.name, func(b *testing.B) {
			text := []byte(strings.Repeat(c.line, 2048/len(c.line)+1)[:2048])
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				if i, _ := r.index(text); i >= 0 {
					b.Fatal("found a secret in text")
				}
			}
		})
	}
}
