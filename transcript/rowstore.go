package transcript

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fastjson"
)

// RowBranch is the writer state a store that keeps one row per entry
// needs beside its rows: the session's header, what opening it recovered,
// the entry ids it holds, the leaf the next append continues, the stored
// size and the scratch buffers of an append. The SQLite store uses it, so
// does the PostgreSQL store of package transcript/pgstore, and an
// embedder's own store may. Embed it in the writer; it supplies Header,
// Recovery, Leaf and SetLeaf of SessionWriter.
//
// Lock guards the branch and the writer's appends: an Append holds it from
// Prepare to Appended.
type RowBranch struct {
	mu    sync.Mutex
	id    string
	hdr   Header
	rec   Recovery
	leaf  []byte
	ids   map[uint64]struct{}
	size  int64
	buf   []byte
	idBuf []byte
	vp    fastjson.Parser
}

// NewRowBranch returns the state of session id before its rows are read.
func NewRowBranch(id string) RowBranch {
	return RowBranch{id: id, ids: make(map[uint64]struct{})}
}

func (b *RowBranch) Lock()   { b.mu.Lock() }
func (b *RowBranch) Unlock() { b.mu.Unlock() }

// ID is the session id.
func (b *RowBranch) ID() string { return b.id }

func (b *RowBranch) Header() Header     { return b.hdr }
func (b *RowBranch) Recovery() Recovery { return b.rec }

// Size is the session's stored size in bytes (its JSONL length).
func (b *RowBranch) Size() int64 { return b.size }

func (b *RowBranch) Leaf() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.leaf)
}

func (b *RowBranch) SetLeaf(id string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if id != "" {
		if _, ok := b.ids[IDHash([]byte(id))]; !ok {
			return fmt.Errorf("transcript: no entry %q in session %s", id, b.id)
		}
	}
	b.leaf = append(b.leaf[:0], id...)
	return nil
}

// Recover replays a stored session read by r (opened with KeepUnknown and
// SkipContent): its header, ids, entry count, malformed rows, size, and
// the parent the next append hangs from by OpenClaw's tree rules. It
// closes r. A Header().Version of 0 afterwards means the session has no
// header yet: call NewHeader.
func (b *RowBranch) Recover(r *Reader) error {
	var at appendTracker
	for r.Next() {
		e := r.Entry()
		at.step(e, r.Header().Version)
		b.ids[IDHash(e.ID)] = struct{}{}
		b.rec.Entries++
	}
	b.leaf = append(b.leaf[:0], at.id...)
	err := r.Err()
	b.hdr = r.Header()
	b.size = r.Stats().Bytes
	b.rec.BadLines = r.Stats().BadLines
	r.Close()
	return err
}

// NewHeader makes the header of a new session (version CurrentVersion)
// and returns its JSON row for the caller to store; the branch counts it
// as stored (Recovery().Created): a writer whose header row fails to be
// stored must be discarded.
func (b *RowBranch) NewHeader(now time.Time, cwd string) []byte {
	b.hdr = Header{Version: CurrentVersion, ID: b.id, Cwd: cwd, Timestamp: now.UnixMilli()}
	row := AppendHeaderJSON(nil, &b.hdr, CurrentVersion)
	b.rec.Created = true
	b.size = int64(len(row) + 1)
	return row
}

// Prepare validates e and renders it as its row (one JSON line without
// the newline) with a fresh id chained to the leaf, checking
// opts.MaxLineSize and opts.MaxSessionBytes. The row and id are borrowed
// until the next Prepare. Call it with the lock held, store the row, then
// call Appended.
func (b *RowBranch) Prepare(e *Entry, opts *WriterOptions) (row, id []byte, err error) {
	now, maxLine := opts.Now, opts.MaxLineSize
	if now == nil {
		now = time.Now
	}
	if maxLine <= 0 {
		maxLine = DefaultMaxLineSize
	}
	id, err = prepareEntry(e, b.leaf, b.ids, &b.idBuf, &b.buf, &b.vp, now, maxLine)
	if err != nil {
		return nil, nil, err
	}
	if lim := opts.MaxSessionBytes; lim > 0 && b.size+int64(len(b.buf))+1 > lim {
		return nil, nil, &SizeLimitError{Size: b.size, Entry: int64(len(b.buf)) + 1, Limit: lim}
	}
	return b.buf, id, nil
}

