package transcript

import (
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"

	"github.com/ocbench/ocbench/llm"
)

// TestSessionContextExtend builds random version-3 sessions (chains,
// branches, compactions, custom messages, excluded messages, repeated
// ids, missing parents), splits each at every point, and checks that
// whenever Extend accepts a tail its context is the full rebuild's, and
// that it accepts the plain case of a chain of messages.
func TestSessionContextExtend(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	accepted := 0
	for round := 0; round < 400; round++ {
		n := 2 + rng.IntN(12)
		var entries []Entry
		for i := 0; i < n; i++ {
			e := Entry{Type: TypeMessage, ID: []byte("e" + strconv.Itoa(i))}
			if i > 0 {
				e.ParentID = entries[i-1].ID
			}
			k := rng.IntN(12)
			if i == 0 {
				k = 11
			}
			switch k {
			case 0: // a branch from an earlier entry
				e.ParentID = entries[rng.IntN(i)].ID
			case 1:
				e.Type = TypeCompaction
				e.Summary = []byte("sum")
				e.FirstKeptEntryID = entries[rng.IntN(i)].ID
			case 2:
				e.Type = TypeCustomMessage
				e.Content = []byte(`"custom"`)
			case 3: // an id seen before
				e.ID = entries[rng.IntN(i)].ID
			case 4:
				e.ExcludeFromContext = true
			case 5: // a parent that is not in the session (yet)
				e.ParentID = []byte("x" + strconv.Itoa(rng.IntN(3)))
			case 6: // an id that may be such a missing parent
				e.ID = []byte("x" + strconv.Itoa(rng.IntN(3)))
			}
			if e.Type == TypeMessage {
				role := llm.RoleUser
				if i%2 == 1 {
					role = llm.RoleAssistant
				}
				m := llm.TextMessage(role, "m"+strconv.Itoa(i))
				if role == llm.RoleAssistant {
					m.Provider, m.Model = "p"+strconv.Itoa(i), "m"+strconv.Itoa(i)
				}
				e.Message = &m
			}
			entries = append(entries, e)
		}
		for cut := 0; cut < n; cut++ {
			head, tail := entries[:cut], entries[cut:]
			got := BuildSessionContextVersion(head, 3)
			got.Messages = got.Messages[:len(got.Messages):len(got.Messages)]
			if !got.Extend(head, tail) {
				continue
			}
			accepted++
			got.used, got.usedN = nil, 0 // Extend's own bookkeeping
			want := BuildSessionContextVersion(entries, 3)
			if len(got.Messages) != len(want.Messages) || !reflect.DeepEqual(got, want) {
				for _, e := range entries {
					t.Logf("%v id=%s parent=%s first=%s excl=%v", e.Type, e.ID, e.ParentID, e.FirstKeptEntryID, e.ExcludeFromContext)
				}
				t.Fatalf("round %d cut %d: extended context %d messages, rebuilt %d", round, cut, len(got.Messages), len(want.Messages))
			}
		}
	}
	if accepted < 100 {
		t.Fatalf("only %d extensions accepted", accepted)
	}
	// Version 4 and a tail that branches are refused.
	m := llm.TextMessage(llm.RoleUser, "x")
	head := []Entry{{Type: TypeMessage, ID: []byte("a"), Message: &m}}
	tail := []Entry{{Type: TypeMessage, ID: []byte("b"), ParentID: []byte("a"), Message: &m}}
	if sc := BuildSessionContextVersion(head, 4); sc.Extend(head, tail) {
		t.Fatal("a version-4 session was extended")
	}
	tail[0].ParentID = []byte("z")
	if sc := BuildSessionContextVersion(head, 3); sc.Extend(head, tail) {
		t.Fatal("a tail hanging from an unknown entry was extended")
	}
}

// TestSessionContextExtendRepeatedly extends one context run after run,
// as a live session does (its record of the ids and parents seen is kept
// up, not counted again): each extension must be accepted exactly when a
// context built afresh of the same entries accepts it, and give the same
// messages.
func TestSessionContextExtendRepeatedly(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	accepted := 0
	for round := 0; round < 300; round++ {
		var entries []Entry
		next := 0
		add := func(k int) {
			e := Entry{Type: TypeMessage, ID: []byte("e" + strconv.Itoa(next))}
			if n := len(entries); n > 0 {
				e.ParentID = entries[n-1].ID
			}
			switch k {
			case 0:
				e.ID = entries[rng.IntN(len(entries))].ID // an id seen before
			case 1:
				e.ParentID = []byte("e" + strconv.Itoa(next+1+rng.IntN(2))) // a parent that comes later
			case 2:
				e.ID = []byte("e" + strconv.Itoa(next-1-rng.IntN(min(next, 3)))) // maybe a missing parent's id
			}
			next++
			m := llm.TextMessage(llm.RoleUser, "m"+strconv.Itoa(next))
			e.Message = &m
			entries = append(entries, e)
		}
		add(-1)
		sc := BuildSessionContextVersion(entries, 3)
		for step := 0; step < 8; step++ {
			head := len(entries)
			for range 1 + rng.IntN(3) {
				k := -1
				if rng.IntN(10) == 0 && len(entries) > 0 {
					k = rng.IntN(3)
				}
				add(k)
			}
			fresh := BuildSessionContextVersion(entries[:head], 3)
			wantOK := fresh.Extend(entries[:head], entries[head:])
			gotOK := sc.Extend(entries[:head], entries[head:])
			if gotOK != wantOK {
				t.Fatalf("round %d step %d: kept context extended: %v, fresh one: %v", round, step, gotOK, wantOK)
			}
			if !gotOK {
				sc = BuildSessionContextVersion(entries, 3) // what the run does: build in full
				continue
			}
			accepted++
			if !reflect.DeepEqual(sc.Messages, fresh.Messages) {
				t.Fatalf("round %d step %d: messages differ", round, step)
			}
		}
	}
	if accepted < 500 {
		t.Fatalf("only %d extensions accepted", accepted)
	}
}

// TestEntryCloneOwnsItsBytes: a clone's fields are its own (the source
// may be overwritten) and an append to one never reaches the next.
func TestEntryCloneOwnsItsBytes(t *testing.T) {
	src := Entry{Type: TypeMessage, RawType: []byte("message"), ID: []byte("id1"), ParentID: []byte("p0"),
		MessageRole: []byte("user"), Summary: []byte{}, Label: []byte("l")}
	c := src.Clone()
	for _, b := range [][]byte{src.RawType, src.ID, src.ParentID, src.MessageRole, src.Label} {
		for i := range b {
			b[i] = 'x'
		}
	}
	if string(c.RawType) != "message" || string(c.ID) != "id1" || string(c.ParentID) != "p0" || string(c.MessageRole) != "user" || string(c.Label) != "l" {
		t.Fatalf("the clone shares the source's bytes: %q %q %q %q %q", c.RawType, c.ID, c.ParentID, c.MessageRole, c.Label)
	}
	if c.Summary == nil || len(c.Summary) != 0 || c.Content != nil {
		t.Fatalf("empty and nil fields not kept as they were: %v %v", c.Summary, c.Content)
	}
	_ = append(c.ID, "zzzz"...)
	if string(c.ParentID) != "p0" {
		t.Fatalf("an append to ID reached ParentID: %q", c.ParentID)
	}
}
