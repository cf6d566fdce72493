package tokenize

import "unsafe"

// b2s returns b as a string without copying. The caller must neither keep
// the string past the call it passes it to nor let b change meanwhile.
func b2s(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
