package transcript

import (
	"bufio"
	"context"
	"crypto/sha256"
	"database/sql"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/klauspost/compress/zstd"
	"github.com/ocbench/ocbench/llm"
	"github.com/valyala/fastjson"
	_ "modernc.org/sqlite" // pure-Go driver "sqlite"
)

// openclawAgentSchema is OpenClaw 2026.9.6's per-agent database schema
// (agent schema 23, OPENCLAW_AGENT_SCHEMA_SQL), the layout a new store is
// created with so that OpenClaw opens it as its own.
//
//go:embed openclaw_agent_schema.sql
var openclawAgentSchema string

// OpenClawAgentSchemaVersion is the agent schema version of 2026.9.6.
const OpenClawAgentSchemaVersion = 23

// openclawAppVersion is the app_version recorded in schema_meta.
const openclawAppVersion = "2026.9.6"

// OpenClaw's payload rules for transcript_events rows: an event from 1 KiB
// through 4 MiB of UTF-8 (without \u escapes or NUL) is stored as a level-1
// zstd frame with a checksum when the frame plus its navigation metadata
// saves at least max(64 bytes, 10%).
const (
	minCompressBytes   = 1024
	maxCompressedBytes = 4 << 20
	maxNavigationBytes = 16384
)

// SQLiteOptions configure OpenSQLiteStore.
type SQLiteOptions struct {
	// ReadOnly opens an existing store without creating or changing it.
	ReadOnly bool
	// AgentID is recorded in schema_meta and in the session keys of new
	// sessions ("agent:<id>:ocbench:<session>"); default "main".
	AgentID string
	// BusyTimeout is how long a statement waits for another process's
	// lock (default 30 s, OpenClaw's). Writers of one store in this process
	// take turns without polling.
	BusyTimeout time.Duration
}

// SQLiteStore keeps sessions in OpenClaw 2026.9.6's per-agent SQLite
// database (<stateDir>/agents/<agentId>/agent/openclaw-agent.sqlite): one
// transcript_events row per entry, the header first, in WAL mode. It
// continues sessions OpenClaw wrote and writes sessions OpenClaw opens.
//
// One writer per session: Open takes an flock on a lock file beside the
// database (<db>.ocbench-locks/<sha256(id)>), dropped by the kernel when the
// process dies. OpenClaw's own gateway does not take these locks: do not
// run both on one session at once.
type SQLiteStore struct {
	path string
	opts SQLiteOptions
	db   *sql.DB
	// lazyDB commits without an fsync per commit (SyncTurn, SyncNone).
	lazyDB *sql.DB
	mu     sync.Mutex
	// wmu serialises this process's write transactions: SQLite has one
	// writer at a time, and its busy handler polls, so many writers of one
	// store would starve each other past the busy timeout.
	wmu sync.Mutex
	// hasCold says the cold-archive table exists (stores of OpenClaw
	// before agent schema 20 have none).
	hasCold bool
	// eventCols selects the body of a row: text, frame, UTF-8 size.
	eventCols string
}

// OpenSQLiteStore opens (or, unless ReadOnly, creates) the store at path.
func OpenSQLiteStore(path string, opts SQLiteOptions) (*SQLiteStore, error) {
	if opts.AgentID == "" {
		opts.AgentID = "main"
	}
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = 30 * time.Second // as OpenClaw's own connections
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", opts.BusyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	if opts.ReadOnly {
		q.Set("mode", "ro")
	} else {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(FULL)")
		q.Set("_txlock", "immediate")
		if dir := filepath.Dir(path); dir != "" {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, err
			}
		}
	}
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	s := &SQLiteStore{path: path, opts: opts, db: db, lazyDB: db}
	if err := s.init(); err != nil {
		db.Close()
		return nil, fmt.Errorf("transcript: sqlite store %s: %w", path, err)
	}
	if !opts.ReadOnly {
		// Writers under SyncTurn and SyncNone commit through connections
		// with synchronous=NORMAL: in WAL mode a commit is then durable
		// against a crash of the process, and the log is flushed at a
		// checkpoint (EndTurn under SyncTurn) instead of at every commit.
		q.Set("_pragma", fmt.Sprintf("busy_timeout(%d)", opts.BusyTimeout.Milliseconds()))
		q.Add("_pragma", "foreign_keys(1)")
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(NORMAL)")
		lazy, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
		if err != nil {
			db.Close()
			return nil, err
		}
		s.lazyDB = lazy
	}
	return s, nil
}

func (s *SQLiteStore) Kind() string { return "sqlite" }

// DB returns the store's database handle (for inspection and tests).
func (s *SQLiteStore) DB() *sql.DB { return s.db }

