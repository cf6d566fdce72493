// Package pgstore is the PostgreSQL session store (a transcript.Store for
// several gateway nodes sharing sessions): append-only rows per session
// sequence under an expiring, fenced writer lease. It owns its tables and
// the lease protocol; the entry format, recovery and the Store contract are
// package transcript's.
//
// It is a package of its own so that only programs that use PostgreSQL
// compile the driver (pgx): importing it, even for its side effect only
// (import _ "github.com/ocbench/ocbench/transcript/pgstore"), registers it
// with transcript.OpenStore for postgres:// and postgresql:// names. The
// ocbench command links it when built with -tags postgres.
package pgstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/transcript"
)

func init() {
	open := func(ctx context.Context, spec string) (transcript.Store, error) {
		return Open(ctx, spec, Options{})
	}
	transcript.RegisterStore("postgres", open)
	transcript.RegisterStore("postgresql", open)
}

// Options configure Open.
type Options struct {
	// LeaseTTL is how long a session's writer lease lasts without renewal:
	// a node that dies holding it loses it after at most this long.
	// Default 15 s; the writer renews it every third of it, and on every
	// append.
	LeaseTTL time.Duration
	// Holder names this node in leases (default: a random id per store).
	Holder string
}

// Store keeps sessions in PostgreSQL, for many gateway nodes sharing
// them. Each entry is one append-only row of ocbench_session_events
// (session_id, seq, entry_id, event_json), seq being the session's own
// sequence from 1 (the header). One writer per session across all nodes:
// Open acquires a lease row (ocbench_session_leases: holder, fencing
// token, expiry); another node may take it over only once it has expired
// (its holder stopped renewing it: a dead node), and a takeover raises the
// token. Every append is one statement that inserts the row only while the
// lease row still holds this writer's holder and token, and renews it. So
// a node whose lease was taken over can never write again (transcript.ErrLeaseLost),
// one whose lease merely expired while nobody took it goes on (nobody else
// can have written), and a row is either wholly there or not at all.
//
// On a connection lost mid-append the outcome is unknown: the writer
// reconnects (through the pool) and looks the row up by (session, seq,
// entry id); it reports success only when the row is there, and otherwise
// inserts it again (still under the lease) or fails. Nothing acknowledged
// is lost, nothing half-written is read.
type Store struct {
	pool *pgxpool.Pool
	lazy *pgxpool.Pool // synchronous_commit off
	opts Options
}

const pgSchema = `
CREATE TABLE IF NOT EXISTS ocbench_sessions (
	session_id TEXT PRIMARY KEY,
	created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
	archived_at TIMESTAMPTZ
);
CREATE TABLE IF NOT EXISTS ocbench_session_events (
	session_id TEXT NOT NULL REFERENCES ocbench_sessions(session_id),
	seq BIGINT NOT NULL CHECK (seq >= 1),
	entry_id TEXT NOT NULL,
	event_json TEXT NOT NULL,
	created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
	PRIMARY KEY (session_id, seq)
);
CREATE TABLE IF NOT EXISTS ocbench_session_leases (
	session_id TEXT PRIMARY KEY,
	holder TEXT NOT NULL,
	token BIGINT NOT NULL,
	expires_at TIMESTAMPTZ NOT NULL
);`

