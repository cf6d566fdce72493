package engine

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"
)

// fastSchema is a tool schema in the subset that can be checked directly
// on parsed arguments without building a generic value tree: an object
// with typed properties (string, integer, number, boolean, object, array,
// null), required names, additionalProperties true/false, and the string
// length and numeric bound keywords. Tool schemas are almost always of
// this shape (every built-in one is).
//
// It only ever says "valid": whenever it finds a violation, or an input it
// cannot judge exactly (duplicate keys, invalid UTF-8, numbers needing
// more than float64 precision, integers written with a fraction or an
// exponent), the caller runs the full validator, which gives the verdict
// and its explanation. So the fast path changes no outcome, only the cost.
type fastSchema struct {
	props    []fastProp
	required []string
	// reqMask has bit i set when props[i] is required; reqOther says a
	// required name is not a property (valid leaves that to the full
	// validator).
	reqMask    uint64
	reqOther   bool
	additional bool // additionalProperties (default true)
}

type fastProp struct {
	name  string
	types uint8 // bit set of fastType; 0 = any
	// obj checks an object value's members, items every element of an
	// array value (nil: not constrained).
	obj   *fastSchema
	items *fastProp
	// String and number bounds; has* say whether they are set.
	minLen, maxLen   int
	hasMin, hasMax   bool
	hasXMin, hasXMax bool
	min, max         float64
	xmin, xmax       float64
	hasMinLen        bool
	hasMaxLen        bool
}

const (
	tString uint8 = 1 << iota
	tInteger
	tNumber
	tBoolean
	tObject
	tArray
	tNull
)

var typeBits = map[string]uint8{"string": tString, "integer": tInteger, "number": tNumber | tInteger,
	"boolean": tBoolean, "object": tObject, "array": tArray, "null": tNull}

// annotations are keywords that never affect validation.
var annotations = map[string]bool{"description": true, "title": true, "default": true, "examples": true,
	"$comment": true, "deprecated": true, "readOnly": true, "writeOnly": true}

// compileFast returns the fast form of a schema, or nil when it uses
// anything outside the subset.
func compileFast(params []byte) *fastSchema {
	var root map[string]json.RawMessage
	if json.Unmarshal(params, &root) != nil {
		return nil
	}
	return compileObject(root, true)
}

// maxFastDepth bounds the nesting of object and array schemas the fast
// path checks.
const maxFastDepth = 8

// compileObject compiles an object schema (the root when top: $schema is
// allowed there only).
func compileObject(root map[string]json.RawMessage, top bool) *fastSchema {
	return compileObjectDepth(root, top, 0)
}

func compileObjectDepth(root map[string]json.RawMessage, top bool, depth int) *fastSchema {
	if depth > maxFastDepth {
		return nil
	}
	fs := &fastSchema{additional: true}
	for k, v := range root {
		switch k {
		case "type":
			var t string
			if json.Unmarshal(v, &t) != nil || t != "object" {
				return nil
			}
		case "properties":
			var props map[string]json.RawMessage
			if json.Unmarshal(v, &props) != nil {
				return nil
			}
			for name, ps := range props {
				p, ok := compileProp(name, ps, depth)
				if !ok {
					return nil
				}
				fs.props = append(fs.props, p)
			}
		case "required":
			if json.Unmarshal(v, &fs.required) != nil {
				return nil
			}
		case "additionalProperties":
			if json.Unmarshal(v, &fs.additional) != nil {
				return nil // a schema, not a boolean
			}
		case "$schema":
			if !top {
				return nil
			}
			var s string
			if json.Unmarshal(v, &s) != nil || s != "" && s != "https://json-schema.org/draft/2020-12/schema" {
				return nil // another draft: let the full validator decide
			}
		default:
			if !annotations[k] {
				return nil
			}
		}
	}
	if _, ok := root["type"]; !ok {
		return nil
	}
	for _, r := range fs.required {
		if i := fs.index([]byte(r)); i >= 0 && i < 64 {
			fs.reqMask |= 1 << i
		} else {
			fs.reqOther = true
		}
	}
	return fs
}

