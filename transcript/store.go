package transcript

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ocbench/ocbench/llm"
)

// Store is where sessions live: one contract, three implementations
// (DirStore: JSONL files, the default; SQLiteStore: OpenClaw 2026.9.6's
// per-agent database; package transcript/pgstore: PostgreSQL for many
// gateway nodes, compiled only into programs that import it).
//
//   - Open takes the session's single-writer lock and returns its writer;
//     a second Open of the same session, in any process or node, fails
//     with an error matching ErrLocked until the first is closed (or, in
//     PostgreSQL, until its holder's lease expires).
//   - An entry Append acknowledges is durable under the writer's
//     Durability policy (SyncEntry: on stable storage before Append
//     returns; SyncTurn: at EndTurn; SyncNone: survives a crash of the
//     process, not of the machine) and is never read half-written.
//   - Reader streams a session's entries in order, header first.
//   - Archive moves a session out of the live set (it stays readable and
//     listed as archived; Open refuses it with ErrArchived).
//
// A Store is safe for concurrent use.
type Store interface {
	Open(ctx context.Context, id string, opts WriterOptions) (SessionWriter, error)
	Reader(ctx context.Context, id string, opts Options) (*Reader, error)
	List(ctx context.Context) ([]SessionInfo, error)
	Archive(ctx context.Context, id string) (ArchiveInfo, error)
	// Kind names the implementation: "jsonl", "sqlite" or "postgres".
	Kind() string
	Close() error
}

// SessionWriter appends to one session while holding its lock. *Writer
// (the JSONL writer) is one.
type SessionWriter interface {
	Header() Header
	Leaf() string
	SetLeaf(id string) error
	Append(e *Entry) (string, error)
	AppendMessage(m *llm.Message) (string, error)
	EndTurn() error
	Sync() error
	Recovery() Recovery
	Close() error
}

// SessionInfo describes one stored session.
type SessionInfo struct {
	ID       string
	Entries  int64 // entries (rows or lines) stored, the header excluded
	Bytes    int64
	Updated  time.Time
	Archived *ArchiveInfo
}

// ArchiveInfo says where an archived session went.
type ArchiveInfo struct {
	Location string // a path, or the table and generation
	Events   int64
	RawBytes int64
	Bytes    int64 // compressed
}

// ErrLeaseLost is returned by a writer of a shared store (PostgreSQL)
// whose lease expired and was taken by another writer (or the session
// archived): it must stop.
var ErrLeaseLost = errors.New("transcript: session lease lost to another writer")

// ErrArchived is returned by Store.Open for an archived session.
var ErrArchived = errors.New("transcript: session is archived")

// ErrNoSession is returned (wrapped) for a session the store does not have.
var ErrNoSession = errors.New("transcript: no such session")

// ErrSessionTooLarge is returned (wrapped in a *SizeLimitError) by an
// Append that would take the session past WriterOptions.MaxSessionBytes.
var ErrSessionTooLarge = errors.New("transcript: session size limit reached")

// SizeLimitError reports the session size limit; it matches
// ErrSessionTooLarge.
type SizeLimitError struct {
	Size, Entry, Limit int64
}

func (e *SizeLimitError) Error() string {
	return fmt.Sprintf("transcript: session holds %d bytes; a %d-byte entry would pass the %d-byte limit", e.Size, e.Entry, e.Limit)
}

func (e *SizeLimitError) Is(target error) bool { return target == ErrSessionTooLarge }

// validSessionID rejects ids that could escape a directory or a key space.
func validSessionID(id string) error {
	if id == "" || len(id) > 200 || strings.ContainsAny(id, "/\\\x00") || id == "." || id == ".." || strings.HasPrefix(id, ".") {
		return fmt.Errorf("transcript: invalid session id %q", id)
	}
	return nil
}

