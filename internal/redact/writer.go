package redact

import "io"

// Writer redacts a stream of bytes on its way to an io.Writer. A secret
// may arrive split across writes, so the Writer holds back the tail that
// could be the start of one (at most MaxSecretLen−1 bytes, and a token
// still being written), except after a newline: SSE events and JSON lines
// end in one, so they pass without delay. Flush writes what is held. A
// Writer is not safe for concurrent use.
type Writer struct {
	r   *Redactor
	w   io.Writer
	buf []byte
	out []byte
}

// NewWriter returns a Writer redacting r's secrets into w.
func NewWriter(r *Redactor, w io.Writer) *Writer {
	if r == nil {
		r = New()
	}
	return &Writer{r: r, w: w}
}

// Write redacts p and writes what is safe to write now. It reports len(p)
// unless the underlying writer fails.
func (w *Writer) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	if err := w.emit(false); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes everything held back.
func (w *Writer) Flush() error { return w.emit(true) }

func (w *Writer) emit(final bool) error {
	src := w.buf
	out := w.out[:0]
	pos, upTo := 0, -1
	for {
		i, n := w.r.index(src[pos:])
		if i < 0 {
			break
		}
		start, end := pos+i, pos+i+n
		if !final && end == len(src) {
			// A token secret may go on in the next write.
			upTo = start
			break
		}
		out = append(out, src[pos:start]...)
		out = append(out, Marker...)
		pos = end
	}
	if upTo < 0 {
		upTo = len(src)
		if !final && !(len(src) > 0 && src[len(src)-1] == '\n' && !w.r.newline) {
			upTo = max(pos, len(src)-(w.r.MaxSecretLen()-1))
			// Never cut inside a token: its start decides pattern matches.
			for upTo > pos && isTokenByte(src[upTo-1]) {
				upTo--
			}
		}
	}
	out = append(out, src[pos:upTo]...)
	w.out = out
	rest := copy(w.buf, src[upTo:])
	w.buf = w.buf[:rest]
	if len(out) == 0 {
		return nil
	}
	_, err := w.w.Write(out)
	return err
}

var _ io.Writer = (*Writer)(nil)
