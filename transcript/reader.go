package transcript

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"

	"github.com/klauspost/compress/zstd"
	"github.com/ocbench/ocbench/llm"
	"github.com/valyala/fastjson"
)

// DefaultMaxLineSize is the longest line a Reader accepts unless
// Options.MaxLineSize says otherwise. Lines hold whole messages, images in
// base64 included, so the limit is generous; memory grows only as far as the
// longest line actually read.
const DefaultMaxLineSize = 32 << 20

// readBufSize is the size of the Reader's bufio buffer; lines up to this
// size are parsed straight from it.
const readBufSize = 64 << 10

// Options configure a Reader. The zero value is ready to use.
type Options struct {
	// MaxLineSize bounds one line in bytes (the newline excluded); past it
	// Next stops with a *LineTooLongError. Zero means DefaultMaxLineSize.
	MaxLineSize int
	// KeepUnknown makes Next return entries of unknown types (TypeUnknown,
	// with RawType, ID, ParentID and Timestamp) instead of skipping them.
	// Walking parentId needs them: an unknown entry may sit on the branch.
	KeepUnknown bool
	// RawMessages leaves message entries unparsed: Message stays nil and
	// MessageJSON holds the raw message. Reading then allocates nothing per
	// entry in steady state.
	RawMessages bool
	// SkipContent sets only Type, RawType, ID, ParentID, Timestamp, Line
	// and Offset of each entry: the fastest pass, for walking the tree
	// (LoadContext's first pass, the Writer's recovery scan).
	SkipContent bool
	// Strict makes a malformed line an error (ErrBadLine) instead of being
	// skipped and counted, as pi skips it.
	Strict bool
	// SkipLongLines makes a line longer than MaxLineSize skipped (its
	// bytes read and dropped in bounded memory) and counted in
	// Stats.LongLines, instead of stopping with a *LineTooLongError: for
	// readers that report on a whole session (cache-profile).
	SkipLongLines bool
}

// Reader streams the entries of one session file. It reads line by line
// with a bounded buffer, so a file of any size is read in memory
// proportional to its longest line. A Reader is not safe for concurrent use.
type Reader struct {
	opts Options
	br   *bufio.Reader
	p    fastjson.Parser
	a    fastjson.Arena

	e    Entry
	hdr  Header
	st   Stats
	err  error
	done bool

	hdrDone bool
	migrate bool  // version < 3: hookMessage -> custom
	v1      bool  // version 1: synthesise ids and parentIds
	index   int64 // index of the current entry in pi's entries array (header = 0)

	offset int64
	line   []byte // long lines that do not fit the bufio buffer
	// longRead is how much of a too-long line was read, longNL whether its
	// newline (or the end of input) was reached.
	longRead int64
	longNL   bool

	idBuf, prevBuf, fkBuf                   []byte
	dataBuf, detailsBuf, contentBuf, msgBuf []byte
	surBuf                                  []byte // a line with lone surrogates, as parsed

	closers []io.Closer

	// raw is the current line (header or entry) as read, borrowed; the
	// Writer uses it to copy or migrate lines verbatim.
	raw []byte
	// cur is the parsed current line, valid until the next Next.
	cur *fastjson.Value
	// hdrRaw is a copy of the header line.
	hdrRaw []byte
}

// NewReader returns a Reader of the session JSONL in rd (plain text; use
// OpenFile for files, which also opens zstd archives).
func NewReader(rd io.Reader, opts Options) *Reader {
	r := &Reader{}
	r.opts = opts
	if r.opts.MaxLineSize <= 0 {
		r.opts.MaxLineSize = DefaultMaxLineSize
	}
	r.br = bufio.NewReaderSize(rd, readBufSize)
	return r
}

// Reset makes r read rd from the start, keeping its buffers and options.
// A file opened by OpenFile is closed first.
func (r *Reader) Reset(rd io.Reader) {
	r.Close()
	r.br.Reset(rd)
	r.e = Entry{}
	r.hdr = Header{}
	r.st = Stats{}
	r.err = nil
	r.done = false
	r.hdrDone = false
	r.migrate = false
	r.v1 = false
	r.index = 0
	r.offset = 0
}

