package transcript

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/zstd"
	"github.com/ocbench/ocbench/llm"
	"github.com/valyala/fastjson"
)

// Durability says when a Writer flushes appended entries to stable storage.
type Durability uint8

const (
	// SyncEntry flushes (fdatasync) after every entry, before Append
	// returns: an acknowledged entry survives a crash of the machine.
	SyncEntry Durability = iota
	// SyncTurn flushes when EndTurn (or Sync, or Close) is called.
	SyncTurn
	// SyncNone never flushes explicitly; entries survive a crash of the
	// process (they are in the kernel once Append returns) but not
	// necessarily one of the machine.
	SyncNone
)

var durabilityNames = [...]string{SyncEntry: "entry", SyncTurn: "turn", SyncNone: "none"}

func (d Durability) String() string {
	if int(d) < len(durabilityNames) {
		return durabilityNames[d]
	}
	return "unknown"
}

// WriterOptions configure OpenWriter.
type WriterOptions struct {
	Durability Durability
	// SessionID and Cwd go into the header of a new file. An empty
	// SessionID gets a random UUIDv4, as OpenClaw's sessionId.
	SessionID string
	Cwd       string
	// MaxLineSize bounds the lines read during recovery and the entries
	// appended; zero means DefaultMaxLineSize.
	MaxLineSize int
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// MaxSessionBytes bounds the session's stored size: an Append past it
	// fails with a *SizeLimitError (ErrSessionTooLarge) and writes nothing.
	// Zero means no limit.
	MaxSessionBytes int64
}

// Recovery reports what OpenWriter found and repaired.
type Recovery struct {
	Created bool // the file was new (or empty) and got a header
	// Torn is set when the last line was an incomplete append. Its bytes
	// were moved to SideFile (<file>.torn-<n>) and the file truncated at
	// TornOffset; nothing is silently dropped.
	Torn       bool
	TornOffset int64
	TornBytes  int64
	SideFile   string
	// AddedNewline is set when the last entry was complete but lacked its
	// newline, which was appended.
	AddedNewline bool
	// BadLines counts malformed lines that were skipped (and kept in the
	// file, unless the file was migrated).
	BadLines int64
	// MigratedFrom is the version the file was rewritten from (1 or 2), as
	// pi rewrites old files on open; 0 when not migrated.
	MigratedFrom int
	Entries      int64 // entries in the file after recovery
	// StaleTemps lists the temporary files of a rotation or migration that
	// a crash left behind; OpenWriter removed them (the live file and the
	// finished archives are complete without them).
	StaleTemps []string
}

// Writer appends entries to one session file. It holds an exclusive lock
// on the file (on Linux a byte of the directory's .ocbench-locks file,
// hashed from the file's name, under an open-file-description lock;
// elsewhere a flock on the side file <file>.flock; either survives the
// renames of migration and rotation, and is kept apart from the <file>.lock
// of OpenClaw's own lock-file protocol) from OpenWriter to Close, so two
// writers, in one process or several, never interleave: the second gets
// ErrLocked. Every entry is one write(2) of one line on a file opened with
// O_APPEND; a failed write is cut back off the file. A Writer is safe for
// concurrent use.
type Writer struct {
	mu    sync.Mutex
	path  string
	opts  WriterOptions
	lock  sessionLock
	f     *os.File
	size  int64
	hdr   Header
	rec   Recovery
	leaf  []byte
	ids   map[uint64]struct{}
	buf   []byte
	dirty bool // written since the last sync
	// newFile: the file was created and its directory not yet flushed.
	newFile bool
	err     error
	id      []byte
	vp      fastjson.Parser
	// store, for a writer a DirStore opened: Close parks the handle there.
	store *DirStore
	// cleanTemps: the first open removes stale temporary files (stale).
	cleanTemps bool
	stale      []string
	// known is f's state since the last change through w, as fstat gave
	// it to State or as DirStore.resume found it (zero: unknown); lockID
	// the lock file's, as resume found it.
	known, lockID fileIdent
}

// LockedError is returned by OpenWriter when the session file is locked
// by another writer. It matches ErrLocked with errors.Is.
type LockedError struct{ Path string }

func (e *LockedError) Error() string { return "transcript: " + e.Path + " is locked by another writer" }

