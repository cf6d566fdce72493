package repair

import (
	"bytes"
	"unicode/utf8"
)

// The smart-quote parser reads OpenClaw's JSON-like objects whose keys and
// string values may be delimited by U+201C..U+201F as well as by ASCII
// quotes (streamwrap.md §4.4 strategy 3). It writes canonical JSON into the
// output as it goes.

// Keys after which a smart-quoted value may close before ", <key>:".
var knownArgKeys = [...]string{
	"args", "backupDir", "cmd", "command", "content", "cwd", "edits", "file",
	"file_path", "filePath", "filepath", "from", "line_end", "line_start",
	"lines", "message", "new_str", "new_string", "newText", "old_str",
	"old_string", "oldText", "path", "paths", "pattern", "query",
	"replacement", "text", "timeoutMs", "title", "to", "url", "urls", "workdir",
}

// Free-form keys: only their paired successor may close their value.
var freeformKeys = [...]string{
	"content", "message", "new_str", "new_string", "newText", "old_str",
	"old_string", "oldText", "text",
}

func inSet(set []string, k []byte) bool {
	for _, s := range set {
		if string(k) == s {
			return true
		}
	}
	return false
}

func freeformSuccessor(k []byte) string {
	switch string(k) {
	case "old_str":
		return "new_str"
	case "old_string":
		return "new_string"
	case "oldText":
		return "newText"
	}
	return ""
}

type smartParser struct {
	raw  []byte
	read bool // the tool is "read": path may be followed by offset|limit
	// keyBuf holds the decoded text of the key being compared.
	keyBuf [maxSmartKeyUnits * 3]byte
}

// jsSkipWS skips JavaScript whitespace from i.
func (p *smartParser) skipWS(i int) int { return jsTrimLeft(p.raw, i, len(p.raw)) }

// object parses a smart-quoted object at raw[i] == '{' and appends its
// JSON. depth bounds the recursion through "edits" arrays.
func (p *smartParser) object(dst []byte, i, depth int) ([]byte, int, bool) {
	raw := p.raw
	if i >= len(raw) || raw[i] != '{' || depth > MaxDepth {
		return dst, i, false
	}
	var keysSmall [16][2]int // spans of emitted (encoded) keys in dst
	keys := keysSmall[:0]
	var seen map[string]struct{}
	sawProto := false // a dropped __proto__ member still counts as seen
	dst = append(dst, '{')
	i = p.skipWS(i + 1)
	if i < len(raw) && raw[i] == '}' {
		return append(dst, '}'), i + 1, true
	}
	first := true
	for i < len(raw) {
		// Key.
		mark := len(dst)
		if !first {
			dst = append(dst, ',')
		}
		ks := len(dst)
		var kend int
		var good bool
		dst, kend, good = p.key(dst, i)
		if !good {
			return dst, i, false
		}
		ke := len(dst)
		// Duplicate keys fail the whole parse (compared on the canonical
		// encoding, which is one-to-one with the decoded key).
		if seen == nil && len(keys) < cap(keys) {
			for _, sp := range keys {
				if bytes.Equal(dst[sp[0]:sp[1]], dst[ks:ke]) {
					return dst, i, false
				}
			}
			keys = append(keys, [2]int{ks, ke})
		} else {
			if seen == nil {
				seen = make(map[string]struct{}, 2*len(keys))
				for _, sp := range keys {
					seen[string(dst[sp[0]:sp[1]])] = struct{}{}
				}
			}
			if _, dup := seen[string(dst[ks:ke])]; dup {
				return dst, i, false
			}
			seen[string(dst[ks:ke])] = struct{}{}
		}
		i = p.skipWS(kend)
		if i >= len(raw) || raw[i] != ':' {
			return dst, i, false
		}
		// The decoded key, for the successor tables (all plain ASCII).
		keyText := dst[ks+1 : ke-1]
		if bytes.IndexByte(keyText, '\\') >= 0 {
			var good bool
			if keyText, good = unescapeShort(p.keyBuf[:0], keyText, cap(p.keyBuf)); !good {
				keyText = nil
			}
		}
		// __proto__ assigned on a plain object sets the prototype instead
		// of creating a member: OpenClaw's result lacks it.
		dropMember := string(keyText) == "__proto__"
		if dropMember {
			if sawProto {
				return dst, i, false
			}
			sawProto = true
		}
		dst = append(dst, ':')
		var vend int
		dst, vend, good = p.value(dst, p.skipWS(i+1), keyText, depth)
		if !good {
			return dst, i, false
		}
		if dropMember {
			dst = dst[:mark]
			if len(keys) > 0 && keys[len(keys)-1][0] == ks {
				keys = keys[:len(keys)-1]
			}
		} else {
			first = false
		}
		i = p.skipWS(vend)
		if i >= len(raw) {
			return dst, i, false
		}
		switch raw[i] {
		case ',':
			i = p.skipWS(i + 1)
		case '}':
			return append(dst, '}'), i + 1, true
		default:
			return dst, i, false
		}
	}
	return dst, i, false
}

