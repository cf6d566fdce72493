package transcript

import "github.com/ocbench/ocbench/llm"

// cow builds the output of a message filter copy-on-write: until the first
// change the input is shared, so a filter that changes nothing allocates
// nothing.
type cow struct {
	in     []llm.Message
	out    []llm.Message
	copied bool
}

func (c *cow) start(i int) {
	if !c.copied {
		c.out = append(make([]llm.Message, 0, len(c.in)), c.in[:i]...)
		c.copied = true
	}
}

// keep keeps message i unchanged.
func (c *cow) keep(i int) {
	if c.copied {
		c.out = append(c.out, c.in[i])
	}
}

// replace puts m in place of message i.
func (c *cow) replace(i int, m llm.Message) {
	c.start(i)
	c.out = append(c.out, m)
}

// drop leaves message i out.
func (c *cow) drop(i int) { c.start(i) }

func (c *cow) result() []llm.Message {
	if c.copied {
		return c.out
	}
	return c.in
}
