//go:build !linux

package transcript

import "os"

// Elsewhere a session's writer lock is a flock on the side file
// <file>.flock (see lock_unix.go and lock_other.go).

func sessionLockPath(path string) string { return path + ".flock" }

type sessionLock struct{ f *os.File }

func openSessionLock(path string) (sessionLock, error) {
	f, err := os.OpenFile(sessionLockPath(path), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return sessionLock{}, err
	}
	return sessionLock{f: f}, nil
}

func (l sessionLock) lock() error  { return lockFile(l.f) }
func (l sessionLock) unlock()      { unlockFile(l.f) }
func (l sessionLock) close() error { return l.f.Close() }
func (l sessionLock) valid() bool  { return l.f != nil }
