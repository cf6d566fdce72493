//go:build unix && !(darwin || ios || freebsd || netbsd)

package transcript

import "syscall"

// ctimeNs is st's status-change time in nanoseconds (Ctim here; the BSD
// family and Darwin name it Ctimespec).
func ctimeNs(st *syscall.Stat_t) int64 {
	return int64(st.Ctim.Sec)*1e9 + int64(st.Ctim.Nsec)
}
