package engine

import (
	"strconv"
	"testing"
)

// An ephemeral session numbers its entries in hex from 1, each id a
// window of its own (an append to one never reaches the next).
func TestEphemeralIDs(t *testing.T) {
	s := &session{}
	var ids [][]byte
	for n := 1; n <= 5000; n++ {
		id := s.ephemeralID()
		if want := strconv.FormatUint(uint64(n), 16); string(id) != want {
			t.Fatalf("entry %d: id %q, want %q", n, id, want)
		}
		ids = append(ids, id)
		s.added = append(s.added, lightEntry{id: id})
	}
	_ = append(ids[0], "xyz"...)
	if string(ids[1]) != "2" {
		t.Fatalf("ids share their bytes: %q", ids[1])
	}
}
