package repair

import (
	"bytes"
	"unicode/utf8"
)

// This file reproduces pi-ai 0.73.1's parseStreamingJson stages after the
// plain parse: repairJson (escape raw control characters inside strings,
// double the backslash of invalid escapes) and the partial-json 0.1.7
// parser with every partial type allowed. The partial parser is emulated
// step by step, including its odd corners (missing commas tolerated, any
// character skipped as the colon, a key read from a non-quote character,
// the lastIndexOf fallbacks), because its result decides what OpenClaw
// executes.

// piRepairJSON appends pi-ai's repairJson(raw) to dst.
func piRepairJSON(dst, raw []byte) []byte {
	inStr := false
	for k := 0; k < len(raw); k++ {
		c := raw[k]
		if !inStr {
			dst = append(dst, c)
			if c == '"' {
				inStr = true
			}
			continue
		}
		switch {
		case c == '"':
			dst = append(dst, c)
			inStr = false
		case c == '\\':
			if k+1 >= len(raw) {
				dst = append(dst, '\\', '\\')
				continue
			}
			n := raw[k+1]
			if n == 'u' && k+6 <= len(raw) && isHex(raw[k+2]) && isHex(raw[k+3]) && isHex(raw[k+4]) && isHex(raw[k+5]) {
				dst = append(dst, raw[k:k+6]...)
				k += 5
				continue
			}
			switch n {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't', 'u':
				dst = append(dst, '\\', n)
				k++
			default:
				dst = append(dst, '\\', '\\')
			}
		case c < 0x20:
			dst = appendControlEscape(dst, c)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// piEscapes is the second stage: when repairJson changes the text, the
// repaired text must parse.
func piEscapes(dst, raw []byte) ([]byte, bool) {
	n := len(dst)
	dst = piRepairJSON(dst, raw)
	rep := dst[n:]
	if bytes.Equal(rep, raw) || !Valid(rep) {
		return dst[:n], false
	}
	a, b := skipWS(rep, 0), len(rep)
	for b > a && isWS(rep[b-1]) {
		b--
	}
	copy(dst[n:], rep[a:b])
	return dst[:n+b-a], true
}

// piPartial runs partial-json on raw, then on repairJson(raw).
func piPartial(dst, raw []byte) ([]byte, bool) {
	if out, ok := partialParse(dst, raw); ok {
		return out, true
	}
	rep := piRepairJSON(nil, raw)
	return partialParse(dst, rep)
}

// partialParse is partial-json's parse(s, Allow.ALL), appending the JSON of
// the value; a null result becomes {} (pi-ai's `result ?? {}`).
func partialParse(dst, s []byte) ([]byte, bool) {
	a, b := jsTrim(s, 0, len(s))
	if a == b {
		return dst, false
	}
	p := partialParser{doc: s[a:b]}
	n := len(dst)
	out, ok := p.any(dst, 0)
	if !ok {
		return out[:n], false
	}
	// `result ?? {}`: a null result becomes {}, but Infinity and NaN are
	// not nullish (they serialise as null).
	if string(out[n:]) == "null" && p.doc[0] == 'n' {
		return append(out[:n], '{', '}'), true
	}
	return out, true
}

type partialParser struct {
	doc []byte
	idx int
}

// at is jsonString[index]: -1 past the end.
func (p *partialParser) at(i int) int {
	if i < 0 || i >= len(p.doc) {
		return -1
	}
	return int(p.doc[i])
}

func (p *partialParser) skipBlank() {
	for p.idx < len(p.doc) {
		switch p.doc[p.idx] {
		case ' ', '\n', '\r', '\t':
			p.idx++
		default:
			return
		}
	}
}

// substring is JavaScript's String.prototype.substring bounds.
func (p *partialParser) substring(a, b int) (int, int) {
	a = max(0, min(a, len(p.doc)))
	b = max(0, min(b, len(p.doc)))
	if a > b {
		a, b = b, a
	}
	return a, b
}

// appendParsed appends the JSON.parse of text (trimmed) when it is valid.
func appendParsed(dst, text []byte) ([]byte, bool) {
	if !Valid(text) {
		return dst, false
	}
	a, b := skipWS(text, 0), len(text)
	for b > a && isWS(text[b-1]) {
		b--
	}
	return append(dst, text[a:b]...), true
}

// appendParsedQuoted appends JSON.parse(text + '"') when it is valid.
func appendParsedQuoted(dst, text []byte) ([]byte, bool) {
	n := len(dst)
	dst = append(dst, text...)
	dst = append(dst, '"')
	if !Valid(dst[n:]) {
		return dst[:n], false
	}
	// Trim leading JSON whitespace (a string has none at its end).
	a := skipWS(dst, n)
	copy(dst[n:], dst[a:])
	return dst[:len(dst)-(a-n)], true
}

const maxPartialDepth = MaxDepth

func (p *partialParser) any(dst []byte, depth int) ([]byte, bool) {
	p.skipBlank()
	doc := p.doc
	if p.idx >= len(doc) {
		return dst, false
	}
	switch doc[p.idx] {
	case '"':
		return p.str(dst)
	case '{':
		if depth >= maxPartialDepth {
			return dst, false
		}
		return p.obj(dst, depth+1)
	case '[':
		if depth >= maxPartialDepth {
			return dst, false
		}
		return p.arr(dst, depth+1)
	}
	rest := doc[p.idx:]
	lit := func(word string, minRest int) bool {
		if bytes.HasPrefix(rest, []byte(word)) {
			return true
		}
		return len(rest) > minRest && len(rest) < len(word) && bytes.HasPrefix([]byte(word), rest)
	}
	switch {
	case lit("null", 0):
		p.idx += 4
		return append(dst, "null"...), true
	case lit("true", 0):
		p.idx += 4
		return append(dst, "true"...), true
	case lit("false", 0):
		p.idx += 5
		return append(dst, "false"...), true
	case lit("Infinity", 0):
		p.idx += 8
		return append(dst, "null"...), true // JSON.stringify(Infinity)
	case lit("-Infinity", 1):
		p.idx += 9
		return append(dst, "null"...), true
	case lit("NaN", 0):
		p.idx += 3
		return append(dst, "null"...), true
	}
	return p.num(dst)
}

func (p *partialParser) str(dst []byte) ([]byte, bool) {
	doc := p.doc
	start := p.idx
	esc := false
	p.idx++
	for p.idx < len(doc) && (doc[p.idx] != '"' || (esc && doc[p.idx-1] == '\\')) {
		if doc[p.idx] == '\\' {
			esc = !esc
		} else {
			esc = false
		}
		p.idx++
	}
	e := 0
	if esc {
		e = 1
	}
	if p.idx < len(doc) { // closed
		p.idx++
		a, b := p.substring(start, p.idx-e)
		return appendParsed(dst, doc[a:b])
	}
	a, b := p.substring(start, p.idx-e)
	if out, ok := appendParsedQuoted(dst, doc[a:b]); ok {
		return out, true
	}
	a, b = p.substring(start, bytes.LastIndexByte(doc, '\\'))
	return appendParsedQuoted(dst, doc[a:b])
}

func (p *partialParser) obj(dst []byte, depth int) ([]byte, bool) {
	p.idx++
	p.skipBlank()
	dst = append(dst, '{')
	count := 0
	for p.at(p.idx) != '}' {
		p.skipBlank()
		if p.idx >= len(p.doc) {
			return append(dst, '}'), true
		}
		mark := len(dst)
		if count > 0 {
			dst = append(dst, ',')
		}
		ks := len(dst)
		var ok bool
		if dst, ok = p.str(dst); !ok {
			return append(dst[:mark], '}'), true
		}
		proto := isProtoKey(dst[ks:])
		p.skipBlank()
		// index++ skips the colon, whatever it is: one UTF-16 unit. A
		// character outside the BMP leaves half a surrogate pair behind,
		// which no value can start with.
		if !p.skipUnit() {
			return append(dst[:mark], '}'), true
		}
		dst = append(dst, ':')
		if dst, ok = p.any(dst, depth); !ok {
			return append(dst[:mark], '}'), true
		}
		if proto {
			// obj["__proto__"] = v sets the prototype: no own member.
			dst = dst[:mark]
		} else {
			count++
		}
		p.skipBlank()
		if p.at(p.idx) == ',' {
			p.idx++
		}
	}
	p.idx++
	return append(dst, '}'), true
}

func (p *partialParser) arr(dst []byte, depth int) ([]byte, bool) {
	p.idx++
	dst = append(dst, '[')
	n := 0
	for p.at(p.idx) != ']' {
		mark := len(dst)
		if n > 0 {
			dst = append(dst, ',')
		}
		var ok bool
		if dst, ok = p.any(dst, depth); !ok {
			return append(dst[:mark], ']'), true
		}
		n++
		p.skipBlank()
		if p.at(p.idx) == ',' {
			p.idx++
		}
	}
	p.idx++
	return append(dst, ']'), true
}

func (p *partialParser) num(dst []byte) ([]byte, bool) {
	doc := p.doc
	if p.idx == 0 {
		if len(doc) == 1 && doc[0] == '-' {
			return dst, false
		}
		if out, ok := appendParsed(dst, doc); ok {
			return out, true
		}
		a, b := p.substring(0, bytes.LastIndexByte(doc, 'e'))
		return appendParsed(dst, doc[a:b])
	}
	start := p.idx
	if doc[p.idx] == '-' {
		p.idx++
	}
	for p.idx < len(doc) && doc[p.idx] != ',' && doc[p.idx] != ']' && doc[p.idx] != '}' {
		p.idx++
	}
	if out, ok := appendParsed(dst, doc[start:p.idx]); ok {
		return out, true
	}
	if p.idx-start == 1 && doc[start] == '-' {
		return dst, false
	}
	a, b := p.substring(start, bytes.LastIndexByte(doc, 'e'))
	return appendParsed(dst, doc[a:b])
}

// skipUnit advances past one UTF-16 code unit; false when that splits a
// surrogate pair.
func (p *partialParser) skipUnit() bool {
	if p.idx >= len(p.doc) || p.doc[p.idx] < utf8.RuneSelf {
		p.idx++
		return true
	}
	r, n := utf8.DecodeRune(p.doc[p.idx:])
	p.idx += n
	return r < 0x10000
}

// isProtoKey reports whether the JSON string text k decodes to "__proto__".
func isProtoKey(k []byte) bool {
	if string(k) == `"__proto__"` {
		return true
	}
	if len(k) > 6*9+2 || bytes.IndexByte(k, '\\') < 0 {
		return false
	}
	var buf [64]byte
	d, ok := unescapeShort(buf[:0], k[1:len(k)-1], len(buf))
	return ok && string(d) == "__proto__"
}

// appendControlEscape appends the JSON escape of the control character c
// (below 0x20): the short form where JSON has one, else \u00XX.
func appendControlEscape(dst []byte, c byte) []byte {
	switch c {
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	const hex = "0123456789abcdef"
	return append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
}
