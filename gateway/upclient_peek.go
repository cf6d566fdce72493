//go:build linux || darwin || freebsd || netbsd || openbsd

package gateway

import (
	"net"
	"syscall"
)

// connAlive reports whether an idle pooled connection is still open: a
// peek that does not wait sees the upstream's close (or stray bytes, which
// make the connection unusable too) before a request is written to it.
// This is what net/http's per-connection reader goroutine learns by
// always reading; here it is one system call when the connection is taken.
func connAlive(nc net.Conn) bool {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	alive := false
	var b [1]byte
	err = rc.Read(func(fd uintptr) bool {
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		alive = err == syscall.EAGAIN || err == syscall.EWOULDBLOCK
		return true
	})
	return err == nil && alive
}
