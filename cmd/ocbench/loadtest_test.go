package main

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ocbench/ocbench/loadtest"
)

// failingAfter answers SSE until it has served n requests, then 503.
func failingAfter(n int64) *httptest.Server {
	var served atomic.Int64
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if served.Add(1) > n {
			http.Error(w, "full", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {}\n\n")
	}))
}

// The two searches of --vs take turns step by step, each keeps its own
// bounds, and each ends with its own best step: the target that fails
// sooner holds the lower rate.
func TestFindMaxPairAlternates(t *testing.T) {
	a, b := failingAfter(60), failingAfter(400)
	defer a.Close()
	defer b.Close()
	cfg := loadtest.Config{Body: []byte(`{}`), Rate: 40, Duration: 300 * time.Millisecond, Connections: 16}
	ca, cb := cfg, cfg
	ca.Target, cb.Target = a.URL, b.URL
	var log strings.Builder
	held, err := findMaxSet(context.Background(), []loadtest.Config{ca, cb}, []string{"a", "b"}, &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	ra, rb := held[0], held[1]
	if ra.Rate >= rb.Rate || ra.SuccessRate != 1 || rb.SuccessRate != 1 {
		t.Errorf("held a %.0f/s, b %.0f/s: the target failing sooner should hold less\n%s", ra.Rate, rb.Rate, log.String())
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) < 4 || !strings.HasPrefix(lines[0], "a rate") || !strings.HasPrefix(lines[1], "b rate") {
		t.Errorf("the steps did not alternate, a first:\n%s", log.String())
	}
	var out strings.Builder
	if err := writeSetTable(&out, held, []string{"a", "b"}); err != nil || !strings.Contains(out.String(), "ratio             a/b ") {
		t.Errorf("table: %v\n%s", err, out.String())
	}
	t.Logf("a %.0f/s, b %.0f/s\n%s", ra.Rate, rb.Rate, log.String())
}

// The CPU line of a --vs direct pair: the proxy's own CPU per request is
// the route's gateway process minus the scripted upstream alone, and the
// ratio is of the two routes' CPU per request with the load generator's.
func TestPairCPU(t *testing.T) {
	chat := &loadtest.Report{Rate: 12800, GatewayCPUUsPerReq: 75, LoadgenCPUUsPerReq: 56}
	direct := &loadtest.Report{Rate: 19200, GatewayCPUUsPerReq: 41, LoadgenCPUUsPerReq: 56}
	c, ok := pairCPU(chat, direct, "direct")
	if !ok || c.Own != 34 || math.Abs(c.Ratio-97.0/131) > 1e-9 {
		t.Errorf("pairCPU = %+v, %v; want own 34, ratio 97/131", c, ok)
	}
	var out strings.Builder
	if err := writeSetTable(&out, []*loadtest.Report{chat, direct}, []string{"chat", "direct"}); err != nil ||
		!strings.Contains(out.String(), "the proxy's own 34µs; with the load generator's, chat/direct 0.74") {
		t.Errorf("table: %v\n%s", err, out.String())
	}
	out.Reset()
	if err := writeSetJSON(&out, []*loadtest.Report{chat, direct}, []string{"chat", "direct"}); err != nil ||
		!strings.Contains(out.String(), `"ownUs": 34`) || strings.Contains(out.String(), `"ratios"`) {
		t.Errorf("JSON: %v\n%s", err, out.String())
	}
	// Another pair than --vs direct, or a step without CPU figures: the
	// difference would not be the proxy's, and nothing is printed.
	if _, ok := pairCPU(chat, direct, "messages"); ok {
		t.Error("a --vs messages pair got a proxy CPU figure")
	}
	if _, ok := pairCPU(chat, &loadtest.Report{Rate: 1}, "direct"); ok {
		t.Error("a step without CPU figures got a proxy CPU figure")
	}
	out.Reset()
	writeSetTable(&out, []*loadtest.Report{chat, direct}, []string{"chat", "messages"})
	if strings.Contains(out.String(), "proxy's own") {
		t.Errorf("--vs messages printed a proxy CPU line:\n%s", out.String())
	}
}

// --vs direct,relay: the proxy's rate against each, the relay's against
// direct's (the floor of any proxy), and the CPU line of each against
// direct, the relay's named as its own.
func TestSetTableThreeWay(t *testing.T) {
	chat := &loadtest.Report{Rate: 12000, GatewayCPUUsPerReq: 84, LoadgenCPUUsPerReq: 58}
	direct := &loadtest.Report{Rate: 19200, GatewayCPUUsPerReq: 42, LoadgenCPUUsPerReq: 49}
	relay := &loadtest.Report{Rate: 12800, GatewayCPUUsPerReq: 70, LoadgenCPUUsPerReq: 55}
	held, names := []*loadtest.Report{chat, direct, relay}, []string{"chat", "direct", "relay"}
	var out strings.Builder
	if err := writeSetTable(&out, held, names); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"--vs direct:", "--vs relay:",
		"ratio             chat/direct 0.62 (12000/s vs 19200/s held",
		"ratio             chat/relay 0.94 (12000/s vs 12800/s held",
		"ratio             relay/direct 0.67 (12800/s vs 19200/s held",
		"chat's gateway process 84µs, direct's 42µs: the proxy's own 42µs; with the load generator's, chat/direct 0.64",
		"relay's gateway process 70µs, direct's 42µs: the relay's own 28µs; with the load generator's, relay/direct 0.73",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	// No CPU line of chat against the relay: only direct is the upstream
	// alone.
	if strings.Contains(out.String(), "relay's 70µs") {
		t.Errorf("a CPU line against the relay:\n%s", out.String())
	}
	out.Reset()
	if err := writeSetJSON(&out, held, names); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Route, Vs string
		Ratio     float64
		MoreVs    []struct{ Vs string }
		Ratios    []struct {
			Route, Vs string
			Ratio     float64
			CPU       *cpuPair
		}
	}
	if err := json.Unmarshal([]byte(out.String()), &got); err != nil {
		t.Fatal(err)
	}
	if got.Route != "chat" || got.Vs != "direct" || len(got.MoreVs) != 1 || got.MoreVs[0].Vs != "relay" || len(got.Ratios) != 3 ||
		got.Ratios[2].Route != "relay" || got.Ratios[2].Vs != "direct" || got.Ratios[2].CPU == nil || got.Ratios[2].CPU.Own != 28 ||
		got.Ratios[1].CPU != nil {
		t.Errorf("JSON: %+v\n%s", got, out.String())
	}
}

