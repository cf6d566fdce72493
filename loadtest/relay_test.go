package loadtest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// relayTo starts a relay on a loopback port to upstream.
func relayTo(t *testing.T, upstream string) (*Relay, net.Listener) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRelay(ln, upstream)
	if err != nil {
		t.Fatal(err)
	}
	return r, ln
}

// Requests on one keep-alive connection reach the upstream on one relayed
// connection, in order and whole both ways; Close ends the connections
// still open.
func TestRelayCopiesBothWays(t *testing.T) {
	var conns atomic.Int64
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: "+strings.Repeat(string(b), 4000)+"\n\n")
	}))
	up.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	up.Start()
	defer up.Close()
	r, ln := relayTo(t, up.Listener.Addr().String())
	c, err := net.Dial("tcp", r.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	for i, body := range []string{"a", "bc", "def"} {
		req, _ := http.NewRequest("POST", "http://"+r.Addr().String()+"/v1/chat/completions", strings.NewReader(body))
		if err := req.Write(c); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if want := "data: " + strings.Repeat(body, 4000) + "\n\n"; err != nil || string(got) != want {
			t.Fatalf("request %d: %v, %d bytes, want %d", i, err, len(got), len(want))
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("three requests on one client connection took %d upstream connections", n)
	}
	done := make(chan error, 1)
	go func() { done <- r.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end the open connection")
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Errorf("after Close the client's read got %v, want EOF", err)
	}
	if _, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		t.Error("the relay still accepts after Close")
	}
}

// Many clients at once, each on its own keep-alive connections: every
// answer arrives whole, and Close waits for all of them to end.
func TestRelayConcurrentClients(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Write(b)
	}))
	defer up.Close()
	r, _ := relayTo(t, up.Listener.Addr().String())
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}, Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				want := fmt.Sprintf("client %d request %d %s", g, i, strings.Repeat("x", i*500))
				resp, err := client.Post("http://"+r.Addr().String()+"/", "text/plain", strings.NewReader(want))
				if err != nil {
					errs <- err
					return
				}
				got, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || string(got) != want {
					errs <- fmt.Errorf("client %d request %d: %v, %d bytes, want %d", g, i, err, len(got), len(want))
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := r.Close(); err != nil {
		t.Error(err)
	}
}

// An upstream that refuses the connection ends the client's at once.
func TestRelayUpstreamDown(t *testing.T) {
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := dead.Addr().String()
	dead.Close()
	r, _ := relayTo(t, addr)
	defer r.Close()
	c, err := net.Dial("tcp", r.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Error("read bytes from a relay whose upstream is down")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Error("the client's connection stayed open with the upstream down")
	}
}

// The relay is an instrument of this machine: it refuses an upstream
// elsewhere.
func TestRelayRefusesOffMachine(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if _, err := NewRelay(ln, "192.0.2.1:80"); !errors.Is(err, ErrNotLoopback) {
		t.Errorf("NewRelay to 192.0.2.1 = %v, want ErrNotLoopback", err)
	}
}
