package provider

import (
	"bytes"

	"github.com/valyala/fastjson"

	"github.com/ocbench/ocbench/llm"
)

// A member name that appears twice in one object: JSON.parse keeps the last
// value (at the first one's place), where fastjson's Get and the one-pass
// scans take the first. With the OpenClaw rules an event whose data repeats
// a name is rewritten without the repeats before it is decoded.

// maybeDupKeys reports whether the JSON text b may repeat a member name in
// one of its objects: false is certain; true is certain for plain names
// and conservative for escaped ones, very long objects and very deep text
// (dedupKeys decides those exactly). It allocates nothing.
func maybeDupKeys(b []byte) bool {
	_, dup := dupScan(b, skipWS(b, 0), 0)
	return dup
}

// dupScan scans the value at b[i:]; e is its end (-1 when it is not JSON,
// which the decoder reports on its own).
func dupScan(b []byte, i, depth int) (e int, dup bool) {
	if i >= len(b) {
		return -1, false
	}
	if depth > 32 {
		return -1, true
	}
	switch b[i] {
	case '{':
		var keys [16][]byte
		n := 0
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == '}' {
			return i + 1, false
		}
		for {
			if i >= len(b) || b[i] != '"' {
				return -1, false
			}
			ke := skipValue(b, i)
			if ke < 0 {
				return -1, false
			}
			k := b[i+1 : ke-1]
			if n >= len(keys) || bytes.IndexByte(k, '\\') >= 0 {
				return -1, true
			}
			for _, p := range keys[:n] {
				if bytes.Equal(p, k) {
					return -1, true
				}
			}
			keys[n] = k
			n++
			i = skipWS(b, ke)
			if i >= len(b) || b[i] != ':' {
				return -1, false
			}
			if i, dup = dupScan(b, skipWS(b, i+1), depth+1); dup || i < 0 {
				return -1, dup
			}
			if i = skipWS(b, i); i >= len(b) {
				return -1, false
			}
			switch b[i] {
			case ',':
				i = skipWS(b, i+1)
			case '}':
				return i + 1, false
			default:
				return -1, false
			}
		}
	case '[':
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1, false
		}
		for {
			if i, dup = dupScan(b, i, depth+1); dup || i < 0 {
				return -1, dup
			}
			if i = skipWS(b, i); i >= len(b) {
				return -1, false
			}
			switch b[i] {
			case ',':
				i = skipWS(b, i+1)
			case ']':
				return i + 1, false
			default:
				return -1, false
			}
		}
	}
	return skipValue(b, i), false
}

// dedupKeys appends to dst the JSON text v parses as with JSON.parse's rule
// for repeated names (each object's members once, with the last value), as
// JSON.stringify writes it. changed is false when no object of v repeats a
// name (dst is then not to be used).
func dedupKeys(dst []byte, v *fastjson.Value) (out []byte, changed bool) {
	if !hasRepeat(v) {
		return dst, false
	}
	return llm.AppendJSStringify(dst, v), true
}

func hasRepeat(v *fastjson.Value) bool {
	switch v.Type() {
	case fastjson.TypeObject:
		o, _ := v.Object()
		seen := make(map[string]bool, o.Len())
		rep := false
		o.Visit(func(k []byte, e *fastjson.Value) {
			if seen[string(k)] || hasRepeat(e) {
				rep = true
			}
			seen[string(k)] = true
		})
		return rep
	case fastjson.TypeArray:
		a, _ := v.Array()
		for _, e := range a {
			if hasRepeat(e) {
				return true
			}
		}
	}
	return false
}

// ocDedup is the rewrite itself: data without repeated names, or data as
// it is.
func (d *Decoder) ocDedup(data []byte) []byte {
	v, err := d.p.ParseBytes(data)
	if err != nil {
		return data // malformed: the decoder says so
	}
	out, changed := dedupKeys(d.dd[:0], v)
	if !changed {
		return data
	}
	if at := llm.NextLoneSurrogate(out, 0); at >= 0 {
		out = llm.LoneSurrogatesToWTF8(out, at) // kept as ocText left them
	}
	d.dd = out
	d.data, d.dataBorrowed = out, false
	return out
}
