package cacheprofile

import (
	"bytes"
	"testing"
)

// FuzzProfile feeds arbitrary bytes through the whole session → requests →
// simulator path: it must never panic, and every call's tokens must add up.
// Seeds are in testdata/fuzz/FuzzProfile.
func FuzzProfile(f *testing.F) {
	f.Add([]byte(`{"type":"session","version":3,"id":"s"}` + "\n" +
		`{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"hi"}}` + "\n" +
		`{"type":"message","id":"b","parentId":"a","message":{"role":"assistant","content":[],"provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":3,"cacheRead":0,"cacheWrite":2000},"stopReason":"stop","timestamp":5}}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		bad := ""
		// Errors are expected (most inputs are not sessions); only panics
		// and broken invariants fail.
		_, _ = Profile(bytes.NewReader(data), Options{OnCall: func(c *Call) {
			p := &c.Predicted
			if p.CacheRead < 0 || p.CacheWrite < 0 || p.Uncached < 0 || p.CacheRead+p.CacheWrite+p.Uncached != p.Prompt {
				bad = "tokens do not add up"
			}
		}})
		if bad != "" {
			t.Fatal(bad)
		}
	})
}
