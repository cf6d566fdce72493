package engine

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ocbench/ocbench/transcript"
)

// TestSessionReopenWhileProcessesStart reopens one session run after run
// while other goroutines start processes (as concurrent exec tool calls
// do). A child between fork and exec holds a copy of every descriptor,
// the session's lock file included: if closing the lock file were the
// only release, the next run of the same session would fail with
// ErrLocked although no writer holds it.
func TestSessionReopenWhileProcessesStart(t *testing.T) {
	if _, err := exec.LookPath("true"); err != nil {
		t.Skip("no true(1) to start")
	}
	e := newRunEnv(t)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				_ = exec.Command("true").Run()
			}
		}()
	}
	defer func() { close(stop); wg.Wait() }()
	p := e.params("hi")
	p.SessionFile = filepath.Join(e.dir, "reopen.jsonl")
	p.Session.Durability = transcript.SyncNone
	p.OnEvent = nil
	for i := range 100 {
		if _, err := Run(context.Background(), p); err != nil {
			if errors.Is(err, transcript.ErrLocked) {
				t.Fatalf("run %d: %v: the released lock was still held by a starting child", i, err)
			}
			t.Fatal(err)
		}
	}
}
