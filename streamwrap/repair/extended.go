package repair

// Extended decides a tool call's arguments under ProfileExtended and
// appends the resulting JSON object to dst.
//
// A valid JSON object (with optional surrounding whitespace) is appended
// byte for byte, trimmed of that whitespace, with a zero Result; this fast
// path allocates nothing. Otherwise the real-world quirks are repaired
// without inventing content, and Result.Fixes says which. Input that ends
// inside an unclosed string, object or array gives ErrTruncated (it is
// never closed); anything else that cannot be repaired gives an *Error
// whose Kind is a stable token. On error dst is returned unchanged.
//
// Wherever OpenClawExtract succeeds on the same text, Extended returns the
// same value (the superset rule of the replay contract).
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