// key appends the key at raw[i] as a JSON string and returns the index
// after its closing quote.
func (p *smartParser) key(dst []byte, i int) ([]byte, int, bool) {
	raw := p.raw
	if i >= len(raw) {
		return dst, i, false
	}
	if raw[i] == '"' {
		// Keys are written canonically (decoded, re-encoded) so that
		// duplicates compare equal however they were escaped.
		end, e := scanString(raw, i)
		if e != scanOK {
			return dst, i, false
		}
		if bytes.IndexByte(raw[i:end], '\\') < 0 {
			return append(dst, raw[i:end]...), end, true
		}
		n := len(dst)
		dst = appendUnquoted(dst, raw[i:end])
		m := len(dst)
		dst = appendJSONStr(dst, dst[n:m])
		k := copy(dst[n:], dst[m:])
		return dst[:n+k], end, true
	}
	if isSmartQuoteAt(raw, i) {
		s, e, end, ok := p.smartKey(i)
		if !ok {
			return dst, i, false
		}
		return appendJSONStr(dst, raw[s:e]), end, true
	}
	return dst, i, false
}

// smartKey reads a smart-quoted key at raw[i]: it runs to the next smart
// quote followed (after whitespace) by ':', at most 96 UTF-16 units. It
// returns the key text bounds and the index after the closing quote.
func (p *smartParser) smartKey(i int) (s, e, end int, ok bool) {
	raw := p.raw
	s = i + 3
	units := 0
	for k := s; k < len(raw); {
		if isSmartQuoteAt(raw, k) {
			if n := p.skipWS(k + 3); n < len(raw) && raw[n] == ':' {
				return s, k, k + 3, true
			}
		}
		c := raw[k]
		if c < utf8.RuneSelf {
			k++
			units++
		} else {
			r, n := utf8.DecodeRune(raw[k:])
			k += n
			units++
			if r >= 0x10000 {
				units++
			}
		}
		if units > maxSmartKeyUnits {
			return 0, 0, 0, false
		}
	}
	return 0, 0, 0, false
}

// asciiString reads an ASCII-quoted string at raw[i] the way OpenClaw does
// (find the closing quote skipping escapes, then JSON.parse the span) and
// appends it. A valid JSON string is already canonical enough: it is
// appended as it is.
func (p *smartParser) asciiString(dst []byte, i int) ([]byte, int, bool) {
	end, e := scanString(p.raw, i)
	if e != scanOK {
		return dst, i, false
	}
	return append(dst, p.raw[i:end]...), end, true
}

// value appends the member value at raw[i] for key.
func (p *smartParser) value(dst []byte, i int, key []byte, depth int) ([]byte, int, bool) {
	raw := p.raw
	if i >= len(raw) {
		return dst, i, false
	}
	switch {
	case raw[i] == '"':
		return p.asciiString(dst, i)
	case isSmartQuoteAt(raw, i):
		return p.smartValue(dst, i, key)
	case raw[i] == '[' && string(key) == "edits":
		return p.editArray(dst, i, depth)
	}
	return p.jsonValue(dst, i)
}

// smartValue reads a smart-quoted value at raw[i]. A smart quote closes it
// only when followed by '}', the end of input, or ',' plus a key allowed to
// come next. The text is JSON-escape decoded and appended as a string.
func (p *smartParser) smartValue(dst []byte, i int, key []byte) ([]byte, int, bool) {
	raw := p.raw
	s := i + 3
	for k := s; k < len(raw); {
		if isSmartQuoteAt(raw, k) && p.closesAt(k, key) {
			return appendSmartDecoded(dst, raw[s:k]), k + 3, true
		}
		if raw[k] < utf8.RuneSelf {
			k++
		} else {
			_, n := utf8.DecodeRune(raw[k:])
			k += n
		}
	}
	return dst, i, false
}

func (p *smartParser) closesAt(q int, key []byte) bool {
	raw := p.raw
	n := p.skipWS(q + 3)
	if n >= len(raw) || raw[n] == '}' {
		return true
	}
	if raw[n] != ',' {
		return false
	}
	next, ok := p.keyAfterComma(n)
	if !ok {
		return false
	}
	if !inSet(freeformKeys[:], key) {
		if inSet(knownArgKeys[:], next) {
			return true
		}
		return p.read && string(key) == "path" && (string(next) == "offset" || string(next) == "limit")
	}
	succ := freeformSuccessor(key)
	return succ != "" && string(next) == succ
}

