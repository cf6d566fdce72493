package tokenize

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
	"unsafe"

	"github.com/valyala/fastjson"

	"github.com/ocbench/ocbench/llm"
)

// CharsPerToken is the divisor of OpenClaw's (pi-coding-agent's) token
// estimate: tokens = ceil(chars / 4).
const CharsPerToken = 4

// SafetyFactor is the margin OpenClaw's preemptive-compaction check applies
// to the summed estimate: ceil(1.2 × Σ estimates).
const SafetyFactor = 1.2

// ImageChars is what pi's estimator counts for an image block in a tool
// result (4800 characters, i.e. 1200 tokens).
const ImageChars = 4800

// ErrEstimateInput is returned by EstimateMessageJSON for input that is not
// a JSON object. Typically this means a truncated or corrupted message line.
var ErrEstimateInput = errors.New("tokenize: message is not a JSON object")

// Estimate returns ceil(chars / 4), the estimate for a text of chars
// characters. Characters are JavaScript string lengths (UTF-16 code units).
func Estimate(chars int) int {
	if chars <= 0 {
		return 0
	}
	return (chars + CharsPerToken - 1) / CharsPerToken
}

// EstimateString returns Estimate(UTF16Len(s)).
func EstimateString(s string) int { return Estimate(UTF16Len(s)) }

// WithSafety applies SafetyFactor: ceil(1.2 × tokens).
func WithSafety(tokens int) int {
	if tokens <= 0 {
		return 0
	}
	// 1.2 × n = 6n / 5, computed in integers to avoid float rounding.
	return int((int64(tokens)*6 + 4) / 5)
}

// UTF16LenBytes is UTF16Len of b, without copying it into a string.
func UTF16LenBytes(b []byte) int { return UTF16Len(unsafe.String(unsafe.SliceData(b), len(b))) }

// UTF16Len returns the length of s in UTF-16 code units, the unit of every
// character count in OpenClaw. Invalid bytes count one unit each, as
// replacement characters do, but for a surrogate in its three-byte (WTF-8)
// form, a JavaScript string's lone surrogate (see
// llm.LoneSurrogatesToWTF8): one unit.
func UTF16Len(s string) int {
	// Every byte counts one unit, but for the continuation bytes of a
	// multi-byte rune, and a rune past U+FFFF is two (a surrogate pair).
	// ASCII (most text, JSON and code) is skipped 32, then 8 bytes at a
	// time.
	n, i := len(s), 0
	for i < len(s) {
		for i+32 <= len(s) {
			w := s[i : i+32] // one bounds check for the four words
			if (load64(w, 0)|load64(w, 8)|load64(w, 16)|load64(w, 24))&0x8080808080808080 != 0 {
				break
			}
			i += 32
		}
		for i+8 <= len(s) && load64(s, i)&0x8080808080808080 == 0 {
			i += 8
		}
		if i == len(s) {
			break
		}
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if size == 1 && r == utf8.RuneError && i+3 <= len(s) && s[i] == 0xED && s[i+1]&0xE0 == 0xA0 && s[i+2]&0xC0 == 0x80 {
			size = 3 // a lone surrogate held in three bytes: one unit
		}
		n -= size - 1
		if r >= 0x10000 {
			n++
		}
		i += size
	}
	return n
}

// load64 reads s[i:i+8] as a little-endian word.
func load64(s string, i int) uint64 {
	w := s[i : i+8] // one bounds check; the loads below merge into one
	return uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
		uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
}

var estimateParsers fastjson.ParserPool

// EstimateMessageJSON estimates one pi/OpenClaw message given as JSON (a
// transcript message object), following pi's estimateTokens rules:
//
//   - user: text content (a string, or text blocks; images count 0);
//   - assistant: text and thinking blocks, and for toolCall blocks the name
//     plus JSON.stringify(arguments);
//   - toolResult and custom: text blocks, 4800 chars per image block;
//   - bashExecution: command + output;
//   - branchSummary and compactionSummary: the summary;
//   - any other role (system included): 0.
//
// The result is ceil(chars / 4).
func EstimateMessageJSON(msg []byte) (int, error) {
	p := estimateParsers.Get()
	defer estimateParsers.Put(p)
	if at := llm.NextLoneSurrogate(msg, 0); at >= 0 {
		// JSON.parse keeps a lone surrogate, one unit long.
		msg = llm.LoneSurrogatesToWTF8(append([]byte(nil), msg...), at)
	}
	v, err := p.ParseBytes(msg)
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrEstimateInput, err)
	}
	if v.Type() != fastjson.TypeObject {
		return 0, ErrEstimateInput
	}
	chars := 0
	switch string(v.GetStringBytes("role")) {
	case "user":
		chars = contentChars(v.Get("content"), false, false)
	case "assistant":
		chars = contentChars(v.Get("content"), true, false)
	case "toolResult", "custom":
		chars = contentChars(v.Get("content"), false, true)
	case "bashExecution":
		chars = UTF16LenBytes(v.GetStringBytes("command")) + UTF16LenBytes(v.GetStringBytes("output"))
	case "branchSummary", "compactionSummary":
		chars = UTF16LenBytes(v.GetStringBytes("summary"))
	}
	return Estimate(chars), nil
}

func contentChars(c *fastjson.Value, assistant, images bool) int {
	if c == nil {
		return 0
	}
	if c.Type() == fastjson.TypeString {
		return UTF16LenBytes(c.GetStringBytes())
	}
	blocks, err := c.Array()
	if err != nil {
		return 0
	}
	n := 0
	var buf []byte
	for _, b := range blocks {
		switch string(b.GetStringBytes("type")) {
		case "text":
			n += UTF16LenBytes(b.GetStringBytes("text"))
		case "thinking":
			if assistant {
				n += UTF16LenBytes(b.GetStringBytes("thinking"))
			}
		case "toolCall":
			if assistant {
				n += UTF16LenBytes(b.GetStringBytes("name"))
				if a := b.Get("arguments"); a != nil {
					buf = a.MarshalTo(buf[:0])
					n += UTF16LenBytes(buf)
				} else {
					n += len("undefined")
				}
			}
		case "image":
			if images {
				n += ImageChars
			}
		}
	}
	return n
}

// JSONValueChars returns the length in UTF-16 code units of a tool
// call's arguments js as the estimator counts them inside a message's
// JSON (EstimateMessageJSON: the value parsed and re-serialized, pi's
// JSON.stringify(arguments)), without building the message's JSON. ok is
// false when js is not one strict JSON value: what the estimator makes of
// such bytes depends on the message around them, so count that instead.
// buf is scratch space; the grown buffer is returned for reuse.
func JSONValueChars(js, buf []byte) (n int, grown []byte, ok bool) {
	if !json.Valid(js) {
		return 0, buf, false
	}
	// At the depth the arguments have in a message (message, content,
	// block), so that the parser's depth limit applies alike.
	buf = append(append(append(buf[:0], "[[["...), js...), "]]]"...)
	if at := llm.NextLoneSurrogate(buf, 0); at >= 0 {
		buf = llm.LoneSurrogatesToWTF8(buf, at) // as EstimateMessageJSON reads it
	}
	p := estimateParsers.Get()
	defer estimateParsers.Put(p)
	v, err := p.ParseBytes(buf)
	if err != nil {
		return 0, buf, false
	}
	// The parsed values point into buf: serialize after them.
	at := len(buf)
	buf = v.Get("0", "0", "0").MarshalTo(buf)
	return UTF16LenBytes(buf[at:]), buf, true
}