func (s *SQLiteStore) Close() error {
	err := s.db.Close()
	if s.lazyDB != s.db {
		if lerr := s.lazyDB.Close(); err == nil {
			err = lerr
		}
	}
	return err
}

func (s *SQLiteStore) init() error {
	var n int
	if err := s.db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type='table' AND name='transcript_events'`).Scan(&n); err != nil {
		return err
	}
	if n == 1 {
		// Stores of OpenClaw before agent schema 23 may lack the compressed
		// columns, and before 20 the cold-archive table.
		s.eventCols = "event_json, NULL, NULL"
		var z int
		if err := s.db.QueryRow(`SELECT count(*) FROM pragma_table_info('transcript_events') WHERE name IN ('event_zstd', 'event_utf8_bytes')`).Scan(&z); err != nil {
			return err
		}
		if z == 2 {
			s.eventCols = "event_json, event_zstd, event_utf8_bytes"
		}
		return s.db.QueryRow(`SELECT count(*) = 1 FROM sqlite_master WHERE type='table' AND name='session_transcript_cold_archives'`).Scan(&s.hasCold)
	}
	if s.opts.ReadOnly {
		return fmt.Errorf("%w: no transcript_events table", ErrNotSession)
	}
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.Exec(openclawAgentSchema); err != nil {
		return fmt.Errorf("creating the OpenClaw agent schema: %w", err)
	}
	now := time.Now().UnixMilli()
	if _, err := tx.Exec(`INSERT OR IGNORE INTO schema_meta (meta_key, role, schema_version, agent_id, app_version, created_at, updated_at)
		VALUES ('primary', 'agent', ?, ?, ?, ?, ?)`, OpenClawAgentSchemaVersion, s.opts.AgentID, openclawAppVersion, now, now); err != nil {
		return err
	}
	if _, err := tx.Exec(fmt.Sprintf("PRAGMA user_version = %d", OpenClawAgentSchemaVersion)); err != nil {
		return err
	}
	s.hasCold = true
	s.eventCols = "event_json, event_zstd, event_utf8_bytes"
	return tx.Commit()
}

// sessionKey is the session_nodes key of a session ocbench creates.
func (s *SQLiteStore) sessionKey(id string) string {
	return "agent:" + s.opts.AgentID + ":ocbench:" + id
}

// lockPath is the flock file of a session.
func (s *SQLiteStore) lockPath(id string) string {
	h := sha256.Sum256([]byte(id))
	return filepath.Join(s.path+".ocbench-locks", hex.EncodeToString(h[:16]))
}

func (s *SQLiteStore) Open(ctx context.Context, id string, opts WriterOptions) (SessionWriter, error) {
	if s.opts.ReadOnly {
		return nil, errors.New("transcript: sqlite store opened read-only")
	}
	if id == "" {
		id = newUUID()
	}
	if err := validSessionID(id); err != nil {
		return nil, err
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxLineSize <= 0 {
		opts.MaxLineSize = DefaultMaxLineSize
	}
	if err := os.MkdirAll(s.path+".ocbench-locks", 0o755); err != nil {
		return nil, err
	}
	lf, err := os.OpenFile(s.lockPath(id), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := lockFile(lf); err != nil {
		lf.Close()
		if errors.Is(err, ErrLocked) {
			return nil, &LockedError{Path: s.path + "#" + id}
		}
		return nil, err
	}
	w := &sqliteWriter{RowBranch: NewRowBranch(id), s: s, opts: opts, lockF: lf}
	if err := w.open(ctx); err != nil {
		unlockFile(lf) // a forked child may hold a copy of the descriptor
		lf.Close()
		return nil, err
	}
	return w, nil
}

// sqliteWriter appends to one session of a SQLiteStore.
type sqliteWriter struct {
	RowBranch
	s     *SQLiteStore
	opts  WriterOptions
	lockF *os.File
	enc   *zstd.Encoder
	dirty bool
	// nextSeq is the seq of the next row (0: read it); touched says the
	// session's derived state was marked for rebuild by this writer.
	nextSeq int64
	touched bool
}

func (w *sqliteWriter) open(ctx context.Context) error {
	if c, err := w.s.coldArchive(ctx, w.id); err != nil {
		return err
	} else if c != nil {
		return fmt.Errorf("%w: %s", ErrArchived, w.id)
	}
	r, err := w.s.Reader(ctx, w.id, Options{KeepUnknown: true, SkipContent: true, MaxLineSize: w.opts.MaxLineSize})
	if err != nil && !errors.Is(err, ErrNoSession) {
		return err
	}
	if r != nil {
		if err := w.Recover(r); err != nil {
			return err
		}
	}
	if w.hdr.Version != 0 {
		return nil
	}
	// A new session: its node, its window and the header row, in one
	// transaction.
	now := w.opts.Now()
	hdrRow := w.NewHeader(now, w.opts.Cwd)
	hdr := string(hdrRow)
	key := w.s.sessionKey(w.id)
	entry := string(llm.AppendJSONString([]byte(`{"sessionId":`), w.id)) + fmt.Sprintf(`,"updatedAt":%d,"sessionStartedAt":%d}`, now.UnixMilli(), now.UnixMilli())
	w.s.wmu.Lock()
	defer w.s.wmu.Unlock()
	tx, err := w.s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	ms := now.UnixMilli()
	if _, err := tx.Exec(`INSERT OR IGNORE INTO session_nodes (session_key, current_session_id, entry_json, updated_at, created_at, created_via)
		VALUES (?, ?, ?, ?, ?, 'run')`, key, w.id, entry, ms, ms); err != nil {
		return err
	}
	if _, err := tx.Exec(`INSERT OR IGNORE INTO session_windows (session_id, session_key, created_at, updated_at, transcript_updated_at)
		VALUES (?, ?, ?, ?, ?)`, w.id, key, ms, ms, ms); err != nil {
		return err
	}
	// As OpenClaw writes it: the header is row 0, with an identity row
	// named by the session id.
	if _, err := tx.Exec(`INSERT INTO transcript_events (session_id, seq, event_json, event_utf8_bytes, created_at) VALUES (?, 0, ?, ?, ?)`,
		w.id, hdr, len(hdr), ms); err != nil {
		return err
	}
	if _, err := tx.Exec(`INSERT OR IGNORE INTO transcript_event_identities (session_id, event_id, seq, event_type, parent_id, created_at) VALUES (?, ?, 0, 'session', NULL, ?)`,
		w.id, w.id, ms); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	return nil
}

// CurrentVersion is the session version ocbench writes to stores that
// follow OpenClaw 2026.9.6 (SQLite, PostgreSQL).
const CurrentVersion = 4

func (w *sqliteWriter) AppendMessage(m *llm.Message) (string, error) {
	return w.Append(&Entry{Type: TypeMessage, Message: m, Timestamp: m.Timestamp})
}

// prepareEntry validates e and renders it as one JSON line in *buf with a
// fresh id chained to leaf. Shared by the database writers.
func prepareEntry(e *Entry, leaf []byte, ids map[uint64]struct{}, idBuf *[]byte, buf *[]byte, vp *fastjson.Parser, now func() time.Time, maxLine int) (id []byte, err error) {
	if e.Type == TypeUnknown || e.Type >= numEntryTypes {
		return nil, fmt.Errorf("%w: type %v", ErrBadEntry, e.Type)
	}
	valid := func(b []byte) bool { _, err := vp.ParseBytes(b); return err == nil }
	if e.Type == TypeMessage && e.Message == nil && !valid(e.MessageJSON) {
		return nil, fmt.Errorf("%w: message JSON", ErrBadEntry)
	}
	for _, raw := range [...][]byte{e.Data, e.Details, e.Content} {
		if len(raw) > 0 && !valid(raw) {
			return nil, fmt.Errorf("%w: raw field is not JSON", ErrBadEntry)
		}
	}
	ce := *e
	if len(ce.ID) == 0 {
		for {
			*idBuf = appendHex8((*idBuf)[:0], int64(randUint32()))
			if _, dup := ids[IDHash(*idBuf)]; !dup {
				break
			}
		}
		ce.ID = *idBuf
	}
	ce.ParentID = leaf
	if ce.Timestamp == 0 {
		ce.Timestamp = now().UnixMilli()
	}
	*buf = AppendEntryJSON((*buf)[:0], &ce)
	if len(*buf) > maxLine {
		return nil, &LineTooLongError{Limit: maxLine}
	}
	return ce.ID, nil
}

func (w *sqliteWriter) Append(e *Entry) (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.lockF == nil {
		return "", ErrClosed
	}
	row, id, err := w.Prepare(e, &w.opts)
	if err != nil {
		return "", err
	}
	if err := w.insert(e.Type, row, id); err != nil {
		return "", err
	}
	w.Appended(row, id)
	w.dirty = true
	return string(id), nil
}

// insert writes ev as the session's next row (and its identity row) in
// one transaction.
func (w *sqliteWriter) insert(typ EntryType, ev, id []byte) error {
	now := w.opts.Now().UnixMilli()
	var zs []byte
	var nav *string
	if w.compressible(ev) {
		z, n, ok, err := w.compress(ev)
		if err != nil {
			return err
		}
		if ok {
			zs, nav = z, &n
		}
	}
	db := w.s.db
	if w.opts.Durability != SyncEntry {
		db = w.s.lazyDB
	}
	w.s.wmu.Lock()
	defer w.s.wmu.Unlock()
	err := w.insertTx(db, typ, id, ev, zs, nav, now)
	if err != nil && w.nextSeq != 0 && strings.Contains(err.Error(), "UNIQUE") {
		// Another program appended to the session: read the sequence again.
		w.nextSeq = 0
		err = w.insertTx(db, typ, id, ev, zs, nav, now)
	}
	return err
}

// insertTx writes one row and its identity in one transaction.
func (w *sqliteWriter) insertTx(db *sql.DB, typ EntryType, id, ev, zs []byte, nav *string, now int64) error {
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// The next seq is known while this writer holds the session; it is read
	// again when the session was touched (the first append, or after a row
	// of that seq turned out to exist: another program's append).
	seq := w.nextSeq
	if seq == 0 {
		if err := tx.QueryRow(`SELECT coalesce(max(seq), 0) + 1 FROM transcript_events WHERE session_id = ?`, w.id).Scan(&seq); err != nil {
			return err
		}
	}
	if zs != nil {
		_, err = tx.Exec(`INSERT INTO transcript_events (session_id, seq, event_json, event_zstd, event_utf8_bytes, navigation_json, created_at) VALUES (?, ?, NULL, ?, ?, ?, ?)`,
			w.id, seq, zs, len(ev), *nav, now)
	} else {
		_, err = tx.Exec(`INSERT INTO transcript_events (session_id, seq, event_json, event_utf8_bytes, created_at) VALUES (?, ?, ?, ?, ?)`,
			w.id, seq, string(ev), len(ev), now)
	}
	if err != nil {
		return err
	}
	var parent any
	if len(w.leaf) > 0 {
		parent = string(w.leaf)
	}
	if _, err := tx.Exec(`INSERT OR IGNORE INTO transcript_event_identities (session_id, event_id, seq, event_type, parent_id, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		w.id, string(id), seq, typ.String(), parent, now); err != nil {
		return err
	}
	if !w.touched {
		// OpenClaw's materialized active path and search index are
		// derived: mark them for rebuild (once per writer) rather than
		// maintain them here; the window's transcript time is set again
		// at Close.
		if _, err := tx.Exec(`UPDATE session_transcript_index_state SET needs_rebuild = 1, updated_at = ? WHERE session_id = ?`, now, w.id); err != nil {
			return err
		}
		if err := touchWindow(tx, w.id, now); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	w.touched = true
	w.nextSeq = seq + 1
	return nil
}

func touchWindow(x interface {
	Exec(string, ...any) (sql.Result, error)
}, id string, now int64) error {
	_, err := x.Exec(`UPDATE session_windows SET transcript_updated_at = ?, updated_at = ? WHERE session_id = ?`, now, now, id)
	return err
}

func (w *sqliteWriter) compressible(ev []byte) bool {
	if len(ev) < minCompressBytes || len(ev) > maxCompressedBytes {
		return false
	}
	return !strings.Contains(string(ev), `\u`) && strings.IndexByte(string(ev), 0) < 0 && utf8.Valid(ev)
}

// compress returns the zstd frame and navigation metadata of ev, and
// whether they save enough to be stored instead of the text.
func (w *sqliteWriter) compress(ev []byte) ([]byte, string, bool, error) {
	if w.enc == nil {
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderCRC(true), zstd.WithEncoderConcurrency(1))
		if err != nil {
			return nil, "", false, err
		}
		w.enc = enc
	}
	z := w.enc.EncodeAll(ev, nil)
	limit := len(ev) - max(64, (len(ev)+9)/10)
	if len(z) > limit {
		return nil, "", false, nil
	}
	nav, err := navigationJSON(w.s.db, ev)
	if err != nil || nav == "" || len(z)+len(nav) > limit {
		return nil, "", false, err
	}
	return z, nav, true, nil
}

