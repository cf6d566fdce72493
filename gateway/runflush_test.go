package gateway

import (
	"bufio"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider/scripted"
	"github.com/ocbench/ocbench/transcript"
)

// countingListener counts the writes made to the connections it accepts.
type countingListener struct {
	net.Listener
	writes atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, n: &l.writes}, nil
}

type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c *countingConn) Write(b []byte) (int, error) {
	c.n.Add(1)
	return c.Conn.Write(b)
}

// runEvents reads one run's SSE stream and returns its data events.
func runEvents(t *testing.T, url string) int {
	t.Helper()
	resp := post(t, url+"/v1/runs", `{"session":"s1","message":"read AGENTS.md"}`)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(b), "event: result") || strings.Contains(string(b), `"error":"`) {
		t.Fatalf("run: %d %.300s", resp.StatusCode, b)
	}
	return strings.Count(string(b), "data: ") - 1
}

// With an in-process provider whose streams never wait (StreamBuffered),
// a run's events are written once per model call (the first event with
// its call's), then the result with the end of the body, instead of one
// write per event; without it, one by one.
func TestRunEventsCoalesced(t *testing.T) {
	for _, c := range []struct {
		buffered bool
		sync     transcript.Durability
	}{{false, transcript.SyncEntry}, {true, transcript.SyncEntry}, {true, transcript.SyncNone}} {
		buffered := c.buffered
		runs := scriptedRuns(t, buffered, c.sync)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		cl := &countingListener{Listener: ln}
		r := startGatewayOn(t, Config{Runs: runs}, cl)
		events := runEvents(t, r.url)
		writes := cl.writes.Load()
		t.Logf("buffered %v, sync %v: %d events in %d writes", buffered, c.sync, events, writes)
		switch {
		case events < 20:
			t.Fatalf("only %d events", events)
		case buffered && c.sync == transcript.SyncNone && writes != 2:
			// The tool call's model call, then the last call's events
			// with the result and the chunk end: nothing waits between.
			t.Errorf("buffered, no fsync: %d writes for %d events, want 2", writes, events)
		case buffered && writes > 3: // two model calls, then the result with the chunk end
			t.Errorf("buffered: %d writes for %d events", writes, events)
		case !buffered && writes < int64(events):
			t.Errorf("unbuffered: %d writes for %d events: events were held", writes, events)
		}
	}
}

// Through the gateway's upstream client, a run's events are written when
// the upstream has nothing more buffered: text before a stall reaches the
// client before the stall ends.
func TestRunEventsNotHeldBackOverHTTP(t *testing.T) {
	s := &scripted.Script{Turns: []scripted.Turn{{Steps: []scripted.Step{scripted.Text("hello"), scripted.Stall(time.Second), scripted.Text(" late")}}}}
	_, up, err := scripted.Start(scripted.Options{Script: s, Pick: scripted.Sequential(s)})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "AGENTS.md"), []byte("# Agents\n"), 0o644)
	runs := &EngineRuns{SessionsDir: t.TempDir(), Workspace: ws,
		Model: llm.Model{ID: "scripted-1", API: "openai-completions", Provider: "openai-compatible", BaseURL: UpstreamBase(up.URL)}}
	if err := runs.UseUpstreamClient(nil); err != nil {
		t.Fatal(err)
	}
	if !runs.CoalescesRuns() {
		t.Fatal("the upstream client does not coalesce")
	}
	r := startGateway(t, Config{Runs: runs})
	start := time.Now()
	resp := post(t, r.url+"/v1/runs", `{"session":"s1","message":"hi"}`)
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("stream ended before hello: %v", err)
		}
		if strings.Contains(line, `hello`) {
			break
		}
	}
	if d := time.Since(start); d > 700*time.Millisecond {
		t.Errorf("hello arrived after %v: held back until the stall ended", d)
	}
	rest, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(rest), "late") || !strings.Contains(string(rest), "event: result") {
		t.Errorf("rest of the run: %.400s", rest)
	}
}

// A writer released keeps its buffers up to the bound it is given (a
// connection's: connKeep), and nothing of its answer's state.
func TestSSEWriterReleaseBound(t *testing.T) {
	s := &sseWriter{pending: make([]byte, 10, connKeep+1), ev: make([]byte, 3, 64), started: true, coalesce: true}
	s.release(connKeep)
	if s.pending != nil || len(s.ev) != 0 || cap(s.ev) != 64 || s.started || s.coalesce || s.w != nil {
		t.Errorf("released: pending cap %d, ev %d/%d, started %v", cap(s.pending), len(s.ev), cap(s.ev), s.started)
	}
}
