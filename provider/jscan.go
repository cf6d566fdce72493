package provider

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
)

// A small field-targeted JSON scanner for the hot events. It never builds
// a tree: skipValue validates and skips a value (strict RFC 8259 grammar,
// except that control characters inside strings are tolerated, as
// fastjson does), objIter walks an object's members as raw spans, and
// string values are unescaped only when asked for, into a per-event arena.

const maxJSONDepth = 256

func skipWS(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"',
// or -1.
func skipString(b []byte, i int) int {
	start := i
	i++
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return -1
		}
		k := i + j
		n := 0
		for p := k - 1; p > start && b[p] == '\\'; p-- {
			n++
		}
		if n&1 == 0 {
			return k + 1
		}
		i = k + 1
	}
}

func skipNumber(b []byte, i int) int {
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return -1
	}
	switch {
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		i++
		s := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == s {
			return -1
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		s := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == s {
			return -1
		}
	}
	return i
}

func skipLit(b []byte, i int, lit string) int {
	if len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit {
		return i + len(lit)
	}
	return -1
}

// skipValue returns the index after the JSON value at b[i] (leading
// whitespace allowed), or -1 when it is malformed or nested too deep.
func skipValue(b []byte, i int) int {
	var stack [maxJSONDepth]byte
	depth := 0
	for {
		// A value starts here.
		i = skipWS(b, i)
		if i >= len(b) {
			return -1
		}
		switch c := b[i]; c {
		case '{', '[':
			j := skipWS(b, i+1)
			end := byte('}')
			if c == '[' {
				end = ']'
			}
			if j < len(b) && b[j] == end {
				i = j + 1
				break
			}
			if depth == maxJSONDepth {
				return -1
			}
			stack[depth] = c
			depth++
			i = j
			if c == '{' {
				if i = objKey(b, i); i < 0 {
					return -1
				}
			}
			continue
		case '"':
			i = skipString(b, i)
		case 't':
			i = skipLit(b, i, "true")
		case 'f':
			i = skipLit(b, i, "false")
		case 'n':
			i = skipLit(b, i, "null")
		default:
			i = skipNumber(b, i)
		}
		if i < 0 {
			return -1
		}
		// After a value: close containers, or a comma and the next member.
		for {
			if depth == 0 {
				return i
			}
			i = skipWS(b, i)
			if i >= len(b) {
				return -1
			}
			c := b[i]
			top := stack[depth-1]
			if c == ',' {
				i++
				if top == '{' {
					if i = objKey(b, skipWS(b, i)); i < 0 {
						return -1
					}
				}
				break
			}
			if (c == '}' && top == '{') || (c == ']' && top == '[') {
				depth--
				i++
				continue
			}
			return -1
		}
	}
}

// objKey skips `"key" :` at b[i] and returns the index after the colon.
func objKey(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	if i = skipString(b, i); i < 0 {
		return -1
	}
	i = skipWS(b, i)
	if i >= len(b) || b[i] != ':' {
		return -1
	}
	return i + 1
}

// span is a raw JSON value b[s:e]; s < 0 means absent.
type span struct{ s, e int }

var absent = span{-1, -1}

func (v span) ok() bool { return v.s >= 0 }

// objIter walks the members of an already validated object.
type objIter struct {
	b       []byte
	i       int
	started bool
}

// iterObj returns an iterator over the object at v, ok false if v is not
// an object.
func iterObj(b []byte, v span) (objIter, bool) {
	if !v.ok() || b[v.s] != '{' {
		return objIter{}, false
	}
	return objIter{b: b[:v.e], i: v.s + 1}, true
}

// next returns the next member's raw key (without quotes, still escaped)
// and its value.
func (o *objIter) next() (key []byte, v span, ok bool) {
	b := o.b
	i := skipWS(b, o.i)
	if i >= len(b) {
		return nil, absent, false
	}
	if o.started {
		if b[i] != ',' {
			return nil, absent, false
		}
		i = skipWS(b, i+1)
	} else {
		o.started = true
		if b[i] == '}' {
			return nil, absent, false
		}
	}
	if i >= len(b) || b[i] != '"' {
		return nil, absent, false
	}
	ke := skipString(b, i)
	if ke < 0 {
		return nil, absent, false
	}
	key = b[i+1 : ke-1]
	i = skipWS(b, ke)
	if i >= len(b) || b[i] != ':' {
		return nil, absent, false
	}
	vs := skipWS(b, i+1)
	ve := skipValue(b, vs)
	if ve < 0 {
		return nil, absent, false
	}
	o.i = ve
	return key, span{vs, ve}, true
}

// arrIter walks the elements of an already validated array.
type arrIter struct {
	b       []byte
	i       int
	started bool
}

func iterArr(b []byte, v span) (arrIter, bool) {
	if !v.ok() || b[v.s] != '[' {
		return arrIter{}, false
	}
	return arrIter{b: b[:v.e], i: v.s + 1}, true
}

func (a *arrIter) next() (span, bool) {
	b := a.b
	i := skipWS(b, a.i)
	if i >= len(b) {
		return absent, false
	}
	if a.started {
		if b[i] != ',' {
			return absent, false
		}
		i = skipWS(b, i+1)
	} else {
		a.started = true
		if b[i] == ']' {
			return absent, false
		}
	}
	e := skipValue(b, i)
	if e < 0 {
		return absent, false
	}
	a.i = e
	return span{i, e}, true
}

func (v span) isString(b []byte) bool { return v.ok() && b[v.s] == '"' }
func (v span) isObject(b []byte) bool { return v.ok() && b[v.s] == '{' }
func (v span) isArray(b []byte) bool  { return v.ok() && b[v.s] == '[' }
func (v span) isNumber(b []byte) bool {
	return v.ok() && (b[v.s] == '-' || b[v.s] >= '0' && b[v.s] <= '9')
}
func (v span) isNull(b []byte) bool { return v.ok() && b[v.s] == 'n' }

// intOf returns the value as an int64 when it is an integer that fits,
// else 0 (as fastjson's GetInt64 does).
func intOf(b []byte, v span) int64 {
	if !v.isNumber(b) {
		return 0
	}
	s := b[v.s:v.e]
	neg := false
	if s[0] == '-' {
		neg = true
		s = s[1:]
	}
	if len(s) == 0 || len(s) > 19 {
		return 0
	}
	var n uint64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + uint64(c-'0')
	}
	if neg {
		if n > 1<<63 {
			return 0
		}
		return -int64(n)
	}
	if n > 1<<63-1 {
		return 0
	}
	return int64(n)
}

// unescapeTo appends the unescaped content of the raw string body s to
// dst. ok is false for an invalid escape. Lone surrogates become U+FFFD,
// as encoding/json does.
func unescapeTo(dst, s []byte) ([]byte, bool) {
	for {
		n := bytes.IndexByte(s, '\\')
		if n < 0 {
			return append(dst, s...), true
		}
		dst = append(dst, s[:n]...)
		s = s[n+1:]
		if len(s) == 0 {
			return dst, false
		}
		c := s[0]
		s = s[1:]
		switch c {
		case '"', '\\', '/':
			dst = append(dst, c)
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := hex4(s)
			if !ok {
				return dst, false
			}
			s = s[4:]
			if utf16.IsSurrogate(r) {
				if len(s) >= 6 && s[0] == '\\' && s[1] == 'u' {
					if r2, ok := hex4(s[2:]); ok {
						if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
							dst = utf8.AppendRune(dst, d)
							s = s[6:]
							continue
						}
					}
				}
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
		default:
			return dst, false
		}
	}
}

func hex4(s []byte) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