// navigationJSON computes the navigation metadata OpenClaw keeps beside a
// compressed row (what its readers use without decoding the body): the
// report facts, the tree and model-context projections, and byte sizes.
// It is computed with SQLite's JSON functions so that the sizes are those
// of SQLite's own JSON text.
func navigationJSON(db *sql.DB, ev []byte) (string, error) {
	report, err := reportFacts(ev)
	if err != nil {
		return "", nil
	}
	var nav sql.NullString
	err = db.QueryRow(navigationSQL, string(ev), report).Scan(&nav)
	if err != nil || !nav.Valid || len(nav.String) > maxNavigationBytes {
		return "", err
	}
	return nav.String, nil
}

// pick is a JSON object of the listed members of a JSON object.
func pick(src string, keys ...string) string {
	return `(SELECT json_group_object(key, CASE type WHEN 'object' THEN json(value) WHEN 'array' THEN json(value)
		WHEN 'true' THEN json('true') WHEN 'false' THEN json('false') ELSE value END)
		FROM json_each(` + src + `) WHERE key IN ('` + strings.Join(keys, "','") + `'))`
}

var (
	treeKeys  = []string{"type", "id", "parentId", "targetId", "appendParentId", "appendMode"}
	modelKeys = append(append([]string{}, treeKeys...), "timestamp", "version", "cwd", "firstKeptEntryId", "reason",
		"tokensBefore", "thinkingLevel", "provider", "modelId", "fromId", "customType", "display", "label", "name")
	navigationSQL = `SELECT json_object('version', 1,
	'report', json(?2),
	'navigation', json_set(` + pick("?1", modelKeys...) + `, '$.message', json(coalesce(` + pick("json_extract(?1, '$.message')", "role", "idempotencyKey", "provenance", "excludeFromContext") + `, '{}'))),
	'reset', json_set(` + pick("?1", append(append([]string{}, treeKeys...), "timestamp", "firstKeptEntryId", "customType", "display")...) + `, '$.message', json_object('role', json_extract(?1, '$.message.role'))),
	'model', CASE json_extract(?1, '$.type')
		WHEN 'message' THEN json_set(` + pick("?1", modelKeys...) + `, '$.message', json_set(coalesce(` + pick("json_extract(?1, '$.message')", "role", "provider", "model", "timestamp", "excludeFromContext", "toolCallId", "toolName", "isError", "stopReason", "customType", "display") + `, '{}'),
			'$.content', json(coalesce((SELECT json_group_array(json_object('type', json_extract(value, '$.type'), 'id', json_extract(value, '$.id'), 'name', json_extract(value, '$.name')))
				FROM json_each(?1, '$.message.content') WHERE type = 'object' AND json_extract(value, '$.type') IN ('toolCall', 'toolUse', 'functionCall')), '[]')),
			'$.command', '', '$.output', '',
			'$.providerReplay', json_object('type', json_extract(?1, '$.message.providerReplay.type')),
			'$.details', json_object('openclawSyntheticMissingToolResult', json(CASE WHEN coalesce(json_extract(?1, '$.message.details.openclawSyntheticMissingToolResult'), 0) = 1 THEN 'true' ELSE 'false' END))))
		WHEN 'custom_message' THEN json_set(` + pick("?1", modelKeys...) + `, '$.content', json('[]'))
		WHEN 'compaction' THEN json_set(` + pick("?1", modelKeys...) + `, '$.summary', '')
		WHEN 'branch_summary' THEN json_set(` + pick("?1", modelKeys...) + `, '$.summary', '')
		ELSE ` + pick("?1", modelKeys...) + ` END,
	'modelBytes', octet_length(CASE WHEN json_extract(?1, '$.message.role') = 'toolResult' THEN json_remove(?1, '$.message.__openclaw.upstreamUserText', '$.message.details') ELSE json_remove(?1, '$.message.__openclaw.upstreamUserText') END),
	'modelWithoutCheckpointBytes', octet_length(json_remove(CASE WHEN json_extract(?1, '$.message.role') = 'toolResult' THEN json_remove(?1, '$.message.__openclaw.upstreamUserText', '$.message.details') ELSE json_remove(?1, '$.message.__openclaw.upstreamUserText') END, '$.message.providerReplay')),
	'withoutCustomDataBytes', octet_length(json_remove(?1, '$.data')))`
)

