//go:build linux

package prompt

import (
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"unsafe"
)

// The memo's warm check stats every file a prompt depends on: 13 system
// calls for the sample workspace, the largest part of a warm run's setup.
// On Linux the directories holding those files are watched with inotify
// instead, once the memo is made: a warm check then reads the watch queue
// (one read that finds it empty) and stats only the workspace's own path
// (its parents may be renamed without an event on it) and the files the
// watches cannot vouch for. Any event on a watched directory (a file in it
// created, written, truncated, touched, renamed or removed, the directory
// itself moved or removed) sends the memo back to the full stat check,
// which re-arms it when nothing it depends on changed after all (a
// write into the workspace by a tool, say).
//
// A file is vouched for by the watch of its directory only when the path
// from the workspace to it holds no symlink (an edit of a symlink's target
// elsewhere raises no event here) and the workspace's file system reports
// every change to the kernel of this machine (not a network or FUSE file
// system, whose remote writers inotify cannot see). Writes through a
// shared mapping raise no event either; they are not a way these files
// are edited.

// watcher is the process's inotify instance.
type watcher struct {
	mu    sync.Mutex
	fd    int              // -1: inotify unavailable
	gens  map[int32]uint64 // per watch: bumped by every event on it
	dead  map[int32]bool   // watches the kernel dropped (IN_IGNORED)
	epoch uint64           // bumped when the queue overflowed
	buf   [8192]byte
}

// watchSet is a memo's arming: its watches and their generations when the
// stat check last found every dependency unchanged.
type watchSet struct {
	wds   []int32
	gens  []uint64
	epoch uint64
	// stat are the dependencies (indexes into promptMemo.deps, after the
	// workspace) that no watch vouches for: stat'ed on every check.
	stat []int
}

const (
	maxWatches = 4096
	watchMask  = syscall.IN_MODIFY | syscall.IN_ATTRIB | syscall.IN_CLOSE_WRITE | syscall.IN_CREATE |
		syscall.IN_DELETE | syscall.IN_MOVED_FROM | syscall.IN_MOVED_TO | syscall.IN_DELETE_SELF |
		syscall.IN_MOVE_SELF | syscall.IN_ONLYDIR
)

var theWatcher = sync.OnceValue(func() *watcher {
	w := &watcher{fd: -1, gens: map[int32]uint64{}, dead: map[int32]bool{}}
	if fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC); err == nil {
		w.fd = fd
	}
	return w
})

// localFS lists the file systems (statfs f_type) whose changes all pass
// through this kernel: ext2-4, xfs, btrfs, tmpfs, overlayfs, f2fs, zfs,
// bcachefs, ramfs.
var localFS = map[int64]bool{0xEF53: true, 0x58465342: true, 0x9123683E: true, 0x01021994: true,
	0x794c7630: true, 0xF2F52010: true, 0x2fc12fc1: true, 0xca451a4e: true, 0x858458f6: true}

// arm watches the directories of m's dependencies and returns the arming,
// or nil when nothing can be watched. The caller verifies every dependency
// by stat after arm returns (so that a change before the watches existed
// is seen) before it uses the arming.
func (m *promptMemo) arm() *watchSet {
	w := theWatcher()
	if w.fd < 0 || len(m.deps) < 2 || !m.deps[0].ok || !m.deps[0].sig.isDir() {
		return nil
	}
	ws := string(m.deps[0].pathZ[:len(m.deps[0].pathZ)-1])
	var sfs syscall.Statfs_t
	if syscall.Statfs(ws, &sfs) != nil || !localFS[int64(sfs.Type)] {
		return nil
	}
	dirs := map[string]bool{}
	set := &watchSet{}
	for i := 1; i < len(m.deps); i++ {
		d := &m.deps[i]
		rel := ""
		if d.relZ != nil {
			rel = string(d.relZ[:len(d.relZ)-1])
		}
		if rel == "" || !plainBelow(ws, rel) {
			set.stat = append(set.stat, i)
			continue
		}
		dirs[filepath.Dir(filepath.Join(ws, rel))] = true
		if d.ok && d.sig.isDir() {
			dirs[filepath.Join(ws, rel)] = true
		}
	}
	if len(dirs) == 0 {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.drainLocked()
	for dir := range dirs {
		if len(w.gens) >= maxWatches {
			return nil
		}
		wd, err := syscall.InotifyAddWatch(w.fd, dir, watchMask)
		if err != nil {
			return nil
		}
		id := int32(wd)
		if w.dead[id] { // a number the kernel gave out again
			delete(w.dead, id)
			w.gens[id]++
		}
		if _, ok := w.gens[id]; !ok {
			w.gens[id] = 0
		}
		set.wds = append(set.wds, id)
		set.gens = append(set.gens, w.gens[id])
	}
	set.epoch = w.epoch
	return set
}

// plainBelow reports whether every directory between ws and ws/rel is a
// directory (no symlink) and rel's last element is not a symlink.
func plainBelow(ws, rel string) bool {
	p := ws
	for part := range strings.SplitSeq(filepath.ToSlash(rel), "/") {
		if part == "" || part == "." || part == ".." {
			return false
		}
		p = filepath.Join(p, part)
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil {
			return err == syscall.ENOENT // the rest does not exist: its creation is an event
		}
		if st.Mode&syscall.S_IFMT == syscall.S_IFLNK {
			return false
		}
	}
	return true
}

// quiet reports whether no event touched set's watches since it was armed.
func (w *watcher) quiet(set *watchSet) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.drainLocked()
	if w.epoch != set.epoch {
		return false
	}
	for i, wd := range set.wds {
		if w.dead[wd] || w.gens[wd] != set.gens[i] {
			return false
		}
	}
	return true
}

// rearm returns set with the generations its watches have now (events
// drained first), or nil when the kernel dropped one of them. Taken before
// the stat check that re-validates a memo, it misses no later event.
func rearm(set *watchSet) *watchSet {
	w := theWatcher()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.drainLocked()
	s := &watchSet{wds: set.wds, gens: make([]uint64, len(set.wds)), epoch: w.epoch, stat: set.stat}
	for i, wd := range set.wds {
		if w.dead[wd] {
			return nil
		}
		s.gens[i] = w.gens[wd]
	}
	return s
}

// drainLocked reads every queued event (the fd does not block).
func (w *watcher) drainLocked() {
	for {
		n, err := syscall.Read(w.fd, w.buf[:])
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return // the queue is empty
		case err != nil || n <= 0:
			// Events may be left unread: trust no arming made before.
			w.epoch++
			return
		}
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			ev := (*syscall.InotifyEvent)(unsafe.Pointer(&w.buf[off]))
			switch {
			case ev.Mask&syscall.IN_Q_OVERFLOW != 0:
				w.epoch++
			case ev.Mask&syscall.IN_IGNORED != 0:
				w.gens[ev.Wd]++
				w.dead[ev.Wd] = true
			default:
				w.gens[ev.Wd]++
			}
			off += syscall.SizeofInotifyEvent + int(ev.Len)
		}
	}
}

// watched is the warm check with an arming: the workspace's path and the
// unwatched dependencies by stat, the rest by the watch queue. ok is false
// when set cannot decide (an event came): check by stat then.
func (m *promptMemo) watched(set *watchSet, dirfd int) (current, ok bool) {
	for _, i := range set.stat {
		if !m.deps[i].current(dirfd) {
			return false, true
		}
	}
	return true, theWatcher().quiet(set)
}

const haveWatcher = true
