package engine

import (
	"github.com/ocbench/ocbench/llm"
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

// Appended entries of an ephemeral session are named when asked for, by
// their position: the ids and parents ephemeralID would have given.
func TestEphemeralAppendedIDs(t *testing.T) {
	s := &session{}
	s.seed([]llm.Message{llm.TextMessage(llm.RoleUser, "a"), llm.TextMessage(llm.RoleAssistant, "b")})
	for _, text := range []string{"c", "d", "e"} {
		m := llm.TextMessage(llm.RoleUser, text)
		if err := s.append(&m); err != nil {
			t.Fatal(err)
		}
	}
	if got := string(s.leaf()); got != "5" {
		t.Fatalf("leaf %q, want 5", got)
	}
	m := llm.TextMessage(llm.RoleUser, "f")
	if err := s.append(&m); err != nil {
		t.Fatal(err)
	}
	s.materialize()
	if len(s.entries) != 6 || string(s.leafID) != "6" {
		t.Fatalf("%d entries, leaf %q", len(s.entries), s.leafID)
	}
	for i, e := range s.entries {
		if want := strconv.Itoa(i + 1); string(e.ID) != want {
			t.Fatalf("entry %d: id %q, want %q", i, e.ID, want)
		}
		if want := strconv.Itoa(i); i > 0 && string(e.ParentID) != want || i == 0 && e.ParentID != nil {
			t.Fatalf("entry %d: parent %q", i, e.ParentID)
		}
	}
}
