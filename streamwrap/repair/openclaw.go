package repair

import (
	"bytes"
	"unicode/utf8"

	"github.com/ocbench/ocbench/llm"
)

// OpenClaw 2026.9.6 limits (attempt.tool-call-argument-repair.ts).
const (
	// OpenClawMaxBuffer is the joined-delta length (UTF-16 code units) past
	// which OpenClaw forgets the buffer and disables repair for the block.
	OpenClawMaxBuffer = 64000
	maxLeadingUnits   = 96  // longest metadata prefix
	maxTrailingUnits  = 3   // longest junk suffix
	maxSmartKeyUnits  = 96  // longest smart-quoted key
	maxToolNameUnits  = 128 // longest tool name used as smart-quote context
)

// OpenClawShouldTry is OpenClaw's trigger rule for re-evaluating the repair
// after a toolcall_delta (streamwrap.md §4.4 step 2). delta is the new
// fragment, buf the joined deltas including it, hasRepair whether a repair
// is stored for the block. It allocates nothing.
//
// It looks through buf for a closer only when the trimmed delta is 1-3
// characters; callers that append many tiny deltas to a long buffer should
// track that bit themselves and call OpenClawTrigger.
func OpenClawShouldTry(delta, buf []byte, hasRepair bool) bool {
	return OpenClawTrigger(delta, hasRepair, func() bool {
		return bytes.IndexByte(buf, '}') >= 0 || bytes.IndexByte(buf, ']') >= 0
	})
}

// OpenClawTrigger is OpenClawShouldTry with the question "does the joined
// buffer (delta included) contain '}' or ']'?" answered by bufHasCloser,
// which is called at most once and only when the answer matters. It
// allocates nothing.
func OpenClawTrigger(delta []byte, hasRepair bool, bufHasCloser func() bool) bool {
	if hasRepair {
		return true
	}
	ascii := false
	if len(delta) <= ShortDelta {
		var closer bool
		if ascii, closer = ScanDelta(delta); closer {
			return true
		}
	} else if bytes.IndexByte(delta, '}') >= 0 || bytes.IndexByte(delta, ']') >= 0 {
		return true
	}
	i, j := jsTrim(delta, 0, len(delta))
	if i == j {
		return false
	}
	if ascii { // one unit a byte
		if j-i > maxTrailingUnits {
			return false
		}
	} else if tooLongForJunk(delta[i:j]) {
		return false
	}
	return bufHasCloser()
}

// ShortDelta is the longest delta ScanDelta is for: past it, IndexByte
// finds closers faster.
const ShortDelta = 32

// ScanDelta reports, in one pass over b, whether b is all ASCII and
// whether it holds a '}' or ']' byte (both ASCII, never part of a
// multi-byte rune).
func ScanDelta(b []byte) (ascii, closer bool) {
	var or byte
	for _, c := range b {
		or |= c
		if c == '}' || c == ']' {
			closer = true
		}
	}
	return or < 0x80, closer
}

// tooLongForJunk is utf16Len(s) > maxTrailingUnits, counted only when the
// byte length does not decide it: a UTF-16 unit takes 1 to 3 bytes (a
// 4-byte rune is 2 units), so len(s) bounds the count from above and
// len(s)/3 from below.
func tooLongForJunk(s []byte) bool {
	switch {
	case len(s) <= maxTrailingUnits:
		return false
	case len(s) >= 3*(maxTrailingUnits+1):
		return true
	}
	return utf16Len(s) > maxTrailingUnits
}

// UTF16Len is the length of s in UTF-16 code units, JavaScript's
// String.length, the unit of OpenClaw's limits (OpenClawMaxBuffer, the
// 96-character prefix, the 3-character suffix). Invalid UTF-8 bytes count
// one unit each.
func UTF16Len(s []byte) int { return utf16Len(s) }

// OpenClawExtract is OpenClaw's tryExtractUsableToolCallArguments over the
// joined deltas buf. toolName is the tool-call block's name; it gives the
// smart-quote parser its tool-specific successor keys (it is normalised as
// OpenClaw does: trimmed, 1-128 of [A-Za-z0-9_-], lowercased; when it does
// not qualify the name is read from a functions.NAME prefix).
//
// On success the object's JSON is appended to dst, kind is KindPreserved
// (the whole buffer is a JSON object: it is appended trimmed of
// whitespace) or KindRepaired (a balanced object was cut out of metadata,
// or a smart-quoted object was parsed), and leading/trailing are the
// lengths of the dropped prefix and suffix in UTF-16 code units, the
// numbers OpenClaw logs. On failure dst is returned unchanged and ok is
// false.
//
// It allocates nothing beyond growing dst, except in the smart-quote
// parser for objects of more than 16 keys.
func OpenClawExtract(dst, buf, toolName []byte) (out []byte, kind Kind, leading, trailing int, ok bool) {
	out, st, leading, trailing, ok := openClawExtract(dst, buf, toolName)
	switch st {
	case stratWhole:
		kind = KindPreserved
	case stratBalanced, stratSmart:
		kind = KindRepaired
	}
	return out, kind, leading, trailing, ok
}

