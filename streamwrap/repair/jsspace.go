package repair

import (
	"unicode/utf8"

	"github.com/ocbench/ocbench/llm"
)

// JavaScript's String.prototype.trim and the regexp class \s strip the
// same set: the ECMAScript WhiteSpace and LineTerminator code points.
// OpenClaw measures prefixes and suffixes after such a trim, and in UTF-16
// code units, so these helpers do the same.

// jsTrimLeft returns the index of the first non-space rune of b[i:j].
func jsTrimLeft(b []byte, i, j int) int {
	for i < j {
		c := b[i]
		if c < utf8.RuneSelf {
			if c == ' ' || (c >= '\t' && c <= '\r') {
				i++
				continue
			}
			return i
		}
		r, n := utf8.DecodeRune(b[i:j])
		if !llm.IsJSSpace(r) {
			return i
		}
		i += n
	}
	return i
}

// jsTrimRight returns the end index of b[i:j] without trailing spaces.
func jsTrimRight(b []byte, i, j int) int {
	for j > i {
		c := b[j-1]
		if c < utf8.RuneSelf {
			if c == ' ' || (c >= '\t' && c <= '\r') {
				j--
				continue
			}
			return j
		}
		r, n := utf8.DecodeLastRune(b[i:j])
		if !llm.IsJSSpace(r) {
			return j
		}
		j -= n
	}
	return j
}

// jsTrim returns the bounds of b[i:j] trimmed as JavaScript trims.
func jsTrim(b []byte, i, j int) (int, int) {
	if i < j && b[i]-0x21 < 0x5f && b[j-1]-0x21 < 0x5f {
		return i, j // printable ASCII at both ends: nothing to trim
	}
	i = jsTrimLeft(b, i, j)
	return i, jsTrimRight(b, i, j)
}

// utf16Len is the length of s in UTF-16 code units (JavaScript's
// String.length). Invalid UTF-8 bytes count one unit each (they arrive in
// JavaScript as U+FFFD).
func utf16Len(s []byte) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		i += size
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}
