package loadtest

import (
	"errors"
	"net"
	"sync"
)

// Relay is the floor of any proxy: for each connection it accepts it opens
// one of its own to the upstream and copies bytes both ways through a
// user-space buffer, understanding none of them (no HTTP, no decoding, no
// pooling). A proxy that reads its answers must do at least this much: the
// same reads and writes on two sockets. Driven like the gateway's proxy,
// its rate against the upstream's own is what any proxy can reach on the
// machine, which tells the proxy's own overhead apart from the cost of a
// second hop.
//
// It relays only to a loopback upstream: it is a measuring instrument, not
// a way out of the machine.
type Relay struct {
	ln       net.Listener
	upstream string
	wg       sync.WaitGroup

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

// relayBuf is the copy buffer of one direction of one connection.
const relayBuf = 16 << 10

// NewRelay serves ln, relaying each connection to upstream (host:port,
// which must be a loopback address), until Close.
func NewRelay(ln net.Listener, upstream string) (*Relay, error) {
	if err := CheckLoopback("http://" + upstream); err != nil {
		return nil, err
	}
	r := &Relay{ln: ln, upstream: upstream, conns: make(map[net.Conn]struct{})}
	r.wg.Add(1)
	go r.serve()
	return r, nil
}

// Addr is the address the relay listens on.
func (r *Relay) Addr() net.Addr { return r.ln.Addr() }

// Close stops accepting, closes every relayed connection and waits for
// their copies to end.
func (r *Relay) Close() error {
	r.mu.Lock()
	r.closed = true
	for c := range r.conns {
		c.Close()
	}
	r.mu.Unlock()
	err := r.ln.Close()
	r.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

func (r *Relay) serve() {
	defer r.wg.Done()
	for {
		c, err := r.ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return // closed
		}
		r.wg.Add(1)
		go r.relay(c)
	}
}

// track adds c to the open connections; false when the relay is closed.
func (r *Relay) track(c net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	r.conns[c] = struct{}{}
	return true
}

func (r *Relay) untrack(c net.Conn) {
	r.mu.Lock()
	delete(r.conns, c)
	r.mu.Unlock()
}

// relay copies between client and a new upstream connection until either
// side ends; then both are closed.
func (r *Relay) relay(client net.Conn) {
	defer r.wg.Done()
	if !r.track(client) {
		client.Close()
		return
	}
	defer r.untrack(client)
	up, err := net.Dial("tcp", r.upstream)
	if err != nil {
		client.Close()
		return
	}
	if !r.track(up) {
		up.Close()
		client.Close()
		return
	}
	defer r.untrack(up)
	done := make(chan struct{})
	go func() {
		copyConn(up, client)
		close(done)
	}()
	copyConn(client, up)
	<-done
}

// copyConn copies src to dst until either fails or src ends, then closes
// both (which ends the other direction's copy too).
func copyConn(dst, src net.Conn) {
	buf := make([]byte, relayBuf)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	dst.Close()
	src.Close()
}
