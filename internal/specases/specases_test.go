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