// ReadStoreContext returns the context of a stored session's active branch,
// reading it twice as LoadContext does so that memory stays proportional
// to the branch.
func ReadStoreContext(ctx context.Context, s Store, id string) (SessionContext, error) {
	return loadContext(func(o Options) (*Reader, error) { return s.Reader(ctx, id, o) }, id)
}

// DirStore keeps sessions as JSONL files <Dir>/<id>.jsonl (the embedded
// default, and what pi and OpenClaw before 2026.8 use).
//
// It keeps the handles of sessions it closed (at most MaxIdle, least
// recently used first out), so that a live session's next run does not
// open, scan and recover its file again: see Open.
type DirStore struct {
	Dir string
	// MaxIdle bounds the idle session handles kept open (two descriptors
	// each): 0 means DefaultMaxIdle, a negative value keeps none.
	MaxIdle int

	mu     sync.Mutex
	idle   map[string]*dirHandle
	lru    list.List
	closed bool
}

// OpenDirStore returns the JSONL store of dir, creating it.
func OpenDirStore(dir string) (*DirStore, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return &DirStore{Dir: dir}, nil
}

func (d *DirStore) Kind() string { return "jsonl" }

// Close closes the idle session handles; writers still open are closed
// for good when they are.
func (d *DirStore) Close() error { d.closeIdle(); return nil }

// Path returns the file of session id.
func (d *DirStore) Path(id string) string { return filepath.Join(d.Dir, id+".jsonl") }

func (d *DirStore) archivePath(id string) string {
	return filepath.Join(d.Dir, id+".jsonl.archived.zst")
}

func (d *DirStore) Open(ctx context.Context, id string, opts WriterOptions) (SessionWriter, error) {
	if err := validSessionID(id); err != nil {
		return nil, err
	}
	opts.SessionID = id
	if opts.MaxLineSize <= 0 {
		opts.MaxLineSize = DefaultMaxLineSize
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	// A session this store closed and nobody changed since: one flock and
	// two stats, no scan (its live file exists, so it is not archived).
	if h := d.takeIdle(id); h != nil {
		if w, err := d.resume(h, d.Path(id), opts); w != nil || err != nil {
			return w, err
		}
	}
	if _, err := os.Lstat(d.archivePath(id)); err == nil {
		return nil, fmt.Errorf("%w: %s", ErrArchived, id)
	}
	w, err := OpenWriter(d.Path(id), opts)
	if err != nil {
		return nil, err
	}
	w.store = d
	return w, nil
}

func (d *DirStore) Reader(ctx context.Context, id string, opts Options) (*Reader, error) {
	if err := validSessionID(id); err != nil {
		return nil, err
	}
	r, err := OpenFile(d.Path(id), opts)
	if errors.Is(err, os.ErrNotExist) {
		r, err = OpenFile(d.archivePath(id), opts)
	}
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNoSession, id)
	}
	return r, err
}

