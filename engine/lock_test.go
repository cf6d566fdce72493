package engine

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ocbench/ocbench/transcript"
)

// TestHelperHoldSessionLock is not a test: run as a child process by
// TestRunSessionLockedByAnotherProcess, it holds a session's lock until
// killed.
func TestHelperHoldSessionLock(t *testing.T) {
	path := os.Getenv("OCBENCH_HOLD_SESSION")
	if path == "" {
		t.Skip("helper process only")
	}
	w, err := transcript.OpenWriter(path, transcript.WriterOptions{})
	if err != nil {
		os.Stdout.WriteString("error " + err.Error() + "\n")
		os.Exit(1)
	}
	defer w.Close()
	os.Stdout.WriteString("locked\n")
	time.Sleep(time.Minute)
}

func TestRunSessionLockedByAnotherProcess(t *testing.T) {
	e := newRunEnv(t)
	os.MkdirAll(filepath.Dir(e.session), 0o755)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHoldSessionLock$")
	cmd.Env = append(os.Environ(), "OCBENCH_HOLD_SESSION="+e.session)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "locked" {
		t.Fatalf("helper: %q", line)
	}
	before, _ := os.ReadFile(e.session)
	_, err = Run(context.Background(), e.params("hi"))
	if !errors.Is(err, transcript.ErrLocked) {
		t.Fatalf("want ErrLocked, got %v", err)
	}
	if after, _ := os.ReadFile(e.session); string(after) != string(before) {
		t.Fatal("the locked session was written to")
	}
	if e.fp.calls != 0 {
		t.Fatal("the model was called")
	}
	// Once the other process is gone (killed, not closed), the lock is
	// free again.
	cmd.Process.Kill()
	cmd.Wait()
	if _, err := Run(context.Background(), e.params("hi")); err != nil {
		t.Fatalf("after the holder died: %v", err)
	}
}

func TestRunCorruptSessionLines(t *testing.T) {
	e := newRunEnv(t, fakeTurn{msg: assistantText("one")}, fakeTurn{msg: assistantText("two")})
	if _, err := Run(context.Background(), e.params("first")); err != nil {
		t.Fatal(err)
	}
	// A garbage line in the middle of the file, and a line of another
	// tool's JSON.
	f, _ := os.OpenFile(e.session, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("this is not json at all\n{\"level\":\"info\",\"msg\":\"foreign log line\"}\n")
	f.Close()
	res, err := Run(context.Background(), e.params("second"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), "malformed lines were skipped") {
		t.Fatalf("notes %q", res.Notes)
	}
	// The earlier conversation reached the model, and nothing was lost:
	// the garbage is still in the file, after it the new entries.
	if req := e.fp.reqs[1]; len(req) != 3 || req[0].TextContent() != "first" {
		t.Fatalf("second call had %d messages", len(req))
	}
	b, _ := os.ReadFile(e.session)
	if !strings.Contains(string(b), "this is not json at all") {
		t.Fatal("the malformed line was dropped")
	}
	_, roles := sessionRoles(t, e.session)
	if roles != "user,assistant:stop,user,assistant:stop" {
		t.Fatal(roles)
	}
}