func compileProp(name string, raw json.RawMessage, depth int) (fastProp, bool) {
	p := fastProp{name: name}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return p, false
	}
	// A nested object schema (properties, required, additionalProperties)
	// is checked as an object of its own, an items schema on every element.
	if _, ok := m["properties"]; ok {
		if depth+1 > maxFastDepth {
			return p, false
		}
		sub := map[string]json.RawMessage{"type": json.RawMessage(`"object"`)}
		rest := map[string]json.RawMessage{}
		for k, v := range m {
			switch k {
			case "properties", "required", "additionalProperties":
				sub[k] = v
			default:
				rest[k] = v
			}
		}
		if t, ok := rest["type"]; !ok || string(bytes.TrimSpace(t)) != `"object"` {
			return p, false
		}
		if p.obj = compileObjectDepth(sub, false, depth+1); p.obj == nil {
			return p, false
		}
		m = rest
	} else if _, ok := m["required"]; ok {
		return p, false
	} else if _, ok := m["additionalProperties"]; ok {
		return p, false
	}
	if it, ok := m["items"]; ok {
		if depth+1 > maxFastDepth {
			return p, false
		}
		if t, ok := m["type"]; !ok || string(bytes.TrimSpace(t)) != `"array"` {
			return p, false
		}
		ip, ok := compileProp("", it, depth+1)
		if !ok {
			return p, false
		}
		p.items = &ip
		delete(m, "items")
	}
	num := func(v json.RawMessage) (float64, bool) {
		f, err := strconv.ParseFloat(string(bytes.TrimSpace(v)), 64)
		return f, err == nil && !math.IsInf(f, 0)
	}
	length := func(v json.RawMessage) (int, bool) {
		n, err := strconv.Atoi(string(bytes.TrimSpace(v)))
		return n, err == nil && n >= 0
	}
	var ok bool
	for k, v := range m {
		switch k {
		case "type":
			var t string
			if json.Unmarshal(v, &t) == nil {
				if p.types, ok = typeBits[t]; !ok {
					return p, false
				}
				continue
			}
			var ts []string
			if json.Unmarshal(v, &ts) != nil || len(ts) == 0 {
				return p, false
			}
			for _, t := range ts {
				b, ok := typeBits[t]
				if !ok {
					return p, false
				}
				p.types |= b
			}
		case "minLength":
			if p.minLen, ok = length(v); !ok {
				return p, false
			}
			p.hasMinLen = true
		case "maxLength":
			if p.maxLen, ok = length(v); !ok {
				return p, false
			}
			p.hasMaxLen = true
		case "minimum":
			if p.min, ok = num(v); !ok {
				return p, false
			}
			p.hasMin = true
		case "maximum":
			if p.max, ok = num(v); !ok {
				return p, false
			}
			p.hasMax = true
		case "exclusiveMinimum":
			if p.xmin, ok = num(v); !ok {
				return p, false
			}
			p.hasXMin = true
		case "exclusiveMaximum":
			if p.xmax, ok = num(v); !ok {
				return p, false
			}
			p.hasXMax = true
		default:
			if !annotations[k] {
				return p, false
			}
		}
	}
	return p, true
}

// valid reports whether args certainly satisfy the schema. False means
// "not certainly": the full validator decides. It is one pass over the
// bytes that checks the JSON grammar (as strictly as encoding/json.Valid,
// UTF-8 included) and the schema together, allocating nothing; it also
// answers false for what it does not judge exactly (escaped member names,
// escaped strings under a length bound, values nested deeper than
// maxScanDepth, required names that are not properties).
func (fs *fastSchema) valid(args []byte) bool {
	s := argScan{b: args}
	s.ws()
	if !s.object(fs, 0) {
		return false
	}
	s.ws()
	return s.i == len(s.b)
}

// maxScanDepth bounds the nesting of values valid walks.
const maxScanDepth = 32

// argScan is valid's position in the arguments.
type argScan struct {
	b []byte
	i int
}

