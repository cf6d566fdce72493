package repair

//go:generate go run ./internal/genentities

import (
	"bytes"
	"encoding/binary"
	"unicode/utf8"
)

// HTML-entity decoding as OpenClaw's src/shared/html-entities.ts does it
// (streamwrap.md §4.5): one left-to-right pass over
// /&(?:#x([0-9a-f]+)|#(\d+)|([a-z][a-z0-9]+));/gi, where a numeric
// reference is replaced only when it is a Unicode scalar value (0..10FFFF,
// no surrogates), a named one when it is in the HTML5 table (the names
// ending in ';', matched case-sensitively), and the legacy names amp, quot,
// apos, lt and gt also in any case. Anything else, including references
// without the semicolon, is kept as it is.

// DecodeHTMLEntities appends s to dst with its HTML character references
// decoded once. Text without '&' is appended unchanged. It allocates
// nothing beyond growing dst.
func DecodeHTMLEntities(dst, s []byte) []byte {
	if bytes.IndexByte(s, '&') < 0 {
		return append(dst, s...)
	}
	sc := entityScanner{raw: s}
	return sc.decode(dst, false)
}

// entityScanner walks the characters of a text: raw bytes, or (json) the
// decoded characters of a JSON string body, where an escape that encodes
// an ASCII character takes part in matching and every other escape is an
// opaque character.
type entityScanner struct {
	raw  []byte
	json bool
	rep  [8]byte // the current replacement (at most two runes)
}

// unit returns the character at i (an ASCII byte, or a value >= 0x80 for
// anything else) and the index of the next one; -1 at the end.
func (sc *entityScanner) unit(i int) (int, int) {
	raw := sc.raw
	if i >= len(raw) {
		return -1, i
	}
	c := raw[i]
	if !sc.json || c != '\\' || i+1 >= len(raw) {
		return int(c), i + 1
	}
	switch e := raw[i+1]; e {
	case 'u':
		if i+6 <= len(raw) {
			v := hexVal(raw[i+2])<<12 | hexVal(raw[i+3])<<8 | hexVal(raw[i+4])<<4 | hexVal(raw[i+5])
			if v < 0x80 {
				return v, i + 6
			}
			return 0x80, i + 6
		}
		return 0x80, len(raw)
	case 'b':
		return '\b', i + 2
	case 'f':
		return '\f', i + 2
	case 'n':
		return '\n', i + 2
	case 'r':
		return '\r', i + 2
	case 't':
		return '\t', i + 2
	default: // \" \\ \/
		return int(e), i + 2
	}
}

func isAlpha(c int) bool  { return (c|0x20) >= 'a' && (c|0x20) <= 'z' }
func isDigitC(c int) bool { return c >= '0' && c <= '9' }
func isHexC(c int) bool   { return isDigitC(c) || ((c|0x20) >= 'a' && (c|0x20) <= 'f') }

func hexValC(c int) int {
	if isDigitC(c) {
		return c - '0'
	}
	return (c | 0x20) - 'a' + 10
}

// decode appends the decoded text; in json mode replacements are written
// JSON-escaped and everything else is copied as raw JSON string text.
func (sc *entityScanner) decode(dst []byte, json bool) []byte {
	raw := sc.raw
	start := 0 // raw bytes not yet copied
	for i := 0; i < len(raw); {
		// Fast path: jump to the next '&' (or escape, which may encode one).
		if !sc.json {
			k := bytes.IndexByte(raw[i:], '&')
			if k < 0 {
				break
			}
			i += k
		} else if i = skipToRef(raw, i); i == len(raw) {
			break
		}
		c, next := sc.unit(i)
		if c != '&' {
			i = next
			continue
		}
		end, val, ok := sc.match(next)
		if end < 0 { // no reference here
			i = next
			continue
		}
		if ok {
			dst = append(dst, raw[start:i]...)
			if json {
				dst = appendJSONStrBody(dst, val)
			} else {
				dst = append(dst, val...)
			}
			start = end
		}
		i = end
	}
	return append(dst, raw[start:]...)
}

