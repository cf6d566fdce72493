//go:build linux || darwin || freebsd || netbsd || openbsd

package gateway

import (
	"net"
	"syscall"
)

// peeker tells whether an idle pooled connection is still open: a peek
// that does not wait sees the upstream's close (or stray bytes, which make
// the connection unusable too) before a request is written to it. This is
// what net/http's per-connection reader goroutine learns by always
// reading; here it is one system call when the connection is taken. The
// raw connection and the peek's function are made at the first peek and
// kept with the connection, so that a peek allocates nothing.
type peeker struct {
	rc   syscall.RawConn
	fn   func(fd uintptr) bool
	open bool // the last peek's answer
	b    [1]byte
}

func (p *peeker) alive(nc net.Conn) bool {
	if p.rc == nil {
		sc, ok := nc.(syscall.Conn)
		if !ok {
			return true
		}
		rc, err := sc.SyscallConn()
		if err != nil {
			return false
		}
		p.rc = rc
		p.fn = func(fd uintptr) bool {
			_, _, err := syscall.Recvfrom(int(fd), p.b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
			p.open = err == syscall.EAGAIN || err == syscall.EWOULDBLOCK
			return true
		}
	}
	p.open = false
	err := p.rc.Read(p.fn)
	return err == nil && p.open
}

// used reports whether the connection was ever peeked (for tests).
func (p *peeker) used() bool { return p.rc != nil }

func (peeker) canPeek() bool { return true }
