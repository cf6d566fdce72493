//go:build unix

package gateway

import (
	"errors"
	"os"
	"syscall"
)

// openRegular opens path for reading only if it is a regular file: with
// O_NOFOLLOW a planted symlink fails (ELOOP) instead of being followed,
// and with O_NONBLOCK a FIFO opens at once instead of hanging, and is then
// refused with devices and directories by the fstat check. Anything but a
// readable regular file is ErrNoSession.
func openRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ELOOP) {
			return nil, ErrNoSession
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, ErrNoSession
	}
	return f, nil
}