// reportFacts is the "report" member of the navigation metadata: how
// OpenClaw classifies the row (canonical entries with their tree facts).
func reportFacts(ev []byte) (string, error) {
	var p fastjson.Parser
	v, err := p.ParseBytes(ev)
	if err != nil {
		return "", err
	}
	typ := string(v.GetStringBytes("type"))
	b := []byte(`{"kind":"canonical","hasParentId":`)
	b = append(b, boolText(v.Get("parentId") != nil)...)
	b = append(b, `,"entry":{"id":`...)
	b = llm.AppendJSONString(b, v.GetStringBytes("id"))
	if pv := v.Get("parentId"); pv != nil {
		b = append(b, `,"parentId":`...)
		b = llm.AppendJSONValue(b, pv)
	}
	if ts := v.Get("timestamp"); ts != nil {
		b = append(b, `,"timestamp":`...)
		b = llm.AppendJSONValue(b, ts)
	}
	b = append(b, `,"type":`...)
	b = llm.AppendJSONString(b, typ)
	switch typ {
	case "label":
		b = append(b, `,"targetId":`...)
		b = llm.AppendJSONString(b, v.GetStringBytes("targetId"))
		b = append(b, `,"label":`...)
		b = llm.AppendJSONString(b, v.GetStringBytes("label"))
	case "custom_message":
		b = append(b, `,"customType":`...)
		b = llm.AppendJSONString(b, v.GetStringBytes("customType"))
	case "message":
		if string(v.GetStringBytes("message", "role")) == "assistant" {
			if run := v.GetStringBytes("message", "__openclaw", "runId"); len(run) > 0 {
				b = append(b, `,"assistantRunId":`...)
				b = llm.AppendJSONString(b, run)
			}
			if rid := v.GetStringBytes("message", "responseId"); len(rid) > 0 {
				b = append(b, `,"assistantResponseId":`...)
				b = llm.AppendJSONString(b, rid)
			}
		}
	}
	return string(append(b, "}}"...)), nil
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func (w *sqliteWriter) EndTurn() error {
	if w.opts.Durability != SyncTurn {
		return nil
	}
	return w.Sync()
}

// Sync makes every appended row durable: a WAL checkpoint, which fsyncs
// the log (rows are committed, and survive a process crash, as soon as
// Append returns under any policy; under SyncEntry each commit is already
// fsynced).
func (w *sqliteWriter) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.lockF == nil {
		return ErrClosed
	}
	if !w.dirty {
		return nil
	}
	if _, err := w.s.db.Exec(`PRAGMA wal_checkpoint(PASSIVE)`); err != nil {
		return err
	}
	w.dirty = false
	return nil
}

