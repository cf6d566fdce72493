package streamwrap

import (
	"context"
	"sync"

	"github.com/cespare/xxhash/v2"
	"github.com/ocbench/ocbench/llm"
	"github.com/valyala/fastjson"
)

// TextTransform rewrites visible text: it appends src, transformed, to dst
// and returns the extended slice. It must not retain src or dst. Embedding
// code supplies it (OpenClaw's provider-plugin output text transforms, a
// list of regular-expression replacements).
type TextTransform func(dst, src []byte) []byte

// TransformOutputText is OpenClaw's wrapStreamFnTextTransforms with output
// transforms (streamwrap.md §4.6). It applies t to text_delta deltas (the
// event carries a transformed copy), to each text block once (at its
// text_end, or at the end for a block never ended), to the error message,
// and to the string values of tool-call arguments (once per arguments the
// inner stages produced). Tool-call deltas and thinking are not transformed.
//
// OpenClaw copies every event and message before transforming them; here
// the live message's text blocks are transformed in place when they end,
// so the partial message of a block still streaming holds raw text.
func TransformOutputText(next llm.StreamFunc, t TextTransform) llm.StreamFunc {
	if t == nil {
		return next
	}
	return func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		inner, err := next(ctx, req)
		if err != nil {
			return nil, err
		}
		s := transformPool.Get().(*transformStream)
		s.init(inner)
		s.t = t
		return s, nil
	}
}

var transformPool = sync.Pool{New: func() any { return new(transformStream) }}

type transformStream struct {
	base
	t        TextTransform
	ev       llm.Event
	own      bool
	delta    []byte
	scratch  []byte
	leaf     []byte
	strFn    func(dst, s []byte) []byte
	textDone []bool
	argsDone []producedArgs
	parser   fastjson.Parser
	finished bool
}

func (s *transformStream) Event() *llm.Event {
	if s.own {
		return &s.ev
	}
	return s.curEvent()
}

func (s *transformStream) Next() bool {
	s.own = false
	if !s.advance() {
		s.finish()
		return false
	}
	e := s.curEvent()
	m := s.curMessage()
	switch e.Type {
	case llm.EventTextDelta:
		s.delta = s.t(s.delta[:0], e.Delta)
		s.ev = *e
		s.ev.Delta = s.delta
		s.own = true
	case llm.EventTextEnd:
		if b := m.Block(e.ContentIndex); b != nil && b.Type == llm.BlockText {
			s.text(e.ContentIndex, b)
		}
	case llm.EventToolCallEnd:
		if b := toolBlock(m, e.ContentIndex); b != nil {
			s.args(e.ContentIndex, b)
		}
	case llm.EventDone, llm.EventError:
		s.finish()
	}
	return true
}

func (s *transformStream) text(i int, b *llm.Block) {
	for len(s.textDone) <= i {
		s.textDone = append(s.textDone, false)
	}
	if s.textDone[i] {
		return
	}
	s.textDone[i] = true
	s.scratch = s.t(s.scratch[:0], b.Text)
	b.Text = setBytes(b.Text, s.scratch)
}

func (s *transformStream) args(i int, b *llm.Block) {
	if !isObject(b.Arguments) {
		return
	}
	for len(s.argsDone) <= i {
		s.argsDone = append(s.argsDone, producedArgs{})
	}
	if p := s.argsDone[i]; p.ok && p.n == len(b.Arguments) && p.hash == xxhash.Sum64(b.Arguments) {
		return
	}
	v, err := s.parser.ParseBytes(b.Arguments)
	if err == nil {
		if s.strFn == nil {
			s.strFn = s.transformString // once per pooled stream
		}
		s.scratch = llm.AppendJSONValueFunc(s.scratch[:0], v, s.strFn)
		b.Arguments = setBytes(b.Arguments, s.scratch)
	}
	s.argsDone[i] = producedArgs{n: len(b.Arguments), hash: xxhash.Sum64(b.Arguments), ok: true}
}

// transformString is how the transform writes a string value of
// arguments: t applied, then written as JSON (keys stay as they are).
func (s *transformStream) transformString(dst, str []byte) []byte {
	s.leaf = s.t(s.leaf[:0], str)
	return llm.AppendJSONString(dst, s.leaf)
}

func (s *transformStream) finish() {
	if s.finished {
		return
	}
	s.finished = true
	m := s.curMessage()
	for i := range m.Content {
		b := &m.Content[i]
		switch b.Type {
		case llm.BlockText:
			s.text(i, b)
		case llm.BlockToolCall:
			s.args(i, b)
		}
	}
	if m.ErrorMessage != "" {
		s.scratch = s.t(s.scratch[:0], []byte(m.ErrorMessage))
		m.ErrorMessage = string(s.scratch)
	}
}

func (s *transformStream) Close() error {
	err := s.closeInner()
	s.textDone = s.textDone[:0]
	s.argsDone = s.argsDone[:0]
	*s = transformStream{delta: s.delta[:0], scratch: s.scratch[:0], leaf: s.leaf[:0], strFn: s.strFn, textDone: s.textDone, argsDone: s.argsDone}
	transformPool.Put(s)
	return err
}
