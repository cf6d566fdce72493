package peerdata

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestRepairInputs pins what the repair scenarios and peers measure:
// every object under every quirk, every quirk input malformed (all but
// the entity one, which is valid JSON holding entities), and inputs
// deterministic (the peers rebuild them in another process).
func TestRepairInputs(t *testing.T) {
	a, b := RepairInputs(), RepairInputs()
	if !reflect.DeepEqual(a, b) {
		t.Fatal("RepairInputs is not deterministic")
	}
	seen := map[string]bool{}
	for _, in := range a {
		if seen[in.Name] || strings.Contains(in.Name, "/") {
			t.Errorf("input name %q duplicated or holds '/'", in.Name)
		}
		seen[in.Name] = true
		// Malformed: not a JSON object (a double-encoded object is a
		// valid JSON string).
		malformed := !json.Valid(in.Args) || bytes.TrimSpace(in.Args)[0] != '{'
		switch in.Quirk {
		case "valid":
			if malformed {
				t.Errorf("%s: not valid JSON", in.Name)
			}
		case "html_entities":
			if !bytes.Contains(in.Args, []byte("&quot;")) {
				t.Errorf("%s: holds no entity", in.Name)
			}
		default:
			if !malformed {
				t.Errorf("%s: quirk left the arguments a valid object", in.Name)
			}
		}
	}
	if want := len(repairObjects()) * (1 + len(repairQuirks)); len(seen) != want {
		t.Errorf("%d inputs, want %d", len(seen), want)
	}
}

// TestSameJSON: equal values in different spellings are the same; a
// different value or an invalid text is not.
func TestSameJSON(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{`{"a":1,"b":[true,null]}`, `{ "b" : [true, null], "a" : 1.0 }`, true},
		{`{"a":1}`, `{"a":2}`, false},
		{`{"a":1}`, `{"a":1,}`, false},
		{``, ``, false},
	} {
		if got := SameJSON([]byte(c.a), []byte(c.b)); got != c.want {
			t.Errorf("SameJSON(%q, %q) = %v", c.a, c.b, got)
		}
	}
}