func (w *sqliteWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.lockF == nil {
		return ErrClosed
	}
	var err error
	if w.touched {
		w.s.wmu.Lock()
		err = touchWindow(w.s.db, w.id, w.opts.Now().UnixMilli())
		w.s.wmu.Unlock()
	}
	// Unlocked explicitly: a child process between fork and exec holds a
	// copy of the descriptor, which would keep the flock past Close.
	unlockFile(w.lockF)
	w.lockF.Close()
	w.lockF = nil
	if w.enc != nil {
		w.enc.Close()
	}
	return err
}

// Reader streams a session's entries: the cold archive's events (when
// OpenClaw moved them there), then the rows of transcript_events in seq
// order. A compressed row is decoded; a row that does not decode is one
// malformed line (skipped and counted). Rows of stores older than version
// 4 start without a header: a version-3 one is made up.
func (s *SQLiteStore) Reader(ctx context.Context, id string, opts Options) (*Reader, error) {
	cold, err := s.coldArchive(ctx, id)
	if err != nil {
		return nil, err
	}
	after := int64(math.MinInt64) // no cold archive: every row
	var src io.Reader
	var closers []io.Closer
	if cold != nil {
		events, err := s.coldEvents(cold)
		if err != nil {
			return nil, err
		}
		after = cold.lastSeq
		src = strings.NewReader(events)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+s.eventCols+` FROM transcript_events WHERE session_id = ? AND seq > ? ORDER BY seq`, id, after)
	if err != nil {
		return nil, err
	}
	rr := &rowsReader{rows: rows, id: id, started: cold != nil}
	closers = append(closers, rr)
	if src != nil {
		src = io.MultiReader(src, rr)
	} else {
		src = rr
	}
	if cold == nil {
		// Distinguish an empty session from a missing one.
		if !rows.Next() {
			err := rows.Err()
			rows.Close()
			if err != nil {
				return nil, err
			}
			return nil, fmt.Errorf("%w: %s", ErrNoSession, id)
		}
		rr.primed = true
	}
	r := NewReader(src, opts)
	r.closers = append(r.closers, closers...)
	return r, nil
}