// skipToRef returns the index of the first '&' or '\\' in raw at or after
// i (len(raw) when none), 8 bytes at a time while it can: in a JSON
// string body only those can start a reference.
func skipToRef(raw []byte, i int) int {
	for ; i+8 <= len(raw); i += 8 {
		x := binary.LittleEndian.Uint64(raw[i:])
		a, bs := x^(lsb*'&'), x^(lsb*'\\')
		if ((a-lsb)&^a|(bs-lsb)&^bs)&msb != 0 {
			break
		}
	}
	for ; i < len(raw) && raw[i] != '&' && raw[i] != '\\'; i++ {
	}
	return i
}

// match tries a reference whose '&' ends just before i. It returns the
// index after the ';' (or -1 when the regexp does not match here), the
// replacement, and whether it is replaced (false: kept verbatim).
func (sc *entityScanner) match(i int) (end int, val []byte, ok bool) {
	c, j := sc.unit(i)
	switch {
	case c == '#':
		c2, k := sc.unit(j)
		if c2 == 'x' || c2 == 'X' {
			v, n, e := sc.numRun(k, 16)
			if n > 0 && e >= 0 {
				return e, sc.scalar(v), v >= 0 && validScalar(v)
			}
			return -1, nil, false
		}
		v, n, e := sc.numRun(j, 10)
		if n > 0 && e >= 0 {
			return e, sc.scalar(v), v >= 0 && validScalar(v)
		}
		return -1, nil, false
	case isAlpha(c):
		var name [32]byte
		n := 0
		k := i
		for {
			c, nk := sc.unit(k)
			if c < 0 || c >= 0x80 || !(isAlpha(c) || isDigitC(c)) {
				break
			}
			if n < len(name) {
				name[n] = byte(c)
			}
			n++
			k = nk
		}
		if n < 2 {
			return -1, nil, false
		}
		if semi, e := sc.unit(k); semi == ';' {
			if n > len(name) {
				return e, nil, false
			}
			if v, found := lookupEntity(name[:n]); found {
				return e, sc.rep[:copy(sc.rep[:], v)], true
			}
			if legacyName(name[:n]) {
				var low [4]byte
				for x := 0; x < n; x++ {
					low[x] = name[x] | 0x20
				}
				v, _ := lookupEntity(low[:n])
				return e, sc.rep[:copy(sc.rep[:], v)], true
			}
			return e, nil, false
		}
	}
	return -1, nil, false
}

// numRun reads a run of digits in base (10 or 16) from i; v saturates at
// -1 past 0x10FFFF. It returns the run length and the index after a ';'
// that follows it (-1 when none does).
func (sc *entityScanner) numRun(i, base int) (v, n, end int) {
	k := i
	for {
		c, nk := sc.unit(k)
		if c < 0 || !(isDigitC(c) || (base == 16 && isHexC(c))) {
			if c == ';' {
				return v, n, nk
			}
			return v, n, -1
		}
		if v >= 0 {
			if base == 16 {
				v = v*16 + hexValC(c)
			} else {
				v = v*10 + c - '0'
			}
			if v > utf8.MaxRune {
				v = -1
			}
		}
		n++
		k = nk
	}
}

func validScalar(v int) bool { return v <= utf8.MaxRune && (v < 0xd800 || v > 0xdfff) }

// scalar encodes the code point v into sc.rep (nil when it is not a
// Unicode scalar value).
func (sc *entityScanner) scalar(v int) []byte {
	if v < 0 || !validScalar(v) {
		return nil
	}
	return sc.rep[:utf8.EncodeRune(sc.rep[:], rune(v))]
}

func legacyName(n []byte) bool {
	if len(n) > 4 {
		return false
	}
	var low [4]byte
	for i := range n {
		low[i] = n[i] | 0x20
	}
	switch string(low[:len(n)]) {
	case "amp", "quot", "apos", "lt", "gt":
		return true
	}
	return false
}

