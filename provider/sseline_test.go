package provider

import (
	"bytes"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider/synth"
)

// TestSSELineEndsAndBOM: a leading byte order mark is dropped and "\r\n",
// "\r" and "\n" all end lines (the SSE rules, and the openai SDK's line
// decoder OpenClaw reads Chat Completions and Responses with), however the
// body's reads split them.
func TestSSELineEndsAndBOM(t *testing.T) {
	lf := "data: {\"id\":\"c\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n" +
		": ping\n" +
		"data:{\"id\":\"c\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"}}]}\n\n" +
		"data: {\"id\":\"c\",\"model\":\"m\",\n" +
		"data: \"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n" +
		"data: [DONE]\n\n"
	want := decodeAll(t, WireOpenAIChat, strings.NewReader(lf), Options{})
	if !strings.Contains(want, `"text":"Hello"`) || !strings.Contains(want, `"stopReason":"stop"`) {
		t.Fatalf("the LF stream itself: %s", want)
	}
	bodies := map[string]string{
		"crlf":     strings.ReplaceAll(lf, "\n", "\r\n"),
		"cr":       strings.ReplaceAll(lf, "\n", "\r"),
		"bom":      "\xEF\xBB\xBF" + lf,
		"bom-cr":   "\xEF\xBB\xBF" + strings.ReplaceAll(lf, "\n", "\r"),
		"mixed":    strings.Replace(strings.ReplaceAll(lf, "\n\n", "\r\n\r"), "\n", "\r", 3),
		"trail-cr": strings.TrimSuffix(strings.ReplaceAll(lf, "\n", "\r"), "\r"),
	}
	for name, body := range bodies {
		for rname, wrap := range map[string]func(io.Reader) io.Reader{
			"whole": func(r io.Reader) io.Reader { return r },
			"bytes": iotest.OneByteReader,
			"half":  iotest.HalfReader,
		} {
			for _, oc := range []bool{false, true} {
				if got := decodeAll(t, WireOpenAIChat, wrap(strings.NewReader(body)), Options{OpenClaw: oc}); got != decodeAll(t, WireOpenAIChat, strings.NewReader(lf), Options{OpenClaw: oc}) {
					t.Errorf("%s, %s reads, OpenClaw %v: %s\nwant the LF stream's %s", name, rname, oc, got, want)
				}
			}
		}
	}
	// A BOM is dropped only at the start; a second one is the line's.
	if got := decodeAll(t, WireOpenAIChat, strings.NewReader("\xEF\xBB\xBF\xEF\xBB\xBF"+lf), Options{}); strings.Contains(got, "Hello") {
		t.Errorf("a second BOM was dropped too: %s", got)
	}
	// OpenClaw's Anthropic parser ends lines at "\n" only ("\r\n" becomes
	// "\n"): a body with "\r" line ends is one line there, and nothing.
	anth := "event: message_start\rdata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"role\":\"assistant\",\"content\":[],\"usage\":{\"input_tokens\":5}}}\r\r"
	if got := decodeAll(t, WireAnthropic, strings.NewReader(anth), Options{OpenClaw: true}); strings.Contains(got, `"input":5`) {
		t.Errorf("OpenClaw Anthropic read \\r as a line end: %s", got)
	}
	if got := decodeAll(t, WireAnthropic, strings.NewReader(anth), Options{}); !strings.Contains(got, `"input":5`) {
		t.Errorf("Anthropic without the OpenClaw rules must read \\r as a line end: %s", got)
	}
}

func decodeAll(t *testing.T, w Wire, r io.Reader, o Options) string {
	t.Helper()
	d := NewDecoder(w, r, o)
	for d.Next() {
	}
	var b bytes.Buffer
	m := d.Message()
	m.Timestamp = 0
	b.Write(m.AppendJSON(nil))
	return b.String()
}

