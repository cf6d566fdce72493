//go:build linux || darwin || freebsd || netbsd || openbsd

package gateway

import (
	"errors"
	"net"
	"testing"
	"time"
)

// send writes a request and waits for the answer; a connection the
// upstream reset fails the write as the connection's own Write reports
// it.
func TestPeekerSend(t *testing.T) {
	ln := listen(t)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 64)
			n, _ := c.Read(buf)
			if string(buf[:n]) == "reset" {
				c.(*net.TCPConn).SetLinger(0)
				c.Close()
				continue
			}
			c.Write(append([]byte("re:"), buf[:n]...))
			c.Close()
		}
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var p peeker
	if err := p.send(nc, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	nc.SetReadDeadline(time.Now().Add(2 * time.Second))
	buf := make([]byte, 64)
	n, err := nc.Read(buf)
	if string(buf[:n]) != "re:hello" {
		t.Fatalf("answer %q, %v", buf[:n], err)
	}

	rc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var q peeker
	q.send(rc, []byte("reset")) // answered by a reset
	time.Sleep(50 * time.Millisecond)
	err = q.send(rc, []byte("again"))
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != "write" {
		t.Fatalf("write to a reset connection: %v (%T), want a write *net.OpError", err, err)
	}
}
