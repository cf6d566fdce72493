package transcript

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/tokenize"
)

// OpenClaw measures and cuts text in JavaScript string units (UTF-16 code
// units). These helpers reproduce that on Go strings so that limits and cut
// points match byte for byte; for ASCII text they are plain byte lengths.

// u16len returns the length of s in UTF-16 code units; never more than
// len(s) (tokenize.UTF16Len: invalid bytes count one unit each).
func u16len[T string | []byte](s T) int {
	if b, ok := any(s).([]byte); ok {
		return tokenize.UTF16LenBytes(b)
	}
	return tokenize.UTF16Len(string(s)) // s is a string: no copy
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// jsText is a string addressed in UTF-16 code units, as JavaScript does.
type jsText struct {
	s     string   // when ascii
	u     []uint16 // otherwise
	ascii bool
}

func newJSText(s string) jsText {
	if isASCII(s) {
		return jsText{s: s, ascii: true}
	}
	return jsText{u: utf16.Encode([]rune(s))}
}

func (t jsText) len() int {
	if t.ascii {
		return len(t.s)
	}
	return len(t.u)
}

// slice is String.prototype.slice with non-negative, clamped bounds.
func (t jsText) slice(a, b int) string {
	n := t.len()
	a = max(0, min(a, n))
	b = max(0, min(b, n))
	if a >= b {
		return ""
	}
	if t.ascii {
		return t.s[a:b]
	}
	return string(utf16.Decode(t.u[a:b]))
}

func (t jsText) at(i int) uint16 {
	if t.ascii {
		return uint16(t.s[i])
	}
	return t.u[i]
}

// lastIndexNL is text.lastIndexOf("\n", from).
func (t jsText) lastIndexNL(from int) int {
	n := t.len()
	if from >= n {
		from = n - 1
	}
	for i := from; i >= 0; i-- {
		if t.at(i) == '\n' {
			return i
		}
	}
	return -1
}

// indexNL is text.indexOf("\n", from).
func (t jsText) indexNL(from int) int {
	for i := max(0, from); i < t.len(); i++ {
		if t.at(i) == '\n' {
			return i
		}
	}
	return -1
}

// jsTrim is String.prototype.trim: s itself, without a look at its
// runes, when it starts and ends with an ASCII byte that is not a space
// (most texts).
func jsTrim(s string) string {
	if len(s) > 0 && asciiNonSpace(s[0]) && asciiNonSpace(s[len(s)-1]) {
		return s
	}
	return strings.TrimFunc(s, llm.IsJSSpace)
}

func jsTrimStart(s string) string { return strings.TrimLeftFunc(s, llm.IsJSSpace) }
func jsTrimEnd(s string) string   { return strings.TrimRightFunc(s, llm.IsJSSpace) }

// asciiNonSpace reports whether c is an ASCII byte llm.IsJSSpace does not match
// (the bytes of a multi-byte rune are all >= 0x80).
func asciiNonSpace(c byte) bool {
	return c < 0x80 && c != ' ' && (c < '\t' || c > '\r')
}

// jsCollapseSpace is s.replace(/\s+/g, " ").
func jsCollapseSpace(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	inSpace := false
	for _, r := range s {
		if llm.IsJSSpace(r) {
			if !inSpace {
				b.WriteByte(' ')
			}
			inSpace = true
			continue
		}
		inSpace = false
		b.WriteRune(r)
	}
	return b.String()
}