func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// OpenWriter opens (or creates) the session file at path for appending,
// takes its lock, and recovers it: a torn last line is moved to a side file
// (see Recovery), a version 1 or 2 file is rewritten as version 3, an empty
// file gets a header. A file that is not a session file is left untouched
// and the error wraps ErrNotSession.
func OpenWriter(path string, opts WriterOptions) (*Writer, error) {
	if opts.MaxLineSize <= 0 {
		opts.MaxLineSize = DefaultMaxLineSize
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	lk, err := openSessionLock(path)
	if err != nil {
		return nil, err
	}
	if err := lk.lock(); err != nil {
		lk.close()
		if errors.Is(err, ErrLocked) {
			return nil, &LockedError{Path: path}
		}
		return nil, err
	}
	w := &Writer{path: path, opts: opts, lock: lk, ids: make(map[uint64]struct{}), cleanTemps: true}
	if err := w.open(); err != nil {
		w.closeFiles()
		return nil, err
	}
	w.rec.StaleTemps = w.stale
	w.stale = nil
	return w, nil
}

// removeStaleTemps removes what a crash during Rotate or a migration leaves
// (<file>.rotate-tmp, <file>.migrate-tmp, <file>.archive-<n>.zst.tmp). It
// runs under the lock, so no other writer is using them; only regular
// files are removed.
func removeStaleTemps(path string) []string {
	cands := []string{path + ".rotate-tmp", path + ".migrate-tmp"}
	// Rotate writes <file>.archive-<n>.zst.tmp for the first n without an
	// archive, so that is the one name to check. Listing the directory
	// instead (a glob) cost every open time and allocations in proportion
	// to the number of sessions sharing the directory.
	for n := 1; n <= 100000; n++ {
		archive := path + ".archive-" + strconv.Itoa(n) + ".zst"
		if _, err := os.Lstat(archive); errors.Is(err, os.ErrNotExist) {
			cands = append(cands, archive+".tmp")
			break
		}
	}
	var removed []string
	for _, c := range cands {
		if fi, err := os.Lstat(c); err == nil && fi.Mode().IsRegular() && os.Remove(c) == nil {
			removed = append(removed, c)
		}
	}
	if len(removed) > 0 {
		syncDir(path)
	}
	return removed
}

func (w *Writer) closeFiles() {
	if w.f != nil {
		w.f.Close()
		w.f = nil
	}
	if w.lock.valid() {
		w.lock.unlock()
		w.lock.close()
		w.lock = sessionLock{}
	}
}

// open opens the file, scans it and repairs it.
func (w *Writer) open() error {
	w.known = fileIdent{}
	f, err := os.OpenFile(w.path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	w.f = f
	st, err := f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	if w.cleanTemps {
		// A rotation or migration runs beside a live file that has its
		// header; a new (empty) file has none to clean up.
		w.cleanTemps = false
		if size > 0 {
			w.stale = removeStaleTemps(w.path)
		}
	}
	clear(w.ids)
	w.leaf = w.leaf[:0]
	w.hdr, w.rec = Header{}, Recovery{}
	if size > 0 { // a new (empty) file has nothing to scan
		r := NewReader(io.NewSectionReader(f, 0, size), Options{MaxLineSize: w.opts.MaxLineSize, KeepUnknown: true, SkipContent: true})
		var n int64
		var at appendTracker
		for r.Next() {
			e := r.Entry()
			w.addID(e.ID)
			at.step(e, r.Header().Version)
			n++
		}
		w.leaf = append(w.leaf[:0], at.id...)
		if err := r.Err(); err != nil {
			return err
		}
		rst := r.Stats()
		w.hdr = r.Header()
		w.rec = Recovery{BadLines: rst.BadLines, Entries: n}
		if rst.Torn {
			if err := w.setAsideTorn(rst.TornOffset, size); err != nil {
				return err
			}
			size = rst.TornOffset
		}
	}
	w.size = size
	if w.hdr.Version == 0 {
		// Empty, blank, or only a torn header: start the file afresh.
		if size > 0 {
			if err := f.Truncate(0); err != nil {
				return err
			}
			w.size = 0
		}
		w.hdr = Header{Version: 3, ID: w.opts.SessionID, Cwd: w.opts.Cwd, Timestamp: w.opts.Now().UnixMilli()}
		if w.hdr.ID == "" {
			w.hdr.ID = newUUID()
		}
		w.buf = append(appendHeaderJSON(w.buf[:0], &w.hdr), '\n')
		if err := w.write(w.buf); err != nil {
			return err
		}
		// The new file (and its directory entry) is flushed under the
		// policy: at once under SyncEntry, with the turn's entries under
		// SyncTurn, never under SyncNone.
		w.newFile = true
		if w.opts.Durability == SyncEntry {
			if err := w.syncLocked(); err != nil {
				return err
			}
		}
		w.rec.Created = true
		return nil
	}
	if w.hdr.Version < 3 {
		from := w.hdr.Version
		if err := w.migrate(); err != nil {
			return fmt.Errorf("transcript: migrating %s from version %d: %w", w.path, from, err)
		}
		w.rec.MigratedFrom = from
		return nil
	}
	if w.size > 0 {
		var last [1]byte
		if _, err := f.ReadAt(last[:], w.size-1); err != nil {
			return err
		}
		if last[0] != '\n' {
			if err := w.write([]byte{'\n'}); err != nil {
				return err
			}
			w.rec.AddedNewline = true
		}
	}
	return nil
}

// setAsideTorn copies the bytes from off to size into a new side file
// <path>.torn-<n>, flushes it, then truncates the session file at off.
func (w *Writer) setAsideTorn(off, size int64) error {
	var side *os.File
	var name string
	for n := 1; ; n++ {
		name = fmt.Sprintf("%s.torn-%d", w.path, n)
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			side = f
			break
		}
		if !errors.Is(err, os.ErrExist) || n > 10000 {
			return err
		}
	}
	_, err := io.Copy(side, io.NewSectionReader(w.f, off, size-off))
	if err == nil {
		err = side.Sync()
	}
	if cerr := side.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	syncDir(w.path)
	if err := w.f.Truncate(off); err != nil {
		return err
	}
	if err := syncData(w.f); err != nil {
		return err
	}
	w.rec.Torn = true
	w.rec.TornOffset = off
	w.rec.TornBytes = size - off
	w.rec.SideFile = name
	return nil
}

// migrate rewrites a version 1 or 2 file as version 3, as pi does on open:
// ids and parentIds for v1, firstKeptEntryIndex -> firstKeptEntryId,
// hookMessage -> custom. Unknown fields are kept; malformed lines dropped.
func (w *Writer) migrate() error {
	tmp := w.path + ".migrate-tmp"
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	r := NewReader(io.NewSectionReader(w.f, 0, w.size), Options{MaxLineSize: w.opts.MaxLineSize, KeepUnknown: true, RawMessages: true})
	var a fastjson.Arena
	var idp fastjson.Parser
	var buf, ids []byte
	wroteHeader := false
	var werr error
	put := func(v *fastjson.Value) {
		buf = append(llm.AppendJSONValue(buf[:0], v), '\n')
		if werr == nil {
			_, werr = out.Write(buf)
		}
	}
	header := func() {
		// The header as written, with version 3: pi keeps a v1 header's
		// extra fields (provider, modelId, thinkingLevel).
		var p fastjson.Parser
		v, err := p.ParseBytes(r.hdrRaw)
		if err != nil {
			h := r.Header()
			h.Version = 3
			buf = append(appendHeaderJSON(buf[:0], &h), '\n')
		} else {
			var ha fastjson.Arena
			v.Set("version", ha.NewNumberInt(3))
			buf = append(llm.AppendJSONValue(buf[:0], v), '\n')
		}
		_, werr = out.Write(buf)
		wroteHeader = true
	}
	for r.Next() {
		if !wroteHeader {
			header()
		}
		e, v := r.Entry(), r.cur
		a.Reset()
		// The strings are parsed from JSON text: fastjson's Arena would
		// store them with Go's quoting, which reads back wrong.
		ids = append(llm.AppendJSONString(append(ids[:0], '['), e.ID), ',')
		ids = append(llm.AppendJSONString(append(llm.AppendJSONString(ids, e.ParentID), ','), e.FirstKeptEntryID), ']')
		sv, perr := idp.ParseBytes(ids)
		if perr != nil {
			return perr // not reached: the text is AppendJSONString's
		}
		v.Set("id", sv.Get("0"))
		if len(e.ParentID) == 0 {
			v.Set("parentId", a.NewNull())
		} else {
			v.Set("parentId", sv.Get("1"))
		}
		if e.Type == TypeCompaction && v.Get("firstKeptEntryIndex") != nil {
			v.Del("firstKeptEntryIndex")
			if len(e.FirstKeptEntryID) > 0 {
				v.Set("firstKeptEntryId", sv.Get("2"))
			}
		}
		put(v)
	}
	if err := r.Err(); err != nil {
		out.Close()
		return err
	}
	if !wroteHeader && r.Header().Version != 0 {
		header()
	}
	if werr == nil {
		werr = out.Sync()
	}
	if cerr := out.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return werr
	}
	if err := os.Rename(tmp, w.path); err != nil {
		return err
	}
	syncDir(w.path)
	w.f.Close()
	w.f = nil
	prev := w.rec
	if err := w.open(); err != nil {
		return err
	}
	prev.Entries = w.rec.Entries
	w.rec = prev
	return nil
}

