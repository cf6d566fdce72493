package cacheprofile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/ocbench/ocbench/transcript"
)

// ErrNotSession is returned (wrapped) for a file that is neither a session
// JSONL (plain or zstd) nor an OpenClaw SQLite transcript store: typically a
// file of another tool.
var ErrNotSession = errors.New("cacheprofile: not an OpenClaw or pi session file")

// FileError says which file failed and why; it wraps the cause.
type FileError struct {
	File string
	Err  error
}

func (e *FileError) Error() string { return e.File + ": " + e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

// readOptions read whole sessions: unknown entries kept (they may sit on
// the branch), and a line over the limit skipped and counted rather than
// ending the profile there.
var readOptions = transcript.Options{KeepUnknown: true, SkipLongLines: true}

var sqliteMagic = []byte("SQLite format 3\x00")

// ProfileFile profiles the session file at path: a JSONL session (plain or
// zstd) gives one report, a SQLite transcript store one per session.
func ProfileFile(path string, opts Options) ([]*Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &FileError{path, err}
	}
	var magic [16]byte
	n, _ := io.ReadFull(f, magic[:])
	f.Close()
	if n == len(magic) && bytes.Equal(magic[:], sqliteMagic) {
		reps, err := profileSQLite(path, opts)
		if err != nil {
			return nil, &FileError{path, err}
		}
		return reps, nil
	}
	rd, err := transcript.OpenFile(path, readOptions)
	if err != nil {
		return nil, &FileError{path, err}
	}
	defer rd.Close()
	rep, err := profileReader(rd, path, "", opts)
	if err != nil {
		return nil, &FileError{path, err}
	}
	return []*Report{rep}, nil
}

// Profile profiles a session JSONL read from r.
func Profile(r io.Reader, opts Options) (*Report, error) {
	return profileReader(transcript.NewReader(bufio.NewReader(r), readOptions), "", "", opts)
}

func profileReader(rd *transcript.Reader, file, source string, opts Options) (*Report, error) {
	p := NewProfiler(opts)
	p.rep.File = file
	first := true
	for rd.Next() {
		if first {
			h := rd.Header()
			p.Header(h, sourceName(source, h))
			if opts.OnBegin != nil {
				opts.OnBegin(file, h.ID)
			}
			first = false
		}
		p.Entry(rd.Entry())
	}
	if err := rd.Err(); err != nil {
		if errors.Is(err, transcript.ErrNotSession) {
			return nil, fmt.Errorf("%w (%v)", ErrNotSession, err)
		}
		return nil, err
	}
	if first {
		h := rd.Header()
		if h.Version == 0 {
			return nil, fmt.Errorf("%w: no session header", ErrNotSession)
		}
		p.Header(h, sourceName(source, h))
		if opts.OnBegin != nil {
			opts.OnBegin(file, h.ID)
		}
	}
	rep := p.Finish(rd.Stats())
	if opts.OnEnd != nil {
		opts.OnEnd(rep)
	}
	return rep, nil
}

func sourceName(source string, h transcript.Header) string {
	if source != "" {
		return source
	}
	return fmt.Sprintf("jsonl v%d", h.Version)
}
