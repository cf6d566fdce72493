package llm

import (
	"bytes"
	"unicode/utf16"
)

// NextLoneSurrogate returns the offset of the first \u escape at or after
// i (i not inside an escape) of a surrogate that JSON.parse leaves lone: a
// low one, or a high one not followed at once by a low one; -1 when there
// is none.
func NextLoneSurrogate(b []byte, i int) int {
	// Most text has no \u escape at all: one search (vectorized once
	// backslashes turn out frequent) says so faster than a step per
	// backslash.
	if j := bytes.Index(b[i:], []byte(`\u`)); j < 0 {
		return -1
	} else if j > 0 && b[i+j-1] != '\\' {
		i += j // at an escape: no backslash before it to pair with
	}
	for {
		j := bytes.IndexByte(b[i:], '\\')
		if j < 0 {
			return -1
		}
		i += j
		if i+1 >= len(b) {
			return -1 // a trailing backslash escapes nothing
		}
		if b[i+1] != 'u' {
			i += 2
			continue
		}
		r, ok := Hex4(b[i+2:])
		if !ok {
			i += 2
			continue
		}
		if !utf16.IsSurrogate(r) {
			i += 6
			continue
		}
		if r < 0xDC00 && i+12 <= len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
			if r2, ok := Hex4(b[i+8:]); ok && r2 >= 0xDC00 && r2 <= 0xDFFF {
				i += 12
				continue
			}
		}
		return i
	}
}

// LoneSurrogatesToWTF8 rewrites in place, from the escape at offset at
// (NextLoneSurrogate's answer, at least 0) on, every \u escape of JSON text
// b that JSON.parse leaves a lone surrogate as the surrogate's three-byte
// (WTF-8) encoding, and returns the shortened text. A parser that reads it
// then holds the lone surrogate as JavaScript does (fastjson reads the
// escape as its six characters, encoding/json as U+FFFD), and
// AppendJSONString writes it back as the escape.
func LoneSurrogatesToWTF8(b []byte, at int) []byte {
	w, i := 0, 0
	for at >= 0 {
		w += copy(b[w:], b[i:at])
		r, _ := Hex4(b[at+2:])
		b[w], b[w+1], b[w+2] = 0xED, 0x80|byte(r>>6)&0x3F, 0x80|byte(r)&0x3F
		w += 3
		i = at + 6
		at = NextLoneSurrogate(b, i)
	}
	w += copy(b[w:], b[i:])
	return b[:w]
}

// Hex4 reads the four hex digits of a \u escape at the start of s; ok is
// false when s does not start with four.
func Hex4(s []byte) (r rune, ok bool) {
	if len(s) < 4 {
		return 0, false
	}
	for _, c := range s[:4] {
		v, ok := HexDigit(c)
		if !ok {
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	return r, true
}

// HexDigit returns the value of the hex digit c; ok is false for any other
// byte.
func HexDigit(c byte) (v byte, ok bool) {
	v = hexValues[c]
	return v, v < 16
}

// hexValues maps a byte to its hex digit's value, 0xFF for other bytes.
var hexValues = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xFF
	}
	for i := byte(0); i < 10; i++ {
		t['0'+i] = i
	}
	for i := byte(0); i < 6; i++ {
		t['a'+i], t['A'+i] = 10+i, 10+i
	}
	return t
}()