func syncDir(path string) {
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
}

func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}

func (w *Writer) addID(id []byte) { w.ids[xxhash.Sum64(id)] = struct{}{} }

func (w *Writer) hasID(id []byte) bool {
	_, ok := w.ids[xxhash.Sum64(id)]
	return ok
}

// write writes b with one write(2) call; on failure it cuts the file back
// to its previous size so that no partial line stays behind.
func (w *Writer) write(b []byte) error {
	w.known = fileIdent{}
	n, err := w.f.Write(b)
	if err != nil {
		if n > 0 {
			if terr := w.f.Truncate(w.size); terr != nil {
				w.err = fmt.Errorf("transcript: write failed (%v) and the partial line could not be removed: %w", err, terr)
				return w.err
			}
		}
		return err
	}
	w.size += int64(n)
	w.dirty = true
	return nil
}

// Path returns the session file's path.
func (w *Writer) Path() string { return w.path }

// Header returns the file's header (version 3 after recovery).
func (w *Writer) Header() Header { return w.hdr }

// Recovery returns what OpenWriter found and repaired.
func (w *Writer) Recovery() Recovery { return w.rec }

// Leaf returns the id of the entry the next Append chains to (the last
// entry of the file after OpenWriter), empty for a file without entries.
func (w *Writer) Leaf() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.leaf)
}

