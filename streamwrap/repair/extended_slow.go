package repair

import (
	"bytes"
	"unicode/utf8"
)

// Limits of the extended repairs.
const (
	maxLeadingProse  = 1024 // bytes of prose dropped before the object
	maxTrailingProse = 256  // bytes of prose dropped after the object
	maxUnwrap        = 3    // nested double-encodings unwrapped
)

// extendedSlow handles every input that is not a valid JSON object.
func extendedSlow(dst, raw, toolName []byte) ([]byte, Result, error) {
	if len(raw) > MaxInput {
		return dst, Result{}, &Error{Kind: ErrKindTooLarge, Offset: MaxInput}
	}
	return extendedAt(dst, raw, toolName, 0)
}

func extendedAt(dst, raw, toolName []byte, level int) ([]byte, Result, error) {
	var res Result
	i, j := jsTrim(raw, 0, len(raw))
	if i == j {
		return append(dst, '{', '}'), Result{Fixes: FixEmpty}, nil
	}
	// Everything OpenClaw repairs, repaired the same way (the superset
	// rule). Its whole-buffer strategy only fires here when the object is
	// surrounded by non-JSON whitespace.
	if out, st, lead, trail, ok := openClawExtract(dst, raw, toolName); ok {
		switch st {
		case stratBalanced, stratSmart:
			res.Leading, res.Trailing = lead, trail
			pi, _ := jsTrim(raw, 0, len(raw))
			if bytes.HasPrefix(raw[pi:], []byte("```")) {
				res.Fixes |= FixCodeFence
			} else {
				if lead > 0 {
					res.Fixes |= FixLeadingText
				}
				if trail > 0 {
					res.Fixes |= FixTrailingText
				}
			}
			if st == stratSmart {
				res.Fixes |= FixSmartQuote
			}
		}
		return out, res, nil
	}
	text := raw[i:j]
	base := i // offset of text in raw, for error offsets

	// One surrounding markdown fence.
	if bytes.HasPrefix(text, []byte("```")) && level < 2 {
		body, ok := unfence(text)
		if !ok {
			return dst, res, &Error{Kind: ErrKindSyntax, Offset: base}
		}
		out, r, err := extendedAt(dst, body, toolName, level+1)
		if err != nil {
			return dst, res, err
		}
		r.Fixes |= FixCodeFence
		return out, r, nil
	}

	switch text[0] {
	case 'n':
		if string(text) == "null" {
			return append(dst, '{', '}'), Result{Fixes: FixEmpty}, nil
		}
	case '"':
		return unwrapString(dst, text, toolName, base, level)
	case '[':
		return dst, res, valueError(text, base)
	}

	// Leading text up to the object.
	s := bytes.IndexByte(text, '{')
	if s < 0 {
		return dst, res, valueError(text, base)
	}
	if s > 0 {
		lead := text[:s]
		if len(lead) > maxLeadingProse || bytes.ContainsAny(lead, "[]\",=") {
			return dst, res, &Error{Kind: ErrKindProse, Offset: base}
		}
		res.Leading = utf16Len(bytes.TrimSpace(lead))
		res.Fixes |= FixLeadingText
	}

	n := len(dst)
	rp := relaxed{b: text}
	out, end, err := rp.object(dst, s, 1)
	if err != nil {
		out = out[:n]
		if err == ErrTruncated {
			return out, Result{}, err
		}
		// The typographic-quote parser, after droppable prose.
		if hasSmartQuote(text) {
			sq := smartParser{raw: text}
			name, ok := normalizeToolName(toolName)
			if !ok {
				name, ok = toolNameFromPrefix(bytes.TrimSpace(text[:s]))
			}
			sq.read = ok && name == "read"
			if o, e, good := sq.object(out, s, 0); good {
				res.Fixes |= FixSmartQuote
				return trailing(o, n, text, e, base, res)
			}
		}
		return out[:n], Result{}, offsetErr(err, base)
	}
	res.Fixes |= rp.fixes
	return trailing(out, n, text, end, base, res)
}

