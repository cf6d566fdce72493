package transcript

import (
	"bytes"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/ocbench/ocbench/llm"
	"github.com/valyala/fastjson"
)

// maxISOMillis is the last millisecond of the year 9999, the end of the
// range whose timestamps are written and read back digit for digit.
const maxISOMillis = 253402300799999

// ReadBackMessage returns the entry a Reader gives for the line that a
// Writer's AppendMessage(m) wrote, with id, parentID and the entry's
// timestamp ts as the writer set them, at line line (1-based) and byte
// offset offset of the file, without writing or parsing that line: what
// the writer drops (a tool call's streamed arguments, the thinking
// signature's presence, usage details pi-ai does not keep) is dropped,
// the rest copied into memory of the entry's own. ok is false for a
// message whose line would read back otherwise than this function can
// tell without parsing it (text that is not valid UTF-8, arguments
// written in another form than a read gives back, OpenClaw's stream
// markers, a timestamp outside the years 0-9999...): the caller reads the
// line instead.
func ReadBackMessage(id, parentID []byte, ts int64, m *llm.Message, line, offset int64) (e Entry, ok bool) {
	if len(id) == 0 || ts < 0 || ts > maxISOMillis || !validText(id) || !validText(parentID) {
		return Entry{}, false
	}
	switch m.Role {
	case llm.RoleUser, llm.RoleAssistant, llm.RoleToolResult:
	default:
		return Entry{}, false
	}
	var sc *argScratch
	defer func() {
		// A very long argument's buffers are not kept.
		if sc != nil && cap(sc.in) <= 64<<10 {
			argScratches.Put(sc)
		}
	}()
	for i := range m.Content {
		b := &m.Content[i]
		if b.Unstopped || b.ReplayMarked || !validText(b.Text) || !validText(b.Signature) {
			return Entry{}, false
		}
		switch b.Type {
		case llm.BlockText, llm.BlockThinking:
		case llm.BlockToolCall:
			if sc == nil && len(b.Arguments) > 0 {
				sc, _ = argScratches.Get().(*argScratch)
				if sc == nil {
					sc = new(argScratch)
				}
			}
			if !validText(b.ID) || !validText(b.Name) || !sc.readsBackAs(b.Arguments) {
				return Entry{}, false
			}
		case llm.BlockImage:
			if !validText(b.MimeType) {
				return Entry{}, false
			}
		default:
			return Entry{}, false
		}
	}
	if !utf8.ValidString(m.ErrorMessage) || !utf8.ValidString(m.ToolCallID) || !utf8.ValidString(m.ToolName) ||
		!utf8.ValidString(string(m.API)) || !utf8.ValidString(m.Provider) || !utf8.ValidString(m.Model) ||
		!utf8.ValidString(m.ResponseID) {
		return Entry{}, false
	}
	// What a read gives, first over m's memory, then copied into one
	// buffer (packBytes) with the entry's own fields.
	c := newMessage(len(m.Content))
	c.Role, c.Timestamp = m.Role, m.Timestamp
	role := m.Role.String()
	e = Entry{Type: TypeMessage, RawType: messageType, ID: id, Timestamp: ts,
		Message: c, MessageRole: unsafe.Slice(unsafe.StringData(role), len(role)), Line: line, Offset: offset}
	if len(parentID) > 0 {
		e.ParentID = parentID
	}
	// The entry's fields and those of two blocks in a fixed array (an
	// append past it would move e to the heap); further blocks' apart.
	var fb [4 + 2*6]*[]byte
	fb[0], fb[1], fb[2], fb[3] = &e.RawType, &e.ID, &e.ParentID, &e.MessageRole
	k := 4
	var more []*[]byte
	for i := range m.Content {
		b, d := &m.Content[i], &c.Content[i]
		d.Type = b.Type
		switch b.Type {
		case llm.BlockText:
			d.Text = nonNil(b.Text)
			if len(b.Signature) > 0 { // not written when empty
				d.Signature = b.Signature
			}
		case llm.BlockThinking:
			d.Text, d.Redacted = nonNil(b.Text), b.Redacted
			if len(b.Signature) > 0 || b.SignatureSet {
				d.Signature = nonNil(b.Signature)
			}
		case llm.BlockToolCall:
			d.ID, d.Name, d.Arguments = nonNil(b.ID), nonNil(b.Name), b.Arguments
			if len(b.Arguments) == 0 {
				d.Arguments = emptyArgs
			}
			if len(b.Signature) > 0 {
				d.Signature = b.Signature
			}
		case llm.BlockImage:
			d.Text, d.MimeType = nonNil(b.Text), nonNil(b.MimeType)
		}
		f := [...]*[]byte{&d.Text, &d.Signature, &d.ID, &d.Name, &d.Arguments, &d.MimeType}
		if k+len(f) <= len(fb) {
			k += copy(fb[k:], f[:])
		} else {
			more = append(more, f[:]...)
		}
	}
	switch m.Role {
	case llm.RoleToolResult:
		c.ToolCallID, c.ToolName, c.IsError = m.ToolCallID, m.ToolName, m.IsError
	case llm.RoleAssistant:
		c.StopReason = m.StopReason
		if m.StopReason == llm.StopError || m.StopReason == llm.StopAborted || m.ErrorMessage != "" {
			c.ErrorMessage = m.ErrorMessage
		}
		u := &m.Usage
		c.Usage = llm.Usage{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite, TotalTokens: u.TotalTokens}
		if u.Cost.Total != 0 {
			c.Usage.Cost = u.Cost
		}
		c.API, c.Provider, c.Model, c.ResponseID = m.API, m.Provider, m.Model, m.ResponseID
	}
	packBytes(fb[:k])
	if more != nil {
		packBytes(more)
	}
	return e, true
}

