//go:build linux

package transcript

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"

	"github.com/cespare/xxhash/v2"
)

// On Linux a session's writer lock is a byte of the directory's lock file
// <dir>/.ocbench-locks, at an offset hashed from the session file's name,
// taken with an open-file-description lock (F_OFD_SETLK): it belongs to
// the writer's own open of the lock file, as a flock does, conflicts with
// any other open (in this or another process) and goes when the process
// dies. One lock file per directory means a new session creates one file,
// not two.
const (
	fOFDSetlk   = 37 // F_OFD_SETLK
	lockFileDir = ".ocbench-locks"
)

// sessionLockPath is the file session file path is locked in.
func sessionLockPath(path string) string {
	return filepath.Join(filepath.Dir(path), lockFileDir)
}

// sessionLock is one writer's hold on a session: its own open of the lock
// file and the byte it locks.
type sessionLock struct {
	f   *os.File
	off int64
}

func openSessionLock(path string) (sessionLock, error) {
	f, err := os.OpenFile(sessionLockPath(path), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return sessionLock{}, err
	}
	return sessionLock{f: f, off: int64(xxhash.Sum64String(filepath.Base(path)) >> 2)}, nil
}

func (l sessionLock) fcntl(typ int16) error {
	lk := syscall.Flock_t{Type: typ, Whence: 0, Start: l.off, Len: 1}
	for {
		err := syscall.FcntlFlock(l.f.Fd(), fOFDSetlk, &lk)
		if err == nil {
			return nil
		}
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EACCES) {
			return ErrLocked
		}
		return err
	}
}

// lock takes the session's lock without waiting (ErrLocked when held).
func (l sessionLock) lock() error { return l.fcntl(syscall.F_WRLCK) }

// unlock releases it explicitly, for the reason unlockFile gives: a
// forked child may still hold a copy of the descriptor.
func (l sessionLock) unlock() { _ = l.fcntl(syscall.F_UNLCK) }

func (l sessionLock) close() error { return l.f.Close() }
func (l sessionLock) valid() bool  { return l.f != nil }
