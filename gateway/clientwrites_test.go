package gateway

import (
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/ocbench/ocbench/provider/scripted"
)

// writeLog records the sizes of the writes made on accepted connections.
type writeLog struct {
	mu     sync.Mutex
	writes []int
}

type loggingListener struct {
	net.Listener
	log *writeLog
}

func (l loggingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return loggingConn{c, l.log}, nil
}

type loggingConn struct {
	net.Conn
	log *writeLog
}

func (c loggingConn) Write(b []byte) (int, error) {
	c.log.mu.Lock()
	c.log.writes = append(c.log.writes, len(b))
	c.log.mu.Unlock()
	return c.Conn.Write(b)
}

// A proxied stream whose upstream answer arrives in one read reaches the
// client in two writes: the headers with every event, then the end of the
// chunked body (net/http's own, after the handler returns).
func TestProxyStreamWritesToClient(t *testing.T) {
	s := &scripted.Script{Turns: []scripted.Turn{{Steps: []scripted.Step{scripted.Text("Reading it now."),
		scripted.ToolCall("call_1", "read", `{"path": "a.txt"}`).Chunked(3)}}}}
	up, _ := countingUpstream(t, s, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	log := &writeLog{}
	r := startGatewayOn(t, Config{Upstream: up}, loggingListener{ln, log})
	client := &http.Client{}
	streamOnce(t, client, r.url) // warm: the upstream connection exists
	log.mu.Lock()
	log.writes = nil
	log.mu.Unlock()
	b := streamOnce(t, client, r.url)
	if !strings.Contains(b, "[DONE]") {
		t.Fatalf("stream incomplete: %s", b)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	t.Logf("writes to the client: %v", log.writes)
	if len(log.writes) > 2 {
		t.Errorf("%d writes to the client for one stream (%v), want at most 2", len(log.writes), log.writes)
	}
}
