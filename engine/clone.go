package engine

import (
	"time"
	"unsafe"

	"github.com/ocbench/ocbench/llm"
)

// msgArena holds the memory of the messages a run makes and keeps (the
// clone of each model call's message, each tool result): their structs
// and blocks come from small slabs, their bytes from shared chunks, each
// field (and each message's blocks) a capacity-capped window of one, so
// that an append to one never reaches another. A message the run builds
// in its history's next element (runner.histSlot) takes only its blocks
// and bytes from here: its struct is the history's, stored once. A run's
// messages live as long as one another (the history, Result.NewMessages),
// so sharing the memory keeps nothing alive longer than the run's result
// does; it saves the allocations per message. A nil *msgArena allocates
// every piece on its own.
type msgArena struct {
	bytes  []byte // the free part of the current chunk (len 0)
	one    []messageWith1
	two    []messageWith2
	blocks []llm.Block // the free part of the current block slab
	// slabs counts the message slabs made, which double in size up to
	// maxSlab, blockSlabs the block slabs (from 2 blocks up to
	// maxBlockSlab); chunk is the size of the last byte chunk (they
	// double from firstChunk up to arenaChunk).
	slabs      int
	blockSlabs int
	chunk      int
}

const (
	// Byte chunks grow from firstChunk to arenaChunk bytes, so that a run
	// of one short answer does not pay for the bytes of a long tool loop;
	// a message needing more than arenaBig bytes gets a buffer of its own.
	firstChunk = 256
	arenaChunk = 2048
	arenaBig   = 512
	maxSlab    = 4
	// A tool turn takes 3 blocks (an answer's text and call, the
	// result's text): block slabs grow 2, 4, 8, 16.
	maxBlockSlab = 16
)

// buf returns an empty slice with room for exactly n bytes.
func (a *msgArena) buf(n int) []byte {
	if a == nil || n > arenaBig {
		return make([]byte, 0, n)
	}
	if cap(a.bytes) < n {
		a.chunk = min(max(2*a.chunk, firstChunk), arenaChunk)
		for a.chunk < n {
			a.chunk *= 2
		}
		a.bytes = make([]byte, 0, a.chunk)
	}
	b := a.bytes[:0:n]
	a.bytes = a.bytes[n:n:cap(a.bytes)]
	return b
}

// slab is the size of the next slab: 1, 2, 4... up to maxSlab, so that a
// run of one call does not pay for the messages of a long tool loop.
func (a *msgArena) slab() int {
	n := min(1<<a.slabs, maxSlab)
	a.slabs++
	return n
}

// newMessage returns a message whose Content has n zero blocks.
func (a *msgArena) newMessage(n int) *llm.Message {
	switch {
	case n == 1:
		s := fromSlab(a, func(a *msgArena) *[]messageWith1 { return &a.one })
		s.m.Content = s.b[:1:1]
		return &s.m
	case n == 2:
		s := fromSlab(a, func(a *msgArena) *[]messageWith2 { return &a.two })
		s.m.Content = s.b[:2:2]
		return &s.m
	}
	m := new(llm.Message)
	if n > 0 {
		m.Content = make([]llm.Block, n)
	}
	return m
}

// newBlocks returns n zero blocks, capped (an append reallocates).
func (a *msgArena) newBlocks(n int) []llm.Block {
	if a == nil || n > maxBlockSlab/2 {
		return make([]llm.Block, n)
	}
	if len(a.blocks) < n {
		a.blocks = make([]llm.Block, max(n, min(2<<a.blockSlabs, maxBlockSlab)))
		a.blockSlabs++
	}
	b := a.blocks[:n:n]
	a.blocks = a.blocks[n:]
	return b
}

// fromSlab returns a zero T from the slab of a that slab selects (a new
// one when a is nil).
func fromSlab[T any](a *msgArena, slab func(*msgArena) *[]T) *T {
	if a == nil {
		return new(T)
	}
	free := slab(a)
	if len(*free) == 0 {
		*free = make([]T, a.slab())
	}
	s := &(*free)[0]
	*free = (*free)[1:]
	return s
}

// place returns dst holding n zero blocks from a, or, when dst is nil, a
// new message of a with n zero blocks.
func (a *msgArena) place(dst *llm.Message, n int) *llm.Message {
	if dst == nil {
		return a.newMessage(n)
	}
	*dst = llm.Message{}
	if n > 0 {
		dst.Content = a.newBlocks(n)
	}
	return dst
}

// cloneMessage is llm.Message.Clone in a's memory: the message (dst when
// not nil, which it overwrites) and its blocks, and one buffer holding
// all their bytes. The run keeps one such copy per model call.
func cloneMessage(a *msgArena, m, dst *llm.Message) *llm.Message {
	n := 0
	for i := range m.Content {
		b := &m.Content[i]
		n += len(b.Text) + len(b.Signature) + len(b.ID) + len(b.Name) + len(b.RawArgs) + len(b.Arguments) + len(b.MimeType)
	}
	// Not place: its zeroing of dst would be written over at once.
	c, blocks := dst, []llm.Block(nil)
	if c == nil {
		c = a.newMessage(len(m.Content))
		blocks = c.Content
	} else if len(m.Content) > 0 {
		blocks = a.newBlocks(len(m.Content))
	}
	*c = *m
	c.Content = blocks
	buf := a.buf(n)
	take := func(src []byte) []byte {
		if src == nil {
			return nil
		}
		start := len(buf)
		buf = append(buf, src...)
		return buf[start:len(buf):len(buf)]
	}
	for i := range m.Content {
		b, d := &m.Content[i], &c.Content[i]
		d.Type, d.Redacted = b.Type, b.Redacted // d is a new block: zero
		d.Text = take(b.Text)
		d.Signature = take(b.Signature)
		d.ID = take(b.ID)
		d.Name = take(b.Name)
		d.RawArgs = take(b.RawArgs)
		d.Arguments = take(b.Arguments)
		d.MimeType = take(b.MimeType)
	}
	return c
}

// toolResultMessage returns the result of the call id holding text, in
// a's memory: the message (dst when not nil, which it overwrites) and its
// block, and the call id and the text in one buffer (ToolCallID is a
// string over its first bytes; the text is a window after them, capped,
// so nothing written through it reaches the id).
func toolResultMessage(a *msgArena, dst *llm.Message, id []byte, name, text string, isErr bool, now time.Time) *llm.Message {
	m := a.place(dst, 1)
	buf := a.buf(len(id) + len(text))[:len(id)+len(text)]
	copy(buf, id)
	copy(buf[len(id):], text)
	m.Content[0] = llm.Block{Type: llm.BlockText, Text: buf[len(id):len(buf):len(buf)]}
	m.Role = llm.RoleToolResult
	if len(id) > 0 {
		m.ToolCallID = unsafe.String(&buf[0], len(id))
	}
	m.ToolName = name
	m.IsError = isErr
	m.Timestamp = now.UnixMilli()
	return m
}

// messageWith1 and messageWith2 hold a message and its blocks in one
// allocation (most messages of a run have one or two blocks).
type messageWith1 struct {
	m llm.Message
	b [1]llm.Block
}

type messageWith2 struct {
	m llm.Message
	b [2]llm.Block
}
