package prompt

import "time"

// fileSig is what the workspace cache compares to tell a file unchanged.
type fileSig struct {
	size    int64
	mtime   time.Time
	id      [2]uint64
	regular bool
	dir     bool
}

func (s fileSig) isDir() bool { return s.dir }
