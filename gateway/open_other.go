//go:build !unix

package gateway

import (
	"errors"
	"os"
)

// openRegular opens path only if it is a regular file and not a link
// (checked before opening: without O_NOFOLLOW a race remains).
func openRegular(path string) (*os.File, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNoSession
	}
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, ErrNoSession
	}
	return os.Open(path)
}