// SetLeaf moves the leaf to an existing entry, so that the next Append
// starts a branch there (pi's branch). An empty id makes the next entry a
// root.
func (w *Writer) SetLeaf(id string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if id != "" && !w.hasID([]byte(id)) {
		return fmt.Errorf("transcript: no entry %q in %s", id, w.path)
	}
	w.leaf = append(w.leaf[:0], id...)
	return nil
}

// Append writes e as the next entry and returns its id. An empty e.ID gets
// a fresh 8-hex-digit id, unique in the file; e.ParentID is ignored and set
// to the current leaf; a zero e.Timestamp becomes now. e itself is not
// modified. Under SyncEntry the entry is on stable storage when Append
// returns.
func (w *Writer) Append(e *Entry) (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return "", ErrClosed
	}
	if w.err != nil {
		return "", w.err
	}
	if e.Type == TypeUnknown || e.Type >= numEntryTypes {
		return "", fmt.Errorf("%w: type %v", ErrBadEntry, e.Type)
	}
	if e.Type == TypeMessage && e.Message == nil && !w.valid(e.MessageJSON) {
		return "", fmt.Errorf("%w: message JSON", ErrBadEntry)
	}
	for _, raw := range [...][]byte{e.Data, e.Details, e.Content} {
		if len(raw) > 0 && !w.valid(raw) {
			return "", fmt.Errorf("%w: raw field is not JSON", ErrBadEntry)
		}
	}
	ce := *e
	if len(ce.ID) == 0 {
		w.id = w.newID(w.id[:0])
		ce.ID = w.id
	}
	ce.ParentID = w.leaf
	if ce.Timestamp == 0 {
		ce.Timestamp = w.opts.Now().UnixMilli()
	}
	w.buf = append(AppendEntryJSON(w.buf[:0], &ce), '\n')
	if len(w.buf)-1 > w.opts.MaxLineSize {
		return "", &LineTooLongError{Limit: w.opts.MaxLineSize, Offset: w.size}
	}
	if lim := w.opts.MaxSessionBytes; lim > 0 && w.size+int64(len(w.buf)) > lim {
		return "", &SizeLimitError{Size: w.size, Entry: int64(len(w.buf)), Limit: lim}
	}
	if err := w.write(w.buf); err != nil {
		return "", err
	}
	if w.opts.Durability == SyncEntry {
		if err := w.syncLocked(); err != nil {
			return "", err
		}
	}
	w.addID(ce.ID)
	w.leaf = append(w.leaf[:0], ce.ID...)
	w.rec.Entries++
	return string(ce.ID), nil
}

