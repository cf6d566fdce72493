package provider

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/ocbench/ocbench/llm"
)

// A small field-targeted JSON scanner for the hot events. It never builds
// a tree: skipValue validates and skips a value (strict RFC 8259 grammar,
// except that control characters inside strings are tolerated, as
// fastjson does), objIter walks an object's members as raw spans, and
// string values are unescaped only when asked for, into a per-event arena.

const maxJSONDepth = 256

// byte classes for the scanners
const (
	clWS     = 1 << iota // ' ' \t \n \r
	clStruct             // " { } [ ]
	clEnd                // , } ] and whitespace: ends a scalar
)

var class = func() (t [256]uint8) {
	for _, c := range " \t\n\r" {
		t[c] |= clWS | clEnd
	}
	for _, c := range `"{}[]` {
		t[c] |= clStruct
	}
	for _, c := range ",}]" {
		t[c] |= clEnd
	}
	return t
}()

func skipWS(b []byte, i int) int {
	// Fast path: compact JSON has no whitespace between tokens.
	if i < len(b) && b[i] > ' ' {
		return i
	}
	for i < len(b) && class[b[i]]&clWS != 0 {
		i++
	}
	return i
}

const (
	swarLSB    = 0x0101010101010101
	swarMSB    = 0x8080808080808080
	swarQuotes = 0x2222222222222222
	swarSlash  = 0x5c5c5c5c5c5c5c5c
)

// zeroBytes has the high bit set in (at least) the lowest zero byte of v;
// bits above it may be false positives.
func zeroBytes(v uint64) uint64 { return (v - swarLSB) &^ v & swarMSB }

// findQuote returns the index of the first '"' in b at or after i (-1 if
// none) and whether a backslash or a control character (below 0x20, which
// JSON strings may not hold raw) comes before it. It reads eight bytes at a
// time (SWAR): provider strings are mostly short, where this beats a call
// to IndexByte.
func findQuote(b []byte, i int) (int, bool) {
	esc := false
	for i+8 <= len(b) {
		w := binary.LittleEndian.Uint64(b[i:])
		q := zeroBytes(w ^ swarQuotes)
		sl := zeroBytes(w^swarSlash) | ctlBytes(w)
		if q == 0 {
			esc = esc || sl != 0
			i += 8
			continue
		}
		qb := uint(bits.TrailingZeros64(q))
		esc = esc || sl&(1<<qb-1) != 0
		return i + int(qb>>3), esc
	}
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			return i, esc
		case '\\':
			esc = true
		default:
			esc = esc || b[i] < ' '
		}
	}
	return -1, esc
}

// ctlBytes has the high bit set in (at least) the lowest byte of v below
// 0x20, a control character; bits above it may be false positives.
func ctlBytes(v uint64) uint64 { return (v - 0x2020202020202020) &^ v & swarMSB }

// quickString returns the index after the string starting at b[i] == '"'
// when the string closes within its first 16 bytes and has no escape nor
// control character before that; -1 means undecided (the caller scans it fully). Most keys
// and many provider values are this short, and reading two words here
// saves the calls of a full scan.
func quickString(b []byte, i int) int {
	if i+17 > len(b) {
		return -1
	}
	for j := i + 1; j < i+17; j += 8 {
		w := binary.LittleEndian.Uint64(b[j:])
		q := zeroBytes(w ^ swarQuotes)
		sl := zeroBytes(w^swarSlash) | ctlBytes(w)
		if q == 0 {
			if sl != 0 {
				return -1
			}
			continue
		}
		// The lowest set bit of q and of sl is exact (see zeroBytes), so
		// no bit of sl below the quote means no backslash (nor control
		// character) before it.
		qb := uint(bits.TrailingZeros64(q))
		if sl&(1<<qb-1) != 0 {
			return -1
		}
		return j + int(qb>>3) + 1
	}
	return -1
}

// scanString returns the index after the string starting at b[i] == '"'
// (-1 if it is not terminated) and whether it has escapes or control
// characters (what a closer look must check).
func scanString(b []byte, i int) (int, bool) {
	start := i
	i++
	esc := false
	for {
		k, e := findQuote(b, i)
		esc = esc || e
		if k < 0 {
			return -1, esc
		}
		if b[k-1] != '\\' {
			return k + 1, esc
		}
		n := 0
		for p := k - 1; p > start && b[p] == '\\'; p-- {
			n++
		}
		if n&1 == 0 {
			return k + 1, esc
		}
		i = k + 1
	}
}

// skipString returns the index after the string starting at b[i] == '"',
// or -1.
func skipString(b []byte, i int) int {
	e, _ := scanString(b, i)
	return e
}