// rowsReader presents rows as JSONL, pulling one row at a time.
type rowsReader struct {
	rows    *sql.Rows
	id      string
	started bool
	primed  bool // rows.Next was already called for the first row
	pending []byte
	off     int
	dec     *zstd.Decoder
}

func (r *rowsReader) Close() error {
	if r.dec != nil {
		r.dec.Close()
	}
	return r.rows.Close()
}

func (r *rowsReader) Read(b []byte) (int, error) {
	for r.off >= len(r.pending) {
		if r.primed {
			r.primed = false
		} else if !r.rows.Next() {
			if err := r.rows.Err(); err != nil {
				return 0, err
			}
			return 0, io.EOF
		}
		var js, zs []byte
		var raw sql.NullInt64
		if err := r.rows.Scan(&js, &zs, &raw); err != nil {
			return 0, err
		}
		r.pending, r.off = r.pending[:0], 0
		switch {
		case len(js) > 0:
			r.pending = append(r.pending, js...)
		case len(zs) > 0:
			if r.dec == nil {
				d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxCompressedBytes+(1<<20)))
				if err != nil {
					return 0, err
				}
				r.dec = d
			}
			out, err := r.dec.DecodeAll(zs, r.pending)
			if err != nil || (raw.Valid && int64(len(out)) != raw.Int64) {
				out = append(r.pending[:0], "{corrupt compressed event}"...)
			}
			r.pending = out
		default:
			continue
		}
		for i, c := range r.pending {
			if c == '\n' || c == '\r' {
				r.pending[i] = ' '
			}
		}
		r.pending = append(r.pending, '\n')
		if !r.started {
			r.started = true
			if !isHeaderJSON(r.pending) {
				h := llm.AppendJSONString([]byte(`{"type":"session","version":3,"id":`), r.id)
				r.pending = append(append(h, "}\n"...), r.pending...)
			}
		}
	}
	n := copy(b, r.pending[r.off:])
	r.off += n
	return n, nil
}

