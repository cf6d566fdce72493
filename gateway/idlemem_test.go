//go:build unix && !race

package gateway

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"runtime"
	"testing"

	"github.com/ocbench/ocbench/provider/scripted"
)

// TestIdleConnectionMemory bounds what a keep-alive client connection
// holds while idle after one proxied stream: its state (chain, encoder,
// SSE writer, buffers, upstream request), its reader and writer and its
// goroutine's stack. A service with tens of thousands of idle
// connections pays it per connection, so what the proxy keeps on a
// connection to save pool traffic must stay small. It logs the figure.
func TestIdleConnectionMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("opens hundreds of connections")
	}
	s := &scripted.Script{Turns: []scripted.Turn{{Steps: []scripted.Step{
		scripted.Text("Reading it now, one moment."),
		scripted.ToolCall("call_1", "read", `{"path": "a.txt"}`).Chunked(3)}}}}
	r := startRig(t, s, Config{MaxStreams: 4096})
	addr := r.url[len("http://"):]
	req := rawRequest("/v1/chat/completions", chatBody(true))

	stream := func(c net.Conn) {
		resp, err := http.ReadResponse(bufio.NewReaderSize(c, 512), nil)
		if err != nil {
			t.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || n == 0 {
			t.Fatalf("status %d, %d bytes, %v", resp.StatusCode, n, err)
		}
	}
	open := func(n int) []net.Conn {
		conns := make([]net.Conn, n)
		for i := range conns {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			if _, err := io.WriteString(c, req); err != nil {
				t.Fatal(err)
			}
			stream(c)
			conns[i] = c
		}
		return conns
	}
	inUse := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc + m.StackInuse
	}

	open(20) // warm: the upstream connection, pools, the tools' chain
	const n = 400
	before := inUse()
	conns := open(n)
	after := inUse()
	runtime.KeepAlive(conns)
	per := (int64(after) - int64(before)) / n
	t.Logf("an idle connection after one proxied stream holds %d bytes (heap and stack; %d connections)", per, n)
	// About 23 KiB: the goroutine's stack, the read buffer it starts
	// with (srvBufStart, 4 KiB), the chain's states, and the encoder, SSE
	// writer and buffers the proxy keeps (about 4 KiB after this stream).
	// With a read buffer of upBufSize from the start it was 36 KiB.
	const limit = 28 << 10
	if per > limit {
		t.Errorf("an idle connection holds %d bytes, over %d", per, limit)
	}
}
