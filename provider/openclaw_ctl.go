package provider

import (
	"encoding/binary"
	"unicode/utf8"

	"github.com/valyala/fastjson"
)

// JSON.parse refuses a control character (U+0000-U+001F) inside a string,
// where fastjson and the scans of this package let it through: with the
// OpenClaw rules an event whose data holds one is malformed JSON, as
// OpenClaw's parse of it fails.

// anyCtl reports whether b holds a byte below 0x20 (a control character,
// or the JSON spaces \t \n \r): the cheap test before jsonCtl.
func anyCtl(b []byte) bool {
	for len(b) >= 8 {
		if ctlBytes(binary.LittleEndian.Uint64(b)) != 0 {
			return true
		}
		b = b[8:]
	}
	for _, c := range b {
		if c < ' ' {
			return true
		}
	}
	return false
}

// jsParses reports whether JSON.parse takes the text b: fastjson's strict
// Validate, which misses a control character after some escapes, and
// jsonCtl.
func jsParses(b []byte) bool {
	return fastjson.ValidateBytes(b) == nil && !jsonCtl(b)
}

// jsonCtl reports whether the JSON text b holds a control character that
// JSON.parse refuses: any inside a string, and outside one any but the
// spaces \t \n \r.
func jsonCtl(b []byte) bool {
	if !anyCtl(b) {
		return false
	}
	in := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			in = !in
		case c == '\\' && in:
			i++
		case c < ' ' && (in || c != '\t' && c != '\n' && c != '\r'):
			return true
		}
	}
	return false
}

// ocMaxErrorUnits bounds an error message, in UTF-16 code units.
const ocMaxErrorUnits = 4096

// ocErrorMessage is the errorMessage @openclaw/ai's transports give a
// failed stream: the message of the error the stream ends with, projected
// as every provider error is (projectProviderError): trimmed as
// String.prototype.trim trims, "Unknown provider error" when nothing is
// left, and past 4096 UTF-16 code units cut there (a surrogate pair is
// never split) and marked "... [truncated]". (The projection's redaction
// of credentials and of JSON inside messages is not reproduced.)
func ocErrorMessage(msg string) string {
	t := jsTrim([]byte(msg))
	switch {
	case len(t) == 0:
		return "Unknown provider error"
	case len(t) <= ocMaxErrorUnits || utf16Units(t) <= ocMaxErrorUnits:
		if len(t) == len(msg) {
			return msg
		}
		return string(t)
	}
	units, end := 0, 0
	for end < len(t) {
		_, n := utf8.DecodeRune(t[end:])
		w := 1
		if n == 4 {
			w = 2
		}
		if units+w > ocMaxErrorUnits {
			break
		}
		units += w
		end += n
	}
	return string(t[:end]) + "... [truncated]"
}
