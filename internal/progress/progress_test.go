package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestPlainLines: off a terminal the status is a plain line at most once
// per Every, and Println lines are always written.
func TestPlainLines(t *testing.T) {
	var b bytes.Buffer
	l := New(&b)
	if l.Terminal() {
		t.Fatal("a buffer is not a terminal")
	}
	l.Every = time.Hour
	l.Set("one %d", 1)
	l.Set("two")
	l.Println("event")
	l.Done()
	if got := b.String(); got != "one 1\nevent\n" {
		t.Errorf("got %q", got)
	}
	if strings.Contains(b.String(), "\r") || strings.Contains(b.String(), "\x1b") {
		t.Error("terminal control characters off a terminal")
	}
}

// TestTerminalRedraw: on a terminal each Set redraws the one line in place.
func TestTerminalRedraw(t *testing.T) {
	var b bytes.Buffer
	l := &Line{w: &b, tty: true, width: 10, Every: time.Second}
	l.Set("first")
	l.Set("a much longer status")
	l.Println("kept")
	l.Done()
	want := "\r\x1b[Kfirst\r\x1b[Ka much lon\r\x1b[Kkept\n"
	if got := b.String(); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestBarAndDur(t *testing.T) {
	if got := Bar(0.5, 4); got != "[==  ]" {
		t.Errorf("Bar = %q", got)
	}
	if got := Bar(2, 2); got != "[==]" {
		t.Errorf("Bar over 1 = %q", got)
	}
	if got := Dur(125 * time.Second); got != "2m05s" {
		t.Errorf("Dur = %q", got)
	}
}
