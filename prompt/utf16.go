package prompt

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ocbench/ocbench/llm"
)

// OpenClaw measures every budget in JavaScript string lengths (UTF-16 code
// units). These helpers measure and cut Go strings in the same unit; an
// invalid byte counts as one unit (it reads as U+FFFD).

func runeUnits(r rune) int {
	if r >= 0x10000 {
		return 2
	}
	return 1
}

// len16 returns the UTF-16 length of s.
func len16(s string) int {
	n := 0
	for i := 0; i < len(s); {
		// Fast path: 8 ASCII bytes at a time.
		if i+8 <= len(s) && (uint64(s[i])|uint64(s[i+1])<<8|uint64(s[i+2])<<16|uint64(s[i+3])<<24|
			uint64(s[i+4])<<32|uint64(s[i+5])<<40|uint64(s[i+6])<<48|uint64(s[i+7])<<56)&0x8080808080808080 == 0 {
			n += 8
			i += 8
			continue
		}
		if s[i] < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		n += runeUnits(r)
		i += size
	}
	return n
}

// prefix16 returns the longest prefix of s of at most n UTF-16 units that
// does not split a surrogate pair.
func prefix16(s string, n int) string {
	if n <= 0 {
		return ""
	}
	u := 0
	for i := 0; i < len(s); {
		size, units := 1, 1
		if s[i] >= utf8.RuneSelf {
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			units = runeUnits(r)
		}
		if u+units > n {
			return s[:i]
		}
		u += units
		i += size
	}
	return s
}

// suffix16 returns the longest suffix of s of at most n UTF-16 units that
// does not split a surrogate pair.
func suffix16(s string, n int) string {
	if n <= 0 {
		return ""
	}
	u := 0
	for i := len(s); i > 0; {
		r, size := utf8.DecodeLastRuneInString(s[:i])
		units := runeUnits(r)
		if size == 1 && r == utf8.RuneError {
			units = 1
		}
		if u+units > n {
			return s[i:]
		}
		u += units
		i -= size
	}
	return s
}

// trimEndJS trims trailing whitespace as JavaScript's trimEnd does.
func trimEndJS(s string) string { return strings.TrimRightFunc(s, llm.IsJSSpace) }

func itoa(n int) string { return strconv.Itoa(n) }