// AppendMessage appends a message entry holding m.
func (w *Writer) AppendMessage(m *llm.Message) (string, error) {
	return w.Append(&Entry{Type: TypeMessage, Message: m, Timestamp: m.Timestamp})
}

// newID appends a random 8-hex-digit id not yet used in the file.
func (w *Writer) newID(dst []byte) []byte {
	for {
		dst = appendHex8(dst[:0], int64(mrand.Uint32()))
		if !w.hasID(dst) {
			return dst
		}
	}
}

// valid reports whether b is one JSON value (called with w.mu held).
func (w *Writer) valid(b []byte) bool {
	_, err := w.vp.ParseBytes(b)
	return err == nil
}

// EndTurn marks the end of a turn: under SyncTurn it flushes the entries
// appended since the last flush. Under the other policies it does nothing.
func (w *Writer) EndTurn() error {
	if w.opts.Durability != SyncTurn {
		return nil
	}
	return w.Sync()
}

// Sync flushes everything appended so far, whatever the policy.
func (w *Writer) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return ErrClosed
	}
	return w.syncLocked()
}

func (w *Writer) syncLocked() error {
	if !w.dirty {
		return nil
	}
	if err := syncData(w.f); err != nil {
		return err
	}
	if w.newFile {
		syncDir(w.path) // the file's name, once
		w.newFile = false
	}
	w.dirty = false
	return nil
}

// Close flushes (except under SyncNone), closes the file and releases the
// lock.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return ErrClosed
	}
	if w.store != nil {
		return w.store.park(w)
	}
	var err error
	if w.opts.Durability != SyncNone {
		err = w.syncLocked()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	w.f = nil
	w.lock.unlock()
	w.lock.close()
	w.lock = sessionLock{}
	return err
}

// Rotate archives the session file after a compaction: the whole current
// file is compressed into a new <file>.archive-<n>.zst (which OpenFile
// reads like the original), and the live file is replaced by a version-3
// file holding only the active branch (from the leaf back to the root)
// starting at the latest compaction's first kept entry; the first kept
// entry becomes the root. Without a compaction on the branch, the whole
// branch is kept (dead branches move to the archive). The context the file
// gives (LoadContext) is unchanged. Every step goes through a temporary file
// and a rename, so a crash leaves either the old or the new file. Rotate
// returns the archive's path.
func (w *Writer) Rotate() (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return "", ErrClosed
	}
	if err := w.syncLocked(); err != nil {
		return "", err
	}
	keep, err := w.keptOrdinals()
	if err != nil {
		return "", err
	}
	// 1. The archive.
	var archive string
	for n := 1; ; n++ {
		archive = fmt.Sprintf("%s.archive-%d.zst", w.path, n)
		if _, err := os.Lstat(archive); errors.Is(err, os.ErrNotExist) {
			break
		}
		if n > 100000 {
			return "", fmt.Errorf("transcript: no free archive name for %s", w.path)
		}
	}
	if err := compressFile(io.NewSectionReader(w.f, 0, w.size), archive); err != nil {
		return "", err
	}
	// 2. The new live file.
	tmp := w.path + ".rotate-tmp"
	if err := w.writeKept(tmp, keep); err != nil {
		os.Remove(tmp)
		return "", err
	}
	if err := os.Rename(tmp, w.path); err != nil {
		os.Remove(tmp)
		return "", err
	}
	syncDir(w.path)
	w.f.Close()
	w.f = nil
	leaf := string(w.leaf)
	rec := w.rec
	if err := w.open(); err != nil {
		w.err = err
		return archive, err
	}
	rec.Entries = w.rec.Entries
	w.rec = rec
	if leaf != "" && w.hasID([]byte(leaf)) {
		w.leaf = append(w.leaf[:0], leaf...)
	}
	return archive, nil
}

