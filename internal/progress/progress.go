// Package progress draws one status line for a long command: on a
// terminal it redraws the line in place (carriage return, erase to the end
// of the line), elsewhere (logs, CI, pipes) it writes plain lines, at most
// one per Every. It owns the drawing only; what the line says and how the
// time left is estimated is the caller's.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// Line is one status line. Its methods are safe for concurrent use.
type Line struct {
	w     io.Writer
	tty   bool
	width int
	// Every limits plain (non-terminal) lines to one per period (10 s by
	// default: a log gets a heartbeat, not a line a second); a line
	// written with Println is always written.
	Every time.Duration

	mu    sync.Mutex
	last  time.Time
	drawn bool
}

// New returns a Line on w, redrawn in place when w is a terminal.
func New(w io.Writer) *Line {
	l := &Line{w: w, Every: 10 * time.Second, width: 100}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		l.tty = true
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 20 {
			l.width = cols - 1
		}
	}
	return l
}

// Terminal reports whether the line is redrawn in place.
func (l *Line) Terminal() bool { return l.tty }

// Set replaces the status text. On a terminal it is redrawn at once
// (truncated to the terminal's width); elsewhere it is written as a line
// when Every has passed since the last one.
func (l *Line) Set(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.tty {
		if r := []rune(s); len(r) > l.width {
			s = string(r[:l.width])
		}
		fmt.Fprintf(l.w, "\r\x1b[K%s", s)
		l.drawn = true
		return
	}
	if now := time.Now(); l.last.IsZero() || now.Sub(l.last) >= l.Every {
		l.last = now
		fmt.Fprintln(l.w, s)
	}
}

// Println writes a line that stays (an event worth keeping in a log); on a
// terminal the status line is erased first and must be Set again.
func (l *Line) Println(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.tty && l.drawn {
		fmt.Fprint(l.w, "\r\x1b[K")
		l.drawn = false
	}
	fmt.Fprintln(l.w, strings.TrimRight(s, "\n"))
}

// Done erases the status line on a terminal; elsewhere it does nothing.
func (l *Line) Done() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.tty && l.drawn {
		fmt.Fprint(l.w, "\r\x1b[K")
		l.drawn = false
	}
}

// Bar renders a fraction (0..1) as a bar of width cells.
func Bar(frac float64, width int) string {
	frac = min(max(frac, 0), 1)
	n := int(frac*float64(width) + 0.5)
	return "[" + strings.Repeat("=", n) + strings.Repeat(" ", width-n) + "]"
}

// Dur formats a duration for a status line: 45s, 2m05s.
func Dur(d time.Duration) string {
	d = d.Round(time.Second)
	if d < time.Minute {
		return fmt.Sprintf("%ds", int(d.Seconds()))
	}
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}
