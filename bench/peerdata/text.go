package peerdata

import "math/rand/v2"

// TokenizeInputBytes is the size of the mixed text the token-counting
// scenarios and the tokenizer peer count (MixedText).
const TokenizeInputBytes = 256 << 10

// MixedText is the token-counting input of bench's scenarios and the
// tokenizer peer.
func MixedText() string { return mixedText(TokenizeInputBytes, 7) }

// mixedText returns n bytes of deterministic mixed text: English prose,
// Go code, JSON, Markdown, numbers, CJK and accented words, emoji — the mix
// an agent's context holds. Cuts fall on rune boundaries.
func mixedText(n int, seed uint64) string {
	pieces := []string{
		"The quick brown fox jumps over the lazy dog. ", "func (d *Decoder) Next() bool {\n\treturn d.next()\n}\n",
		`{"path":"src/main.go","line":42,"ok":true} `, "## Heading\n\n- item one\n- item two\n\n", "1234567890 3.14159 ",
		"東京都の天気は晴れです。", "café naïve résumé — déjà vu ", "🚀✨ ", "    if err != nil {\n        return err\n    }\n",
		"https://example.com/path?q=1&r=2 ", "SELECT id, name FROM users WHERE id = $1;\n", "\t\t\n", "Ünïcödé ",
	}
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, 0, n+64)
	for len(b) < n {
		b = append(b, pieces[r.IntN(len(pieces))]...)
	}
	// Trim to n on a rune boundary.
	for n > 0 && n < len(b) && b[n]&0xC0 == 0x80 {
		n--
	}
	return string(b[:n])
}
