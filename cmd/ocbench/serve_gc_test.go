package main

import (
	"flag"
	"io"
	"math"
	"runtime/debug"
	"testing"
)

// parseGCFlags parses args with serve's two collector flags.
func parseGCFlags(t *testing.T, args ...string) (*flag.FlagSet, *int, *int64) {
	t.Helper()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	gogc, limit := gcFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return fs, gogc, limit
}

// inForce returns the collector's percentage and memory limit.
func inForce() (int, int64) {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p, debug.SetMemoryLimit(-1)
}

func TestServeGCPolicy(t *testing.T) {
	p0, l0 := inForce()
	// The default limit is the cgroup's, where there is one.
	lDefault := l0
	if c := cgroupMemoryLimit() / 10 * 9; c > 0 {
		lDefault = c
	}
	cases := []struct {
		name      string
		env       string // GOGC in the environment
		args      []string
		wantGOGC  int // -2: unchanged
		wantLimit int64
	}{
		{"default", "", nil, defaultServeGOGC, lDefault},
		{"no limit", "", []string{"--memory-limit", "0"}, defaultServeGOGC, math.MaxInt64},
		{"flags", "", []string{"--gogc", "350", "--memory-limit", "1073741824"}, 350, 1 << 30},
		{"environment kept", "150", nil, -2, lDefault},
		{"flag over environment", "150", []string{"--gogc", "50"}, 50, lDefault},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("GOGC", c.env)
			fs, gogc, limit := parseGCFlags(t, c.args...)
			restore := setGCPolicy(fs, *gogc, *limit)
			p, l := inForce()
			restore()
			want := c.wantGOGC
			if want == -2 {
				want = p0
			}
			if p != want || l != c.wantLimit {
				t.Errorf("in force: GOGC %d, limit %d; want %d, %d", p, l, want, c.wantLimit)
			}
			if p, l := inForce(); p != p0 || l != l0 {
				t.Errorf("after restore: GOGC %d, limit %d; want %d, %d", p, l, p0, l0)
			}
		})
	}
}
