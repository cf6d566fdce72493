//go:build !(linux && (amd64 || arm64))

package prompt

// quickStatZ is quickStat of a NUL-terminated path.
func quickStatZ(path []byte) (fileSig, bool) {
	if len(path) == 0 || path[len(path)-1] != 0 {
		return fileSig{}, false
	}
	return quickStat(string(path[:len(path)-1]))
}

// quickStatAtZ is not used where dirFDOf gives no descriptor.
func quickStatAtZ(int, []byte) (fileSig, bool) { return fileSig{}, false }

// dirFDOf has no descriptors to give here: memos are checked by full paths.
func dirFDOf([]byte, [2]uint64) int { return -1 }
