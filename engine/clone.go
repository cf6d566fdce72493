package engine

import "github.com/ocbench/ocbench/llm"

// cloneMessage is llm.Message.Clone with two allocations: the blocks, and
// one buffer holding all their bytes (each field a capacity-capped window
// of it, so an append to one never reaches another). The run keeps one
// such copy per model call.
func cloneMessage(m *llm.Message) *llm.Message {
	n := 0
	for i := range m.Content {
		b := &m.Content[i]
		n += len(b.Text) + len(b.Signature) + len(b.ID) + len(b.Name) + len(b.RawArgs) + len(b.Arguments) + len(b.MimeType)
	}
	c := newMessage(len(m.Content))
	blocks := c.Content
	*c = *m
	c.Content = blocks
	buf := make([]byte, 0, n)
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
		*d = llm.Block{Type: b.Type, Redacted: b.Redacted}
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

// newMessage returns a message whose Content has n zero blocks.
func newMessage(n int) *llm.Message {
	switch {
	case n == 1:
		a := new(messageWith1)
		a.m.Content = a.b[:1:1]
		return &a.m
	case n == 2:
		a := new(messageWith2)
		a.m.Content = a.b[:2:2]
		return &a.m
	}
	m := new(llm.Message)
	if n > 0 {
		m.Content = make([]llm.Block, n)
	}
	return m
}
