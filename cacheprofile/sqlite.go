package cacheprofile

import (
	"database/sql"
	"fmt"
	"io"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/transcript"
	"github.com/valyala/fastjson"
	_ "modernc.org/sqlite" // pure-Go driver "sqlite"
)

// OpenClaw 2026.8.1 and later keep transcripts in
// ~/.openclaw/agents/<id>/agent/openclaw-agent.sqlite, table
// transcript_events(session_id, seq, event_json | event_zstd +
// event_utf8_bytes, created_at, navigation_json): one row per entry, the
// entry JSON of the JSONL era, either plain or zstd-compressed. Each session
// is read in seq order and fed to the transcript reader as a version-3
// stream, so entries are parsed exactly as JSONL entries are.

func profileSQLite(path string, opts Options) ([]*Report, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	cols, err := tableColumns(db, "transcript_events")
	if err != nil {
		return nil, err
	}
	if !cols["session_id"] || !cols["seq"] || !(cols["event_json"] || cols["event_zstd"]) {
		return nil, fmt.Errorf("%w: SQLite file without an OpenClaw transcript_events table", ErrNotSession)
	}
	ids, err := sessionIDs(db)
	if err != nil {
		return nil, err
	}
	sel := "SELECT " + colOr(cols, "event_json") + ", " + colOr(cols, "event_zstd") +
		" FROM transcript_events WHERE session_id = ? ORDER BY seq"
	var reps []*Report
	for _, id := range ids {
		rows, err := db.Query(sel, id)
		if err != nil {
			return nil, err
		}
		rr := &rowReader{rows: rows, id: id}
		rep, err := profileReader(transcript.NewReader(rr, readOptions), path, "sqlite", opts)
		rows.Close()
		if rr.dec != nil {
			rr.dec.Close()
		}
		if err == nil {
			err = rr.err
		}
		if err != nil {
			return nil, fmt.Errorf("session %s: %w", id, err)
		}
		reps = append(reps, rep)
	}
	return reps, nil
}

// isHeaderLine reports whether line is a session header.
func isHeaderLine(line []byte) bool {
	var p fastjson.Parser
	v, err := p.ParseBytes(line)
	return err == nil && string(v.GetStringBytes("type")) == "session"
}

func colOr(cols map[string]bool, c string) string {
	if cols[c] {
		return c
	}
	return "NULL"
}

func tableColumns(db *sql.DB, table string) (map[string]bool, error) {
	rows, err := db.Query("SELECT name FROM pragma_table_info(?)", table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		cols[strings.ToLower(name)] = true
	}
	return cols, rows.Err()
}

func sessionIDs(db *sql.DB) ([]string, error) {
	rows, err := db.Query("SELECT DISTINCT session_id FROM transcript_events ORDER BY session_id")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// rowReader presents a session's rows as JSONL: the synthesised header,
// then one line per event. It pulls one row at a time.
type rowReader struct {
	rows    *sql.Rows
	id      string
	started bool
	pending []byte
	off     int
	dec     *zstd.Decoder
	err     error
}

func (r *rowReader) Read(b []byte) (int, error) {
	for r.off >= len(r.pending) {
		if !r.rows.Next() {
			if err := r.rows.Err(); err != nil {
				r.err = err
				return 0, err
			}
			return 0, io.EOF
		}
		var js, zs []byte
		if err := r.rows.Scan(&js, &zs); err != nil {
			r.err = err
			return 0, err
		}
		r.pending, r.off = r.pending[:0], 0
		switch {
		case len(js) > 0:
			r.pending = append(r.pending, js...)
		case len(zs) > 0:
			if r.dec == nil {
				d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(64<<20))
				if err != nil {
					r.err = err
					return 0, err
				}
				r.dec = d
			}
			out, err := r.dec.DecodeAll(zs, r.pending)
			if err != nil {
				// A corrupt row is one malformed line: the reader skips and
				// counts it.
				out = append(r.pending[:0], "{corrupt zstd event}"...)
			}
			r.pending = out
		default:
			continue
		}
		// An event is one line; a raw newline inside it would split it.
		for i, c := range r.pending {
			if c == '\n' || c == '\r' {
				r.pending[i] = ' '
			}
		}
		r.pending = append(r.pending, '\n')
		if !r.started {
			// OpenClaw stores the session header as the first row; rows of
			// older stores start with entries, so a version-3 header is
			// made up for them.
			r.started = true
			if !isHeaderLine(r.pending) {
				h := llm.AppendJSONString([]byte(`{"type":"session","version":3,"id":`), r.id)
				r.pending = append(append(h, "}\n"...), r.pending...)
			}
		}
	}
	n := copy(b, r.pending[r.off:])
	r.off += n
	return n, nil
}