// FuzzSSEReadSplits: how the body's reads are split never changes what is
// decoded (the source's held-back CR and BOM bytes included), with and
// without the OpenClaw rules, on every wire.
func FuzzSSEReadSplits(f *testing.F) {
	f.Add([]byte("\xEF\xBB\xBFdata: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\r\rdata: [DONE]\r"), uint8(0))
	f.Add([]byte("event: message_start\r\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"usage\":{\"input_tokens\":1}}}\r\n\r\n"), uint8(2))
	f.Add([]byte("\xEF\xBB"), uint8(1))
	f.Fuzz(func(t *testing.T, body []byte, w uint8) {
		wire := Wire(w % uint8(numWires))
		decode := func(r io.Reader, oc bool) *llm.Message {
			d := NewDecoder(wire, r, Options{OpenClaw: oc})
			for d.Next() {
			}
			return d.Message()
		}
		for _, oc := range []bool{false, true} {
			whole := decode(bytes.NewReader(body), oc)
			for name, r := range map[string]io.Reader{"one byte a read": iotest.OneByteReader(bytes.NewReader(body)), "half reads": iotest.HalfReader(bytes.NewReader(body))} {
				// Generated ids are random: compared by presence.
				if x, y, ok := sameMessage(decode(r, oc), whole, true); !ok {
					t.Fatalf("OpenClaw %v: %s gave %s, whole %s", oc, name, x, y)
				}
			}
		}
	})
}

// loneCRsAsLF is the SSE line rules' reading of a body, done ahead: its
// leading BOM dropped and, unless keepCR, each '\r' that no '\n' follows
// made a '\n'.
func loneCRsAsLF(body []byte, keepCR bool) []byte {
	b := bytes.Clone(bytes.TrimPrefix(body, []byte("\xEF\xBB\xBF")))
	if keepCR {
		return b
	}
	for i, c := range b {
		if c == '\r' && (i+1 == len(b) || b[i+1] != '\n') {
			b[i] = '\n'
		}
	}
	return b
}

// FuzzSSELoneCR: a body decodes as the same body with its lone CRs made
// line feeds (and its BOM dropped) beforehand, however its reads are split
// and whatever the decoder decoded before (the shapes a reused decoder
// keeps, learned with and without the OpenClaw rules).
func FuzzSSELoneCR(f *testing.F) {
	for _, w := range []struct {
		wire Wire
		gen  func(int, uint64) []byte
	}{{WireOpenAIChat, synth.OpenAIChatStream}, {WireAnthropic, synth.AnthropicStream}, {WireOpenAIResponses, synth.ResponsesStream}} {
		body := w.gen(12, 3)
		f.Add(body, uint8(w.wire), uint8(0))
		n := 0
		f.Add(bytes.Map(func(r rune) rune {
			if n++; r == '\n' && n%3 == 0 {
				return '\r'
			}
			return r
		}, body), uint8(w.wire), uint8(1))
		f.Add(bytes.ReplaceAll(body, []byte("\n\n"), []byte("\r\r")), uint8(w.wire), uint8(2))
		f.Add(bytes.Replace(body, []byte(`"text":"`), []byte("\"text\":\"\r"), 3), uint8(w.wire), uint8(3))
	}
	// A lone CR in the string of a delta that a lane (a framed shape)
	// matches: a line end there too.
	delta := func(s string) string {
		return "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"" + s + "\"}}\n\n"
	}
	lane := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"role\":\"assistant\",\"content\":[],\"usage\":{\"input_tokens\":5}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
	for i := range 6 {
		lane += delta(strings.Repeat("h", i+1))
	}
	lane += delta("a\rb") + delta("a\r}}\n\nevent: x\ndata: {") + delta("z") + "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	f.Add([]byte(lane), uint8(WireAnthropic), uint8(0))
	f.Fuzz(func(t *testing.T, body []byte, w, reads uint8) {
		wire := Wire(w % uint8(numWires))
		d := NewDecoder(wire, nil, Options{})
		decode := func(d *Decoder, r io.Reader, oc bool) *llm.Message {
			d.Reset(wire, r, Options{OpenClaw: oc})
			for d.Next() {
			}
			return d.Message()
		}
		split := func(b []byte) io.Reader {
			switch reads % 3 {
			case 1:
				return iotest.HalfReader(bytes.NewReader(b))
			case 2:
				return iotest.OneByteReader(bytes.NewReader(b))
			}
			return bytes.NewReader(b)
		}
		for _, oc := range []bool{true, false, true, false} {
			keepCR := oc && wire == WireAnthropic
			want := decode(NewDecoder(wire, nil, Options{}), bytes.NewReader(loneCRsAsLF(body, keepCR)), oc)
			if x, y, ok := sameMessage(decode(d, split(body), oc), want, true); !ok {
				t.Fatalf("OpenClaw %v: got %s\nwant (lone CRs made LFs first) %s", oc, x, y)
			}
		}
	})
}

