package cacheprofile

import (
	"sort"
	"strings"
)

// writeSessionFacts prints what the reader met beyond entries and calls:
// version-4 resets and branch moves, unknown entry types by name, lines
// over the limit that were skipped, and a cold archive.
func writeSessionFacts(p func(string, ...any), r *Report) {
	if r.Resets > 0 || r.LeafMoves > 0 {
		p("  history: %d resets (fresh history windows), %d active-branch moves (leaf entries)\n", r.Resets, r.LeafMoves)
	}
	if len(r.UnknownTypes) > 0 {
		names := make([]string, 0, len(r.UnknownTypes))
		for n := range r.UnknownTypes {
			names = append(names, n)
		}
		sort.Strings(names)
		var b strings.Builder
		for i, n := range names {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(n)
		}
		p("  unknown entry types kept on the tree (not sent): %s\n", b.String())
	}
	if r.LongLines > 0 {
		p("  %d lines over the 32 MiB line limit were skipped (the profile continued after them)\n", r.LongLines)
	}
	if a := r.Archived; a != nil {
		state := "read"
		if !a.Read {
			state = "not read: " + a.Note
		}
		p("  cold archive (%s storage) %s: %d events, %d bytes (%d compressed), %s\n", a.Storage, a.Name, a.Events, a.RawBytes, a.ArchiveBytes, state)
	}
}
