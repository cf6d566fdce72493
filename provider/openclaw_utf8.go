package provider

import "unicode/utf8"

// appendWHATWGUTF8 appends src to dst decoded as the WHATWG Encoding
// Standard's UTF-8 decoder (JavaScript's TextDecoder, which reads every
// SSE body in OpenClaw) decodes it, and encoded again as UTF-8: each
// maximal subpart of an ill-formed sequence becomes one U+FFFD. "\xe4\xb8A"
// (a three-byte sequence cut short) is one U+FFFD and "A", where Go's
// utf8.DecodeRune sees two errors; "\xed\xa0\x80" (an encoded surrogate)
// is three.
func appendWHATWGUTF8(dst, src []byte) []byte {
	const fffd = "\uFFFD"
	for i := 0; i < len(src); {
		c := src[i]
		if c < utf8.RuneSelf {
			j := i + 1
			for j < len(src) && src[j] < utf8.RuneSelf {
				j++
			}
			dst = append(dst, src[i:j]...)
			i = j
			continue
		}
		// need: continuation bytes still expected; lo, hi: the range the
		// first of them must fall in.
		need, lo, hi := 0, byte(0x80), byte(0xBF)
		switch {
		case c >= 0xC2 && c <= 0xDF:
			need = 1
		case c == 0xE0:
			need, lo = 2, 0xA0
		case c == 0xED:
			need, hi = 2, 0x9F
		case c >= 0xE1 && c <= 0xEF:
			need = 2
		case c == 0xF0:
			need, lo = 3, 0x90
		case c == 0xF4:
			need, hi = 3, 0x8F
		case c >= 0xF1 && c <= 0xF3:
			need = 3
		default:
			dst = append(dst, fffd...)
			i++
			continue
		}
		j := i + 1
		for ; need > 0; need-- {
			if j >= len(src) || src[j] < lo || src[j] > hi {
				break
			}
			j++
			lo, hi = 0x80, 0xBF
		}
		if need > 0 {
			// The bytes so far are one maximal subpart; the byte that
			// broke it is read again on its own.
			dst = append(dst, fffd...)
		} else {
			dst = append(dst, src[i:j]...)
		}
		i = j
	}
	return dst
}