// --vs names each route once, never --route's own, and needs --find-max.
func TestVsRoutesChecked(t *testing.T) {
	for _, args := range [][]string{
		{"--find-max", "--vs", "direct,direct"},
		{"--find-max", "--vs", "chat"},
		{"--find-max", "--vs", "direct,nosuch"},
		{"--vs", "direct,relay"},
	} {
		var stdout, stderr strings.Builder
		if code := runLoadtest(args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "--vs") {
			t.Errorf("loadtest %q: exit %d, %s", args, code, stderr.String())
		}
	}
}

// `serve --relay-addr` says the relay's URL on its first line (where
// loadtest reads it) and relays a chat request to the built-in upstream
// unchanged.
func TestServeRelay(t *testing.T) {
	f := startServeHelper(t, "--addr", "127.0.0.1:0", "--relay-addr", "127.0.0.1:0")
	if len(f) != 8 || f[6] != "relay" { // ocbench gateway on URL upstream URL relay URL
		t.Fatalf("serve said %q", f)
	}
	resp, err := http.Post(f[7]+"/v1/chat/completions", "application/json", strings.NewReader(chatLoadBody))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"id":"chatcmpl-scripted"`) || !strings.HasSuffix(string(b), "data: [DONE]\n\n") {
		t.Errorf("through the relay: %d %s", resp.StatusCode, b)
	}
}

// The relay goes only to the built-in upstream, and listens only on
// loopback.
func TestServeRelayRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"--upstream", "http://127.0.0.1:1", "--relay-addr", "127.0.0.1:0"}, 2},
		{[]string{"--addr", "127.0.0.1:0", "--relay-addr", "0.0.0.0:0"}, 1},
	} {
		var stdout, stderr strings.Builder
		if code := run(append([]string{"serve"}, c.args...), &stdout, &stderr); code != c.code || !strings.Contains(stderr.String(), "--relay-addr") {
			t.Errorf("serve %q: exit %d (want %d), %s", c.args, code, c.code, stderr.String())
		}
	}
}
