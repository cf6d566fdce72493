package repair

// extendedSlow handles every input that is not a valid JSON object.
func extendedSlow(dst, raw, toolName []byte) ([]byte, Result, error) {
	i, j := jsTrim(raw, 0, len(raw))
	if i == j {
		return append(dst, '{', '}'), Result{Fixes: FixEmpty}, nil
	}
	if len(raw) > MaxInput {
		return dst, Result{}, &Error{Kind: ErrKindTooLarge, Offset: MaxInput}
	}
	// Everything OpenClaw repairs, repaired the same way.
	if out, kind, lead, trail, ok := OpenClawExtract(dst, raw, toolName); ok {
		var res Result
		if kind == KindRepaired {
			res.Leading, res.Trailing = lead, trail
			if lead > 0 {
				res.Fixes |= FixLeadingText
			}
			if trail > 0 {
				res.Fixes |= FixTrailingText
			}
			if hasSmartQuote(raw) && !validObject(out[len(dst):]) {
				res.Fixes |= FixSmartQuote
			}
		}
		return out, res, nil
	}
	// Truncation: the first value runs out of input.
	if end, e := scanValue(raw, i, 0); e == scanEOF {
		return dst, Result{}, ErrTruncated
	} else if e == scanOK && skipWS(raw, end) == len(raw) {
		return dst, Result{}, &Error{Kind: ErrKindNotObject, Offset: i}
	} else if e == scanDeep {
		return dst, Result{}, &Error{Kind: ErrKindTooDeep, Offset: end}
	} else {
		return dst, Result{}, &Error{Kind: ErrKindSyntax, Offset: end}
	}
}
