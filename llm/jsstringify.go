package llm

import (
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/valyala/fastjson"
)

// AppendJSStringify appends JSON.stringify(JSON.parse(text of v)) as
// JavaScript computes it, where the text OpenClaw shows is that string (an
// error message built from a provider's error value): an object's
// array-index keys first in ascending order, then the others in the order
// they first appear, a repeated key keeping its last value; numbers in
// JavaScript's shortest form (1.0 is 1, 1e21 is 1e+21, out of range is
// null); strings with JSON.stringify's escapes (\b and \f short, U+2028
// as it is, a lone surrogate held in its three-byte form as \uXXXX).
func AppendJSStringify(dst []byte, v *fastjson.Value) []byte {
	return appendJSON(dst, v, jsonStyle{str: appendJSString, js: true})
}

// AppendJSToString appends String(x) for the value x that JSON.parse
// makes of v, as JavaScript computes it where it builds a message from a
// value it expected to be a string (a finish reason, a stop reason): a
// string as it is; a number in Number::toString's form (1e2 is 100, out of
// range is Infinity); true, false and null as written; an object as
// "[object Object]"; an array as its elements so written and joined by
// commas, null elements (and nested empty arrays) as nothing.
func AppendJSToString(dst []byte, v *fastjson.Value) []byte {
	switch v.Type() {
	case fastjson.TypeString:
		s, _ := v.StringBytes()
		return append(dst, s...)
	case fastjson.TypeNumber:
		f := v.GetFloat64()
		switch {
		case math.IsInf(f, 1):
			return append(dst, "Infinity"...)
		case math.IsInf(f, -1):
			return append(dst, "-Infinity"...)
		}
		return appendJSNumber(dst, f)
	case fastjson.TypeTrue:
		return append(dst, "true"...)
	case fastjson.TypeFalse:
		return append(dst, "false"...)
	case fastjson.TypeObject:
		return append(dst, "[object Object]"...)
	case fastjson.TypeArray:
		a, _ := v.Array()
		for i, e := range a {
			if i > 0 {
				dst = append(dst, ',')
			}
			if e.Type() != fastjson.TypeNull {
				dst = AppendJSToString(dst, e)
			}
		}
		return dst
	}
	return append(dst, "null"...)
}

// appendJSObject writes an object as JSON.stringify(JSON.parse(text)) does.
func appendJSObject(dst []byte, v *fastjson.Value, st jsonStyle) []byte {
	o, _ := v.Object()
	type member struct {
		key   string
		index uint64
		isIdx bool
		v     *fastjson.Value
	}
	var ms []member
	at := map[string]int{}
	o.Visit(func(k []byte, e *fastjson.Value) {
		if i, ok := at[string(k)]; ok {
			ms[i].v = e
			return
		}
		idx, isIdx := arrayIndex(k)
		at[string(k)] = len(ms)
		ms = append(ms, member{string(k), idx, isIdx, e})
	})
	// Insertion sort keeps the others' order; objects here are small.
	for i := 1; i < len(ms); i++ {
		for j := i; j > 0 && ms[j].isIdx && (!ms[j-1].isIdx || ms[j-1].index > ms[j].index); j-- {
			ms[j], ms[j-1] = ms[j-1], ms[j]
		}
	}
	dst = append(dst, '{')
	for i, m := range ms {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(appendJSString(dst, []byte(m.key)), ':')
		dst = appendJSON(dst, m.v, st)
	}
	return append(dst, '}')
}

// arrayIndex reports whether k is a canonical array index (0 to 2³²-2
// without leading zeros), which JavaScript orders before other keys.
func arrayIndex(k []byte) (uint64, bool) {
	if len(k) == 0 || len(k) > 10 || (k[0] == '0' && len(k) > 1) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(k), 10, 64)
	return n, err == nil && n < 1<<32-1
}

// appendJSNumber appends f as JavaScript's Number::toString writes it
// (JSON.stringify writes a non-finite number as null).
func appendJSNumber(dst []byte, f float64) []byte {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return append(dst, "null"...)
	}
	if f == 0 {
		return append(dst, '0')
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64) // d.ddde±x
	mant, exp := e, 0
	for i, c := range e {
		if c == 'e' {
			mant = e[:i]
			exp, _ = strconv.Atoi(string(e[i+1:]))
			break
		}
	}
	digits := make([]byte, 0, len(mant))
	for _, c := range mant {
		if c != '.' {
			digits = append(digits, c)
		}
	}
	k, n := len(digits), exp+1
	switch {
	case k <= n && n <= 21:
		dst = append(dst, digits...)
		for range n - k {
			dst = append(dst, '0')
		}
	case 0 < n && n <= 21:
		dst = append(append(append(dst, digits[:n]...), '.'), digits[n:]...)
	case -6 < n && n <= 0:
		dst = append(dst, '0', '.')
		for range -n {
			dst = append(dst, '0')
		}
		dst = append(dst, digits...)
	default:
		dst = append(dst, digits[0])
		if k > 1 {
			dst = append(append(dst, '.'), digits[1:]...)
		}
		dst = append(dst, 'e')
		if n-1 >= 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, int64(n-1), 10)
	}
	return dst
}

// appendJSString appends s as JSON.stringify writes a string.
func appendJSString(dst, s []byte) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c == '\b':
			dst = append(dst, '\\', 'b')
		case c == '\f':
			dst = append(dst, '\\', 'f')
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		case c == '\t':
			dst = append(dst, '\\', 't')
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		case c < utf8.RuneSelf:
			dst = append(dst, c)
		default:
			if out, n := appendSurrogate(dst, s, i); n > 0 {
				dst, i = out, i+n
				continue
			}
			r, n := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && n == 1 {
				dst = append(dst, "\uFFFD"...)
			} else {
				dst = append(dst, s[i:i+n]...)
			}
			i += n
			continue
		}
		i++
	}
	return append(dst, '"')
}

// IsJSSpace reports whether r is a JavaScript space, what String.prototype
// .trim and trimStart remove and the \s class matches: the ECMAScript
// WhiteSpace and LineTerminator code points.
func IsJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}
