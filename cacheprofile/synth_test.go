package cacheprofile

import (
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"
)

// synthSession generates a version-3 session stream of about size bytes,
// lazily, line by line: user turns, tool loops with Anthropic-style usage
// (the prompt grows by what the loop appends, reads what the previous call
// wrote), gaps that expire the cache now and then, and a compaction every
// compactEvery turns that bounds the live context, as long sessions have.
type synthSession struct {
	size, written int64
	rng           *rand.Rand
	buf           []byte
	off           int
	seq           int
	parent        string
	now           time.Time
	turn          int
	prompt        int64 // prompt tokens of the last call
	ctx           int64 // tokens of the context after tools+system
	lastCall      time.Time
	compacted     bool
	started       bool
	compactEvery  int
	pad           string
}

func newSynthSession(size int64, seed uint64) *synthSession {
	return &synthSession{size: size, rng: rand.New(rand.NewPCG(seed, seed^0x5eed)),
		now: time.Date(2026, 9, 1, 8, 0, 0, 0, time.UTC), compactEvery: 40,
		pad: strings.Repeat("lorem ipsum dolor sit amet, consectetur adipiscing elit ", 200)}
}

func (s *synthSession) id() string {
	s.seq++
	return fmt.Sprintf("%08x", s.seq)
}

func (s *synthSession) line(format string, a ...any) {
	s.buf = fmt.Appendf(s.buf, format, a...)
	s.buf = append(s.buf, '\n')
}

func (s *synthSession) entry(typ, body string) string {
	id := s.id()
	parent := "null"
	if s.parent != "" {
		parent = `"` + s.parent + `"`
	}
	s.line(`{"type":%q,"id":%q,"parentId":%s,"timestamp":%q%s}`, typ, id, parent, s.now.Format(time.RFC3339Nano), body)
	s.parent = id
	return id
}

// text returns n bytes of filler as a JSON string literal (the filler is
// plain ASCII, so quoting is just the quotes).
func (s *synthSession) text(n int) string {
	start := s.rng.IntN(len(s.pad) - n)
	return `"` + s.pad[start:start+n] + `"`
}

// synthSystem is the size of the synthetic tools + system prompt.
const synthSystem = 3000

// call appends an assistant message whose usage follows Anthropic's rules
// with OpenClaw's breakpoints: the previous prompt is read back unless the
// cache expired (cold) or a compaction rewrote the history (only tools +
// system are read).
func (s *synthSession) call(stop string, content string, added int64) {
	s.ctx += added
	total := synthSystem + s.ctx
	var read int64
	switch {
	case s.lastCall.IsZero() || s.now.Sub(s.lastCall) > 5*time.Minute:
		read = 0
	case s.compacted:
		read = synthSystem
	default:
		read = s.prompt
	}
	write := total - read
	s.prompt, s.compacted, s.lastCall = total, false, s.now
	s.entry("message", fmt.Sprintf(`,"message":{"role":"assistant","content":[%s],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":3,"output":50,"cacheRead":%d,"cacheWrite":%d,"totalTokens":%d},"stopReason":%q,"timestamp":%d}`,
		content, read, write, read+write+53, stop, s.now.UnixMilli()))
}

// next appends one turn (or the header) to buf.
func (s *synthSession) next() {
	if !s.started {
		s.started = true
		s.line(`{"type":"session","version":3,"id":"synth-%d","timestamp":%q,"cwd":"/w"}`, s.size, s.now.Format(time.RFC3339Nano))
		s.entry("model_change", `,"provider":"anthropic","modelId":"claude-sonnet-4-5"`)
		return
	}
	s.turn++
	if s.turn%s.compactEvery == 0 {
		// Nothing kept: the summary alone replaces the history.
		sum := s.text(2000)
		s.entry("compaction", fmt.Sprintf(`,"summary":%s,"firstKeptEntryId":"","tokensBefore":%d`, sum, s.prompt))
		s.ctx, s.compacted = int64(len(sum))/4+25, true
	}
	// A pause: mostly short, sometimes past the 5-minute lifetime.
	if s.rng.IntN(10) == 0 {
		s.now = s.now.Add(time.Duration(6+s.rng.IntN(20)) * time.Minute)
	} else {
		s.now = s.now.Add(time.Duration(20+s.rng.IntN(100)) * time.Second)
	}
	u := s.text(200 + s.rng.IntN(400))
	s.entry("message", fmt.Sprintf(`,"message":{"role":"user","content":[{"type":"text","text":%s}],"timestamp":%d}`, u, s.now.UnixMilli()))
	added := int64((len(u)-2)/4 + 1)
	loops := 1 + s.rng.IntN(6)
	for i := 0; i < loops; i++ {
		s.now = s.now.Add(time.Duration(2+s.rng.IntN(8)) * time.Second)
		callID := fmt.Sprintf("toolu_%d_%d", s.turn, i)
		args := s.text(60)
		s.call("toolUse", fmt.Sprintf(`{"type":"toolCall","id":%q,"name":"bash","arguments":{"command":%s}}`, callID, args), added)
		res := s.text(1000 + s.rng.IntN(8000))
		s.now = s.now.Add(time.Second)
		s.entry("message", fmt.Sprintf(`,"message":{"role":"toolResult","toolCallId":%q,"toolName":"bash","content":[{"type":"text","text":%s}],"isError":false,"timestamp":%d}`,
			callID, res, s.now.UnixMilli()))
		added = int64((len(args)-2)/4 + 20 + (len(res)-2)/4)
	}
	s.now = s.now.Add(3 * time.Second)
	s.call("stop", fmt.Sprintf(`{"type":"text","text":%s}`, s.text(300)), added)
	if s.rng.IntN(50) == 0 {
		s.entry("future_entry_type", `,"data":{}`)
	}
}

func (s *synthSession) Read(p []byte) (int, error) {
	for s.off >= len(s.buf) {
		if s.written >= s.size {
			return 0, io.EOF
		}
		s.buf, s.off = s.buf[:0], 0
		s.next()
	}
	n := copy(p, s.buf[s.off:])
	s.off += n
	s.written += int64(n)
	return n, nil
}