func (d *DirStore) List(ctx context.Context) ([]SessionInfo, error) {
	des, err := os.ReadDir(d.Dir)
	if err != nil {
		return nil, err
	}
	var out []SessionInfo
	for _, de := range des {
		name := de.Name()
		if !de.Type().IsRegular() {
			continue // links, FIFOs and directories are not sessions
		}
		fi, err := de.Info()
		if err != nil {
			continue
		}
		switch {
		case strings.HasSuffix(name, ".jsonl.archived.zst"):
			id := strings.TrimSuffix(name, ".jsonl.archived.zst")
			out = append(out, SessionInfo{ID: id, Bytes: fi.Size(), Updated: fi.ModTime(),
				Archived: &ArchiveInfo{Location: filepath.Join(d.Dir, name), Bytes: fi.Size()}})
		case strings.HasSuffix(name, ".jsonl"):
			out = append(out, SessionInfo{ID: strings.TrimSuffix(name, ".jsonl"), Bytes: fi.Size(), Updated: fi.ModTime()})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Archive compresses the session into <id>.jsonl.archived.zst and removes
// the live file, under the session's lock.
func (d *DirStore) Archive(ctx context.Context, id string) (ArchiveInfo, error) {
	if err := validSessionID(id); err != nil {
		return ArchiveInfo{}, err
	}
	w, err := d.Open(ctx, id, WriterOptions{})
	if err != nil {
		return ArchiveInfo{}, err
	}
	jw := w.(*Writer)
	jw.store = nil // the live file goes: nothing to keep
	defer jw.Close()
	f, err := os.Open(d.Path(id))
	if err != nil {
		return ArchiveInfo{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ArchiveInfo{}, err
	}
	if err := compressFile(io.LimitReader(f, st.Size()), d.archivePath(id)); err != nil {
		return ArchiveInfo{}, err
	}
	if err := os.Remove(d.Path(id)); err != nil {
		return ArchiveInfo{}, err
	}
	syncDir(d.Path(id))
	zi, _ := os.Stat(d.archivePath(id))
	info := ArchiveInfo{Location: d.archivePath(id), RawBytes: st.Size(), Events: jw.Recovery().Entries}
	if zi != nil {
		info.Bytes = zi.Size()
	}
	return info, nil
}

// randUint32 is a random entry id number.
func randUint32() uint32 { return mrand.Uint32() }

// OpenStore opens a store named the way the command line names one:
// "sqlite:PATH" (OpenClaw's per-agent database), "jsonl:DIR" or a plain
// DIR (JSONL files), or a URL of a store package registered with
// RegisterStore: "postgres://..." or "postgresql://..." once
// github.com/ocbench/ocbench/transcript/pgstore is imported. A URL whose
// store is not linked into the program gives a *StoreNotLinkedError
// (ErrStoreNotLinked) naming the package to import.
func OpenStore(ctx context.Context, spec string) (Store, error) {
	switch {
	case strings.HasPrefix(spec, "sqlite:"):
		return OpenSQLiteStore(strings.TrimPrefix(spec, "sqlite:"), SQLiteOptions{})
	case strings.HasPrefix(spec, "jsonl:"):
		return OpenDirStore(strings.TrimPrefix(spec, "jsonl:"))
	case spec == "":
		return nil, errors.New("transcript: empty store name (sqlite:PATH, postgres://..., or a directory)")
	}
	if scheme := urlScheme(spec); scheme != "" {
		if open := storeOpener(scheme); open != nil {
			return open(ctx, spec)
		}
		return nil, &StoreNotLinkedError{Scheme: scheme, Import: knownStores[scheme]}
	}
	return OpenDirStore(spec)
}

// NewSessionID returns a fresh session id (a UUIDv4, as OpenClaw's).
func NewSessionID() string { return newUUID() }

// OpenJSONL streams a stored session as JSONL text (the header line, then
// one line per entry), in constant memory: a JSONL file as it is, the rows
// of a database store as lines. The gateway serves sessions with it.
func OpenJSONL(ctx context.Context, s Store, id string) (io.ReadCloser, error) {
	if err := validSessionID(id); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoSession, err)
	}
	switch st := s.(type) {
	case *DirStore:
		f, err := os.Open(st.Path(id))
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s", ErrNoSession, id)
		}
		return f, err
	}
	r, err := s.Reader(ctx, id, Options{})
	if err != nil {
		return nil, err
	}
	// The Reader's source is the JSONL stream; read it directly.
	return &rawStream{r: r}, nil
}

type rawStream struct{ r *Reader }

func (s *rawStream) Read(b []byte) (int, error) { return s.r.br.Read(b) }
func (s *rawStream) Close() error               { return s.r.Close() }

// SizeJSONL returns the length of OpenJSONL's stream (one pass over it).
func SizeJSONL(ctx context.Context, s Store, id string) (int64, error) {
	rc, err := OpenJSONL(ctx, s, id)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	return io.Copy(io.Discard, rc)
}
