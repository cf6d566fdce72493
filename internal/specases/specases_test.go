package specases

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestExpand(t *testing.T) {
	var v any
	json.Unmarshal([]byte(`{"a":{"$repeat":"ab","count":3},"b":[{"$lines":25}],"c":{"$concat":["x",{"$repeat":"y","count":2}]},"d":1}`), &v)
	m := Expand(v).(map[string]any)
	if m["a"] != "ababab" || m["c"] != "xyy" || m["d"].(float64) != 1 {
		t.Fatalf("%v", m)
	}
	if l := m["b"].([]any)[0].(string); l != "line 0000 abcdefghij\nline" || len(l) != 25 || !strings.HasPrefix(l, "line 0000") {
		t.Fatalf("lines %q", l)
	}
}

// Malformed encodings are left as they are rather than panicking: any file
// of the format loads.
func TestExpandMalformed(t *testing.T) {
	for _, in := range []string{`{"$repeat":"a"}`, `{"$repeat":"a","count":-1}`, `{"$repeat":"a","count":"3"}`, `{"$lines":-2}`, `{"$concat":["a",1]}`, `{"$concat":"ab"}`} {
		var v any
		json.Unmarshal([]byte(in), &v)
		if _, ok := Expand(v).(map[string]any); !ok {
			t.Errorf("%s: expanded to %v", in, Expand(v))
		}
	}
}
