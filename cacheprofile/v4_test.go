package cacheprofile

import (
	"strings"
	"testing"
)

// newV4 is newV3 with OpenClaw 2026.9.6's version-4 header.
func newV4() *v3 {
	s := &v3{ms: 1_780_000_000_000}
	s.b.WriteString(`{"type":"session","version":4,"id":"s4","timestamp":"2026-09-10T00:00:00.000Z","cwd":"/w"}` + "\n")
	return s
}

// A reset restarts the history window: the first call after it is a
// recorded miss that the reset explains, and the calls after that are
// hits on the new, shorter prefix.
func TestResetExplainsTheMissAfterIt(t *testing.T) {
	s := newV4()
	s.user(strings.Repeat("first question ", 200))
	s.call(1, "anthropic", "claude-sonnet-4-5", "stop", 10, 0, 6000)
	s.user("second question")
	s.call(30, "anthropic", "claude-sonnet-4-5", "stop", 10, 6000, 300)
	s.add("", "reset", `,"reason":"reset"`)
	s.user("after the reset")
	s.call(30, "anthropic", "claude-sonnet-4-5", "stop", 10, 0, 5200)
	s.user("and again")
	s.call(30, "anthropic", "claude-sonnet-4-5", "stop", 10, 5200, 100)
	rep, err := Profile(strings.NewReader(s.b.String()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Calls != 4 || rep.Resets != 1 {
		t.Fatalf("calls %d resets %d", rep.Calls, rep.Resets)
	}
	if rep.UnexplainedN != 0 {
		t.Fatalf("%d unexplained misses: %+v", rep.UnexplainedN, rep.Unexplained)
	}
	if rep.Explained["reset"] != 1 {
		t.Fatalf("explained %v", rep.Explained)
	}
	if rep.UnknownSkipped != 0 {
		t.Fatalf("%d unknown entries (the reset or header counted as unknown)", rep.UnknownSkipped)
	}
}

// A leaf entry moves the active branch: the calls after it are sent the
// branch it names, not the abandoned one.
func TestLeafMovesTheProfiledBranch(t *testing.T) {
	s := newV4()
	s.user(strings.Repeat("question ", 300))
	a := s.call(1, "anthropic", "claude-sonnet-4-5", "stop", 10, 0, 6000)
	s.user(strings.Repeat("abandoned ", 3000))
	s.call(10, "anthropic", "claude-sonnet-4-5", "stop", 10, 6000, 8000)
	s.add("", "leaf", `,"targetId":"`+a+`"`)
	s.user("retry")
	s.call(10, "anthropic", "claude-sonnet-4-5", "stop", 10, 6000, 50)
	rep, err := Profile(strings.NewReader(s.b.String()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.LeafMoves != 1 || rep.UnexplainedN != 0 {
		t.Fatalf("leaf moves %d, unexplained %d: %+v", rep.LeafMoves, rep.UnexplainedN, rep.Unexplained)
	}
	if last := rep.All; last.Calls != 3 || last.Agree != 3 {
		t.Fatalf("agreement %+v", rep.All)
	}
}

// A line over the reader's limit is skipped and reported; the calls after
// it are still profiled (before: the profile stopped with an error there).
func TestLongLineSkippedAndProfileContinues(t *testing.T) {
	s := newV3()
	s.user("q")
	s.call(1, "anthropic", "claude-sonnet-4-5", "toolUse", 10, 0, 5000)
	s.add("", "custom", `,"customType":"big","data":"`+strings.Repeat("x", 33<<20)+`"`)
	s.tool("t2", "ok")
	s.call(1, "anthropic", "claude-sonnet-4-5", "stop", 10, 5000, 20)
	rep, err := Profile(strings.NewReader(s.b.String()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.LongLines != 1 || rep.Calls != 2 {
		t.Fatalf("long lines %d, calls %d", rep.LongLines, rep.Calls)
	}
}
