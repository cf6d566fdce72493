package loadtest

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ocbench/ocbench/internal/svgchart"
)

// TestHTMLPlotsReadable: the report plots latency percentiles and the
// request rate over the run's seconds, each with axes, ticks, units and
// a legend; a run without any second says so.
func TestHTMLPlotsReadable(t *testing.T) {
	r := &Report{Target: "http://127.0.0.1:1", Path: "/v1/chat/completions", Rate: 10, DurationS: 3,
		StatusCodes: map[string]int{"200": 29, "500": 1},
		Timeline:    []Point{{Second: 0, Requests: 10, P50Ms: 1.5, P99Ms: 4}, {Second: 1, Requests: 10, P50Ms: 1.7, P99Ms: 9, Errors: 1}, {Second: 2, Requests: 10, P50Ms: 1.6, P99Ms: 5}}}
	var b bytes.Buffer
	if err := r.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	if n, err := svgchart.CheckCharts(b.Bytes()); n != 2 || err != nil {
		t.Fatalf("checked %d charts: %v", n, err)
	}
	for _, want := range []string{"p50 latency", "p99 latency", "second with errors", "requests per second", "latency (ms)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	b.Reset()
	r.Timeline = nil
	if err := r.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "No data") {
		t.Error("empty run does not say No data")
	}
}

// TestRatePerCoveredSecond: the rate plot divides a second's requests by
// the part of it the run lasted and leaves out a second past the end.
func TestRatePerCoveredSecond(t *testing.T) {
	r := &Report{DurationS: 2.5}
	for _, c := range []struct {
		p    Point
		want float64
		ok   bool
	}{
		{Point{Second: 0, Requests: 100}, 100, true},
		{Point{Second: 2, Requests: 50}, 100, true},
		{Point{Second: 3, Requests: 2}, 0, false},
	} {
		if v, ok := r.rateOf(c.p); v != c.want || ok != c.ok {
			t.Errorf("second %d: rate %v %v, want %v %v", c.p.Second, v, ok, c.want, c.ok)
		}
	}
	r.DurationS = 0 // unknown duration: whole seconds
	if v, ok := r.rateOf(Point{Second: 7, Requests: 3}); v != 3 || !ok {
		t.Errorf("unknown duration: rate %v %v, want 3 true", v, ok)
	}
}

func TestParseProcStat(t *testing.T) {
	// A command name with a space and a parenthesis; utime 250 ticks,
	// stime 30.
	line := []byte("4242 (ocb (x) y) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 30 0 0 20 0 9 0 100 1000000 500 18446744073709551615\n")
	d, err := parseProcStat(line)
	if err != nil || d != 2800*time.Millisecond {
		t.Fatalf("got %v, %v; want 2.8s", d, err)
	}
	for _, bad := range []string{"", "1 (x", "1 (x) S 1 2", "1 (x) S 1 2 3 4 5 6 7 8 9 10 z 30"} {
		if _, err := parseProcStat([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if d, err := ProcessCPU(os.Getpid()); err == nil && d < 0 {
		t.Errorf("own CPU %v", d)
	}
}

func TestParseVmRSS(t *testing.T) {
	n, err := parseVmRSS([]byte("Name:\tocbench\nVmHWM:\t   9000 kB\nVmRSS:\t   4096 kB\nRssAnon:\t 1 kB\n"))
	if err != nil || n != 4096<<10 {
		t.Fatalf("got %d, %v", n, err)
	}
	for _, bad := range []string{"", "Name:\tx\nVmRSS:\n", "Name:\tx\nVmRSS:\t12 MB\n", "Name:\tx\nVmRSS:\tz kB\n"} {
		if _, err := parseVmRSS([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if n, err := ProcessRSS(os.Getpid()); err == nil && n == 0 {
		t.Error("own RSS read as 0")
	}
}
