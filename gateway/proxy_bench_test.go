//go:build unix

package gateway

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ocbench/ocbench/provider/scripted"
)

// BenchmarkProxyStream is one streamed chat answer through the proxy, in
// process: client, gateway and scripted upstream all on loopback, so its
// allocations are the three sides' together (the upstream and client part
// is what BenchmarkDirectStream allocates).
func BenchmarkProxyStream(b *testing.B) { benchStream(b, true) }

// BenchmarkDirectStream is the same answer from the scripted upstream alone.
func BenchmarkDirectStream(b *testing.B) { benchStream(b, false) }

func benchStream(b *testing.B, viaProxy bool) {
	s := &scripted.Script{Turns: []scripted.Turn{{Steps: []scripted.Step{scripted.Text("Reading it now, one moment."),
		scripted.ToolCall("call_1", "read", `{"path": "a.txt"}`).Chunked(3)}}}}
	_, up, err := scripted.Start(scripted.Options{Script: s, Pick: scripted.Sequential(s)})
	if err != nil {
		b.Fatal(err)
	}
	defer up.Close()
	url := up.URL
	if viaProxy {
		srv, err := New(Config{Upstream: up.URL})
		if err != nil {
			b.Fatal(err)
		}
		url = serveForBench(b, srv)
	}
	url += "/v1/chat/completions"
	client := &http.Client{}
	body := chatBody(true)
	b.ReportAllocs()
	cpu0 := processCPU(b)
	for b.Loop() {
		resp, err := client.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || n == 0 {
			b.Fatalf("status %d, %d bytes", resp.StatusCode, n)
		}
	}
	// The process's CPU time per stream (all three sides, every thread):
	// unlike ns/op, which is the wall time of streams run one after the
	// other, it does not move with what else the machine runs.
	b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
}

func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Skip("no process CPU time here:", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func serveForBench(b *testing.B, srv *Server) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln, time.Second) }()
	b.Cleanup(func() { cancel(); <-done })
	return "http://" + ln.Addr().String()
}
