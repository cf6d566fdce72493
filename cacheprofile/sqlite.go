package cacheprofile

import (
	"context"
	"errors"
	"fmt"

	"github.com/ocbench/ocbench/transcript"
)

// OpenClaw 2026.8.1 and later keep transcripts in
// ~/.openclaw/agents/<id>/agent/openclaw-agent.sqlite, table
// transcript_events(session_id, seq, event_json | event_zstd +
// event_utf8_bytes, created_at, navigation_json): one row per entry, the
// entry JSON of the JSONL era, either plain or zstd-compressed. Each session
// is read in seq order and fed to the transcript reader as a version-3
// stream, so entries are parsed exactly as JSONL entries are.

func profileSQLite(path string, opts Options) ([]*Report, error) {
	st, err := transcript.OpenSQLiteStore(path, transcript.SQLiteOptions{ReadOnly: true})
	if err != nil {
		if errors.Is(err, transcript.ErrNotSession) {
			return nil, fmt.Errorf("%w: SQLite file without an OpenClaw transcript_events table", ErrNotSession)
		}
		return nil, err
	}
	defer st.Close()
	return profileStore(st, path, opts)
}

// ProfileStore profiles every session of a store (SQLite or PostgreSQL).
func ProfileStore(st transcript.Store, name string, opts Options) ([]*Report, error) {
	return profileStore(st, name, opts)
}

func profileStore(st transcript.Store, name string, opts Options) ([]*Report, error) {
	ctx := context.Background()
	list, err := st.List(ctx)
	if err != nil {
		return nil, err
	}
	var reps []*Report
	for _, si := range list {
		rd, err := st.Reader(ctx, si.ID, readOptions)
		var cold *transcript.ColdArchiveError
		if errors.As(err, &cold) {
			// Archived, and the archive is not here: say so with its sizes.
			rep := NewProfiler(opts).Finish(transcript.Stats{})
			rep.File, rep.Source, rep.SessionID = name, st.Kind(), si.ID
			rep.Archived = &Archived{Storage: cold.Storage, Name: cold.Name, Events: cold.Events, RawBytes: cold.RawBytes,
				ArchiveBytes: cold.ArchiveBytes, Note: cold.Err.Error()}
			reps = append(reps, rep)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("session %s: %w", si.ID, err)
		}
		rep, err := profileReader(rd, name, st.Kind(), opts)
		rd.Close()
		if err != nil {
			return nil, fmt.Errorf("session %s: %w", si.ID, err)
		}
		if a := si.Archived; a != nil {
			rep.Archived = &Archived{Storage: st.Kind(), Name: a.Location, Events: a.Events, RawBytes: a.RawBytes, ArchiveBytes: a.Bytes, Read: true}
		}
		reps = append(reps, rep)
	}
	return reps, nil
}
