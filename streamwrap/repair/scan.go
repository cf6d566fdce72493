package repair

import "encoding/binary"

// The scanner below is the single JSON grammar of the package. It is
// recursive over containers (bounded by MaxDepth), allocation free, and
// tells a syntax error apart from input that ends too early, which is what
// truncation detection needs.

type scanErr uint8

const (
	scanOK   scanErr = iota
	scanEOF          // the input ended inside the value
	scanBad          // a byte that cannot continue the value
	scanDeep         // nesting above MaxDepth
)

// strSafe[c] is true for bytes that need no attention inside a string.
var strSafe = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return
}()

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipWS(b []byte, i int) int {
	for i < len(b) && isWS(b[i]) {
		i++
	}
	return i
}

// Valid reports whether b is exactly one JSON value (RFC 8259, as
// encoding/json.Valid accepts it, nesting up to MaxDepth), surrounded by
// optional whitespace. It allocates nothing.
func Valid(b []byte) bool {
	i := skipWS(b, 0)
	end, e := scanValue(b, i, 0)
	return e == scanOK && skipWS(b, end) == len(b)
}

// validObject reports whether b is one JSON object with optional
// surrounding whitespace.
func validObject(b []byte) bool {
	i := skipWS(b, 0)
	if i == len(b) || b[i] != '{' {
		return false
	}
	end, e := scanValue(b, i, 0)
	return e == scanOK && skipWS(b, end) == len(b)
}

// scanValue scans the value starting exactly at b[i] and returns the index
// just past it.
func scanValue(b []byte, i, depth int) (int, scanErr) {
	if i >= len(b) {
		return i, scanEOF
	}
	switch c := b[i]; c {
	case '{':
		return scanObject(b, i, depth+1)
	case '[':
		return scanArray(b, i, depth+1)
	case '"':
		return scanString(b, i)
	case 't':
		return scanLit(b, i, "true")
	case 'f':
		return scanLit(b, i, "false")
	case 'n':
		return scanLit(b, i, "null")
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			return scanNumber(b, i)
		}
		return i, scanBad
	}
}

func scanLit(b []byte, i int, lit string) (int, scanErr) {
	for k := 0; k < len(lit); k++ {
		if i+k >= len(b) {
			return i + k, scanEOF
		}
		if b[i+k] != lit[k] {
			return i + k, scanBad
		}
	}
	return i + len(lit), scanOK
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// scanNumber scans a JSON number. A number cut right after '-', '.', 'e' or
// the exponent sign is scanEOF when the input ends there.
func scanNumber(b []byte, i int) (int, scanErr) {
	if b[i] == '-' {
		i++
		if i == len(b) {
			return i, scanEOF
		}
	}
	switch {
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		i++
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	default:
		return i, scanBad
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i == len(b) {
			return i, scanEOF
		}
		if !isDigit(b[i]) {
			return i, scanBad
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i == len(b) {
			return i, scanEOF
		}
		if !isDigit(b[i]) {
			return i, scanBad
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	return i, scanOK
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c|0x20 >= 'a' && c|0x20 <= 'f')
}

// SWAR constants: a byte-wise test of 8 bytes at a time.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// needsAttention reports whether any of the 8 bytes in x is '"', '\\' or a
// control character (< 0x20). Bytes >= 0x80 never match.
func needsAttention(x uint64) bool {
	q := x ^ (lsb * '"')
	bs := x ^ (lsb * '\\')
	return ((x-lsb*0x20)&^x|(q-lsb)&^q|(bs-lsb)&^bs)&msb != 0
}

// skipSafe advances i over string bytes that need no attention, 8 at a
// time while it can.
func skipSafe(b []byte, i int) int {
	for i+8 <= len(b) && !needsAttention(binary.LittleEndian.Uint64(b[i:])) {
		i += 8
	}
	for i < len(b) && strSafe[b[i]] {
		i++
	}
	return i
}

// scanString scans a JSON string starting at the opening quote b[i].
func scanString(b []byte, i int) (int, scanErr) {
	i++
	for {
		i = skipSafe(b, i)
		if i == len(b) {
			return i, scanEOF
		}
		switch b[i] {
		case '"':
			return i + 1, scanOK
		case '\\':
			i++
			if i == len(b) {
				return i, scanEOF
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				i++
				for k := 0; k < 4; k++ {
					if i == len(b) {
						return i, scanEOF
					}
					if !isHex(b[i]) {
						return i, scanBad
					}
					i++
				}
			default:
				return i, scanBad
			}
		default: // control character
			return i, scanBad
		}
	}
}

func scanObject(b []byte, i, depth int) (int, scanErr) {
	if depth > MaxDepth {
		return i, scanDeep
	}
	i = skipWS(b, i+1)
	if i == len(b) {
		return i, scanEOF
	}
	if b[i] == '}' {
		return i + 1, scanOK
	}
	for {
		if b[i] != '"' {
			return i, scanBad
		}
		var e scanErr
		if i, e = scanString(b, i); e != scanOK {
			return i, e
		}
		i = skipWS(b, i)
		if i == len(b) {
			return i, scanEOF
		}
		if b[i] != ':' {
			return i, scanBad
		}
		i = skipWS(b, i+1)
		if i, e = scanValue(b, i, depth); e != scanOK {
			return i, e
		}
		i = skipWS(b, i)
		if i == len(b) {
			return i, scanEOF
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
			if i == len(b) {
				return i, scanEOF
			}
		case '}':
			return i + 1, scanOK
		default:
			return i, scanBad
		}
	}
}

func scanArray(b []byte, i, depth int) (int, scanErr) {
	if depth > MaxDepth {
		return i, scanDeep
	}
	i = skipWS(b, i+1)
	if i == len(b) {
		return i, scanEOF
	}
	if b[i] == ']' {
		return i + 1, scanOK
	}
	for {
		var e scanErr
		if i, e = scanValue(b, i, depth); e != scanOK {
			return i, e
		}
		i = skipWS(b, i)
		if i == len(b) {
			return i, scanEOF
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case ']':
			return i + 1, scanOK
		default:
			return i, scanBad
		}
	}
}
