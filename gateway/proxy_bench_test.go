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

// BenchmarkProxyStreamParallel is BenchmarkProxyStream with 16 streams per
// core in flight, as under load: its cpu-ns/op, unlike the sequential
// benchmark's, is not dominated by each side waking from idle per stream.
func BenchmarkProxyStreamParallel(b *testing.B) { benchStreamParallel(b, true) }

// BenchmarkDirectStreamParallel is the same load on the scripted upstream alone.
func BenchmarkDirectStreamParallel(b *testing.B) { benchStreamParallel(b, false) }

func benchStreamParallel(b *testing.B, viaProxy bool) {
	url := benchTarget(b, viaProxy)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	body := chatBody(true)
	b.ReportAllocs()
	b.SetParallelism(16)
	cpu0 := processCPU(b)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := client.Post(url, "application/json", strings.NewReader(body))
			if err != nil {
				b.Error(err)
				return
			}
			n, _ := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || n == 0 {
				b.Errorf("status %d, %d bytes", resp.StatusCode, n)
				return
			}
		}
	})
	b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
}

// benchTarget starts the scripted upstream, and the gateway before it
// when viaProxy, and returns the chat endpoint to post to.
func benchTarget(b *testing.B, viaProxy bool) string {
	s := &scripted.Script{Turns: []scripted.Turn{{Steps: []scripted.Step{scripted.Text("Reading it now, one moment."),
		scripted.ToolCall("call_1", "read", `{"path": "a.txt"}`).Chunked(3)}}}}
	_, up, err := scripted.Start(scripted.Options{Script: s, Pick: scripted.Sequential(s)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { up.Close() })
	url := up.URL
	if viaProxy {
		srv, err := New(Config{Upstream: up.URL, MaxStreams: 4096})
		if err != nil {
			b.Fatal(err)
		}
		url = serveForBench(b, srv)
	}
	return url + "/v1/chat/completions"
}

func benchStream(b *testing.B, viaProxy bool) {
	url := benchTarget(b, viaProxy)
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