// messageType and emptyArgs are copied, never written through.
var (
	messageType = []byte("message")
	emptyArgs   = []byte("{}")
)

// validText reports whether b reads back as itself from the JSON string
// llm.AppendJSONString writes of it: valid UTF-8 (a lone surrogate in its
// three-byte form is not, and is read back otherwise).
func validText(b []byte) bool { return utf8.Valid(b) }

// nonNil is b, or an empty slice for nil: a string that is written is
// read back as a slice, even empty.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// argScratch is the parser and buffers readsBackAs works with.
type argScratch struct {
	p       fastjson.Parser
	in, out []byte
}

var argScratches sync.Pool

// readsBackAs reports whether a tool call's arguments args are read back
// as they are: written whole (no line break or tab to take out, no lone
// surrogate), and a JSON value that llm.AppendJSONValue writes again
// byte for byte, as the reader does.
func (sc *argScratch) readsBackAs(args []byte) bool {
	if len(args) == 0 {
		return true
	}
	if bytes.IndexAny(args, "\n\r\t") >= 0 || bytes.IndexByte(args, 0xED) >= 0 ||
		bytes.Contains(args, []byte(`\ud`)) || bytes.Contains(args, []byte(`\uD`)) || !utf8.Valid(args) {
		return false
	}
	// Parsed where the line has it, a member's value: fastjson takes more
	// at the top level (a lone sign, "nan") than inside an object.
	sc.in = append(append(append(sc.in[:0], `{"a":`...), args...), '}')
	v, err := sc.p.ParseBytes(sc.in)
	if err != nil || v.Get("a") == nil {
		return false
	}
	sc.out = llm.AppendJSONValue(sc.out[:0], v.Get("a"))
	return bytes.Equal(sc.out, args)
}

// newMessage returns a message with n zero blocks, in one allocation for
// the one or two blocks of most messages.
func newMessage(n int) *llm.Message {
	switch n {
	case 0:
		return new(llm.Message)
	case 1:
		s := new(messageWith1)
		s.m.Content = s.b[:]
		return &s.m
	case 2:
		s := new(messageWith2)
		s.m.Content = s.b[:]
		return &s.m
	}
	return &llm.Message{Content: make([]llm.Block, n)}
}

// messageWith1 and messageWith2 are a message and its blocks.
type (
	messageWith1 struct {
		m llm.Message
		b [1]llm.Block
	}
	messageWith2 struct {
		m llm.Message
		b [2]llm.Block
	}
)