// keyAfterComma reads the member key after the comma at raw[c] and checks
// that ':' follows. The decoded key is returned in p.keyBuf when it is
// short enough to matter (every table key is ASCII and short).
func (p *smartParser) keyAfterComma(c int) ([]byte, bool) {
	raw := p.raw
	ks := p.skipWS(c + 1)
	if ks >= len(raw) {
		return nil, false
	}
	var kend int
	var text []byte
	switch {
	case raw[ks] == '"':
		end, e := scanString(raw, ks)
		if e != scanOK {
			return nil, false
		}
		kend = end
		inner := raw[ks+1 : end-1]
		if bytes.IndexByte(inner, '\\') < 0 {
			text = inner
		} else {
			text = p.keyBuf[:0]
			var good bool
			if text, good = unescapeShort(text, inner, cap(p.keyBuf)); !good {
				// Longer than any table key: a key that cannot match.
				text = []byte{0}
			}
		}
	case isSmartQuoteAt(raw, ks):
		s, e, end, ok := p.smartKey(ks)
		if !ok {
			return nil, false
		}
		kend = end
		text = raw[s:e]
	default:
		return nil, false
	}
	n := p.skipWS(kend)
	if n >= len(raw) || raw[n] != ':' {
		return nil, false
	}
	return text, true
}

// editArray reads "edits": [ {smart object}, ... ]. OpenClaw parses the
// items without tool-name context.
func (p *smartParser) editArray(dst []byte, i, depth int) ([]byte, int, bool) {
	raw := p.raw
	dst = append(dst, '[')
	i = p.skipWS(i + 1)
	if i < len(raw) && raw[i] == ']' {
		return append(dst, ']'), i + 1, true
	}
	saved := p.read
	p.read = false
	defer func() { p.read = saved }()
	first := true
	for i < len(raw) {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		var good bool
		dst, i, good = p.object(dst, i, depth+1)
		if !good {
			return dst, i, false
		}
		i = p.skipWS(i)
		if i >= len(raw) {
			return dst, i, false
		}
		switch raw[i] {
		case ',':
			i = p.skipWS(i + 1)
		case ']':
			return append(dst, ']'), i + 1, true
		default:
			return dst, i, false
		}
	}
	return dst, i, false
}

// jsonValue reads any other value: text up to the next top-level ',', '}'
// or ']' (brackets counted, ASCII strings skipped), trimmed, must be JSON.
func (p *smartParser) jsonValue(dst []byte, i int) ([]byte, int, bool) {
	raw := p.raw
	depth := 0
	inStr, esc := false, false
	k := i
loop:
	for ; k < len(raw); k++ {
		c := raw[k]
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
			depth++
		case '}', ']':
			if depth == 0 {
				break loop
			}
			depth--
		case ',':
			if depth == 0 {
				break loop
			}
		}
	}
	a, b := jsTrim(raw, i, k)
	if a == b || !Valid(raw[a:b]) {
		return dst, i, false
	}
	return append(dst, raw[a:b]...), k, true
}

// appendSmartDecoded appends the text of a smart-quoted value as a JSON
// string, decoding \" \\ \/ \b \f \n \r \t and \uXXXX as OpenClaw does and
// keeping any other backslash as a literal backslash.
func appendSmartDecoded(dst, s []byte) []byte {
	dst = append(dst, '"')
	start := 0
	flush := func(k int) {
		if k > start {
			dst = appendJSONStrBody(dst, s[start:k])
		}
	}
	for k := 0; k < len(s); {
		if s[k] != '\\' || k+1 >= len(s) {
			k++
			continue
		}
		switch c := s[k+1]; c {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			flush(k)
			if c == '/' {
				dst = append(dst, '/')
			} else {
				dst = append(dst, '\\', c)
			}
			k += 2
			start = k
		case 'u':
			if k+6 <= len(s) && isHex(s[k+2]) && isHex(s[k+3]) && isHex(s[k+4]) && isHex(s[k+5]) {
				flush(k)
				// A \uXXXX escape means the same UTF-16 unit in JSON, so
				// it is kept (pairs and lone surrogates included).
				dst = append(dst, s[k:k+6]...)
				k += 6
				start = k
			} else {
				k++
			}
		default:
			k++
		}
	}
	flush(len(s))
	return append(dst, '"')
}

// appendJSONStrBody appends s JSON-escaped, without quotes.
func appendJSONStrBody(dst, s []byte) []byte {
	n := len(dst)
	dst = appendJSONStr(dst, s)
	// Drop the quotes AppendJSONString wrote.
	copy(dst[n:], dst[n+1:len(dst)-1])
	return dst[:len(dst)-2]
}

// unescapeShort decodes the JSON string body in (valid escapes) into dst,
// failing when the result would exceed max bytes.
func unescapeShort(dst, in []byte, max int) ([]byte, bool) {
	for k := 0; k < len(in); {
		if len(dst) >= max {
			return dst, false
		}
		c := in[k]
		if c != '\\' {
			dst = append(dst, c)
			k++
			continue
		}
		switch e := in[k+1]; e {
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
			r := rune(hexVal(in[k+2])<<12 | hexVal(in[k+3])<<8 | hexVal(in[k+4])<<4 | hexVal(in[k+5]))
			if len(dst)+utf8.UTFMax > max {
				return dst, false
			}
			dst = utf8.AppendRune(dst, r)
			k += 6
			continue
		default:
			dst = append(dst, e)
		}
		k += 2
	}
	return dst, true
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return 0
}
