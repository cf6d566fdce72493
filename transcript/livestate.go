package transcript

import (
	"errors"
	"io"
)

// WriterState identifies a Writer's session file at one moment, as fstat
// sees it through the writer's open descriptor: device, inode, size,
// modification and change times. A caller that keeps what it parsed of a
// session (the engine's live-session cache) records the state before it
// closes the writer and compares it with the state of the next writer of
// that session: equal states mean nobody wrote, truncated or replaced the
// file in between (the same check a DirStore makes before it reuses an
// idle handle).
type WriterState struct {
	ident fileIdent
	size  int64
}

// Size is the file's size in this state.
func (s WriterState) Size() int64 { return s.size }

// SameFile reports whether s and o are states of the same file (device
// and inode), whatever was written to it in between.
func (s WriterState) SameFile(o WriterState) bool {
	return s.ident.ok && o.ident.ok && s.ident.dev == o.ident.dev && s.ident.ino == o.ident.ino
}

// State returns the state of w's file now; ok is false when it cannot be
// known (a system without file identities, a closed or failed writer, or a
// file whose size is not what the writer wrote).
func (w *Writer) State() (WriterState, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil || w.err != nil {
		return WriterState{}, false
	}
	id := w.known
	if !id.ok {
		fi, err := w.f.Stat()
		if err != nil {
			return WriterState{}, false
		}
		id = identOf(fi)
	}
	if !id.ok || int64(id.size) != w.size {
		return WriterState{}, false
	}
	w.known = id // until the next write
	return WriterState{ident: id, size: w.size}, true
}

// Size is the size of w's file as w has written it: where its next
// append starts.
func (w *Writer) Size() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.size
}

// errTailVersion: ReadTail reads only version-3+ files, whose lines parse
// independently of the ones before.
var errTailVersion = errors.New("transcript: ReadTail needs a version 3 or later session")

// ReadTail returns a Reader of what w's file holds from byte off (the
// start of a line: a size the writer had) to its current end, read
// through w's descriptor. Its entries, Line and Offset numbers and Stats
// (Bytes, Lines) are those a Reader of the whole file would give after
// `lines` lines, so a caller that parsed the file up to off extends its
// view without reading it again. A non-nil reuse is reset and returned
// (its buffers kept; its options stay), else a new Reader with opts is
// made. Close the Reader after use (it does not close w's file).
func (w *Writer) ReadTail(reuse *Reader, off, lines int64, opts Options) (*Reader, error) {
	w.mu.Lock()
	f, size, hdr := w.f, w.size, w.hdr
	w.mu.Unlock()
	if f == nil {
		return nil, ErrClosed
	}
	if hdr.Version < 3 {
		return nil, errTailVersion
	}
	if off < 0 || off > size {
		return nil, io.ErrUnexpectedEOF
	}
	sr := io.NewSectionReader(f, off, size-off)
	r := reuse
	if r == nil {
		r = NewReader(sr, opts)
	} else {
		r.Reset(sr)
	}
	r.hdr = hdr
	r.hdrDone = true
	r.offset = off
	r.st.Bytes = off
	r.st.Lines = lines
	return r, nil
}