// entityBucket[c] is the range of entityTable whose names start with byte
// c (the table is sorted), so a lookup compares a handful of names.
var entityBucket = func() (b [128][2]uint16) {
	for i := len(entityTable) - 1; i >= 0; i-- {
		c := entityTable[i].name[0]
		if b[c][1] == 0 {
			b[c][1] = uint16(i + 1)
		}
		b[c][0] = uint16(i)
	}
	return
}()

// lookupEntity finds an HTML5 name (without ';') in the table.
func lookupEntity(name []byte) (string, bool) {
	if len(name) == 0 || name[0] >= 128 {
		return "", false
	}
	lo, hi := int(entityBucket[name[0]][0]), int(entityBucket[name[0]][1])
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if entityTable[m].name < string(name) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(entityTable) && entityTable[lo].name == string(name) {
		return entityTable[lo].val, true
	}
	return "", false
}

// DecodeEntitiesInJSON appends js, a JSON value, with every string value
// (not object keys, as OpenClaw's decodeHtmlEntitiesInObject) decoded once
// with DecodeHTMLEntities and re-encoded. Escapes of other characters,
// including lone surrogates, are kept as they were. As OpenClaw rebuilds
// every object by assignment, a member named __proto__ does not survive
// and is dropped. Input with nothing to change (no '&', no \u0026 escape,
// no __proto__) and input that is not valid JSON are appended unchanged.
func DecodeEntitiesInJSON(dst, js []byte) []byte {
	if bytes.IndexByte(js, '&') < 0 && !hasEscapedAmp(js) && !bytes.Contains(js, []byte("proto")) {
		return append(dst, js...)
	}
	if !Valid(js) {
		return append(dst, js...)
	}
	start := 0
	inKey := false // the next string is an object key
	var stack [MaxDepth/64 + 1]uint64
	depth := 0
	for i := 0; i < len(js); {
		switch c := js[i]; c {
		case '{':
			stack[depth>>6] |= 1 << (depth & 63)
			depth++
			inKey = true
			i++
		case '[':
			stack[depth>>6] &^= 1 << (depth & 63)
			depth++
			inKey = false
			i++
		case '}', ']':
			depth--
			i++
		case ',':
			inKey = depth > 0 && stack[(depth-1)>>6]&(1<<((depth-1)&63)) != 0
			i++
		case ':':
			inKey = false
			i++
		case '"':
			end, _ := scanString(js, i)
			body := js[i+1 : end-1]
			if inKey && isProtoKey(js[i:end]) {
				// Drop the member and one adjacent comma.
				k := skipWS(js, end) + 1 // past ':'
				vend, _ := scanValue(js, skipWS(js, k), depth)
				after := skipWS(js, vend)
				if js[after] == ',' {
					dst = append(dst, js[start:i]...)
					start, i = after+1, after+1
					continue
				}
				seg := js[start:i]
				t := len(seg)
				for t > 0 && isWS(seg[t-1]) {
					t--
				}
				if t > 0 && seg[t-1] == ',' {
					t--
				}
				dst = append(dst, seg[:t]...)
				start, i = vend, vend
				continue
			}
			if !inKey && (bytes.IndexByte(body, '&') >= 0 || hasEscapedAmp(body)) {
				dst = append(dst, js[start:i+1]...)
				sc := entityScanner{raw: body, json: true}
				dst = sc.decode(dst, true)
				start = end - 1
			}
			i = end
		default:
			i++
		}
	}
	return append(dst, js[start:]...)
}

// hasEscapedAmp reports whether b holds a \u0026 escape (an '&' that
// JSON decoding reveals); an escaped backslash before it only costs a
// needless slow path.
func hasEscapedAmp(b []byte) bool {
	for {
		k := bytes.Index(b, []byte("u0026"))
		if k < 0 {
			return false
		}
		if k > 0 && b[k-1] == '\\' {
			return true
		}
		b = b[k+5:]
	}
}
