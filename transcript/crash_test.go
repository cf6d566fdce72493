package transcript

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ocbench/ocbench/llm"
)

const crashChildEnv = "TRANSCRIPT_CRASH_CHILD"

// TestCrashChild is the child side of TestCrashRecovery: it appends to the
// session named by the environment under SyncEntry and prints each id once
// Append has returned. It does nothing in a normal test run.
func TestCrashChild(t *testing.T) {
	path := os.Getenv(crashChildEnv)
	if path == "" {
		t.Skip("child process only")
	}
	w, err := OpenWriter(path, WriterOptions{Durability: SyncEntry})
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(2)
	}
	out := bufio.NewWriter(os.Stdout)
	fmt.Fprintln(out, "ready")
	out.Flush()
	rng := rand.New(rand.NewPCG(uint64(os.Getpid()), uint64(time.Now().UnixNano())))
	for i := 0; ; i++ {
		// Mostly small entries, some large enough that a SIGKILL can land
		// in the middle of the write and leave a torn line.
		n := 10 + rng.IntN(200)
		if rng.IntN(8) == 0 {
			n = 1<<20 + rng.IntN(4<<20)
		}
		m := llm.TextMessage(llm.RoleToolResult, strings.Repeat("x", n))
		m.ToolCallID, m.ToolName = "call_1", "exec"
		id, err := w.Append(&Entry{Type: TypeMessage, Message: &m})
		if err != nil {
			fmt.Println("ERR", err)
			os.Exit(2)
		}
		fmt.Fprintln(out, id)
		out.Flush()
	}
}

// TestCrashRecovery kills a child appending to one session with SIGKILL at
// random points, many times; after each kill the file must open, and every
// entry the child acknowledged must read back.
func TestCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "crash.jsonl")
	iterations := 50
	acked := map[string]bool{}
	torn := 0
	rng := rand.New(rand.NewPCG(1, 2))
	deadline := time.Now().Add(20 * time.Second)
	for it := 0; it < iterations && time.Now().Before(deadline); it++ {
		cmd := exec.Command(exe, "-test.run=^TestCrashChild$", "-test.v=false")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+path)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan []string)
		ready := make(chan struct{})
		go func() {
			var ids []string
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				if sc.Text() == "ready" {
					close(ready)
					continue
				}
				ids = append(ids, sc.Text())
			}
			done <- ids
		}()
		// Kill at a random point of the appending, once the child has
		// opened (and so recovered) the session.
		select {
		case <-ready:
		case <-time.After(5 * time.Second):
		}
		time.Sleep(time.Duration(rng.IntN(40)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		ids := <-done
		cmd.Wait()
		for _, id := range ids {
			if strings.HasPrefix(id, "ERR") {
				t.Fatalf("child: %s", id)
			}
			if len(id) == 8 {
				acked[id] = true
			}
		}
		// The file always opens; recovery reports a torn line if any.
		w, err := OpenWriter(path, WriterOptions{})
		if err != nil {
			t.Fatalf("iteration %d: open after kill: %v", it, err)
		}
		if w.Recovery().Torn {
			torn++
		}
		w.Close()
		r, err := OpenFile(path, Options{Strict: true, RawMessages: true})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for r.Next() {
			seen[string(r.Entry().ID)] = true
		}
		if err := r.Err(); err != nil {
			t.Fatalf("iteration %d: read: %v", it, err)
		}
		if r.Stats().Torn {
			t.Fatalf("iteration %d: torn line after recovery", it)
		}
		r.Close()
		for id := range acked {
			if !seen[id] {
				t.Fatalf("iteration %d: acknowledged entry %s lost", it, id)
			}
		}
	}
	side, _ := filepath.Glob(path + ".torn-*")
	if len(side) != torn {
		t.Errorf("%d torn recoveries but %d side files", torn, len(side))
	}
	t.Logf("%d acknowledged entries survived; %d torn last lines set aside", len(acked), torn)
	if len(acked) == 0 {
		t.Error("the child never acknowledged an entry")
	}
}
