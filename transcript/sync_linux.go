package transcript

import (
	"errors"
	"os"
	"syscall"
)

// syncData flushes f's data and the metadata needed to read it back
// (fdatasync: the file size, not the modification time).
func syncData(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
