// Package transcript owns sessions: OpenClaw's (pi-coding-agent's) JSONL
// transcripts, read in versions 1 to 4 and written in version 3, crash-safe
// appends with a per-file lock, zstd archives after compaction, the session
// stores (Store: JSONL files, OpenClaw 2026.9.6's SQLite database,
// PostgreSQL), and the history preparation OpenClaw runs before each model
// call.
//
// # Version 4 and the stores
//
// OpenClaw 2026.9.6 writes version 4: reset entries (a fresh history
// window, like a compaction cut without a summary) and leaf entries (the
// active branch moves); a Navigator resolves the tree by its rules, and
// every reader here uses it. A Store keeps sessions behind one contract
// (Open takes the session's single-writer lock; Append under a durability
// policy; Reader; List; Archive): DirStore (JSONL files), SQLiteStore
// (OpenClaw's exact agent schema 23, its zstd rows and cold archives; it
// continues sessions OpenClaw wrote and writes sessions OpenClaw reads) and
// PostgreSQL (package transcript/pgstore: append-only rows, per-session
// sequence, an expiring and fenced writer lease for several gateway nodes;
// a package of its own so that only programs importing it compile the
// driver, and OpenStore opens postgres:// names once it is linked). A
// store of rows builds on RowBranch. ReadStoreContext gives a stored
// session's context.
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
// the entries from its firstKeptEntryId on, and convert as convertToLlm
// does (summaries, custom messages and bashExecution become user messages).
// BuildSessionContext also returns the thinking level and model in effect.
// LoadContext reads the file twice to keep memory proportional to the
// branch.
//
// # Writing
//
//	w, err := transcript.OpenWriter(path, transcript.WriterOptions{Durability: transcript.SyncEntry})
//	// err wraps ErrLocked when another writer holds the file, ErrNotSession
//	// for a file of another tool (left untouched).
//	rec := w.Recovery() // torn last line set aside in <file>.torn-<n>, v1/v2 migrated, ...
//	id, err := w.AppendMessage(&msg) // one write(2) of one line, O_APPEND
//	w.EndTurn()                      // flushes under SyncTurn
//	archive, err := w.Rotate()       // after a compaction: old file -> <file>.archive-<n>.zst
//	w.Close()
//
// Files are written in version 3 (header, then entries with 8-hex-digit ids
// chained by parentId to the writer's leaf). Durability is a policy: fsync
// (fdatasync) per entry before Append returns, per turn (EndTurn), or none.
// An exclusive lock (Linux: one byte of <dir>/.ocbench-locks under an
// open-file-description lock, so that a new session creates one file;
// elsewhere a flock on <file>.flock) is held from OpenWriter to Close, so
// two writers (in any processes) never interleave; the kernel drops it when
// a process dies. OpenWriter recovers a file: a torn last line is copied to a
// new <file>.torn-<n>, flushed, then cut off (never silently dropped), and
// reported in Recovery; a complete last line lacking its newline gets one;
// version 1 and 2 files are rewritten as version 3 through a temporary file
// and a rename. Rotate compresses the whole file into a zstd archive and
// replaces the live file by the active branch from the latest compaction's
// first kept entry, so LoadContext gives the same context before and after.
//
// # History preparation
//
// Before each model call OpenClaw prepares the branch's messages; each step
// is a function here, and Prepare applies them in OpenClaw's order:
// SanitizeSessionHistory (NormalizeAssistantReplayContent,
// DropThinkingBlocks, RepairToolCallInputs, SanitizeToolCallIDs, the pairing
// repair, ZeroUsageBeforeCompaction), ValidateGeminiTurns and
// ValidateAnthropicTurns, FilterHeartbeatPairs, LimitHistoryTurns (with
// HistoryLimitFromSessionKey), RepairToolUseResultPairing (synthetic error
// results, errored turns dropped), and TruncateOversizedToolResults at
// LiveToolResultMaxChars. TruncateToolResultText and
// PlanToolResultReductions reproduce OpenClaw's limits (16000 chars, 30% of
// the context window, minKeep 2000, head+tail for important tails), with
// lengths counted in UTF-16 units as OpenClaw counts them. None of these
// functions modifies its input. ModelSnapshot and NeedsModelSnapshot
// cover the model-snapshot custom entry OpenClaw appends when the model
// changes.
//
// # Allocation
//
// In steady state the Reader allocates nothing per entry for non-message
// entries, and nothing at all with Options.RawMessages (tests pin both with
// testing.AllocsPerRun). Parsed messages cost what llm.ParseMessage
// allocates (about 8 allocations per message). Append costs one allocation
// (the returned id).
package transcript
