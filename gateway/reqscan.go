package gateway

import (
	"bytes"
	"strings"

	"github.com/valyala/fastjson"
)

// A request body is mostly its history (messages or input): tens to
// hundreds of KiB that the proxy forwards unread. fastjson's parser copies
// the whole body and builds a value for every node of it; the scan here
// walks it in place, building nothing, and hands on only the top-level
// members the proxy reads. It accepts exactly what fastjson's parser
// accepts (the same grammar, ported: strings end at an unescaped quote and
// their escapes are not checked, numbers are runs of number characters or
// NaN and Inf, nesting at most fastjson.MaxDepth deep), so that a body the
// proxy refuses as invalid JSON is the same either way
// (FuzzParseProxyRequestFields checks it against fastjson).

// scanObject walks the JSON object that is all of body (white space aside)
// and calls member for each top-level member in order, with its key
// (unescaped) and its value's bytes. It returns false when body is not
// valid JSON or not an object.
func scanObject(body []byte, member func(key, value []byte)) bool {
	s := jsonWS(body)
	if len(s) == 0 || s[0] != '{' {
		return false
	}
	s = jsonWS(s[1:])
	if len(s) == 0 {
		return false
	}
	if s[0] == '}' {
		return len(jsonWS(s[1:])) == 0
	}
	for {
		if len(s) == 0 || s[0] != '"' {
			return false
		}
		key, rest, ok := jsonKey(s[1:])
		if !ok {
			return false
		}
		s = jsonWS(rest)
		if len(s) == 0 || s[0] != ':' {
			return false
		}
		s = jsonWS(s[1:])
		rest, ok = jsonSkip(s, 1)
		if !ok {
			return false
		}
		member(key, s[:len(s)-len(rest)])
		var more bool
		s, more, ok = jsonAfter(rest, '}')
		switch {
		case !ok:
			return false
		case !more:
			return len(jsonWS(s)) == 0
		}
		s = jsonWS(s)
	}
}

// jsonKey reads an object key after its opening quote: the key as
// fastjson's Visit gives it (unescaped, best effort) and what follows its
// closing quote.
func jsonKey(s []byte) (key, rest []byte, ok bool) {
	if rest, ok = jsonKeyEnd(s); !ok {
		return nil, nil, false
	}
	quoted := s[:len(s)-len(rest)] // the key and its closing quote
	if key = quoted[:len(quoted)-1]; bytes.IndexByte(key, '\\') >= 0 {
		key = unescapeKey(quoted)
	}
	return key, rest, true
}

// unescapeKey unescapes raw, a quoted string's bytes and closing quote, as
// fastjson does its keys (an escaped key is rare: this allocates).
func unescapeKey(raw []byte) []byte {
	q := make([]byte, 0, len(raw)+1)
	q = append(append(q, '"'), raw...)
	var p fastjson.Parser
	v, err := p.ParseBytes(q)
	if err != nil {
		return nil
	}
	return bytes.Clone(v.GetStringBytes())
}

// jsonSkip returns what follows the JSON value at the start of s, at
// nesting depth (the enclosing value's), as fastjson's parseValue reads
// it.
func jsonSkip(s []byte, depth int) ([]byte, bool) {
	if len(s) == 0 {
		return nil, false
	}
	if depth++; depth > fastjson.MaxDepth {
		return nil, false
	}
	switch s[0] {
	case '{':
		return jsonSkipObject(s[1:], depth)
	case '[':
		return jsonSkipArray(s[1:], depth)
	case '"':
		return jsonString(s[1:])
	case 't':
		return jsonLiteral(s, "true")
	case 'f':
		return jsonLiteral(s, "false")
	case 'n':
		if len(s) >= 4 && string(s[:4]) == "null" {
			return s[4:], true
		}
		if len(s) >= 3 && strings.EqualFold(string(s[:3]), "nan") {
			return s[3:], true
		}
		return nil, false
	}
	return jsonNumber(s)
}

func jsonLiteral(s []byte, lit string) ([]byte, bool) {
	if len(s) < len(lit) || string(s[:len(lit)]) != lit {
		return nil, false
	}
	return s[len(lit):], true
}

func jsonSkipArray(s []byte, depth int) ([]byte, bool) {
	s = jsonWS(s)
	if len(s) == 0 {
		return nil, false
	}
	if s[0] == ']' {
		return s[1:], true
	}
	for {
		var ok bool
		if s, ok = jsonSkip(jsonWS(s), depth); !ok {
			return nil, false
		}
		var more bool
		if s, more, ok = jsonAfter(s, ']'); !ok || !more {
			return s, ok
		}
	}
}

func jsonSkipObject(s []byte, depth int) ([]byte, bool) {
	s = jsonWS(s)
	if len(s) == 0 {
		return nil, false
	}
	if s[0] == '}' {
		return s[1:], true
	}
	for {
		s = jsonWS(s)
		if len(s) == 0 || s[0] != '"' {
			return nil, false
		}
		var ok bool
		if s, ok = jsonKeyEnd(s[1:]); !ok {
			return nil, false
		}
		s = jsonWS(s)
		if len(s) == 0 || s[0] != ':' {
			return nil, false
		}
		if s, ok = jsonSkip(jsonWS(s[1:]), depth); !ok {
			return nil, false
		}
		var more bool
		if s, more, ok = jsonAfter(s, '}'); !ok || !more {
			return s, ok
		}
	}
}

// jsonAfter reads what follows a value in an array or object: a comma
// (more is true) or the closing byte, end.
func jsonAfter(s []byte, end byte) (rest []byte, more, ok bool) {
	s = jsonWS(s)
	if len(s) == 0 {
		return nil, false, false
	}
	switch s[0] {
	case ',':
		return s[1:], true, true
	case end:
		return s[1:], false, true
	}
	return nil, false, false
}

// jsonKeyEnd is what follows a key that is not read (fastjson's
// parseRawKey: the first quote ends it, unless a backslash comes first).
func jsonKeyEnd(s []byte) ([]byte, bool) {
	for i, c := range s { // keys are short: a loop beats a search
		switch c {
		case '"':
			return s[i+1:], true
		case '\\':
			return jsonString(s)
		}
	}
	return nil, false
}

// jsonString returns what follows a string's closing quote, s starting
// after its opening one: the first quote not escaped by an odd run of
// backslashes (fastjson's parseRawString; escapes are not checked).
func jsonString(s []byte) ([]byte, bool) {
	for {
		n := bytes.IndexByte(s, '"')
		if n < 0 {
			return nil, false
		}
		i := n
		for i > 0 && s[i-1] == '\\' {
			i--
		}
		if (n-i)%2 == 0 {
			return s[n+1:], true
		}
		s = s[n+1:]
	}
}

// jsonNumber is fastjson's parseRawNumber: a run of number characters, or
// NaN or Inf after at most a sign.
func jsonNumber(s []byte) ([]byte, bool) {
	for i, c := range s {
		if c >= '0' && c <= '9' || c == '.' || c == '-' || c == 'e' || c == 'E' || c == '+' {
			continue
		}
		if i == 0 || i == 1 && (s[0] == '-' || s[0] == '+') {
			if len(s[i:]) >= 3 {
				if x := string(s[i : i+3]); strings.EqualFold(x, "inf") || strings.EqualFold(x, "nan") {
					return s[i+3:], true
				}
			}
			return nil, false
		}
		return s[i:], true
	}
	return s[len(s):], true
}

// jsonWS skips JSON white space.
func jsonWS(s []byte) []byte {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\n' || s[0] == '\t' || s[0] == '\r') {
		s = s[1:]
	}
	return s
}
