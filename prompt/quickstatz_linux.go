//go:build linux && (amd64 || arm64)

package prompt

import (
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

// atFDCWD is AT_FDCWD, a variable so that it converts to uintptr.
var atFDCWD = -100