// trailing decides what follows a complete object at text[end:]: nothing,
// copies of the same object, or droppable prose.
func trailing(out []byte, n int, text []byte, end, base int, res Result) ([]byte, Result, error) {
	k := skipWS(text, end)
	if k == len(text) {
		return out, res, nil
	}
	if text[k] == '{' {
		// Concatenated objects: identical copies collapse to one, and
		// empty objects ({..}{}, {}{..}) add nothing, so the one object
		// with members is the arguments (nothing invented); different
		// objects with members are ambiguous. A cut-off copy is
		// truncation.
		for k < len(text) && text[k] == '{' {
			m := len(out)
			rp := relaxed{b: text}
			var e int
			var err error
			out, e, err = rp.object(out, k, 1)
			if err != nil {
				return out[:n], Result{}, offsetErr(err, base)
			}
			first, next := out[n:m], out[m:] // out may have moved
			switch {
			case emptyObject(next) || sameCompact(first, next):
				out = out[:m]
			case emptyObject(first):
				out = append(out[:n], next...)
			default:
				return out[:n], Result{}, &Error{Kind: ErrKindAmbiguous, Offset: base + k}
			}
			res.Fixes |= FixConcatenated
			k = skipWS(text, e)
		}
		if k == len(text) {
			return out, res, nil
		}
	}
	tail := text[k:]
	if len(tail) > maxTrailingProse || bytes.ContainsAny(tail, "{}[]\":,") {
		return out[:n], Result{}, &Error{Kind: ErrKindProse, Offset: base + k}
	}
	res.Fixes |= FixTrailingText
	res.Trailing += utf16Len(tail)
	return out, res, nil
}

// valueError classifies text that does not hold an object: cut short, a
// complete non-object value, or garbage.
func valueError(text []byte, base int) error {
	rp := relaxed{b: text}
	_, end, err := rp.value(nil, 0, 0)
	if err != nil {
		return offsetErr(err, base)
	}
	if skipWS(text, end) == len(text) {
		return &Error{Kind: ErrKindNotObject, Offset: base}
	}
	return &Error{Kind: ErrKindSyntax, Offset: base + end}
}

func offsetErr(err error, base int) error {
	if e, ok := err.(*Error); ok {
		return &Error{Kind: e.Kind, Offset: e.Offset + base}
	}
	return err
}

// unfence strips one markdown fence: ```lang? newline body ```. A missing
// closing fence leaves the body to the end (the stream may have ended
// right after the object; a cut body is reported as truncated later).
func unfence(text []byte) ([]byte, bool) {
	k := 3
	for k < len(text) && (isNameByte(text[k]) || text[k] == '+' || text[k] == '.') {
		k++
	}
	for k < len(text) && (text[k] == ' ' || text[k] == '\t') {
		k++
	}
	if k < len(text) && text[k] != '\n' && text[k] != '\r' && text[k] != '{' && text[k] != '[' && text[k] != '"' {
		return nil, false
	}
	body := text[k:]
	if bytes.HasSuffix(body, []byte("```")) {
		body = body[:len(body)-3]
	}
	if bytes.Contains(body, []byte("```")) && !fenceInsideString(body) {
		return nil, false
	}
	return body, true
}

// fenceInsideString reports whether every ``` in body sits inside a JSON
// string (so the fence is not a second fenced block).
func fenceInsideString(body []byte) bool {
	in, esc := false, false
	for k := 0; k < len(body); k++ {
		c := body[k]
		if in {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				in = false
			}
			continue
		}
		if c == '"' {
			in = true
		} else if c == '`' && k+2 < len(body) && body[k+1] == '`' && body[k+2] == '`' {
			return false
		}
	}
	return true
}

// unwrapString handles a top-level JSON string: a double-encoded object
// (or "null"/"") is unwrapped; anything else is not an object.
func unwrapString(dst, text, toolName []byte, base, level int) ([]byte, Result, error) {
	rp := relaxed{b: text}
	n := len(dst)
	// Decode the string's content into scratch space after dst.
	scratch, end, err := rp.stringValue(dst, 0, true)
	if err != nil {
		return dst[:n], Result{}, offsetErr(err, base)
	}
	if skipWS(text, end) != len(text) {
		return dst[:n], Result{}, &Error{Kind: ErrKindSyntax, Offset: base + end}
	}
	inner := scratch[n:]
	ii, ij := jsTrim(inner, 0, len(inner))
	inner = inner[ii:ij]
	if len(inner) == 0 || string(inner) == "null" {
		return append(dst[:n], '{', '}'), Result{Fixes: FixEmpty | FixDoubleEncoded}, nil
	}
	if inner[0] != '{' && inner[0] != '"' || level >= maxUnwrap {
		return dst[:n], Result{}, &Error{Kind: ErrKindNotObject, Offset: base}
	}
	m := len(scratch)
	out, r, err := extendedAt(scratch, inner, toolName, level+1)
	if err != nil {
		if err == ErrTruncated {
			// The outer string was complete: the inner text is not cut
			// by the stream, it is malformed.
			err = &Error{Kind: ErrKindSyntax, Offset: base}
		}
		return dst[:n], Result{}, offsetErr(err, 0)
	}
	res := out[m:]
	k := copy(out[n:], res)
	r.Fixes |= FixDoubleEncoded
	r.Leading, r.Trailing = 0, 0
	return out[:n+k], r, nil
}

