package transcript

import (
	"errors"
	"fmt"
)

// ErrNotSession is returned (wrapped in a *FormatError) when the first line
// of the input is not a session header: typically a file of another tool,
// or a session whose header was corrupted.
var ErrNotSession = errors.New("transcript: not a session file")

// ErrLineTooLong is returned (wrapped in a *LineTooLongError) when a line is
// longer than Options.MaxLineSize. The reader stops there: nothing after the
// line is read.
var ErrLineTooLong = errors.New("transcript: line too long")

// ErrBadLine is returned (wrapped in a *FormatError) for a malformed line in
// strict mode (Options.Strict). Without Strict, malformed lines are skipped
// and counted in Stats.BadLines, as pi does.
var ErrBadLine = errors.New("transcript: malformed line")

// ErrLocked is returned by OpenWriter when another writer (in this or another
// process) holds the session file's lock.
var ErrLocked = errors.New("transcript: session file is locked by another writer")

// ErrClosed is returned by a Writer used after Close.
var ErrClosed = errors.New("transcript: writer closed")

// FormatError reports where a session file is malformed. It wraps
// ErrNotSession or ErrBadLine.
type FormatError struct {
	Line    int64  // 1-based line number
	Offset  int64  // byte offset of the line's start
	Excerpt string // at most 80 bytes of the line
	Err     error
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("%v at line %d (offset %d): %q", e.Err, e.Line, e.Offset, e.Excerpt)
}

func (e *FormatError) Unwrap() error { return e.Err }

// LineTooLongError reports a line longer than the configured limit. It
// matches ErrLineTooLong with errors.Is.
type LineTooLongError struct {
	Line   int64
	Offset int64
	Limit  int
}

func (e *LineTooLongError) Error() string {
	return fmt.Sprintf("transcript: line %d (offset %d) longer than %d bytes", e.Line, e.Offset, e.Limit)
}

func (e *LineTooLongError) Is(target error) bool { return target == ErrLineTooLong }

// excerpt returns a bounded, printable excerpt of b (cold path only).
func excerpt(b []byte) string {
	const n = 80
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}
