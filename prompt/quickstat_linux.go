package prompt

import (
	"syscall"
	"time"
)

// quickStat stats path (following links) with one system call and no
// file object. It only validates cache entries: a match means the file is
// one the cache read through the workspace guard before, unchanged; any
// other outcome goes through the guarded path.
func quickStat(path string) (fileSig, bool) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return fileSig{}, false
	}
	return sigOf(&st), true
}

// sigOf is the signature of a file as stat(2) describes it.
func sigOf(st *syscall.Stat_t) fileSig {
	return fileSig{
		size:    st.Size,
		mtime:   time.Unix(int64(st.Mtim.Sec), int64(st.Mtim.Nsec)),
		id:      [2]uint64{uint64(st.Dev), uint64(st.Ino)},
		regular: st.Mode&syscall.S_IFMT == syscall.S_IFREG,
		dir:     st.Mode&syscall.S_IFMT == syscall.S_IFDIR,
	}
}

// haveQuickStat tells whether quickStat can see a file at all (PromptIn's
// memo validates by it).
const haveQuickStat = true