// sameCompact reports whether two JSON texts are equal token for token,
// ignoring whitespace outside strings.
func sameCompact(a, b []byte) bool {
	i, j := 0, 0
	inA := false
	for {
		if !inA {
			i, j = skipWS(a, i), skipWS(b, j)
		}
		if i == len(a) || j == len(b) {
			return i == len(a) && j == len(b)
		}
		if a[i] != b[j] {
			return false
		}
		if a[i] == '"' {
			// Compare the whole string literally.
			ea, _ := scanString(a, i)
			eb, _ := scanString(b, j)
			if !bytes.Equal(a[i:ea], b[j:eb]) {
				return false
			}
			i, j = ea, eb
			continue
		}
		i++
		j++
	}
}

// relaxed is the single-pass repairing transcoder behind Extended: it reads
// JSON plus the real quirks and appends strict JSON, keeping every byte it
// does not need to change. It never closes anything: reaching the end of
// input inside a value is ErrTruncated.
type relaxed struct {
	b     []byte
	fixes Fix
}

func (r *relaxed) syntax(at int) error { return &Error{Kind: ErrKindSyntax, Offset: at} }

// ws copies JSON whitespace from i and drops stray literal \n \r \t
// escapes between tokens.
func (r *relaxed) ws(dst []byte, i int) ([]byte, int) {
	b := r.b
	for i < len(b) {
		switch c := b[i]; {
		case isWS(c):
			dst = append(dst, c)
			i++
		case c == '\\' && i+1 < len(b) && (b[i+1] == 'n' || b[i+1] == 'r' || b[i+1] == 't'):
			r.fixes |= FixStrayEscape
			i += 2
		default:
			return dst, i
		}
	}
	return dst, i
}

func (r *relaxed) value(dst []byte, i, depth int) ([]byte, int, error) {
	b := r.b
	if i >= len(b) {
		return dst, i, ErrTruncated
	}
	switch c := b[i]; c {
	case '{':
		return r.object(dst, i, depth+1)
	case '[':
		return r.array(dst, i, depth+1)
	case '"', '\'':
		return r.stringValue(dst, i, false)
	case 't':
		return r.literal(dst, i, "true", "true")
	case 'f':
		return r.literal(dst, i, "false", "false")
	case 'n':
		return r.literal(dst, i, "null", "null")
	case 'T':
		return r.literal(dst, i, "True", "true")
	case 'F':
		return r.literal(dst, i, "False", "false")
	case 'N':
		return r.literal(dst, i, "None", "null")
	default:
		if c == '-' || isDigit(c) {
			end, e := scanNumber(b, i)
			switch e {
			case scanOK:
				if end < len(b) && isIdentByte(b[end]) {
					return dst, end, r.syntax(end)
				}
				return append(dst, b[i:end]...), end, nil
			case scanEOF:
				return dst, end, ErrTruncated
			}
			return dst, end, r.syntax(end)
		}
		return dst, i, r.syntax(i)
	}
}

func isIdentByte(c byte) bool { return isNameByte(c) || c == '$' }

func (r *relaxed) literal(dst []byte, i int, word, out string) ([]byte, int, error) {
	b := r.b
	for k := 0; k < len(word); k++ {
		if i+k >= len(b) {
			return dst, i + k, ErrTruncated
		}
		if b[i+k] != word[k] {
			return dst, i + k, r.syntax(i + k)
		}
	}
	end := i + len(word)
	if end < len(b) && isIdentByte(b[end]) {
		return dst, end, r.syntax(end)
	}
	if word != out {
		r.fixes |= FixPythonLiteral
	}
	return append(dst, out...), end, nil
}

