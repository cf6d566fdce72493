//go:build unix

package transcript

import (
	"errors"
	"os"
	"syscall"
)

// lockFile takes an exclusive, non-blocking flock on f. The lock belongs to
// the open file description: a second open of the same path, in this or any
// process, cannot take it until f is closed or the process dies.
func lockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return ErrLocked
		}
		return err
	}
}

// unlockFile releases f's flock explicitly before f is closed. Closing
// alone is not enough: a child process between fork and exec (any
// os/exec start in this process) holds a copy of every descriptor, and
// the lock lasts until the last copy of its open file description is
// closed, so the next writer of the session would get ErrLocked.
// LOCK_UN releases the description's lock whoever else still refers to it.
func unlockFile(f *os.File) {
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}

func identOf(fi os.FileInfo) fileIdent {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileIdent{}
	}
	return fileIdent{dev: uint64(st.Dev), ino: uint64(st.Ino), size: uint64(st.Size),
		mtimeNs: fi.ModTime().UnixNano(), ctimeNs: ctimeNs(st), ok: true}
}