// Appended records a stored row of Prepare: its id becomes the leaf.
func (b *RowBranch) Appended(row, id []byte) {
	b.ids[IDHash(id)] = struct{}{}
	b.leaf = append(b.leaf[:0], id...)
	b.size += int64(len(row)) + 1
	b.rec.Entries++
}

// ValidSessionID rejects ids that could escape a directory or a key space
// (empty, over 200 bytes, with a slash, backslash or NUL, or starting with
// a dot).
func ValidSessionID(id string) error { return validSessionID(id) }

// NewReaderCloser is NewReader whose Close also closes rc (a store's row
// cursor).
func NewReaderCloser(rc io.ReadCloser, opts Options) *Reader {
	r := NewReader(rc, opts)
	r.closers = append(r.closers, rc)
	return r
}

// StoreOpener opens a store by its name, as OpenStore was given it.
type StoreOpener func(ctx context.Context, spec string) (Store, error)

var (
	openersMu sync.RWMutex
	openers   = map[string]StoreOpener{}
)

// RegisterStore makes OpenStore open names of the URL scheme scheme
// ("postgres" for postgres://...) with open, as database/sql drivers
// register: a store package calls it from init, so a program that imports
// the package (for its side effect, with the blank identifier) can open
// such stores by name, and one that does not never compiles it. A second
// registration of a scheme panics.
func RegisterStore(scheme string, open StoreOpener) {
	openersMu.Lock()
	defer openersMu.Unlock()
	if open == nil {
		panic("transcript: RegisterStore of a nil opener")
	}
	if _, dup := openers[scheme]; dup {
		panic("transcript: RegisterStore called twice for scheme " + scheme)
	}
	openers[scheme] = open
}

func storeOpener(scheme string) StoreOpener {
	openersMu.RLock()
	defer openersMu.RUnlock()
	return openers[scheme]
}

// StoreRegistered reports whether a store package registered scheme: is
// OpenStore able to open "scheme://..." names in this program.
func StoreRegistered(scheme string) bool { return storeOpener(scheme) != nil }

// ErrStoreNotLinked is matched by the *StoreNotLinkedError OpenStore
// returns for a store whose package is not in the program.
var ErrStoreNotLinked = errors.New("transcript: store not linked into this program")

// knownStores names the store packages of this module by scheme.
var knownStores = map[string]string{
	"postgres":   "github.com/ocbench/ocbench/transcript/pgstore",
	"postgresql": "github.com/ocbench/ocbench/transcript/pgstore",
}

// StoreNotLinkedError reports a store name whose scheme no linked package
// registered. Import names the package that provides it ("" for a scheme
// unknown to this module).
type StoreNotLinkedError struct {
	Scheme string
	Import string
}

func (e *StoreNotLinkedError) Error() string {
	if e.Import == "" {
		return fmt.Sprintf("transcript: no store is registered for %s:// names (sqlite:PATH, postgres://... or a directory)", e.Scheme)
	}
	return fmt.Sprintf("transcript: the %s store is not linked into this program; import _ %q to open %s:// names", e.Scheme, e.Import, e.Scheme)
}

func (e *StoreNotLinkedError) Is(target error) bool { return target == ErrStoreNotLinked }

// urlScheme returns the scheme of a "scheme://..." name, or "".
func urlScheme(spec string) string {
	i := strings.Index(spec, "://")
	if i <= 0 {
		return ""
	}
	for _, c := range spec[:i] {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.') {
			return ""
		}
	}
	return strings.ToLower(spec[:i])
}
