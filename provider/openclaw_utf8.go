package provider

import (
	"bytes"
	"errors"
	"unicode/utf8"

	"github.com/ocbench/ocbench/llm"
)

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

// ocText is what the OpenClaw rules make of an event's data before it is
// decoded: ill-formed UTF-8 replaced as TextDecoder replaces it, and every
// \uD800-\uDFFF escape that pairs with nothing written as its three-byte
// (WTF-8) encoding, so that the string keeps the lone surrogate a
// JavaScript string would hold (JSON.parse keeps it; JSON.stringify writes
// it back as the escape, as llm.AppendJSONString does). Data that needs
// neither is returned as it is.
//
// On Anthropic, OpenClaw's own SSE parser takes each data line's value with
// trimStart (every leading JavaScript space, not one ' '): a value that
// starts with one is trimmed so.
func (d *Decoder) ocText(data []byte) []byte {
	valid := validUTF8(data)
	at := llm.NextLoneSurrogate(data, 0)
	trim := d.wire == WireAnthropic && spacedLine(data)
	if valid && at < 0 && !trim {
		return data
	}
	buf := d.u8[:0]
	if valid {
		buf = append(buf, data...)
	} else {
		buf = appendWHATWGUTF8(buf, data)
		at = llm.NextLoneSurrogate(buf, 0)
	}
	if trim {
		buf = trimLineStarts(buf)
		at = llm.NextLoneSurrogate(buf, 0)
	}
	if at >= 0 {
		buf = llm.LoneSurrogatesToWTF8(buf, at)
	}
	d.u8 = buf
	d.data, d.dataBorrowed = d.u8, false
	return d.u8
}

// validText reports whether a decoded string may be kept: valid UTF-8 and,
// with the OpenClaw rules, also the lone surrogates ocText writes.
func (d *Decoder) validText(b []byte) bool {
	return validUTF8(b) || d.opts.OpenClaw && validWTF8(b)
}

// validWTF8 is utf8.Valid allowing surrogate code points in their
// three-byte encoding (0xED 0xA0-0xBF 0x80-0xBF).
func validWTF8(b []byte) bool {
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			if len(b) < 3 || b[0] != 0xED || b[1] < 0xA0 || b[1] > 0xBF || b[2] < 0x80 || b[2] > 0xBF {
				return false
			}
			n = 3
		}
		b = b[n:]
	}
	return true
}

// ocClean reports whether ocText leaves data as it is (always, without
// the OpenClaw rules): a learned shape's offsets hold for it.
func (d *Decoder) ocClean(data []byte) bool {
	return !d.opts.OpenClaw || validUTF8(data) && !anyCtl(data) && llm.NextLoneSurrogate(data, 0) < 0 &&
		(d.wire != WireAnthropic || !spacedLine(data)) && !maybeDupKeys(data) &&
		(d.wire != WireOpenAIChat || !d.ocLegacyRoute(data))
}

// spacedLine reports whether a line of data (lines joined with '\n')
// starts with a byte that may begin a JavaScript space.
func spacedLine(data []byte) bool {
	for i := 0; ; {
		if i < len(data) {
			if c := data[i]; c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r' || c >= utf8.RuneSelf {
				return true
			}
		}
		j := bytes.IndexByte(data[i:], '\n')
		if j < 0 {
			return false
		}
		i += j + 1
	}
}

// trimLineStarts removes, in place, the JavaScript spaces each line of b
// starts with (String.prototype.trimStart on each data line's value).
func trimLineStarts(b []byte) []byte {
	w := 0
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		if w > 0 {
			b[w] = '\n'
			w++
		}
		for len(line) > 0 {
			r, n := utf8.DecodeRune(line)
			if !llm.IsJSSpace(r) {
				break
			}
			line = line[n:]
		}
		w += copy(b[w:], line)
	}
	return b[:w]
}

// ocMaxEventUnits is OpenClaw's SSE sanitizer's bound
// (SSE_SANITIZE_BUFFER_MAX_CHARS): an event that grows past it without a
// boundary fails the stream with MsgSSEBufferExceeded.
const ocMaxEventUnits = 16777216

// isEventLimit reports whether err is the decoder's bound on an SSE line or
// event.
func isEventLimit(err error) bool {
	var le *LimitError
	return errors.As(err, &le) && (le.What == "SSE line" || le.What == "SSE event")
}

// utf16Units is the length of b in UTF-16 code units, each ill-formed byte
// one (b has been through TextDecoder's replacement when it counts).
func utf16Units(b []byte) int {
	n := 0
	for _, c := range b {
		if c&0xC0 != 0x80 {
			n++ // ASCII or a lead byte
		}
		if c >= 0xF0 {
			n++ // a four-byte character is two units
		}
	}
	return n
}
