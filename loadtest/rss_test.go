//go:build rss

// The gateway's peak memory under the hardening issue's three loads,
// measured on an `ocbench serve` process of its own (VmHWM). Heavy, so
// out of the default test command:
//
//	go test -tags rss -run TestGatewayPeakRSS -v ./loadtest/
//
// With OCBENCH_BIN=path it measures that binary instead of building one.
package loadtest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// serveProcess starts `ocbench serve` with args and returns its URL and
// a function reading its peak RSS in MiB.
func serveProcess(t *testing.T, bin string, args ...string) (string, func() float64) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	url := strings.Fields(line)[3]
	return url, func() float64 {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
				var kb float64
				fmt.Sscanf(strings.TrimSpace(v), "%f", &kb)
				return kb / 1024
			}
		}
		return 0
	}
}

// bigAnswers is an upstream whose every answer is n chat chunks of size
// bytes of text.
func bigAnswers(t *testing.T, n, size int) string {
	text := strings.Repeat("x", size)
	chunk := []byte(`data: {"id":"c1","object":"chat.completion.chunk","model":"m1","choices":[{"index":0,"delta":{"content":"` + text + `"},"finish_reason":null}]}` + "\n\n")
	end := []byte(`data: {"id":"c1","object":"chat.completion.chunk","model":"m1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n")
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < n; i++ {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
		w.Write(end)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

func TestGatewayPeakRSS(t *testing.T) {
	// OCBENCH_BIN measures another build (the code before a change, say).
	bin := os.Getenv("OCBENCH_BIN")
	if bin == "" {
		bin = filepath.Join(t.TempDir(), "ocbench")
		if out, err := exec.Command("go", "build", "-o", bin, "../cmd/ocbench").CombinedOutput(); err != nil {
			t.Fatalf("build: %v\n%s", err, out)
		}
	}
	const body = `{"model":"m1","stream":%v,"messages":[{"role":"user","content":"hi"}]}`

	for _, stream := range []bool{true, false} {
		t.Run(fmt.Sprintf("8 concurrent 50 MB answers stream=%v", stream), func(t *testing.T) {
			up := bigAnswers(t, 50000, 1000)
			url, rss := serveProcess(t, bin, "--upstream", up)
			base := rss()
			var wg sync.WaitGroup
			var mu sync.Mutex
			codes := map[int]int{}
			total := int64(0)
			start := time.Now()
			for i := 0; i < 8; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(fmt.Sprintf(body, stream)))
					if err != nil {
						t.Error(err)
						return
					}
					n, _ := io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					mu.Lock()
					codes[resp.StatusCode]++
					total += n
					mu.Unlock()
				}()
			}
			wg.Wait()
			t.Logf("peak RSS %.1f MiB (idle %.1f MiB); %d bytes to clients in %v; status %v", rss(), base, total, time.Since(start).Round(time.Millisecond), codes)
		})
	}

	t.Run("2 GiB session read", func(t *testing.T) {
		dir := t.TempDir()
		f, err := os.Create(filepath.Join(dir, "big.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		f.Truncate(2 << 30) // sparse
		f.Close()
		url, rss := serveProcess(t, bin, "--sessions", dir)
		base := rss()
		start := time.Now()
		resp, err := http.Get(url + "/v1/sessions/big")
		if err != nil {
			t.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		t.Logf("peak RSS %.1f MiB (idle %.1f MiB); %d bytes in %v, status %d", rss(), base, n, time.Since(start).Round(time.Millisecond), resp.StatusCode)
		if n != 2<<30 {
			t.Errorf("read %d bytes", n)
		}
	})

	t.Run("4000 idle connections", func(t *testing.T) {
		url, rss := serveProcess(t, bin)
		base := rss()
		addr := strings.TrimPrefix(url, "http://")
		var conns []net.Conn
		for i := 0; i < 4000; i++ {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatalf("conn %d: %v", i, err)
			}
			conns = append(conns, c)
			fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		}
		for _, c := range conns {
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		time.Sleep(time.Second)
		t.Logf("peak RSS %.1f MiB with 4000 idle keep-alive connections (idle gateway %.1f MiB)", rss(), base)
		for _, c := range conns {
			c.Close()
		}
	})
}
