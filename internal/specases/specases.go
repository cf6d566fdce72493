// Package specases reads the spec's test-case files (testdata/spec): it
// expands the encodings the cases use for long inputs. It is for tests.
package specases

import (
	"fmt"
	"strings"
)

// Expand decodes the long-input encodings of a case value, as
// spec/cases/README.md defines them, and returns the plain value:
//
//   - {"$repeat": c, "count": n}: c repeated n times;
//   - {"$lines": n}: "line %04d abcdefghij\n" for i = 0, 1, ... cut to n characters;
//   - {"$concat": [a, b, ...]}: the parts (strings or encodings) joined.
//
// Maps and slices are expanded in place. Any value of a case file of that
// format expands: an encoding with a malformed operand (a count that is not
// a non-negative number, a part that is not text) is left as it is, for the
// case's own check to report.
func Expand(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if c, ok := x["$repeat"].(string); ok {
			if n, ok := x["count"].(float64); ok && n >= 0 && len(x) == 2 {
				return strings.Repeat(c, int(n))
			}
			return x
		}
		if n, ok := x["$lines"].(float64); ok && n >= 0 && len(x) == 1 {
			var b strings.Builder
			for i := 0; b.Len() < int(n); i++ {
				fmt.Fprintf(&b, "line %04d abcdefghij\n", i)
			}
			return b.String()[:int(n)]
		}
		if parts, ok := x["$concat"].([]any); ok && len(x) == 1 {
			var b strings.Builder
			for _, p := range parts {
				s, ok := Expand(p).(string)
				if !ok {
					return x
				}
				b.WriteString(s)
			}
			return b.String()
		}
		for k, e := range x {
			x[k] = Expand(e)
		}
		return x
	case []any:
		for i := range x {
			x[i] = Expand(x[i])
		}
		return x
	}
	return v
}