func (r *relaxed) object(dst []byte, i, depth int) ([]byte, int, error) {
	b := r.b
	if depth > MaxDepth {
		return dst, i, &Error{Kind: ErrKindTooDeep, Offset: i}
	}
	open, n := i, len(dst)
	dst = append(dst, '{')
	dst, i = r.ws(dst, i+1)
	if i >= len(b) {
		return dst, i, ErrTruncated
	}
	// A doubled opening brace: {{...}} or {{...}.
	if b[i] == '{' && depth == 1 && open == r.firstBrace() {
		inner, e, err := r.object(dst[:n], i, depth+1)
		if err != nil {
			return inner, e, err
		}
		k := skipWS(b, e)
		if k < len(b) && b[k] == '}' {
			e = k + 1
		}
		r.fixes |= FixRedundantBrace
		return inner, e, nil
	}
	if b[i] == '}' {
		return append(dst, '}'), i + 1, nil
	}
	for {
		var err error
		if dst, i, err = r.key(dst, i); err != nil {
			return dst, i, err
		}
		if dst, i = r.ws(dst, i); i >= len(b) {
			return dst, i, ErrTruncated
		}
		if b[i] != ':' {
			return dst, i, r.syntax(i)
		}
		dst = append(dst, ':')
		if dst, i = r.ws(dst, i+1); i >= len(b) {
			return dst, i, ErrTruncated
		}
		if dst, i, err = r.value(dst, i, depth); err != nil {
			return dst, i, err
		}
		if dst, i = r.ws(dst, i); i >= len(b) {
			return dst, i, ErrTruncated
		}
		switch b[i] {
		case '}':
			return append(dst, '}'), i + 1, nil
		case ',':
			m := len(dst)
			var k int
			if dst, k = r.ws(append(dst, ','), i+1); k >= len(b) {
				return dst, k, ErrTruncated
			}
			if b[k] == '}' { // trailing comma
				r.fixes |= FixTrailingComma
				dst = append(dst[:m], dst[m+1:]...)
				return append(dst, '}'), k + 1, nil
			}
			i = k
		default:
			return dst, i, r.syntax(i)
		}
	}
}

// firstBrace is the index of the first '{' of the text (the object start).
func (r *relaxed) firstBrace() int { return bytes.IndexByte(r.b, '{') }

func (r *relaxed) array(dst []byte, i, depth int) ([]byte, int, error) {
	b := r.b
	if depth > MaxDepth {
		return dst, i, &Error{Kind: ErrKindTooDeep, Offset: i}
	}
	dst = append(dst, '[')
	if dst, i = r.ws(dst, i+1); i >= len(b) {
		return dst, i, ErrTruncated
	}
	if b[i] == ']' {
		return append(dst, ']'), i + 1, nil
	}
	for {
		var err error
		if dst, i, err = r.value(dst, i, depth); err != nil {
			return dst, i, err
		}
		if dst, i = r.ws(dst, i); i >= len(b) {
			return dst, i, ErrTruncated
		}
		switch b[i] {
		case ']':
			return append(dst, ']'), i + 1, nil
		case ',':
			m := len(dst)
			var k int
			if dst, k = r.ws(append(dst, ','), i+1); k >= len(b) {
				return dst, k, ErrTruncated
			}
			if b[k] == ']' {
				r.fixes |= FixTrailingComma
				dst = append(dst[:m], dst[m+1:]...)
				return append(dst, ']'), k + 1, nil
			}
			i = k
		default:
			return dst, i, r.syntax(i)
		}
	}
}

// key reads a member key: a JSON string, a single-quoted string or a bare
// identifier.
func (r *relaxed) key(dst []byte, i int) ([]byte, int, error) {
	b := r.b
	if i >= len(b) {
		return dst, i, ErrTruncated
	}
	switch c := b[i]; {
	case c == '"' || c == '\'':
		return r.stringValue(dst, i, false)
	case isIdentStart(c):
		k := i
		for k < len(b) && isIdentByte(b[k]) {
			k++
		}
		if k == len(b) {
			return dst, k, ErrTruncated
		}
		r.fixes |= FixUnquotedKey
		dst = append(dst, '"')
		dst = append(dst, b[i:k]...)
		return append(dst, '"'), k, nil
	}
	return dst, i, r.syntax(i)
}

func isIdentStart(c byte) bool {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$'
}

