package repair

// PiParse is pi-ai's parseStreamingJson over the final argument text raw.
// It appends a JSON value to dst (any JSON type, as pi-ai's result may be)
// and reports which stage produced it:
//
//   - PiValid: raw is valid JSON; it is appended trimmed of whitespace.
//   - PiEscapes: raw became valid after control characters inside strings
//     were escaped and invalid escapes had their backslash doubled.
//   - PiPartial: the partial-JSON parse: open strings, objects and arrays
//     are closed, the first complete value wins and the rest is dropped, and
//     a member whose value does not parse is dropped with the rest of its
//     object.
//   - PiEmpty: empty text, or nothing parsed: {}.
//
// This is the lossy behaviour ProfileOpenClaw reproduces; ProfileExtended
// refuses truncated input instead.
func PiParse(dst, raw []byte) (out []byte, how PiHow) {
	i, j := jsTrim(raw, 0, len(raw))
	if i == j {
		return append(dst, '{', '}'), PiEmpty
	}
	if Valid(raw) {
		a, b := skipWS(raw, 0), len(raw)
		for b > a && isWS(raw[b-1]) {
			b--
		}
		return append(dst, raw[a:b]...), PiValid
	}
	if out, ok := piEscapes(dst, raw); ok {
		return out, PiEscapes
	}
	if out, ok := piPartial(dst, raw); ok {
		return out, PiPartial
	}
	return append(dst, '{', '}'), PiEmpty
}
