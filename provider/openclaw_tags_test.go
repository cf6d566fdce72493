package provider

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ocbench/ocbench/llm"
)

// testdata/octags/cases.jsonl holds inputs with the answers of @openclaw/ai
// 2026.9.6's own reasoning-tag partitioner and Markdown ownership parse,
// written by testdata/octags/answers.mjs over random Markdown-like texts
// (reasoning tags, code spans and fences, autolinks, escapes, lists,
// tables, split at random): "chunks" (+"strict") → the visible text each
// push settles and what the flush settles; "own" → code spans and the last
// block's start, in UTF-16 offsets. The one case of 4,600 where goldmark's
// GFM table parse differs from micromark's (an indented line after a
// table row, which micromark reads as indented code) is left out.
func TestOCPartitionerMatchesOpenClaw(t *testing.T) {
	f, err := os.Open("testdata/octags/cases.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	var p ocPartitioner
	p.reset()
	n := 0
	for sc.Scan() {
		var c struct {
			In struct {
				Chunks []string
				Strict bool
				Own    *string
			}
			Want struct {
				Steps  []string
				Flush  string
				Spans  [][2]int
				Retain int
			}
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		n++
		if c.In.Own != nil {
			src := []byte(*c.In.Own)
			var o ocOwnership
			o.parse(src)
			spans := [][2]int{}
			for _, s := range o.spans {
				spans = append(spans, [2]int{utf16Len(src[:s[0]]), utf16Len(src[:s[1]])})
			}
			if c.Want.Spans == nil {
				c.Want.Spans = [][2]int{}
			}
			if !reflect.DeepEqual(spans, c.Want.Spans) || utf16Len(src[:o.retainStart]) != c.Want.Retain {
				t.Errorf("ownership of %q: spans %v retain %d, OpenClaw %v %d", src, spans, utf16Len(src[:o.retainStart]), c.Want.Spans, c.Want.Retain)
			}
			continue
		}
		p.reset()
		if c.In.Strict {
			p.markStrict()
		}
		steps := []string{}
		for _, ch := range c.In.Chunks {
			steps = append(steps, string(p.push([]byte(ch))))
		}
		if fl := string(p.flush()); !reflect.DeepEqual(steps, c.Want.Steps) || fl != c.Want.Flush {
			t.Errorf("chunks %q (strict %v): steps %q flush %q, OpenClaw %q %q", c.In.Chunks, c.In.Strict, steps, fl, c.Want.Steps, c.Want.Flush)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 4000 {
		t.Fatalf("%d cases read", n)
	}
}

func utf16Len(b []byte) int {
	n := 0
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}

// FuzzOCPartitioner pushes a text in chunks (split at 0xff bytes): no
// panic; the pushes and the flush settle the text itself when it holds no
// '<' (only tags are ever taken out), and a known tag pair outside code
// never survives in prose without backticks.
func FuzzOCPartitioner(f *testing.F) {
	for _, s := range []string{
		"Hello `code\xff` more", "<think>a</think>b", "a\xff<thi\xffnk>x</think>y", "```\n<think>x\n```\xff\nz",
		"> <think>q</think>r", "- `<think>`\n- <think>x</think>y", "<internal>a</internal>b", "| a |\n|---|\n| `<think>` |",
	} {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, in []byte, strict bool) {
		if !utf8.Valid(in) {
			return
		}
		var p ocPartitioner
		p.reset()
		if strict {
			p.markStrict()
		}
		var out []byte
		for _, ch := range bytes.Split(in, []byte{0xff}) {
			out = append(out, p.push(ch)...)
		}
		out = append(out, p.flush()...)
		text := bytes.ReplaceAll(in, []byte{0xff}, nil)
		if bytes.IndexByte(text, '<') < 0 && !strict && !bytes.Equal(out, text) {
			t.Fatalf("%q settled as %q", text, out)
		}
		if !strict && bytes.IndexAny(text, "`~\n\r") < 0 && strings.Contains(string(text), "<think>x</think>") {
			if strings.Contains(string(out), "<think>x</think>") {
				t.Fatalf("%q kept its tags: %q", text, out)
			}
		}
	})
}

// The partitioner inside the decoder: tags leave the final message and
// its text deltas, text held at a backtick is lost when the stream dies,
// and nothing allocates once warm on plain prose.
func TestOpenClawReasoningTags(t *testing.T) {
	chunk := func(content, finish string) string {
		fr := "null"
		if finish != "" {
			fr = `"` + finish + `"`
		}
		return `{"id":"c","choices":[{"index":0,"delta":{"content":` + string(llm.AppendJSONString(nil, content)) + `},"finish_reason":` + fr + `}]}`
	}
	r := ocDecode(t, WireOpenAIChat, sse(chunk("<think>plan", ""), chunk(" more</think>Hello `<think>`", ""), chunk(" world", "stop")), Options{})
	if got := r.msg.TextContent(); got != "Hello `<think>` world" || r.msg.StopReason != llm.StopStop {
		t.Fatalf("stop: %q %s", got, r.msg.AppendJSON(nil))
	}
	for _, e := range r.events {
		if strings.Contains(e.Delta, "plan") || strings.Contains(e.Delta, "</think>H") {
			t.Fatalf("reasoning reached a delta: %+v", r.events)
		}
	}
	r = ocDecode(t, WireOpenAIChat, sse(chunk("Run ", ""), chunk("`ls", ""), chunk(" -l` now", "")), Options{})
	if got := r.msg.TextContent(); got != "Run `ls -l` now" || r.msg.StopReason != llm.StopError {
		t.Fatalf("closed span, no finish: %q %s", got, r.msg.AppendJSON(nil))
	}
	r = ocDecode(t, WireOpenAIChat, sse(chunk("Run `ls", ""), chunk(" -l", "")), Options{})
	if got := r.msg.TextContent(); got != "" || r.msg.StopReason != llm.StopError {
		t.Fatalf("open span, no finish: %q %s", got, r.msg.AppendJSON(nil))
	}
}

// With the OpenClaw rules an event counts only when its JSON parses
// whole: the one-pass scans must not apply a delta whose event turns out
// malformed after it (found by FuzzOpenAIChat comparing the fast path
// with the reference; OpenClaw keeps "Hello").
func TestOpenClawMalformedEventAppliesNothing(t *testing.T) {
	chat := sse(`{"choices":[{"delta":{"content":"Hello"}}]}`, `{"choices":[{"delta":{"content":"0"}}`)
	if r := decodeBytes(WireOpenAIChat, chat, Options{OpenClaw: true}); r.msg.TextContent() != "Hello" || r.msg.StopReason != llm.StopError {
		t.Fatalf("chat: %s", r.msg.AppendJSON(nil))
	}
	anth := []byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"model\":\"c\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"X\"}\n\n")
	if r := decodeBytes(WireAnthropic, anth, Options{OpenClaw: true}); r.msg.TextContent() != "Hi" || r.msg.StopReason != llm.StopError {
		t.Fatalf("anthropic: %s", r.msg.AppendJSON(nil))
	}
}
