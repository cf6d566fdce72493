//go:build linux && (amd64 || arm64)

package prompt

import (
	"sync"
	"syscall"
	"unsafe"
)

// quickStatZ is quickStat of a NUL-terminated path: fstatat(2) called
// directly, so that the memo's warm check converts no string (syscall.Stat
// copies its path into a new buffer on every call).
func quickStatZ(path []byte) (fileSig, bool) {
	if len(path) == 0 || path[len(path)-1] != 0 {
		return fileSig{}, false
	}
	var st syscall.Stat_t
	cwd := atFDCWD
	_, _, errno := syscall.Syscall6(sysFstatat, uintptr(cwd), uintptr(unsafe.Pointer(&path[0])), uintptr(unsafe.Pointer(&st)), 0, 0, 0)
	if errno != 0 {
		return fileSig{}, false
	}
	return sigOf(&st), true
}

// quickStatAtZ is quickStatZ of a NUL-terminated path relative to the
// directory open as dirfd: the kernel walks only the path's own
// components, not the workspace's (a stat of a file 7 components deep
// cost about 2 µs, of one beside the descriptor under 1 µs).
func quickStatAtZ(dirfd int, rel []byte) (fileSig, bool) {
	if len(rel) == 0 || rel[len(rel)-1] != 0 {
		return fileSig{}, false
	}
	var st syscall.Stat_t
	_, _, errno := syscall.Syscall6(sysFstatat, uintptr(dirfd), uintptr(unsafe.Pointer(&rel[0])), uintptr(unsafe.Pointer(&st)), 0, 0, 0)
	if errno != 0 {
		return fileSig{}, false
	}
	return sigOf(&st), true
}

// dirFDs are descriptors (O_PATH) of the workspace directories whose memos
// were checked, by path, so that a memo's files are stat'ed relative to
// their directory. A descriptor is used only while its directory is the
// one the path names (the memo's own stat of the path, which comes first,
// says so: same device and inode); a directory replaced under its path is
// checked by full paths from then on. At most maxDirFDs are opened, none
// is ever closed (a concurrent check may be using it).
var dirFDs struct {
	mu sync.Mutex
	m  map[string]dirFD // by NUL-terminated path
}

type dirFD struct {
	fd int
	id [2]uint64
}

const maxDirFDs = 64

// dirFDOf returns a descriptor of the directory dirZ (NUL-terminated)
// whose device and inode are id, or -1.
func dirFDOf(dirZ []byte, id [2]uint64) int {
	if len(dirZ) == 0 || dirZ[len(dirZ)-1] != 0 {
		return -1
	}
	dirFDs.mu.Lock()
	defer dirFDs.mu.Unlock()
	if d, ok := dirFDs.m[string(dirZ)]; ok {
		if d.id == id {
			return d.fd
		}
		return -1
	}
	if len(dirFDs.m) >= maxDirFDs {
		return -1
	}
	dir := string(dirZ[:len(dirZ)-1])
	fd, err := syscall.Open(dir, oPath|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return -1
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil || sigOf(&st).id != id {
		syscall.Close(fd) // never handed out
		return -1
	}
	if dirFDs.m == nil {
		dirFDs.m = make(map[string]dirFD)
	}
	dirFDs.m[string(dirZ)] = dirFD{fd: fd, id: id}
	return fd
}

// oPath is O_PATH (linux amd64 and arm64; package syscall lacks it): a
// descriptor for *at calls that reads nothing.
const oPath = 0x200000

// atFDCWD is AT_FDCWD, a variable so that it converts to uintptr.
var atFDCWD = -100
