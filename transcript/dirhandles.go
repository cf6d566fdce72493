package transcript

import (
	"container/list"
	"errors"
	"os"
)

// DefaultMaxIdle is how many idle session handles a DirStore keeps open
// when DirStore.MaxIdle is zero.
const DefaultMaxIdle = 256

// A DirStore keeps the handles of sessions it has closed (the open file,
// its lock file, and what the writer knew: header, ids, leaf, size), so
// that the next run of a live session opens it with one flock and two
// stats instead of opening, scanning and recovering the file again. An
// idle handle holds no lock: another process may take the session
// meanwhile. It is reused only when the session file and its lock file
// are still the very files it has open, unchanged since this store last
// wrote them (device, inode, size, modification and change times);
// otherwise it is closed and the session opened afresh.
type dirHandle struct {
	id      string
	lock    sessionLock
	f       *os.File
	ident   fileIdent // of f after the last write
	lockID  fileIdent // of the lock file
	size    int64
	hdr     Header
	leaf    []byte
	ids     map[uint64]struct{}
	entries int64
	buf     []byte
	elem    *list.Element
}

func (h *dirHandle) close() {
	h.lock.unlock()
	h.lock.close()
	h.f.Close()
}

// park is Writer.Close for a writer of a DirStore: the lock is released
// and the handle kept idle (or closed when it cannot be reused).
func (d *DirStore) park(w *Writer) error {
	var err error
	if w.opts.Durability != SyncNone {
		err = w.syncLocked()
	}
	f, lk := w.f, w.lock
	w.f, w.lock = nil, sessionLock{}
	// The file's state after the last write, and the lock file's (which
	// no write changes), stat'ed only when the writer does not know them.
	ident, lockID := w.known, w.lockID
	var ferr, lerr error
	if !ident.ok {
		var fi os.FileInfo
		if fi, ferr = f.Stat(); ferr == nil {
			ident = identOf(fi)
		}
	}
	if !lockID.ok {
		var li os.FileInfo
		if li, lerr = lk.f.Stat(); lerr == nil {
			lockID = identOf(li)
		}
	}
	lk.unlock()
	if err != nil || w.err != nil || ferr != nil || lerr != nil || d.maxIdle() <= 0 {
		f.Close()
		lk.close()
		return err
	}
	h := &dirHandle{id: w.opts.SessionID, lock: lk, f: f, ident: ident, lockID: lockID,
		size: w.size, hdr: w.hdr, leaf: w.leaf, ids: w.ids, entries: w.rec.Entries, buf: w.buf}
	if !h.ident.ok || !h.lockID.ok || h.id == "" {
		h.close()
		return nil
	}
	w.ids, w.leaf, w.buf = nil, nil, nil
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		h.close()
		return nil
	}
	if d.idle == nil {
		d.idle = make(map[string]*dirHandle)
		d.lru.Init()
	}
	if old := d.idle[h.id]; old != nil { // cannot happen under the lock; be safe
		d.lru.Remove(old.elem)
		delete(d.idle, h.id)
		defer old.close()
	}
	h.elem = d.lru.PushFront(h)
	d.idle[h.id] = h
	var evicted []*dirHandle
	for d.lru.Len() > d.maxIdle() {
		e := d.lru.Back()
		old := e.Value.(*dirHandle)
		d.lru.Remove(e)
		delete(d.idle, old.id)
		evicted = append(evicted, old)
	}
	d.mu.Unlock()
	for _, old := range evicted {
		old.close()
	}
	return nil
}

func (d *DirStore) maxIdle() int {
	if d.MaxIdle == 0 {
		return DefaultMaxIdle
	}
	return d.MaxIdle
}

// takeIdle removes session id's idle handle from the pool.
func (d *DirStore) takeIdle(id string) *dirHandle {
	d.mu.Lock()
	defer d.mu.Unlock()
	h := d.idle[id]
	if h != nil {
		d.lru.Remove(h.elem)
		delete(d.idle, id)
	}
	return h
}

// resume makes a writer of an idle handle, or returns nil (having closed
// the handle) when the session changed since it was parked; a session
// locked by another writer is an error matching ErrLocked.
func (d *DirStore) resume(h *dirHandle, path string, opts WriterOptions) (*Writer, error) {
	if err := h.lock.lock(); err != nil {
		h.close()
		if errors.Is(err, ErrLocked) {
			return nil, &LockedError{Path: path}
		}
		return nil, nil
	}
	// Under the lock nobody else writes: the file is ours if the name
	// still leads to the file and lock file we hold, as we left them.
	fi, err := os.Stat(path)
	li, lerr := os.Stat(h.lock.f.Name()) // sessionLockPath(path), as opened
	if err != nil || lerr != nil || identOf(fi) != h.ident || identOf(li) != h.lockID {
		h.close()
		return nil, nil
	}
	w := &Writer{path: path, opts: opts, lock: h.lock, f: h.f, size: h.size, hdr: h.hdr,
		rec: Recovery{Entries: h.entries}, leaf: h.leaf, ids: h.ids, buf: h.buf, store: d,
		known: h.ident, lockID: h.lockID}
	return w, nil
}

// closeIdle closes every idle handle (DirStore.Close).
func (d *DirStore) closeIdle() {
	d.mu.Lock()
	hs := d.idle
	d.idle = nil
	d.lru.Init()
	d.closed = true
	d.mu.Unlock()
	for _, h := range hs {
		h.close()
	}
}

// IdleHandles is the number of idle session handles the store keeps.
func (d *DirStore) IdleHandles() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.idle)
}