func isHeaderJSON(line []byte) bool {
	var p fastjson.Parser
	v, err := p.ParseBytes(line)
	return err == nil && string(v.GetStringBytes("type")) == "session"
}

// coldArchive is a session_transcript_cold_archives row.
type coldArchive struct {
	session                  string
	storage, name, sha       string
	events, raw, bytes, last int64
	lastSeq                  int64
	blob                     []byte
}

func (s *SQLiteStore) coldArchive(ctx context.Context, id string) (*coldArchive, error) {
	if !s.hasCold {
		return nil, nil
	}
	c := coldArchive{session: id}
	err := s.db.QueryRowContext(ctx, `SELECT storage, archive_name, archive_sha256, event_count, raw_bytes, archive_bytes, last_seq, archive_blob
		FROM session_transcript_cold_archives WHERE session_id = ?`, id).Scan(&c.storage, &c.name, &c.sha, &c.events, &c.raw, &c.bytes, &c.lastSeq, &c.blob)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// ColdPath is where OpenClaw keeps a file cold archive of this store: the
// sibling sessions/cold/ of a database in a directory named agent, else
// cold/ beside the database.
func (s *SQLiteStore) ColdPath(name string) string {
	dir := filepath.Dir(s.path)
	if filepath.Base(dir) == "agent" {
		return filepath.Join(filepath.Dir(dir), "sessions", "cold", name)
	}
	return filepath.Join(dir, "cold", name)
}

// ColdArchiveError says why a cold archive could not be read; the session
// is archived, with the sizes given.
type ColdArchiveError struct {
	Session, Storage, Name string
	Events, RawBytes       int64
	ArchiveBytes           int64
	Err                    error
}

func (e *ColdArchiveError) Error() string {
	return fmt.Sprintf("transcript: session %s is cold-archived (%s storage, %s: %d events, %d bytes, %d compressed) and the archive cannot be read: %v",
		e.Session, e.Storage, e.Name, e.Events, e.RawBytes, e.ArchiveBytes, e.Err)
}

func (e *ColdArchiveError) Unwrap() error { return e.Err }

// coldEvents returns the archive's events as JSONL (event_json of each
// event record, in order), after checking its size and SHA-256.
func (s *SQLiteStore) coldEvents(c *coldArchive) (string, error) {
	fail := func(err error) (string, error) {
		return "", &ColdArchiveError{Session: c.session, Storage: c.storage, Name: c.name, Events: c.events, RawBytes: c.raw, ArchiveBytes: c.bytes, Err: err}
	}
	data := c.blob
	if c.storage == "file" {
		b, err := os.ReadFile(s.ColdPath(c.name))
		if err != nil {
			return fail(err)
		}
		data = b
	}
	sum := sha256.Sum256(data)
	if int64(len(data)) != c.bytes || hex.EncodeToString(sum[:]) != c.sha {
		return fail(errors.New("size or SHA-256 does not match the archive row"))
	}
	d, err := zstd.NewReader(strings.NewReader(string(data)), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(1<<30))
	if err != nil {
		return fail(err)
	}
	defer d.Close()
	var out strings.Builder
	sc := bufio.NewScanner(d)
	sc.Buffer(make([]byte, 0, 64<<10), DefaultMaxLineSize+1024)
	var p fastjson.Parser
	for sc.Scan() {
		v, err := p.ParseBytes(sc.Bytes())
		if err != nil || string(v.GetStringBytes("kind")) != "event" {
			continue
		}
		ev := v.GetStringBytes("row", "event_json")
		out.Write(ev)
		out.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return fail(err)
	}
	return out.String(), nil
}

func (s *SQLiteStore) List(ctx context.Context) ([]SessionInfo, error) {
	size := "length(event_json)"
	if strings.Contains(s.eventCols, "event_utf8_bytes") {
		size = "coalesce(event_utf8_bytes, length(event_json))"
	}
	rows, err := s.db.QueryContext(ctx, `SELECT session_id, count(*) - 1, coalesce(sum(`+size+` + 1), 0), coalesce(max(created_at), 0)
		FROM transcript_events GROUP BY session_id ORDER BY session_id`)
	if err != nil {
		return nil, err
	}
	var out []SessionInfo
	idx := map[string]int{}
	for rows.Next() {
		var si SessionInfo
		var upd int64
		if err := rows.Scan(&si.ID, &si.Entries, &si.Bytes, &upd); err != nil {
			rows.Close()
			return nil, err
		}
		si.Updated = time.UnixMilli(upd).UTC()
		idx[si.ID] = len(out)
		out = append(out, si)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if !s.hasCold {
		return out, nil
	}
	crow, err := s.db.QueryContext(ctx, `SELECT session_id, storage, archive_name, event_count, raw_bytes, archive_bytes, archived_at FROM session_transcript_cold_archives ORDER BY session_id`)
	if err != nil {
		return nil, err
	}
	defer crow.Close()
	for crow.Next() {
		var id, storage, name string
		var a ArchiveInfo
		var at int64
		if err := crow.Scan(&id, &storage, &name, &a.Events, &a.RawBytes, &a.Bytes, &at); err != nil {
			return nil, err
		}
		a.Location = storage + ":" + name
		if storage == "file" {
			a.Location = s.ColdPath(name)
		}
		if i, ok := idx[id]; ok {
			out[i].Archived = &a
			continue
		}
		out = append(out, SessionInfo{ID: id, Entries: a.Events, Bytes: a.RawBytes, Updated: time.UnixMilli(at).UTC(), Archived: &a})
	}
	return out, crow.Err()
}

// Archive moves the session's rows into an OpenClaw cold archive stored in
// the database (storage 'sqlite': a zstd JSONL of a header record and one
// event record per row, with its SHA-256 and counts) and deletes the hot
// rows, in one transaction, under the session's lock.
func (s *SQLiteStore) Archive(ctx context.Context, id string) (ArchiveInfo, error) {
	w, err := s.Open(ctx, id, WriterOptions{})
	if err != nil {
		return ArchiveInfo{}, err
	}
	defer w.Close()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return ArchiveInfo{}, err
	}
	defer tx.Rollback()
	rows, err := tx.Query(`SELECT seq, event_json, event_zstd, event_utf8_bytes, created_at FROM transcript_events WHERE session_id = ? ORDER BY seq`, id)
	if err != nil {
		return ArchiveInfo{}, err
	}
	gen := newUUID()
	var jl []byte
	jl = append(jl, `{"kind":"header","version":1,"sessionId":`...)
	jl = llm.AppendJSONString(jl, id)
	jl = append(jl, `,"generation":`...)
	jl = llm.AppendJSONString(jl, gen)
	jl = append(jl, "}\n"...)
	var n, raw, last int64
	dec, _ := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	defer dec.Close()
	for rows.Next() {
		var seq, created int64
		var js, zs []byte
		var ub sql.NullInt64
		if err := rows.Scan(&seq, &js, &zs, &ub, &created); err != nil {
			rows.Close()
			return ArchiveInfo{}, err
		}
		if len(js) == 0 && len(zs) > 0 {
			if js, err = dec.DecodeAll(zs, nil); err != nil {
				rows.Close()
				return ArchiveInfo{}, err
			}
		}
		jl = append(jl, `{"kind":"event","row":{"seq":`...)
		jl = fmt.Appendf(jl, "%d", seq)
		jl = append(jl, `,"event_json":`...)
		jl = llm.AppendJSONString(jl, js)
		jl = fmt.Appendf(jl, `,"created_at":%d}}`+"\n", created)
		n++
		raw += int64(len(js))
		last = seq
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return ArchiveInfo{}, err
	}
	if n == 0 {
		return ArchiveInfo{}, fmt.Errorf("%w: %s", ErrNoSession, id)
	}
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderCRC(true), zstd.WithEncoderConcurrency(1))
	blob := enc.EncodeAll(jl, nil)
	enc.Close()
	sum := sha256.Sum256(blob)
	sha := hex.EncodeToString(sum[:])
	name := sha + ".jsonl.zst"
	if _, err := tx.Exec(`INSERT INTO session_transcript_cold_archives (session_id, generation, archive_name, archive_sha256, event_count, raw_bytes, archive_bytes, last_seq, archived_at, storage, archive_blob)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'sqlite', ?)`, id, gen, name, sha, n, raw, len(blob), last, time.Now().UnixMilli(), blob); err != nil {
		return ArchiveInfo{}, err
	}
	if _, err := tx.Exec(`DELETE FROM transcript_event_identities WHERE session_id = ?`, id); err != nil {
		return ArchiveInfo{}, err
	}
	if _, err := tx.Exec(`DELETE FROM transcript_events WHERE session_id = ?`, id); err != nil {
		return ArchiveInfo{}, err
	}
	if err := tx.Commit(); err != nil {
		return ArchiveInfo{}, err
	}
	return ArchiveInfo{Location: "sqlite:" + name, Events: n, RawBytes: raw, Bytes: int64(len(blob))}, nil
}
