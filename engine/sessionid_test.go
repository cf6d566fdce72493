package engine

import "testing"

// TestNewSessionID: 32 lowercase hex digits (128 bits), distinct.
func TestNewSessionID(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := newSessionID()
		if len(id) != 32 {
			t.Fatalf("%q: %d characters, want 32", id, len(id))
		}
		for _, c := range []byte(id) {
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				t.Fatalf("%q is not lowercase hex", id)
			}
		}
		if seen[id] {
			t.Fatalf("%q twice", id)
		}
		seen[id] = true
	}
}
