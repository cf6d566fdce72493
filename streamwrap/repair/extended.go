package repair

// Extended decides a tool call's arguments under ProfileExtended and
// appends the resulting JSON object to dst.
//
// Fast path: a valid JSON object (optionally surrounded by JSON whitespace)
// is appended byte for byte without the whitespace, with a zero Result. It
// allocates nothing when dst has room, whatever the size of raw.
//
// Otherwise, in this order (Result.Fixes records each repair applied):
//
//  1. Empty or whitespace-only text, and null, are {} (FixEmpty).
//  2. Whatever OpenClaw 2026.9.6's own strategies extract (OpenClawExtract:
//     a metadata prefix and a junk suffix of at most 3 characters around a
//     balanced object, or the typographic-quote parser) is returned as
//     OpenClaw returns it: the superset rule of the replay contract.
//  3. One surrounding markdown fence is removed (FixCodeFence), then the
//     body is decided by these same rules.
//  4. A top-level JSON string holding an object is unwrapped, up to 3
//     levels (FixDoubleEncoded); "null" or "" inside is {}.
//  5. The object is read by a repairing transcoder that keeps every byte
//     it does not need to change: trailing commas are dropped
//     (FixTrailingComma), True/False/None outside strings become
//     true/false/null (FixPythonLiteral), single-quoted strings become
//     JSON strings (FixSingleQuote), bare identifier keys are quoted
//     (FixUnquotedKey), raw control characters in strings are escaped and
//     invalid escapes get their backslash doubled, as pi-ai does
//     (FixEscapes), literal \n, \r, \t between tokens are dropped
//     (FixStrayEscape), and a doubled opening brace is removed
//     (FixRedundantBrace). Typographic quotes are read as in step 2.
//  6. Around the object: up to 1 KiB of prose before it with none of
//     [ ] " , = (FixLeadingText), identical copies after it
//     (FixConcatenated), and up to 256 bytes of prose after it with none of
//     { } [ ] " : , (FixTrailingText) are dropped.
//
// Nothing is invented: values are never guessed (an unquoted value such as
// both is a syntax error) and nested strings are never unwrapped.
//
// Errors (dst is then returned unchanged):
//   - ErrTruncated: the text ends inside an unclosed string, object, array
//     or literal, i.e. the stream was cut; it is never closed.
//   - *Error with Kind ErrKindNotObject (a complete non-object value),
//     ErrKindAmbiguous (different concatenated objects), ErrKindProse (text
//     around the object that is not droppable), ErrKindSyntax, ErrKindTooDeep
//     or ErrKindTooLarge (more than MaxInput bytes to repair).
//
// toolName is the tool-call block's name; only OpenClaw's typographic-quote
// rules use it.
func Extended(dst, raw, toolName []byte) (out []byte, res Result, err error) {
	a := skipWS(raw, 0)
	b := len(raw)
	for b > a && isWS(raw[b-1]) {
		b--
	}
	if a < b && raw[a] == '{' {
		if end, e := scanValue(raw, a, 0); e == scanOK && end == b {
			return append(dst, raw[a:b]...), Result{}, nil
		}
	}
	return extendedSlow(dst, raw, toolName)
}
