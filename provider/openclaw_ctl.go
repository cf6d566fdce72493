package provider

import "encoding/binary"

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