func (s *argScan) ws() {
	// One compare for the usual byte, which is no white space.
	for s.i < len(s.b) && s.b[s.i] <= ' ' {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// next skips white space and reports whether the next byte is c, which
// it then consumes.
func (s *argScan) next(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// object checks the object at s.i against fs (nil: any members).
func (s *argScan) object(fs *fastSchema, depth int) bool {
	if depth > maxScanDepth || !s.next('{') {
		return false
	}
	var seen uint64
	done := func() bool { return fs == nil || seen&fs.reqMask == fs.reqMask }
	if fs != nil && (len(fs.props) > 64 || fs.reqOther) {
		return false
	}
	if s.next('}') {
		return done()
	}
	for {
		s.ws()
		key, esc, ok := s.str()
		if !ok || !s.next(':') {
			return false
		}
		s.ws()
		i := -1
		if fs != nil {
			if esc {
				return false // the member's name is its unescaped text
			}
			i = fs.index(key)
			if i < 0 && !fs.additional {
				return false
			}
		}
		if i < 0 {
			ok = s.value(nil, depth+1)
		} else {
			if seen&(1<<i) != 0 {
				return false // a duplicate key: encoding/json keeps the last one
			}
			seen |= 1 << i
			ok = s.value(&fs.props[i], depth+1)
		}
		if !ok {
			return false
		}
		if s.next('}') {
			return done()
		}
		if !s.next(',') {
			return false
		}
	}
}

// value checks the value at s.i against p (nil: any value).
func (s *argScan) value(p *fastProp, depth int) bool {
	if s.i >= len(s.b) || depth > maxScanDepth {
		return false
	}
	var t uint8
	switch c := s.b[s.i]; c {
	case '"':
		raw, esc, ok := s.str()
		if !ok {
			return false
		}
		t = tString
		if p != nil && (p.hasMinLen || p.hasMaxLen) {
			if esc {
				return false
			}
			n := utf8.RuneCount(raw)
			if p.hasMinLen && n < p.minLen || p.hasMaxLen && n > p.maxLen {
				return false
			}
		}
	case '{':
		if p == nil {
			return s.object(nil, depth)
		}
		if p.types != 0 && p.types&tObject == 0 {
			return false
		}
		return s.object(p.obj, depth)
	case '[':
		var items *fastProp
		if p != nil {
			if p.types != 0 && p.types&tArray == 0 {
				return false
			}
			items = p.items
		}
		s.i++
		if s.next(']') {
			return true
		}
		for {
			s.ws()
			if !s.value(items, depth+1) {
				return false
			}
			if s.next(']') {
				return true
			}
			if !s.next(',') {
				return false
			}
		}
	case 't':
		t = tBoolean
		if !s.literal("true") {
			return false
		}
	case 'f':
		t = tBoolean
		if !s.literal("false") {
			return false
		}
	case 'n':
		t = tNull
		if !s.literal("null") {
			return false
		}
	default:
		start := s.i
		integral, ok := s.number()
		if !ok {
			return false
		}
		t = tNumber
		if p != nil && (p.types&tInteger != 0 && p.types&tNumber == 0 || p.hasMin || p.hasMax || p.hasXMin || p.hasXMax) {
			// Exact judgement needs a plain integer of float64 precision.
			raw := s.b[start:s.i]
			if len(raw) > 15 || !integral {
				return false
			}
			t = tInteger | tNumber
			f := float64(parseDigits(raw))
			if p.hasMin && f < p.min || p.hasMax && f > p.max || p.hasXMin && f <= p.xmin || p.hasXMax && f >= p.xmax {
				return false
			}
		}
	}
	return p == nil || p.types == 0 || p.types&t != 0
}

// strByte marks the bytes a JSON string holds as they are: printable
// ASCII but the quote and the backslash.
var strByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str reads the string at s.i: its raw bytes between the quotes, whether
// they hold an escape, and false for anything that is not a valid JSON
// string of valid UTF-8.
func (s *argScan) str() (raw []byte, esc, ok bool) {
	b := s.b
	if s.i >= len(b) || b[s.i] != '"' {
		return nil, false, false
	}
	start := s.i + 1
	i := start
	for i < len(b) {
		for i < len(b) && strByte[b[i]] {
			i++
		}
		if i == len(b) {
			break
		}
		switch c := b[i]; {
		case c == '"':
			s.i = i + 1
			return b[start:i], esc, true
		case c == '\\':
			esc = true
			if i+1 >= len(b) {
				return nil, false, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					return nil, false, false
				}
				i += 6
			default:
				return nil, false, false
			}
		case c < 0x20:
			return nil, false, false
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 {
				return nil, false, false
			}
			i += n
		}
	}
	return nil, false, false
}

func isHex(c byte) bool { return c-'0' < 10 || (c|0x20)-'a' < 6 }

func isDigit(c byte) bool { return c-'0' < 10 }

// literal reads w (true, false or null) at s.i.
func (s *argScan) literal(w string) bool {
	if !bytes.HasPrefix(s.b[s.i:], []byte(w)) {
		return false
	}
	s.i += len(w)
	return true
}

// number reads a JSON number at s.i and reports whether it has neither a
// fraction nor an exponent.
func (s *argScan) number() (integral, ok bool) {
	b, i := s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return false, false
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		i, _ = digitsFrom(b, i)
	default:
		return false, false
	}
	integral = true
	if i < len(b) && b[i] == '.' {
		integral = false
		if i, ok = digitsFrom(b, i+1); !ok {
			return false, false
		}
	}
	if i < len(b) && b[i]|0x20 == 'e' {
		integral = false
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i, ok = digitsFrom(b, i); !ok {
			return false, false
		}
	}
	s.i = i
	return integral, true
}

// digitsFrom returns the end of the digits at b[i:] and whether there is
// at least one.
func digitsFrom(b []byte, i int) (int, bool) {
	start := i
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	return i, i > start
}

// parseDigits is the value of an integer number of at most 15 characters
// (a sign and digits), which a float64 holds exactly.
func parseDigits(raw []byte) int64 {
	neg := raw[0] == '-'
	if neg {
		raw = raw[1:]
	}
	var n int64
	for _, c := range raw {
		n = n*10 + int64(c-'0')
	}
	if neg {
		return -n
	}
	return n
}

func (fs *fastSchema) index(key []byte) int {
	for i := range fs.props {
		if fs.props[i].name == string(key) {
			return i
		}
	}
	return -1
}
