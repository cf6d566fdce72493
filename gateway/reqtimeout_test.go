package gateway

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider"
	"github.com/ocbench/ocbench/provider/scripted"
)

// RequestTimeout bounds each request on its own: a stream past it ends
// with an in-band error (a non-streaming answer with 504), never as a
// success, and the next requests on the same keep-alive connection get a
// full RequestTimeout of their own, however long the connection has lived.
func TestRequestTimeoutPerRequest(t *testing.T) {
	const timeout = 400 * time.Millisecond
	fast := scripted.Turn{Steps: []scripted.Step{scripted.Text("quick")}}
	under := scripted.Turn{Steps: []scripted.Step{scripted.Text("hello"), scripted.Stall(100 * time.Millisecond),
		scripted.Text(" there"), scripted.Stall(100 * time.Millisecond), scripted.Text(" done")}}
	over := scripted.Turn{Steps: []scripted.Step{scripted.Text("hello"), scripted.Stall(300 * time.Millisecond),
		scripted.Text(" there"), scripted.Stall(300 * time.Millisecond), scripted.Text(" late"), scripted.Stall(300 * time.Millisecond)}}
	s := &scripted.Script{Turns: []scripted.Turn{fast, under, over}}
	r := startRig(t, s, Config{RequestTimeout: timeout, IdleTimeout: 5 * time.Second})

	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1}}
	t.Cleanup(client.CloseIdleConnections)
	conns := 0
	do := func(stream bool) (*http.Response, []byte, time.Duration) {
		t.Helper()
		trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) {
			if !i.Reused {
				conns++
			}
		}}
		req, err := http.NewRequest(http.MethodPost, r.url+"/v1/chat/completions", strings.NewReader(chatBody(stream)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		return resp, b, time.Since(start)
	}
	streamed := func(name, text string, fail bool) {
		t.Helper()
		resp, b, took := do(true)
		m := decodeSSE(t, provider.WireOpenAIChat, bytes.NewReader(b))
		switch {
		case resp.StatusCode != http.StatusOK:
			t.Errorf("%s: status %d: %s", name, resp.StatusCode, b)
		case fail && (m.StopReason != llm.StopError || m.ErrorMessage == "" || m.TextContent() != text):
			t.Errorf("%s: want the text %q then an error, got text %q stop %v error %q\n%s", name, text, m.TextContent(), m.StopReason, m.ErrorMessage, b)
		case fail && took > 3*timeout/2+300*time.Millisecond:
			t.Errorf("%s: ended after %v, not at the request timeout (%v)", name, took, timeout)
		case !fail && (m.StopReason == llm.StopError || m.TextContent() != text):
			t.Errorf("%s: want %q as a success, got text %q stop %v error %q", name, text, m.TextContent(), m.StopReason, m.ErrorMessage)
		}
	}

	streamed("fast", "quick", false)
	// The connection has lived longer than the timeout by the end of the
	// next request, which itself stays well within it.
	time.Sleep(timeout * 3 / 4)
	streamed("within the timeout on an old connection", "hello there done", false)
	streamed("past the timeout", "hello there", true)
	streamed("after a timed-out request", "quick", false)
	time.Sleep(timeout * 3 / 4)
	if resp, b, _ := do(false); resp.StatusCode != http.StatusOK || !bytes.Contains(b, []byte("hello there done")) {
		t.Errorf("non-streaming within the timeout: status %d: %s", resp.StatusCode, b)
	}
	if resp, b, took := do(false); resp.StatusCode != http.StatusGatewayTimeout || took > 3*timeout/2+300*time.Millisecond {
		t.Errorf("non-streaming past the timeout: status %d after %v, want 504 at the timeout: %s", resp.StatusCode, took, b)
	}
	if conns != 1 {
		t.Errorf("%d connections for the requests, want 1: a timed-out request must not cost its connection", conns)
	}
}