// OpenClaw's strategies, in the order it tries them.
const (
	stratNone = iota
	stratWhole
	stratBalanced
	stratSmart
)

func openClawExtract(dst, buf, toolName []byte) (out []byte, strategy, leading, trailing int, ok bool) {
	i, j := jsTrim(buf, 0, len(buf))
	if i == j {
		return dst, stratNone, 0, 0, false
	}
	// Strategy 1: the whole buffer.
	if validObject(buf) {
		a, b := skipWS(buf, 0), len(buf)
		for b > a && isWS(buf[b-1]) {
			b--
		}
		return append(dst, buf[a:b]...), stratWhole, 0, 0, true
	}
	// Strategy 2: balanced-prefix extraction.
	if s, e, found := balancedSpan(buf); found {
		pi, pj := jsTrim(buf, 0, s)
		si, sj := jsTrim(buf, e, len(buf))
		if (pi != pj || si != sj) && allowedPrefix(buf[pi:pj]) && allowedSuffix(buf[si:sj]) &&
			buf[s] == '{' && validObject(buf[s:e]) {
			return append(dst, buf[s:e]...), stratBalanced, utf16Len(buf[pi:pj]), utf16Len(buf[si:sj]), true
		}
	}
	// Strategy 3: the smart-quote parser.
	if !hasSmartQuote(buf) {
		return dst, stratNone, 0, 0, false
	}
	s := bytes.IndexByte(buf, '{')
	if s < 0 {
		return dst, stratNone, 0, 0, false
	}
	pi, pj := jsTrim(buf, 0, s)
	prefix := buf[pi:pj]
	if !allowedPrefix(prefix) {
		return dst, stratNone, 0, 0, false
	}
	name, nameOK := normalizeToolName(toolName)
	if !nameOK {
		name, nameOK = toolNameFromPrefix(prefix)
	}
	sq := smartParser{raw: buf, read: nameOK && name == "read"}
	n := len(dst)
	out, end, good := sq.object(dst, s, 0)
	if !good {
		return out[:n], stratNone, 0, 0, false
	}
	si, sj := jsTrim(buf, end, len(buf))
	if !allowedSuffix(buf[si:sj]) {
		return out[:n], stratNone, 0, 0, false
	}
	return out, stratSmart, utf16Len(prefix), utf16Len(buf[si:sj]), true
}

// balancedSpan finds OpenClaw's first balanced {…} or […] span: it starts
// at the first opener, ignores brackets inside ASCII-quoted strings, and a
// closer of the wrong kind is ignored. It returns [s, e).
func balancedSpan(b []byte) (s, e int, ok bool) {
	s = -1
	for k, c := range b {
		if c == '{' || c == '[' {
			s = k
			break
		}
	}
	if s < 0 {
		return 0, 0, false
	}
	var stack [MaxDepth/64 + 1]uint64 // bit set = '{'
	depth := 0
	inStr, esc := false, false
	for k := s; k < len(b); k++ {
		c := b[k]
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '{', '[':
			if depth >= MaxDepth {
				return 0, 0, false
			}
			if c == '{' {
				stack[depth>>6] |= 1 << (depth & 63)
			} else {
				stack[depth>>6] &^= 1 << (depth & 63)
			}
			depth++
		case '}', ']':
			if depth == 0 {
				continue
			}
			top := stack[(depth-1)>>6]&(1<<((depth-1)&63)) != 0
			if top != (c == '}') {
				continue
			}
			depth--
			if depth == 0 {
				return s, k + 1, true
			}
		}
	}
	return 0, 0, false
}

// allowedPrefix is OpenClaw's metadata-prefix rule over a trimmed prefix.
func allowedPrefix(p []byte) bool {
	if len(p) == 0 {
		return true
	}
	units := 0
	for i := 0; i < len(p); {
		c := p[i]
		if c < utf8.RuneSelf {
			if !prefixByteOK(c) {
				return false
			}
			i++
			units++
		} else {
			r, n := utf8.DecodeRune(p[i:])
			if !llm.IsJSSpace(r) {
				return false
			}
			i += n
			units++
		}
		if units > maxLeadingUnits {
			return false
		}
	}
	switch p[0] {
	case '.', ':', '\'', '"', '`', '-':
		return true
	}
	return hasFoldPrefix(p, "function") || hasFoldPrefix(p, "tool")
}