// checkString is skipString that also validates the string's escapes
// (control characters pass, as they do skipString).
func checkString(b []byte, i int) int {
	e, _ := checkEscapes(b, i, false)
	return e
}

// checkEscapes returns the index after the string starting at b[i] == '"'
// when its escapes are valid (and, with noLF, it holds no raw line feed
// nor carriage return), else -1; esc reports escapes or control
// characters. It is one pass that stops at each backslash to check and
// step over its escape, so that the escaped quotes of long texts and
// argument strings cost no rescans.
func checkEscapes(b []byte, i int, noLF bool) (e int, esc bool) {
	i++
	for {
		i = skipPlainWords(b, i)
		for i < len(b) && b[i] != '"' && b[i] != '\\' && b[i] >= ' ' {
			i++
		}
		if i >= len(b) {
			return -1, esc
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, esc
		case c < ' ':
			if noLF && (c == '\n' || c == '\r') {
				return -1, true
			}
			esc = true
			i++
			continue
		}
		esc = true
		if i+1 >= len(b) {
			return -1, esc
		}
		switch b[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i += 2
		case 'u':
			if _, ok := llm.Hex4(b[i+2:]); !ok {
				return -1, esc
			}
			i += 6
		default:
			return -1, esc
		}
	}
}

// unescapeShort is checkEscapes(b, i, true) unescaping as it goes, for a
// lane's string hole (one pass instead of a scan, then strAt's search for
// a backslash and its unescaping), when its escapes come within its first
// maxShortEscaped bytes. It returns the index after the closing quote (-1
// when checkEscapes would) and, when the string has a backslash escape,
// n > 0: its content unescaped, as strAt would give it, is dst[:n]. n is
// 0 when it has none (its raw content is its value), and -1 when it is
// left to checkEscapes and strAt: a \u escape, escapes further in, or
// dst too small.
func unescapeShort(dst, b []byte, i int) (e, n int) {
	start := i + 1
	i = start
	i = skipPlainWords(b, i)
	for i < len(b) && b[i] != '"' && b[i] != '\\' && b[i] >= ' ' {
		i++
	}
	if i < len(b) && b[i] == '"' {
		return i + 1, 0 // (the common case: no escape at all)
	}
	limit := min(len(b), start+maxShortEscaped)
	if i >= limit || i-start > len(dst) {
		if i >= len(b) {
			return -1, 0
		}
		return 0, -1
	}
	n = copy(dst, b[start:i])
	unesc := false
	for s := b[:limit]; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			if !unesc {
				n = 0
			}
			return i + 1, n
		case c == '\\':
			if i+1 >= len(s) {
				if len(s) == len(b) {
					return -1, 0
				}
				return 0, -1 // (the escape straddles the limit)
			}
			switch c = s[i+1]; c {
			case '"', '\\', '/':
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			case 'u':
				return 0, -1
			default:
				return -1, 0
			}
			i++
			unesc = true
		case c < ' ' && (c == '\n' || c == '\r'):
			return -1, 0
		}
		if uint(n) >= uint(len(dst)) {
			return 0, -1
		}
		dst[n] = c
		n++
	}
	if limit == len(b) {
		return -1, 0
	}
	return 0, -1
}

// maxShortEscaped bounds the strings unescapeShort unescapes byte by byte.
const maxShortEscaped = 64

