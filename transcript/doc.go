// Package transcript owns session files: OpenClaw's (pi-coding-agent's)
// JSONL transcripts, read in versions 1, 2 and 3 and written in version 3,
// crash-safe appends with a per-file lock, zstd archives after compaction,
// and the history preparation OpenClaw runs before each model call.
//
// It does not decide when to compact or produce summaries (package engine
// does), count tokens exactly (package tokenize), or talk to providers.
//
// # Reading
//
//	r, err := transcript.OpenFile(path, transcript.Options{}) // plain or .zst
//	if err != nil { ... }
//	defer r.Close()
//	for r.Next() {
//		e := r.Entry() // borrowed until the next Next; e.Clone() to keep
//		switch e.Type {
//		case transcript.TypeMessage:
//			use(e.Message) // *llm.Message, freshly allocated: may be kept
//		case transcript.TypeModelChange:
//			use(e.Provider, e.ModelID)
//		}
//	}
//	if err := r.Err(); err != nil { ... } // ErrNotSession, *LineTooLongError, I/O
//	h, st := r.Header(), r.Stats()       // version, id, cwd; counts, torn last line
//
// NewReader(io.Reader, Options) reads plain JSONL from any reader. The Reader
// streams: memory is bounded by the longest line (Options.MaxLineSize, 32 MiB
// by default, past it a *LineTooLongError), never by the file. Lines are
// parsed with one reused fastjson.Parser; entries other than messages cost no
// allocation in steady state, and with Options.RawMessages neither do
// messages (MessageJSON then holds the raw message).
//
// Version 1 and 2 files are migrated on read as pi migrates them on open:
// version 1 entries get ids and parentIds chained linearly (the ids are the
// entry's index in pi's entries array as 8 hex digits, deterministic and so
// stable across reads), a v1 compaction's firstKeptEntryIndex becomes
// firstKeptEntryId, and v2's hookMessage role becomes custom. Header.Version
// keeps the version as written.
//
// Malformed lines are skipped and counted (Stats.BadLines), as pi skips them,
// unless Options.Strict. A first line that is not a session header is an
// error wrapping ErrNotSession. A last line with no newline that does not
// parse is a torn append: Next stops before it, Err stays nil, and
// Stats.Torn/TornOffset/TornBytes report it. Entries of unknown types are
// skipped and counted (Stats.Unknown) unless Options.KeepUnknown.
//
// # Context
//
// BuildContext(entries) and LoadContext(path) return the active branch as
// LLM messages: walk parentId from the last entry to the root, as pi's
// buildSessionContext does, with the latest compaction's summary first, then
// convert as convertToLlm does. LoadContext reads the file twice to keep
// memory proportional to the branch.
package transcript