// Open connects to the database at url (postgres://...) and creates the
// tables if needed.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	if opts.LeaseTTL <= 0 {
		opts.LeaseTTL = 15 * time.Second
	}
	if opts.Holder == "" {
		var b [8]byte
		rand.Read(b[:])
		opts.Holder = "ocbench-" + hex.EncodeToString(b[:])
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("pgstore: postgres url: %w", err)
	}
	lazyCfg := cfg.Copy()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	// Writers under SyncTurn and SyncNone commit with synchronous_commit
	// off: the commit is acknowledged before the server flushes its WAL
	// (it survives a lost connection or a crash of ocbench, not a crash of
	// the server's machine in the next few hundred milliseconds).
	lazyCfg.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
	lazy, err := pgxpool.NewWithConfig(ctx, lazyCfg)
	if err != nil {
		pool.Close()
		return nil, err
	}
	s := &Store{pool: pool, lazy: lazy, opts: opts}
	// Concurrent first openers race on CREATE TABLE IF NOT EXISTS; an
	// advisory lock serialises them.
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(7262700001)`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, pgSchema)
		return err
	})
	if err != nil {
		pool.Close()
		lazy.Close()
		return nil, fmt.Errorf("pgstore: postgres schema: %w", err)
	}
	return s, nil
}

func (s *Store) Kind() string { return "postgres" }
func (s *Store) Close() error { s.pool.Close(); s.lazy.Close(); return nil }

// Pool returns the connection pool (for tests and inspection).
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

func (s *Store) Open(ctx context.Context, id string, opts transcript.WriterOptions) (transcript.SessionWriter, error) {
	if id == "" {
		id = transcript.NewSessionID()
	}
	if err := transcript.ValidSessionID(id); err != nil {
		return nil, err
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxLineSize <= 0 {
		opts.MaxLineSize = transcript.DefaultMaxLineSize
	}
	var archived bool
	err := s.pool.QueryRow(ctx, `SELECT archived_at IS NOT NULL FROM ocbench_sessions WHERE session_id = $1`, id).Scan(&archived)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return nil, err
	}
	if archived {
		return nil, fmt.Errorf("%w: %s", transcript.ErrArchived, id)
	}
	var token int64
	err = s.pool.QueryRow(ctx, `
		INSERT INTO ocbench_session_leases AS l (session_id, holder, token, expires_at)
		VALUES ($1, $2, 1, now() + $3::interval)
		ON CONFLICT (session_id) DO UPDATE SET holder = $2, token = l.token + 1, expires_at = now() + $3::interval
		WHERE l.expires_at < now()
		RETURNING token`, id, s.opts.Holder, s.opts.LeaseTTL.String()).Scan(&token)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, &transcript.LockedError{Path: "postgres:" + id}
	}
	if err != nil {
		return nil, err
	}
	w := &pgWriter{RowBranch: transcript.NewRowBranch(id), s: s, opts: opts, token: token, stop: make(chan struct{})}
	if err := w.load(ctx); err != nil {
		w.release()
		return nil, err
	}
	w.wg.Add(1)
	go w.renew()
	return w, nil
}

// pgWriter appends to one session of a Store while holding its lease.
type pgWriter struct {
	transcript.RowBranch
	s     *Store
	opts  transcript.WriterOptions
	token int64
	next  int64 // seq of the next row
	err   error
	dirty bool // asynchronous commits since the last synchronous one
	stop  chan struct{}
	wg    sync.WaitGroup
	done  bool
}

func (w *pgWriter) load(ctx context.Context) error {
	r, err := w.s.Reader(ctx, w.ID(), transcript.Options{KeepUnknown: true, SkipContent: true, MaxLineSize: w.opts.MaxLineSize})
	if err != nil && !errors.Is(err, transcript.ErrNoSession) {
		return err
	}
	if r != nil {
		err := w.Recover(r) // closes r; its Stats stay readable
		w.next = r.Stats().Lines + 1
		if err != nil {
			return err
		}
	}
	if w.Header().Version != 0 {
		return nil
	}
	hdr := w.NewHeader(w.opts.Now(), w.opts.Cwd)
	if _, err := w.s.pool.Exec(ctx, `INSERT INTO ocbench_sessions (session_id) VALUES ($1) ON CONFLICT DO NOTHING`, w.ID()); err != nil {
		return err
	}
	w.next = 1
	return w.insert(ctx, hdr, "")
}

// insert writes the row of seq w.next under the lease, renewing it, and
// resolves a lost connection by looking the row up.
func (w *pgWriter) insert(ctx context.Context, ev []byte, entryID string) error {
	const q = `WITH l AS (
		UPDATE ocbench_session_leases SET expires_at = now() + $6::interval
		WHERE session_id = $1 AND holder = $2 AND token = $3
		RETURNING 1)
	INSERT INTO ocbench_session_events (session_id, seq, entry_id, event_json)
	SELECT $1, $4, $5, $7 FROM l`
	if entryID == "" {
		entryID = "session"
	}
	evs := string(ev)
	pool := w.s.pool
	if w.opts.Durability != transcript.SyncEntry && entryID != "session" {
		pool = w.s.lazy
		w.dirty = true
	}
	for attempt := 0; ; attempt++ {
		tag, err := pool.Exec(ctx, q, w.ID(), w.s.opts.Holder, w.token, w.next, entryID, w.s.opts.LeaseTTL.String(), evs)
		if err == nil {
			if tag.RowsAffected() != 1 {
				return w.fail(transcript.ErrLeaseLost)
			}
			w.next++
			return nil
		}
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			if pe.Code == "23505" { // unique violation: seq taken, someone else wrote
				return w.fail(fmt.Errorf("%w: row %d of %s already written", transcript.ErrLeaseLost, w.next, w.ID()))
			}
			return err // the statement failed: nothing was written
		}
		// The connection failed: the row may or may not be there.
		if attempt >= 3 || ctx.Err() != nil {
			return fmt.Errorf("transcript: append to %s: outcome unknown after connection errors: %w", w.ID(), err)
		}
		time.Sleep(time.Duration(attempt+1) * 50 * time.Millisecond)
		var got string
		lerr := w.s.pool.QueryRow(ctx, `SELECT entry_id FROM ocbench_session_events WHERE session_id = $1 AND seq = $2`, w.ID(), w.next).Scan(&got)
		switch {
		case lerr == nil && got == entryID:
			w.next++
			return nil
		case lerr == nil:
			return w.fail(fmt.Errorf("%w: row %d of %s holds another entry", transcript.ErrLeaseLost, w.next, w.ID()))
		case errors.Is(lerr, pgx.ErrNoRows):
			continue // not written: insert again, under the lease
		}
	}
}

func (w *pgWriter) fail(err error) error {
	w.err = err
	return err
}

// renew extends the lease every third of its TTL while the writer is open.
func (w *pgWriter) renew() {
	defer w.wg.Done()
	t := time.NewTicker(w.s.opts.LeaseTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), w.s.opts.LeaseTTL/3)
			tag, err := w.s.pool.Exec(ctx, `UPDATE ocbench_session_leases SET expires_at = now() + $4::interval
				WHERE session_id = $1 AND holder = $2 AND token = $3`, w.ID(), w.s.opts.Holder, w.token, w.s.opts.LeaseTTL.String())
			cancel()
			if err == nil && tag.RowsAffected() == 0 {
				w.Lock()
				w.err = transcript.ErrLeaseLost
				w.Unlock()
				return
			}
		}
	}
}

func (w *pgWriter) release() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	w.s.pool.Exec(ctx, `DELETE FROM ocbench_session_leases WHERE session_id = $1 AND holder = $2 AND token = $3`, w.ID(), w.s.opts.Holder, w.token)
}

func (w *pgWriter) AppendMessage(m *llm.Message) (string, error) {
	return w.Append(&transcript.Entry{Type: transcript.TypeMessage, Message: m, Timestamp: m.Timestamp})
}

func (w *pgWriter) Append(e *transcript.Entry) (string, error) {
	w.Lock()
	defer w.Unlock()
	if w.done {
		return "", transcript.ErrClosed
	}
	if w.err != nil {
		return "", w.err
	}
	row, id, err := w.Prepare(e, &w.opts)
	if err != nil {
		return "", err
	}
	if strings.IndexByte(string(row), 0) >= 0 {
		return "", fmt.Errorf("%w: NUL byte", transcript.ErrBadEntry) // PostgreSQL text cannot hold it
	}
	if err := w.insert(context.Background(), row, string(id)); err != nil {
		return "", err
	}
	w.Appended(row, id)
	return string(id), nil
}

// EndTurn under SyncTurn, and Sync, make the appends durable on the
// server: one synchronous commit (the lease renewal), which flushes the
// server's WAL through every earlier asynchronous commit.
func (w *pgWriter) EndTurn() error {
	if w.opts.Durability != transcript.SyncTurn {
		return nil
	}
	return w.Sync()
}

func (w *pgWriter) Sync() error {
	w.Lock()
	defer w.Unlock()
	if w.done {
		return transcript.ErrClosed
	}
	if !w.dirty {
		return nil
	}
	tag, err := w.s.pool.Exec(context.Background(), `UPDATE ocbench_session_leases SET expires_at = now() + $4::interval
		WHERE session_id = $1 AND holder = $2 AND token = $3`, w.ID(), w.s.opts.Holder, w.token, w.s.opts.LeaseTTL.String())
	if err != nil {
		return err
	}
	if tag.RowsAffected() != 1 {
		return w.fail(transcript.ErrLeaseLost)
	}
	w.dirty = false
	return nil
}

func (w *pgWriter) Close() error {
	w.Lock()
	if w.done {
		w.Unlock()
		return transcript.ErrClosed
	}
	w.done = true
	w.Unlock()
	close(w.stop)
	w.wg.Wait()
	w.release()
	return nil
}

func (s *Store) Reader(ctx context.Context, id string, opts transcript.Options) (*transcript.Reader, error) {
	rows, err := s.pool.Query(ctx, `SELECT event_json FROM ocbench_session_events WHERE session_id = $1 ORDER BY seq`, id)
	if err != nil {
		return nil, err
	}
	pr := &pgRows{rows: rows}
	if !rows.Next() {
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %s", transcript.ErrNoSession, id)
	}
	pr.primed = true
	return transcript.NewReaderCloser(pr, opts), nil
}

type pgRows struct {
	rows    pgx.Rows
	primed  bool
	pending []byte
	off     int
}

func (p *pgRows) Close() error { p.rows.Close(); return nil }

func (p *pgRows) Read(b []byte) (int, error) {
	for p.off >= len(p.pending) {
		if p.primed {
			p.primed = false
		} else if !p.rows.Next() {
			if err := p.rows.Err(); err != nil {
				return 0, err
			}
			return 0, io.EOF
		}
		var ev string
		if err := p.rows.Scan(&ev); err != nil {
			return 0, err
		}
		p.pending = append(append(p.pending[:0], ev...), '\n')
		p.off = 0
	}
	n := copy(b, p.pending[p.off:])
	p.off += n
	return n, nil
}

func (s *Store) List(ctx context.Context) ([]transcript.SessionInfo, error) {
	rows, err := s.pool.Query(ctx, `SELECT s.session_id, count(e.seq), coalesce(sum(length(e.event_json) + 1), 0), coalesce(max(e.created_at), s.created_at), s.archived_at
		FROM ocbench_sessions s LEFT JOIN ocbench_session_events e ON e.session_id = s.session_id
		GROUP BY s.session_id ORDER BY s.session_id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []transcript.SessionInfo
	for rows.Next() {
		var si transcript.SessionInfo
		var arch *time.Time
		if err := rows.Scan(&si.ID, &si.Entries, &si.Bytes, &si.Updated, &arch); err != nil {
			return nil, err
		}
		if si.Entries > 0 {
			si.Entries--
		}
		if arch != nil {
			si.Archived = &transcript.ArchiveInfo{Location: "postgres:ocbench_session_events", Events: si.Entries, RawBytes: si.Bytes, Bytes: si.Bytes}
		}
		out = append(out, si)
	}
	return out, rows.Err()
}

// Archive marks the session archived (its rows stay, read-only) under its
// lease, so no writer can append afterwards.
func (s *Store) Archive(ctx context.Context, id string) (transcript.ArchiveInfo, error) {
	w, err := s.Open(ctx, id, transcript.WriterOptions{})
	if err != nil {
		return transcript.ArchiveInfo{}, err
	}
	pw := w.(*pgWriter)
	defer pw.Close()
	var n, bytes int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*), coalesce(sum(length(event_json) + 1), 0) FROM ocbench_session_events WHERE session_id = $1`, id).Scan(&n, &bytes); err != nil {
		return transcript.ArchiveInfo{}, err
	}
	if _, err := s.pool.Exec(ctx, `UPDATE ocbench_sessions SET archived_at = now() WHERE session_id = $1`, id); err != nil {
		return transcript.ArchiveInfo{}, err
	}
	return transcript.ArchiveInfo{Location: "postgres:ocbench_session_events", Events: n - 1, RawBytes: bytes, Bytes: bytes}, nil
}