// skipPlainWords advances i over the bytes of b that are no quote,
// backslash nor control character, eight at a time: it stops at the first
// such byte, or within the last eight of b. (Inlined.)
func skipPlainWords(b []byte, i int) int {
	for i+8 <= len(b) {
		w := binary.LittleEndian.Uint64(b[i:])
		if m := zeroBytes(w^swarQuotes) | zeroBytes(w^swarSlash) | ctlBytes(w); m != 0 {
			// The lowest set bit is exact (see zeroBytes, ctlBytes).
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	return i
}

// validEscapes reports whether every backslash in s starts a valid JSON
// escape.
func validEscapes(s []byte) bool {
	for {
		n := bytes.IndexByte(s, '\\')
		if n < 0 {
			return true
		}
		s = s[n+1:]
		if len(s) == 0 {
			return false
		}
		switch s[0] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			s = s[1:]
		case 'u':
			if _, ok := llm.Hex4(s[1:]); !ok {
				return false
			}
			s = s[5:]
		default:
			return false
		}
	}
}

func skipNumber(b []byte, i int) int {
	// The common number, a positive integer of one to seven digits not
	// followed by a fraction or exponent, from one word: m has a zero byte
	// for each digit (a byte whose high nibble, and that of the byte plus
	// 6, is 3), and its lowest non-zero byte is the first non-digit (a
	// carry of the addition only reaches the bytes after a non-digit).
	if i+8 <= len(b) && b[i] != '0' {
		w := binary.LittleEndian.Uint64(b[i:])
		m := (w&swarHigh | ((w+0x0606060606060606)&swarHigh)>>4) ^ 0x3333333333333333
		if n := bits.TrailingZeros64(m) >> 3; n > 0 && n < 8 {
			if c := b[i+n]; c != '.' && c != 'e' && c != 'E' {
				return i + n
			}
		}
	}
	return skipNumberSlow(b, i)
}

// swarHigh selects the high nibble of every byte of a word.
const swarHigh = 0xF0F0F0F0F0F0F0F0

// skipNumberSlow is skipNumber byte by byte: the reference of its word
// path, and every number that path leaves.
func skipNumberSlow(b []byte, i int) int {
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
func skipValue(b []byte, i int) int { return skipValueN(b, i, maxJSONDepth) }

// skipValueN is skipValue for a value that may open at most limit nested
// containers (itself included): a caller that has descended into
// containers by hand passes what is left of maxJSONDepth.
func skipValueN(b []byte, i, limit int) int {
	i = skipWS(b, i)
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '{', '[':
		return skipContainer(b, i, limit)
	case '"':
		return checkString(b, i)
	case 't':
		return skipLit(b, i, "true")
	case 'f':
		return skipLit(b, i, "false")
	case 'n':
		return skipLit(b, i, "null")
	default:
		return skipNumber(b, i)
	}
}

// skipContainer validates and skips the object or array at b[i], nested
// at most limit (<= maxJSONDepth) deep.
func skipContainer(b []byte, i, limit int) int {
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
			if depth >= limit {
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
			i = checkString(b, i)
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
	if i = checkString(b, i); i < 0 {
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

// objIter walks the members of an object as raw spans. A validating
// iterator (topIter) checks each value with skipValue; the others rely on
// an enclosing validation and skip values with skipKnown.
type objIter struct {
	b        []byte
	i        int
	started  bool
	validate bool
	closed   bool // the closing brace was reached
	keyEsc   bool // the last key read has escapes
}

// iterObj returns an iterator over the object at v (already validated),
// ok false if v is not an object.
func iterObj(b []byte, v span) (objIter, bool) {
	if !v.ok() || b[v.s] != '{' {
		return objIter{}, false
	}
	return objIter{b: b[:v.e], i: v.s + 1}, true
}

// topIter returns a validating iterator over the object that must make up
// all of b. After the last member, complete reports whether b was one
// well-formed object.
func topIter(b []byte) (objIter, bool) {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return objIter{}, false
	}
	return objIter{b: b, i: i + 1, validate: true}, true
}

func (o *objIter) complete() bool {
	return o.closed && skipWS(o.b, o.i) == len(o.b)
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
		if b[i] == '}' {
			o.closed = true
			o.i = i + 1
			return nil, absent, false
		}
		if b[i] != ',' {
			return nil, absent, false
		}
		i = skipWS(b, i+1)
	} else {
		o.started = true
		if b[i] == '}' {
			o.closed = true
			o.i = i + 1
			return nil, absent, false
		}
	}
	if i >= len(b) || b[i] != '"' {
		return nil, absent, false
	}
	ke, esc := scanString(b, i)
	if ke < 0 || (esc && o.validate && !validEscapes(b[i+1:ke-1])) {
		return nil, absent, false
	}
	key = b[i+1 : ke-1]
	o.keyEsc = esc
	i = skipWS(b, ke)
	if i >= len(b) || b[i] != ':' {
		return nil, absent, false
	}
	vs := skipWS(b, i+1)
	var ve int
	if o.validate {
		ve = skipValue(b, vs)
	} else {
		ve = skipKnown(b, vs)
	}
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
	e := skipKnown(b, i)
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
// whatever its form (10.0 and 1e3 too), else 0.
func intOf(b []byte, v span) int64 {
	if v.e-v.s == 1 && v.s >= 0 {
		// One digit, the common case (an index): no loop, no bounds.
		if c := b[v.s]; c >= '0' && c <= '9' {
			return int64(c - '0')
		}
		return 0
	}
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
		return integralNumber(b[v.s:v.e])
	}
	var n uint64
	for _, c := range s {
		if c < '0' || c > '9' {
			return integralNumber(b[v.s:v.e]) // 10.0, 1e3
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
//
// A short string (most escaped deltas: ` \"quoted\"`, `{\"pat`) is
// copied byte by byte with its one-character escapes, which costs less
// than a search and a copy per run between escapes; from a \u escape on,
// or for a longer string, unescapeRuns does the rest.
func unescapeTo(dst, s []byte) ([]byte, bool) {
	if len(s) > 64 {
		return unescapeRuns(dst, s)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			dst = append(dst, c)
			continue
		}
		if i+1 == len(s) {
			return dst, false
		}
		switch s[i+1] {
		case '"', '\\', '/':
			dst = append(dst, s[i+1])
		case 'n':
			dst = append(dst, '\n')
		case 't':
			dst = append(dst, '\t')
		case 'r':
			dst = append(dst, '\r')
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		default: // \u, or not an escape
			return unescapeRuns(dst, s[i:])
		}
		i++
	}
	return dst, true
}

// unescapeRuns is unescapeTo copying the runs between escapes whole: the
// reference of its byte loop, and the way for long strings.
func unescapeRuns(dst, s []byte) ([]byte, bool) {
	for {
		n := indexBackslash(s)
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
			r, ok := llm.Hex4(s)
			if !ok {
				return dst, false
			}
			s = s[4:]
			if utf16.IsSurrogate(r) {
				if len(s) >= 6 && s[0] == '\\' && s[1] == 'u' {
					if r2, ok := llm.Hex4(s[2:]); ok {
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

// indexBackslash is bytes.IndexByte(s, '\\'), answering the short runs
// between the escapes of a text without a call.
func indexBackslash(s []byte) int {
	if len(s) < 8 {
		for i, c := range s {
			if c == '\\' {
				return i
			}
		}
		return -1
	}
	if m := zeroBytes(binary.LittleEndian.Uint64(s) ^ swarSlash); m != 0 {
		return bits.TrailingZeros64(m) >> 3 // exact: the lowest set bit
	}
	if n := bytes.IndexByte(s[8:], '\\'); n >= 0 {
		return 8 + n
	}
	return -1
}

// skipKnown returns the index after the value at b[i] of JSON already
// validated by skipValue: it only counts nesting and jumps over strings.
func skipKnown(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			c := b[i]
			if class[c]&clStruct == 0 {
				i++
				continue
			}
			switch c {
			case '"':
				if i = skipString(b, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			default:
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	default:
		for i < len(b) && class[b[i]]&clEnd == 0 {
			i++
		}
		return i
	}
}

// vIter is a validating, single-pass iterator for descending into the
// containers a decoder needs: it stops at each value (valStart) and the
// caller either skips it (skip, which validates) or descends (child) and
// then resumes. Nothing is scanned twice.
type vIter struct {
	b       []byte
	i       int
	arr     bool
	started bool
	closed  bool
	keyEsc  bool
}

// child returns an iterator into the container at the current value.
func (v *vIter) child() (vIter, bool) {
	i := v.i
	if i >= len(v.b) || (v.b[i] != '{' && v.b[i] != '[') {
		return vIter{}, false
	}
	return vIter{b: v.b, i: i + 1, arr: v.b[i] == '['}, true
}

// resume continues after a child that was read to its end.
func (v *vIter) resume(c *vIter) bool {
	if !c.closed {
		return false
	}
	v.i = c.i
	return true
}

// skip validates and skips the current value and returns its span.
func (v *vIter) skip() (span, bool) { return v.skipN(maxJSONDepth) }

// skipN is skip for a value that may nest at most limit containers deep.
func (v *vIter) skipN(limit int) (span, bool) {
	s := v.i
	e := -1
	if s < len(v.b) && v.b[s] == '"' {
		e = quickString(v.b, s)
	}
	if e < 0 {
		e = skipValueN(v.b, s, limit)
	}
	if e < 0 {
		return absent, false
	}
	v.i = e
	return span{s, e}, true
}

// peek returns the first byte of the current value.
func (v *vIter) peek() byte {
	if v.i < len(v.b) {
		return v.b[v.i]
	}
	return 0
}

// more advances to the next member (objects: past `"key":`, returned as
// key) or element. It returns false at the closing bracket (closed is
// then true) or on malformed input (closed false).
func (v *vIter) more() (key []byte, ok bool) {
	b := v.b
	i := skipWS(b, v.i)
	if i >= len(b) {
		return nil, false
	}
	closer := byte('}')
	if v.arr {
		closer = ']'
	}
	if b[i] == closer {
		v.closed = true
		v.i = i + 1
		return nil, false
	}
	if v.started {
		if b[i] != ',' {
			return nil, false
		}
		i = skipWS(b, i+1)
	}
	v.started = true
	if !v.arr {
		if i >= len(b) || b[i] != '"' {
			return nil, false
		}
		ke, esc := quickString(b, i), false
		if ke < 0 {
			ke, esc = scanString(b, i)
			if ke < 0 || (esc && !validEscapes(b[i+1:ke-1])) {
				return nil, false
			}
		}
		key = b[i+1 : ke-1]
		v.keyEsc = esc
		i = skipWS(b, ke)
		if i >= len(b) || b[i] != ':' {
			return nil, false
		}
		i++
	}
	v.i = skipWS(b, i)
	return key, true
}