func prefixByteOK(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	case c == ' ' || (c >= '\t' && c <= '\r'):
		return true
	}
	switch c {
	case '"', '\'', '`', '.', ':', '/', '_', '\\', '-':
		return true
	}
	return false
}

func hasFoldPrefix(p []byte, lower string) bool {
	if len(p) < len(lower) {
		return false
	}
	for i := 0; i < len(lower); i++ {
		c := p[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// allowedSuffix is OpenClaw's junk-suffix rule over a trimmed suffix: empty,
// or 1-3 UTF-16 units with no space and none of { } [ ] " : , \.
func allowedSuffix(s []byte) bool {
	if len(s) == 0 {
		return true
	}
	units := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case '{', '}', '[', ']', '"', ':', ',', '\\', ' ', '\t', '\n', '\v', '\f', '\r':
				return false
			}
			i++
			units++
		} else {
			r, n := utf8.DecodeRune(s[i:])
			if llm.IsJSSpace(r) {
				return false
			}
			i += n
			units++
			if r >= 0x10000 {
				units++
			}
		}
	}
	return units <= maxTrailingUnits
}

// isSmartQuoteAt reports whether b[i:] starts with U+201C..U+201F (UTF-8
// E2 80 9C..9F).
func isSmartQuoteAt(b []byte, i int) bool {
	return i+2 < len(b) && b[i] == 0xe2 && b[i+1] == 0x80 && b[i+2] >= 0x9c && b[i+2] <= 0x9f
}

func hasSmartQuote(b []byte) bool {
	for {
		k := bytes.IndexByte(b, 0xe2)
		if k < 0 {
			return false
		}
		if isSmartQuoteAt(b, k) {
			return true
		}
		b = b[k+1:]
	}
}

// normalizeToolName trims name (JavaScript trim), requires 1-128 of
// [A-Za-z0-9_-] and lowercases it. The result is a string only for the
// comparison against "read", so no allocation: it returns a constant.
func normalizeToolName(name []byte) (string, bool) {
	i, j := jsTrim(name, 0, len(name))
	return classifyToolName(name[i:j])
}

func isNameByte(c byte) bool {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-'
}

// classifyToolName validates a tool name and reports "read" when it is
// read (any case), else "" (valid, another tool).
func classifyToolName(n []byte) (string, bool) {
	if len(n) == 0 || len(n) > maxToolNameUnits {
		return "", false
	}
	for _, c := range n {
		if !isNameByte(c) {
			return "", false
		}
	}
	if len(n) == 4 && hasFoldPrefix(n, "read") {
		return "read", true
	}
	return "", true
}

// toolNameFromPrefix emulates /(?:^|[.\s])(?:functions?|tools?)[._:/-]?([a-z0-9_-]+)/i
// on the prefix, with JavaScript's backtracking order, and normalises the
// captured name.
func toolNameFromPrefix(p []byte) (string, bool) {
	words := [...]string{"functions", "function", "tools", "tool"}
	for at := 0; at < len(p); at++ {
		if at > 0 {
			c := p[at-1]
			okStart := c == '.' || c == ' ' || (c >= '\t' && c <= '\r')
			if !okStart && c >= utf8.RuneSelf {
				r, _ := utf8.DecodeLastRune(p[:at])
				okStart = llm.IsJSSpace(r)
			}
			if !okStart {
				continue
			}
		}
		for _, w := range words {
			if !hasFoldPrefix(p[at:], w) {
				continue
			}
			k := at + len(w)
			if k < len(p) {
				switch p[k] {
				case '.', '_', ':', '/', '-':
					// [._:/-]? greedy: with the separator first, then without.
					// '_' and '-' are also name bytes, so "with" always wins
					// for them when a name byte follows.
					if n := nameRun(p, k+1); n > 0 {
						return classifyToolName(p[k+1 : k+1+n])
					}
				}
			}
			if n := nameRun(p, k); n > 0 {
				return classifyToolName(p[k : k+n])
			}
		}
	}
	return "", false
}

func nameRun(p []byte, k int) int {
	n := 0
	for k+n < len(p) && isNameByte(p[k+n]) {
		n++
	}
	return n
}

// appendJSONStr appends s as a JSON string.
func appendJSONStr(dst, s []byte) []byte { return llm.AppendJSONString(dst, s) }
