package engine

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/valyala/fastjson"
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
	props      []fastProp
	required   []string
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

var fastParsers fastjson.ParserPool

// fastCheck is the state of one check, pooled with its bound visitor so
// that a check allocates nothing.
type fastCheck struct {
	fs    *fastSchema
	ok    bool
	seen  uint64 // bit i: props[i] present
	buf   []byte // a number's text
	visit func(key []byte, v *fastjson.Value)
}

var fastChecks sync.Pool

func init() {
	// Set here: the visitor refers back to the pool (nested objects).
	fastChecks.New = func() any {
		c := &fastCheck{}
		c.visit = c.kv
		return c
	}
}

func (c *fastCheck) kv(key []byte, val *fastjson.Value) {
	if !c.ok {
		return
	}
	i := c.fs.index(key)
	if i < 0 {
		c.ok = c.fs.additional
		return
	}
	if c.seen&(1<<i) != 0 {
		c.ok = false // a duplicate key: encoding/json keeps the last one
		return
	}
	c.seen |= 1 << i
	c.ok = c.fs.props[i].valid(val, &c.buf)
}

// valid reports whether args certainly satisfy the schema. False means
// "not certainly": the full validator decides.
func (fs *fastSchema) valid(args []byte) bool {
	if len(fs.props) > 64 || !utf8.Valid(args) || !json.Valid(args) {
		return false
	}
	pp := fastParsers.Get()
	defer fastParsers.Put(pp)
	v, err := pp.ParseBytes(args)
	if err != nil || v.Type() != fastjson.TypeObject {
		return false
	}
	return fs.validValue(v)
}

// validValue checks a parsed object value.
func (fs *fastSchema) validValue(v *fastjson.Value) bool {
	if len(fs.props) > 64 {
		return false
	}
	o, err := v.Object()
	if err != nil {
		return false
	}
	c := fastChecks.Get().(*fastCheck)
	c.fs, c.ok, c.seen = fs, true, 0
	o.Visit(c.visit)
	ok, seen := c.ok, c.seen
	c.fs = nil
	fastChecks.Put(c)
	if !ok {
		return false
	}
	for _, r := range fs.required {
		i := fs.index([]byte(r))
		if i < 0 {
			if o.Get(r) == nil {
				return false
			}
			continue
		}
		if seen&(1<<i) == 0 {
			return false
		}
	}
	return true
}

func (fs *fastSchema) index(key []byte) int {
	for i := range fs.props {
		if fs.props[i].name == string(key) {
			return i
		}
	}
	return -1
}

func (p *fastProp) valid(v *fastjson.Value, buf *[]byte) bool {
	var t uint8
	switch v.Type() {
	case fastjson.TypeString:
		t = tString
	case fastjson.TypeNumber:
		t = tNumber
		raw := v.MarshalTo((*buf)[:0])
		*buf = raw
		if p.types&tInteger != 0 && p.types&tNumber == 0 || p.hasMin || p.hasMax || p.hasXMin || p.hasXMax {
			// Exact judgement needs a plain integer of float64 precision.
			if len(raw) > 15 || bytes.ContainsAny(raw, ".eE") {
				return false
			}
			t = tInteger | tNumber
		}
	case fastjson.TypeTrue, fastjson.TypeFalse:
		t = tBoolean
	case fastjson.TypeObject:
		t = tObject
	case fastjson.TypeArray:
		t = tArray
	case fastjson.TypeNull:
		t = tNull
	}
	if p.types != 0 && p.types&t == 0 {
		return false
	}
	switch t {
	case tObject:
		if p.obj != nil && !p.obj.validValue(v) {
			return false
		}
	case tArray:
		if p.items != nil {
			arr, _ := v.Array()
			for _, e := range arr {
				if !p.items.valid(e, buf) {
					return false
				}
			}
		}
	case tString:
		if p.hasMinLen || p.hasMaxLen {
			b, _ := v.StringBytes()
			n := utf8.RuneCount(b)
			if p.hasMinLen && n < p.minLen || p.hasMaxLen && n > p.maxLen {
				return false
			}
		}
	case tInteger | tNumber:
		f, err := v.Float64()
		if err != nil {
			return false
		}
		if p.hasMin && f < p.min || p.hasMax && f > p.max || p.hasXMin && f <= p.xmin || p.hasXMax && f >= p.xmax {
			return false
		}
	}
	return true
}