// stringValue transcodes a string at b[i] (double- or single-quoted). Raw control
// characters are escaped and invalid escapes get their backslash doubled
// (pi-ai's repair); in a single-quoted string \' means ' and '"' is
// escaped. With decode, the decoded content is appended instead of the
// JSON text (for unwrapping double-encoded strings).
func (r *relaxed) stringValue(dst []byte, i int, decode bool) ([]byte, int, error) {
	b := r.b
	q := b[i]
	if q == '\'' {
		r.fixes |= FixSingleQuote
	}
	if decode {
		if q != '"' {
			return dst, i, r.syntax(i)
		}
		end, e := scanString(b, i)
		switch e {
		case scanEOF:
			return dst, end, ErrTruncated
		case scanBad:
			// Repair the escapes first, then decode the repaired text.
			n := len(dst)
			rep, end2, err := r.stringValue(dst, i, false)
			if err != nil {
				return rep[:n], end2, err
			}
			return appendUnquoted(rep[:n], rep[n:]), end2, nil
		}
		return appendUnquoted(dst, b[i:end]), end, nil
	}
	dst = append(dst, '"')
	k := i + 1
	start := k
	for k < len(b) {
		c := b[k]
		switch {
		case c == q:
			dst = append(dst, b[start:k]...)
			return append(dst, '"'), k + 1, nil
		case c == '\\':
			if k+1 >= len(b) {
				return dst, len(b), ErrTruncated
			}
			n := b[k+1]
			switch {
			case n == 'u':
				if k+6 > len(b) {
					// Possibly a cut \uXXXX: only hex digits so far.
					ok := true
					for x := k + 2; x < len(b); x++ {
						ok = ok && isHex(b[x])
					}
					if ok {
						return dst, len(b), ErrTruncated
					}
				}
				if k+6 <= len(b) && isHex(b[k+2]) && isHex(b[k+3]) && isHex(b[k+4]) && isHex(b[k+5]) {
					k += 6
					continue
				}
			case n == '"' && q == '"', n == '\\', n == '/', n == 'b', n == 'f', n == 'n', n == 'r', n == 't':
				k += 2
				continue
			case n == '\'' && q == '\'':
				dst = append(dst, b[start:k]...)
				dst = append(dst, '\'')
				k += 2
				start = k
				continue
			case n == '"': // \" inside a single-quoted string
				k += 2
				continue
			}
			// Invalid escape: keep the backslash literally.
			r.fixes |= FixEscapes
			dst = append(dst, b[start:k]...)
			dst = append(dst, '\\', '\\')
			k++
			start = k
		case c == '"': // only reached in single-quoted strings
			dst = append(dst, b[start:k]...)
			dst = append(dst, '\\', '"')
			k++
			start = k
		case c < 0x20:
			r.fixes |= FixEscapes
			dst = append(dst, b[start:k]...)
			dst = appendControlEscape(dst, c)
			k++
			start = k
		default:
			k++
		}
	}
	return dst, k, ErrTruncated
}

// appendUnquoted appends the decoded content of the valid JSON string s.
// Surrogate escapes that do not pair are written as U+FFFD.
func appendUnquoted(dst, s []byte) []byte {
	s = s[1 : len(s)-1]
	for k := 0; k < len(s); {
		c := s[k]
		if c != '\\' {
			dst = append(dst, c)
			k++
			continue
		}
		switch e := s[k+1]; e {
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
			v := rune(hexVal(s[k+2])<<12 | hexVal(s[k+3])<<8 | hexVal(s[k+4])<<4 | hexVal(s[k+5]))
			k += 6
			if v >= 0xd800 && v < 0xdc00 && k+6 <= len(s) && s[k] == '\\' && s[k+1] == 'u' {
				lo := rune(hexVal(s[k+2])<<12 | hexVal(s[k+3])<<8 | hexVal(s[k+4])<<4 | hexVal(s[k+5]))
				if lo >= 0xdc00 && lo < 0xe000 {
					v = 0x10000 + (v-0xd800)<<10 + (lo - 0xdc00)
					k += 6
				}
			}
			dst = utf8.AppendRune(dst, v)
			continue
		default:
			dst = append(dst, e)
		}
		k += 2
	}
	return dst
}

// emptyObject reports whether a written object is {} (whitespace aside).
func emptyObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return false
	}
	return len(bytes.TrimSpace(b[1:len(b)-1])) == 0
}
