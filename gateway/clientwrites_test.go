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
// client in one write: the headers, every event and the end of the body
// (before: the headers with the opening event, then the events, then
// net/http's terminator, three writes). The best of three streams is
// taken, so that a read split by the scheduler does not fail the test.
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
	best := []int(nil)
	for range 3 {
		log.mu.Lock()
		log.writes = nil
		log.mu.Unlock()
		b := streamOnce(t, client, r.url)
		if !strings.Contains(b, "[DONE]") || !strings.Contains(b, `\"path\"`) {
			t.Fatalf("stream incomplete: %s", b)
		}
		log.mu.Lock()
		if best == nil || len(log.writes) < len(best) {
			best = append([]int(nil), log.writes...)
		}
		log.mu.Unlock()
	}
	t.Logf("writes to the client: %v", best)
	if len(best) != 1 {
		t.Errorf("%d writes to the client for one stream (%v), want 1", len(best), best)
	}
}