// zstdMagic starts every zstd frame.
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// OpenFile opens a session file for reading. A zstd-compressed file (an
// archive written by Rotate, or any .zst) is detected by its magic number
// and decompressed on the fly. Close the Reader to close the file.
func OpenFile(path string, opts Options) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r := NewReader(f, opts)
	magic, _ := r.br.Peek(4)
	if bytes.Equal(magic, zstdMagic) {
		d, err := newZstdReader(r.br)
		if err != nil {
			f.Close()
			return nil, err
		}
		r.br = bufio.NewReaderSize(d, readBufSize)
		r.closers = append(r.closers, zstdCloser{d})
	}
	r.closers = append(r.closers, f)
	return r, nil
}

// newZstdReader returns a single-goroutine, low-memory decoder with a
// bounded window.
func newZstdReader(rd io.Reader) (*zstd.Decoder, error) {
	return zstd.NewReader(rd, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxWindow(64<<20))
}

type zstdCloser struct{ d *zstd.Decoder }

func (z zstdCloser) Close() error { z.d.Close(); return nil }

// Close releases the file and decoder opened by OpenFile. It is a no-op for
// a Reader made by NewReader.
func (r *Reader) Close() error {
	var err error
	for _, c := range r.closers {
		if cerr := c.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	r.closers = r.closers[:0]
	return err
}

// Header returns the session header. It is known once Next has returned
// true once, or has returned false without error on a file with a header
// and no entries. Version is 0 when no header was read (an empty file or a
// torn first line).
func (r *Reader) Header() Header { return r.hdr }

// Stats returns the counts so far; complete once Next has returned false.
func (r *Reader) Stats() Stats { return r.st }

// Err returns the error that stopped Next, or nil at a clean end of input.
// A torn last line is not an error: see Stats.Torn.
func (r *Reader) Err() error { return r.err }

// Entry returns the current entry. It is borrowed: valid until the next
// call to Next or Reset. Use Entry.Clone to keep it.
func (r *Reader) Entry() *Entry { return &r.e }

// readLine returns the next line without its newline; complete says whether
// the newline was there. At the end of input it returns io.EOF.
func (r *Reader) readLine() (line []byte, complete bool, err error) {
	max := r.opts.MaxLineSize
	b, err := r.br.ReadSlice('\n')
	if err == nil {
		// Fast path: the whole line is in the bufio buffer.
		if len(b)-1 > max {
			r.longRead, r.longNL = int64(len(b)), true
			return nil, false, r.tooLong()
		}
		return b[:len(b)-1], true, nil
	}
	if err != bufio.ErrBufferFull {
		if len(b) == 0 {
			return nil, false, err
		}
		if err != io.EOF {
			return nil, false, err
		}
		if len(b) > max {
			r.longRead, r.longNL = int64(len(b)), true // at the end: nothing left to drop
			return nil, false, r.tooLong()
		}
		return b, false, nil
	}
	// Slow path: accumulate a long line.
	r.line = append(r.line[:0], b...)
	for {
		if len(r.line) > max {
			r.longRead, r.longNL = int64(len(r.line)), false
			r.line = r.line[:0]
			return nil, false, r.tooLong()
		}
		b, err = r.br.ReadSlice('\n')
		r.line = append(r.line, b...)
		switch err {
		case nil:
			if len(r.line)-1 > max {
				r.longRead, r.longNL = int64(len(r.line)), true
				r.line = r.line[:0]
				return nil, false, r.tooLong()
			}
			return r.line[:len(r.line)-1], true, nil
		case bufio.ErrBufferFull:
			continue
		case io.EOF:
			if len(r.line) > max {
				r.longRead, r.longNL = int64(len(r.line)), true
				r.line = r.line[:0]
				return nil, false, r.tooLong()
			}
			return r.line, false, nil
		default:
			return nil, false, err
		}
	}
}

// dropLine reads and drops the rest of a too-long line, through its
// newline, in bounded memory; it returns the bytes dropped. r.longNL says
// the newline was already read.
func (r *Reader) dropLine() (int64, error) {
	if r.longNL {
		return 0, nil
	}
	var n int64
	for {
		b, err := r.br.ReadSlice('\n')
		n += int64(len(b))
		switch err {
		case nil:
			return n, nil
		case bufio.ErrBufferFull:
			continue
		default:
			return n, err
		}
	}
}

func (r *Reader) tooLong() error {
	return &LineTooLongError{Line: r.st.Lines + 1, Offset: r.offset, Limit: r.opts.MaxLineSize}
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

// Next advances to the next entry. It returns false at the end of input or
// on an error (see Err).
func (r *Reader) Next() bool {
	for {
		if r.err != nil || r.done {
			return false
		}
		start := r.offset
		line, complete, err := r.readLine()
		if tl, ok := err.(*LineTooLongError); ok && r.opts.SkipLongLines && r.hdrDone {
			if n, derr := r.dropLine(); derr == nil || derr == io.EOF {
				r.offset += r.longRead + n
				r.st.Bytes = r.offset
				r.st.Lines++
				r.st.LongLines++
				if r.st.FirstLong == 0 {
					r.st.FirstLong = tl.Line
				}
				continue
			} else {
				err = derr
			}
		}
		if err != nil {
			if err != io.EOF {
				r.err = err
			}
			r.done = true
			return false
		}
		n := int64(len(line))
		if complete {
			n++
		}
		r.offset += n
		r.st.Bytes = r.offset
		r.st.Lines++
		if isBlank(line) {
			r.st.Blank++
			continue
		}
		parsed := line
		if r.opts.SkipContent {
			// Navigation reads ids alone: no text to keep whole.
		} else if at := llm.NextLoneSurrogate(line, 0); at >= 0 {
			// JSON.parse keeps a lone surrogate: read it in its
			// three-byte form (AppendJSONString writes it back as the
			// escape); the line itself stays as written.
			r.surBuf = llm.LoneSurrogatesToWTF8(append(r.surBuf[:0], line...), at)
			parsed = r.surBuf
		}
		v, perr := r.p.ParseBytes(parsed)
		if perr == nil && v.Type() != fastjson.TypeObject {
			perr = errNotObject
		}
		if perr != nil {
			if !complete {
				// A torn last line: what a crash in the middle of an append
				// leaves. The entries before it stand.
				r.st.Torn = true
				r.st.TornOffset = start
				r.st.TornBytes = int64(len(line))
				r.done = true
				return false
			}
			if !r.hdrDone {
				r.err = &FormatError{Line: r.st.Lines, Offset: start, Excerpt: excerpt(line), Err: ErrNotSession}
				return false
			}
			r.bad(line, start)
			continue
		}
		r.raw, r.cur = line, v
		if !r.hdrDone {
			if !r.header(v) {
				r.err = &FormatError{Line: r.st.Lines, Offset: start, Excerpt: excerpt(line), Err: ErrNotSession}
				return false
			}
			r.hdrRaw = append(r.hdrRaw[:0], line...)
			continue
		}
		if r.entry(v, start) {
			return true
		}
	}
}

var errNotObject = errors.New("not a JSON object")

// maxUnknownNames bounds Stats.UnknownTypes.
const maxUnknownNames = 32

// countUnknown counts an unknown type name (cold path: unknown entries are
// rare, and a name already seen costs no allocation).
func (r *Reader) countUnknown(typ []byte) {
	if r.st.UnknownTypes == nil {
		r.st.UnknownTypes = make(map[string]int64)
	}
	if _, ok := r.st.UnknownTypes[string(typ)]; ok || len(r.st.UnknownTypes) < maxUnknownNames {
		r.st.UnknownTypes[string(typ)]++
		return
	}
	r.st.UnknownTypes["..."]++
}

func (r *Reader) bad(line []byte, start int64) {
	r.st.BadLines++
	if r.st.FirstBad == 0 {
		r.st.FirstBad = r.st.Lines
	}
	if r.opts.Strict {
		r.err = &FormatError{Line: r.st.Lines, Offset: start, Excerpt: excerpt(line), Err: ErrBadLine}
	}
}

// header reads the first line; false when it is not a session header (pi
// requires type "session" and a string id).
func (r *Reader) header(v *fastjson.Value) bool {
	if string(v.GetStringBytes("type")) != "session" {
		return false
	}
	idv := v.Get("id")
	if idv == nil || idv.Type() != fastjson.TypeString {
		return false
	}
	h := Header{
		Version:       1,
		ID:            string(idv.GetStringBytes()),
		Cwd:           string(v.GetStringBytes("cwd")),
		ParentSession: string(v.GetStringBytes("parentSession")),
		Provider:      string(v.GetStringBytes("provider")),
		ModelID:       string(v.GetStringBytes("modelId")),
		ThinkingLevel: string(v.GetStringBytes("thinkingLevel")),
	}
	if vv := v.Get("version"); vv != nil && vv.Type() == fastjson.TypeNumber {
		h.Version = vv.GetInt()
	}
	h.Timestamp = timestampOf(v)
	r.hdr = h
	r.hdrDone = true
	r.v1 = h.Version < 2
	r.migrate = h.Version < 3
	return true
}

func timestampOf(v *fastjson.Value) int64 {
	t := v.Get("timestamp")
	if t == nil {
		return 0
	}
	switch t.Type() {
	case fastjson.TypeString:
		ms, _ := parseISOMillis(t.GetStringBytes())
		return ms
	case fastjson.TypeNumber:
		return t.GetInt64()
	}
	return 0
}

func appendHex8(dst []byte, n int64) []byte {
	const hex = "0123456789abcdef"
	for shift := 28; shift >= 0; shift -= 4 {
		dst = append(dst, hex[(n>>uint(shift))&0xf])
	}
	return dst
}

// rawTo stores the compact JSON of v (when present) in *buf. fastjson's
// MarshalTo copies what nobody read as it was written, but writes a string
// or member name it has unescaped with Go's quoting when it holds a quote,
// a backslash or a control character (\x01 is not JSON): touched says some
// part of v was read, and then v is written again by llm.AppendJSONValue.
func rawTo(buf *[]byte, v *fastjson.Value, touched bool) []byte {
	if v == nil {
		return nil
	}
	if touched {
		*buf = llm.AppendJSONValue((*buf)[:0], v)
	} else {
		*buf = v.MarshalTo((*buf)[:0])
	}
	return *buf
}

// quotable reports whether fastjson's MarshalTo quotes s the Go way once
// it has unescaped it.
func quotable(s []byte) bool {
	for _, c := range s {
		if c < 0x20 || c == '"' || c == '\\' {
			return true
		}
	}
	return false
}

// readMessageParts reports whether reading m's role and members left a name
// or the role for MarshalTo to quote (see rawTo).
func readMessageParts(m *fastjson.Value, role []byte) bool {
	touched := quotable(role)
	o, _ := m.Object()
	o.Visit(func(k []byte, _ *fastjson.Value) { touched = touched || quotable(k) })
	return touched
}

// entry fills r.e from v; false when the entry is skipped.
func (r *Reader) entry(v *fastjson.Value, start int64) bool {
	typ := v.GetStringBytes("type")
	if string(typ) == "session" {
		// A further header (pi's v1 migration leaves such lines without
		// ids; OpenClaw's navigation ignores them): never an entry.
		if r.v1 {
			r.index++
		}
		r.st.ExtraHeaders++
		return false
	}
	e := &r.e
	*e = Entry{Line: r.st.Lines, Offset: start}
	e.RawType = typ
	e.Type = parseEntryType(typ)
	r.index++
	if r.v1 {
		// pi migrates v1 by giving every entry an id and chaining it to the
		// previous one; the ids here are deterministic (the entry's index in
		// hex), so a compaction's firstKeptEntryIndex maps to an id without
		// remembering earlier entries.
		r.idBuf = appendHex8(r.idBuf[:0], r.index)
		e.ID = r.idBuf
		if r.index > 1 {
			r.prevBuf = appendHex8(r.prevBuf[:0], r.index-1)
			e.ParentID = r.prevBuf
		}
	} else {
		e.ID = v.GetStringBytes("id")
		pv := v.Get("parentId")
		e.ParentID = pv.GetStringBytes()
		e.ParentAbsent = pv == nil
	}
	e.Timestamp = timestampOf(v)
	if am := v.Get("appendMode"); am != nil {
		e.AppendSide = string(am.GetStringBytes()) == "side"
	}
	if e.Type == TypeLeaf {
		// Navigation facts are needed even by SkipContent readers.
		e.TargetID = v.GetStringBytes("targetId")
		if ap := v.Get("appendParentId"); ap != nil {
			e.AppendParentSet = true
			e.AppendParentID = ap.GetStringBytes()
		}
	}
	if e.Type == TypeReset {
		e.FirstKeptEntryID = v.GetStringBytes("firstKeptEntryId")
		e.Reason = v.GetStringBytes("reason")
	}
	if e.Type == TypeUnknown {
		r.st.Unknown++
		r.countUnknown(typ)
		if !r.opts.KeepUnknown {
			return false
		}
	}
	if r.opts.SkipContent {
		r.st.Entries++
		r.st.ByType[e.Type]++
		return true
	}
	switch e.Type {
	case TypeMessage:
		m := v.Get("message")
		if m == nil || m.Type() != fastjson.TypeObject {
			// Keep the entry, without a message, so that the parentId chain
			// through it holds (pi keeps it too); it adds no message to the
			// context.
			e.MessageJSON = rawTo(&r.msgBuf, m, m != nil && m.Type() == fastjson.TypeString)
			break
		}
		role := m.GetStringBytes("role")
		if r.migrate && string(role) == "hookMessage" {
			r.a.Reset()
			m.Set("role", r.a.NewString("custom"))
			role = m.GetStringBytes("role")
		}
		e.MessageRole = role
		e.ExcludeFromContext = m.GetBool("excludeFromContext")
		_, isLLM := llm.ParseRole(string(role))
		if isLLM && !r.opts.RawMessages {
			msg, err := llm.ParseMessage(m)
			if err != nil {
				// Not reached for an object with a known role; kept raw.
				e.MessageJSON = rawTo(&r.msgBuf, m, true)
				break
			}
			e.Message = &msg
		} else {
			e.MessageJSON = rawTo(&r.msgBuf, m, readMessageParts(m, role))
		}
	case TypeModelChange:
		e.Provider = v.GetStringBytes("provider")
		e.ModelID = v.GetStringBytes("modelId")
	case TypeThinkingLevelChange:
		e.ThinkingLevel = v.GetStringBytes("thinkingLevel")
	case TypeCompaction:
		e.Summary = v.GetStringBytes("summary")
		e.TokensBefore = v.GetInt64("tokensBefore")
		e.FromHook = v.GetBool("fromHook")
		e.Details = rawTo(&r.detailsBuf, v.Get("details"), false)
		e.FirstKeptEntryID = v.GetStringBytes("firstKeptEntryId")
		if r.v1 {
			if k := v.Get("firstKeptEntryIndex"); k != nil && k.Type() == fastjson.TypeNumber {
				idx := k.GetInt64()
				if idx > 0 && idx <= r.index {
					r.fkBuf = appendHex8(r.fkBuf[:0], idx)
					e.FirstKeptEntryID = r.fkBuf
				}
			}
		}
	case TypeBranchSummary:
		e.FromID = v.GetStringBytes("fromId")
		e.Summary = v.GetStringBytes("summary")
		e.FromHook = v.GetBool("fromHook")
		e.Details = rawTo(&r.detailsBuf, v.Get("details"), false)
	case TypeCustom:
		e.CustomType = v.GetStringBytes("customType")
		e.Data = rawTo(&r.dataBuf, v.Get("data"), false)
	case TypeCustomMessage:
		e.CustomType = v.GetStringBytes("customType")
		e.Content = rawTo(&r.contentBuf, v.Get("content"), false)
		e.Display = v.GetBool("display")
		e.Details = rawTo(&r.detailsBuf, v.Get("details"), false)
	case TypeLabel:
		e.TargetID = v.GetStringBytes("targetId")
		e.Label = v.GetStringBytes("label")
	case TypeSessionInfo:
		e.Name = v.GetStringBytes("name")
	}
	r.st.Entries++
	r.st.ByType[e.Type]++
	return true
}