// keptOrdinals returns, in file order, the ordinals of the entries Rotate
// keeps.
func (w *Writer) keptOrdinals() (map[int32]bool, error) {
	r := NewReader(io.NewSectionReader(w.f, 0, w.size), Options{MaxLineSize: w.opts.MaxLineSize, KeepUnknown: true, RawMessages: true})
	byID := make(map[string]int32)
	var parents []string
	var types []EntryType
	firstKept := make(map[int32]string)
	for r.Next() {
		e := r.Entry()
		ord := int32(len(parents))
		byID[string(e.ID)] = ord
		parents = append(parents, string(e.ParentID))
		types = append(types, e.Type)
		if e.Type == TypeCompaction {
			firstKept[ord] = string(e.FirstKeptEntryID)
		}
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	var path []int32 // leaf -> root
	if len(parents) > 0 {
		cur := int32(len(parents) - 1)
		if len(w.leaf) > 0 {
			if l, ok := byID[string(w.leaf)]; ok {
				cur = l
			}
		}
		seen := make(map[int32]bool)
		for cur >= 0 && !seen[cur] {
			seen[cur] = true
			path = append(path, cur)
			p, ok := byID[parents[cur]]
			if parents[cur] == "" || !ok {
				break
			}
			cur = p
		}
	}
	// Find the latest compaction (closest to the leaf) and its first kept entry.
	start := len(path) - 1 // index in path (leaf -> root) of the new root
	for i, ord := range path {
		if types[ord] != TypeCompaction {
			continue
		}
		start = i
		for j := i + 1; j < len(path); j++ {
			if byIDName(byID, path[j], firstKept[ord]) {
				start = j
				break
			}
		}
		break
	}
	keep := make(map[int32]bool, start+1)
	for i := 0; i <= start && i < len(path); i++ {
		keep[path[i]] = true
	}
	return keep, nil
}

func byIDName(byID map[string]int32, ord int32, id string) bool {
	if id == "" {
		return false
	}
	o, ok := byID[id]
	return ok && o == ord
}

// writeKept writes the header and the kept entries, verbatim, to tmp; the
// first kept entry loses its parent.
func (w *Writer) writeKept(tmp string, keep map[int32]bool) error {
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	r := NewReader(io.NewSectionReader(w.f, 0, w.size), Options{MaxLineSize: w.opts.MaxLineSize, KeepUnknown: true, RawMessages: true})
	var a fastjson.Arena
	var buf []byte
	var werr error
	first, wroteHeader := true, false
	for ord := int32(0); r.Next() && werr == nil; ord++ {
		if !wroteHeader {
			// The header line as it is (version 3 since OpenWriter).
			buf = append(append(buf[:0], r.hdrRaw...), '\n')
			_, werr = out.Write(buf)
			wroteHeader = true
		}
		if !keep[ord] {
			continue
		}
		if first {
			first = false
			a.Reset()
			r.cur.Set("parentId", a.NewNull())
			buf = append(llm.AppendJSONValue(buf[:0], r.cur), '\n')
		} else {
			buf = append(append(buf[:0], r.raw...), '\n')
		}
		_, werr = out.Write(buf)
	}
	if werr == nil {
		werr = r.Err()
	}
	if werr == nil && !wroteHeader {
		h := w.hdr
		h.Version = 3
		_, werr = out.Write(append(appendHeaderJSON(nil, &h), '\n'))
	}
	if werr == nil {
		werr = out.Sync()
	}
	if cerr := out.Close(); werr == nil {
		werr = cerr
	}
	return werr
}

// compressFile writes src zstd-compressed to name, through a temporary file
// and a rename.
func compressFile(src io.Reader, name string) error {
	tmp := name + ".tmp"
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	enc, err := zstd.NewWriter(out, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(1<<20))
	if err == nil {
		_, err = io.Copy(enc, src)
		if cerr := enc.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, name)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	syncDir(name)
	return nil
}
