//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package gateway

import "net"

// peeker cannot peek here: a connection the upstream closed fails at its
// next request's write, which post retries on a new connection.
type peeker struct{}

func (peeker) alive(net.Conn) bool { return true }

func (*peeker) used() bool { return false }

func (peeker) canPeek() bool { return false }

func (peeker) send(nc net.Conn, b []byte) error {
	_, err := nc.Write(b)
	return err
}
