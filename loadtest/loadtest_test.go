package loadtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// sseServer answers every POST with n SSE events spaced by gap.
func sseServer(t *testing.T, n int, gap time.Duration, fail *atomic.Bool) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fail != nil && fail.Load() {
			http.Error(w, "nope", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < n; i++ {
			w.Write([]byte("data: {\"i\":1}\n\n"))
			w.(http.Flusher).Flush()
			time.Sleep(gap)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestRunReportsLatencyAndStreamTiming(t *testing.T) {
	srv := sseServer(t, 5, 2*time.Millisecond, nil)
	rep, err := Run(context.Background(), Config{Target: srv.URL, Body: []byte(`{}`), Rate: 40, Duration: time.Second,
		Connections: 8, SampleRate: 10, MemoryProbe: func() (uint64, error) { return 1234, nil }})
	if err != nil {
		t.Fatal(err)
	}
	// 40/s for a second is 40 requests on an idle machine; on a loaded one
	// the attacker sends fewer, which is not what this test is about.
	if rep.Requests < 5 || rep.SuccessRate != 1 {
		t.Fatalf("requests %d success %v", rep.Requests, rep.SuccessRate)
	}
	// Each answer takes about 4 gaps of 2 ms.
	if rep.LatencyP50Ms < 7 || rep.LatencyP50Ms > 200 {
		t.Errorf("p50 %.2fms, want about 8ms", rep.LatencyP50Ms)
	}
	if rep.Streams < 2 || rep.StreamErrors != 0 || rep.EventsPerSteam != 5 {
		t.Errorf("sampler: %d streams, %d errors, %.1f events each", rep.Streams, rep.StreamErrors, rep.EventsPerSteam)
	}
	if rep.GapP50Ms < 1.5 || rep.TTFEP50Ms <= 0 || rep.TTFEP50Ms > rep.LatencyP99Ms {
		t.Errorf("gaps p50 %.3f ttfe p50 %.3f", rep.GapP50Ms, rep.TTFEP50Ms)
	}
	if rep.PeakRSSBytes != 1234 {
		t.Errorf("memory probe not used: %d", rep.PeakRSSBytes)
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"successRate", "latencyP50Ms", "latencyP90Ms", "latencyP99Ms", "latencyMaxMs", "ttfeP50Ms"} {
		if _, ok := back[k]; !ok {
			t.Errorf("JSON lacks %s", k)
		}
	}
	var h bytes.Buffer
	if err := rep.WriteHTML(&h); err != nil || !strings.Contains(h.String(), "<polyline") {
		t.Errorf("HTML plot missing (%v)", err)
	}
}

func TestRunCountsFailures(t *testing.T) {
	var fail atomic.Bool
	fail.Store(true)
	srv := sseServer(t, 1, 0, &fail)
	rep, err := Run(context.Background(), Config{Target: srv.URL, Rate: 20, Duration: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if rep.SuccessRate != 0 || rep.StatusCodes["503"] == 0 || rep.StreamErrors == 0 {
		t.Errorf("failures not reported: %+v", rep)
	}
}

func TestLoopbackOnly(t *testing.T) {
	for _, target := range []string{"http://10.1.2.3:80", "http://192.168.0.1", "http://8.8.8.8"} {
		_, err := Run(context.Background(), Config{Target: target, Rate: 1, Duration: time.Second})
		if !errors.Is(err, ErrNotLoopback) {
			t.Errorf("%s: got %v, want ErrNotLoopback", target, err)
		}
	}
	for _, target := range []string{"http://127.0.0.1:1", "http://[::1]:1", "http://127.5.5.5"} {
		if err := CheckLoopback(target); err != nil {
			t.Errorf("%s refused: %v", target, err)
		}
	}
}

func TestInBandFailure(t *testing.T) {
	for line, want := range map[string]bool{
		"event: error\n": true,
		`data: {"error":{"message":"x","type":"server_error"}}` + "\n":                true,
		`data: {"type":"response.failed","response":{}}` + "\n":                       true,
		`data: {"session":"s1","turns":1,"toolCalls":0,"stopReason":"stop"}` + "\n":   false,
		`data: {"session":"s1","turns":1,"stopReason":"error","error":"boom"}` + "\n": true,
		`data: {"id":"c","choices":[{"delta":{"content":"error"}}]}` + "\n":           false,
	} {
		if got := inBandFailure([]byte(line)); got != want {
			t.Errorf("%q: %v, want %v", line, got, want)
		}
	}
}
