package provider

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/ocbench/ocbench/llm"
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
