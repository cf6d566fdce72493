//go:build linux || darwin || freebsd || netbsd || openbsd

package gateway

import (
	"net"
	"os"
	"syscall"
)

// peeker tells whether an idle pooled connection is still open: a peek
// that does not wait sees the upstream's close (or stray bytes, which make
// the connection unusable too) before a request is written to it. This is
// what net/http's per-connection reader goroutine learns by always
// reading; here it is one system call when the connection is taken. The
// raw connection and the peek's function are made at the first peek and
// kept with the connection, so that a peek allocates nothing.
//
// It also writes requests (see send).
type peeker struct {
	rc   syscall.RawConn
	fn   func(fd uintptr) bool
	open bool // the last peek's answer
	b    [1]byte
	seen bool // peeked at least once
	// send's state: the bytes to write, how many went, the write's error,
	// and its function, made once per connection.
	out    []byte
	sent   int
	werr   error
	sendFn func(fd uintptr) bool
}

// raw makes the connection's raw access once; false: there is none.
func (p *peeker) raw(nc net.Conn) bool {
	if p.rc != nil {
		return true
	}
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return false
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
	p.sendFn = func(fd uintptr) bool {
		if p.out == nil {
			return true // called again: the answer is readable
		}
		for p.sent < len(p.out) {
			n, err := syscall.Write(int(fd), p.out[p.sent:])
			if n > 0 {
				p.sent += n
			}
			switch {
			case err == syscall.EINTR:
			case err == syscall.EAGAIN || err == syscall.EWOULDBLOCK:
				return true // the rest with a write that waits
			case err != nil:
				p.werr = err
				return true
			case n <= 0:
				return true
			}
		}
		p.out = nil
		return false // wait until the answer can be read
	}
	return true
}

func (p *peeker) alive(nc net.Conn) bool {
	if !p.raw(nc) {
		_, ok := nc.(syscall.Conn)
		return !ok // no raw access: taken as open
	}
	p.open, p.seen = false, true
	err := p.rc.Read(p.fn)
	return err == nil && p.open
}

// send writes a request, b, and waits until the answer can be read,
// within one raw read: the wait for the descriptor's readiness is set up
// before the request goes, so the first read of the answer finds bytes.
// A read right after the write would nearly always find none (the
// upstream has not run yet), fail with EAGAIN, and only then wait: one
// system call more per request. What the socket's buffer does not take
// at once is written by the connection's own Write, which waits. The
// wait ends on readiness, on the connection's deadline (the request's
// cancellation sets it: see ctxWatch) or on its close; the read that
// follows reports those. One case waits longer than a plain read would:
// bytes the upstream sent unasked right before the write (a read would
// fail on them at once) are not seen until the answer, the upstream's
// close or the deadline; the liveness peek sees such bytes on any
// connection idle for more than upFreshFor.
func (p *peeker) send(nc net.Conn, b []byte) error {
	if !p.raw(nc) {
		_, err := nc.Write(b)
		return err
	}
	p.out, p.sent, p.werr = b, 0, nil
	err := p.rc.Read(p.sendFn)
	sent, werr := p.sent, p.werr
	p.out, p.werr = nil, nil
	switch {
	case werr != nil:
		return connWriteError(nc, os.NewSyscallError("write", werr))
	case sent < len(b):
		if err != nil {
			return connWriteError(nc, err) // closed or interrupted before all of it went
		}
		_, err = nc.Write(b[sent:])
		return err
	}
	// All of it went: a failed wait is the answer's read's to report.
	return nil
}

// connWriteError is err as the connection's Write reports a failure.
func connWriteError(nc net.Conn, err error) error {
	return &net.OpError{Op: "write", Net: nc.LocalAddr().Network(), Source: nc.LocalAddr(), Addr: nc.RemoteAddr(), Err: err}
}

// used reports whether the connection was ever peeked (for tests).
func (p *peeker) used() bool { return p.seen }

func (peeker) canPeek() bool { return true }
