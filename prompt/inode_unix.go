//go:build unix

package prompt

import (
	"io/fs"
	"syscall"
)

// fileID is the (device, inode) pair of st: with size and mtime, the key
// OpenClaw's workspace cache uses to tell a file unchanged.
func fileID(st fs.FileInfo) [2]uint64 {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return [2]uint64{uint64(s.Dev), uint64(s.Ino)}
	}
	return [2]uint64{}
}