// TestLoneCRAcrossReads: streams past the read buffer's size with lone
// CRs (and CRLFs) put in at random, some in the middle of JSON strings, a
// long line among them, decode as the same streams with their lone CRs
// made line feeds beforehand, with a decoder reused across wires and rules.
func TestLoneCRAcrossReads(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 5))
	gens := []func(int, uint64) []byte{synth.OpenAIChatStream, synth.AnthropicStream, synth.ResponsesStream}
	d := NewDecoder(WireOpenAIChat, nil, Options{})
	decode := func(d *Decoder, w Wire, r io.Reader, oc bool) *llm.Message {
		d.Reset(w, r, Options{OpenClaw: oc})
		for d.Next() {
		}
		return d.Message()
	}
	for it := range 60 {
		w := Wire(it % 3)
		body := gens[w](600, uint64(it))
		if it%5 == 0 {
			// A data line longer than the read buffer, with a lone CR.
			i := bytes.Index(body, []byte("\n\n")) + 2
			long := "data: " + strings.Repeat("x", 70<<10) + "\r" + strings.Repeat("y", 100) + "\n\n"
			body = append(body[:i:i], append([]byte(long), body[i:]...)...)
		}
		for k := rng.IntN(8); k >= 0; k-- {
			i := rng.IntN(len(body))
			switch rng.IntN(3) {
			case 0:
				body[i] = '\r'
			case 1:
				body = append(body[:i:i], append([]byte("\r"), body[i:]...)...)
			case 2:
				body = bytes.ReplaceAll(body, []byte("\n"), []byte("\r\n"))
			}
		}
		for _, oc := range []bool{false, true} {
			want := decode(NewDecoder(w, nil, Options{}), w, bytes.NewReader(loneCRsAsLF(body, oc && w == WireAnthropic)), oc)
			for name, r := range map[string]io.Reader{"whole": bytes.NewReader(body), "half reads": iotest.HalfReader(bytes.NewReader(body)), "one byte a read": iotest.OneByteReader(bytes.NewReader(body))} {
				if x, y, ok := sameMessage(decode(d, w, r, oc), want, true); !ok {
					t.Fatalf("stream %d, OpenClaw %v, %s: got %.300s\nwant %.300s", it, oc, name, x, y)
				}
			}
		}
	}
}

// TestEagerSourceSmallReads: once eager, the source makes lone CRs line
// feeds whatever room each read leaves it, down to the one byte left at
// the end of the read buffer (the held '\r' then decided by a byte read
// ahead), and however the body's reads are split.
func TestEagerSourceSmallReads(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 16))
	for it := range 3000 {
		body := make([]byte, rng.IntN(24))
		for i := range body {
			body[i] = "\r\nx"[rng.IntN(3)]
		}
		want := loneCRsAsLF(body, false)
		var r io.Reader = bytes.NewReader(body)
		switch it % 3 {
		case 1:
			r = iotest.OneByteReader(r)
		case 2:
			r = iotest.HalfReader(r)
		}
		s := source{r: r, begun: true, eager: true}
		var got []byte
		for empty := 0; empty < 10; {
			p := make([]byte, 1+rng.IntN(4))
			n, err := s.Read(p)
			got = append(got, p[:n]...)
			empty++
			if n > 0 {
				empty = 0 // (bufio allows 100 empty reads in a row)
			}
			if err == io.EOF {
				break
			}
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%q read as %q, want %q", body, got, want)
		}
	}
}
