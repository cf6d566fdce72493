package llm

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/valyala/fastjson"
)

// AppendJSONString appends s to dst as a JSON string literal. Invalid UTF-8
// becomes U+FFFD (the character itself, not its escape, so that writing
// what was read back gives the same bytes), byte by byte as encoding/json
// replaces it, except a surrogate
// code point in its three-byte (WTF-8) encoding, how a JavaScript string's
// lone surrogate is held: it is written as JSON.stringify writes it, a \u
// escape (two halves in a row are the character they make).
func AppendJSONString[T ~string | ~[]byte](dst []byte, s T) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			if out, n := appendSurrogate(dst, s, i); n > 0 {
				dst, i, start = out, i+n, i+n
				continue
			}
			dst = append(dst, "\uFFFD"...) // as JSON.stringify writes it: a rewrite reads back the same
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendSurrogate appends what JSON.stringify writes for a lone surrogate
// held in its three-byte (WTF-8) encoding at s[i:] (the provider decoder
// keeps JavaScript's lone surrogates that way): its \u escape or, with the
// low half right after a high one, the character the pair makes. n is the
// number of bytes of s used, 0 when s[i:] starts no surrogate.
func appendSurrogate[T ~string | ~[]byte](dst []byte, s T, i int) (out []byte, n int) {
	const hex = "0123456789abcdef"
	u, ok := wtf8Surrogate(s, i)
	if !ok {
		return dst, 0
	}
	if lo, ok := wtf8Surrogate(s, i+3); ok && u < 0xDC00 && lo >= 0xDC00 {
		return utf8.AppendRune(dst, utf16.DecodeRune(u, lo)), 6
	}
	return append(dst, '\\', 'u', hex[u>>12], hex[u>>8&0xf], hex[u>>4&0xf], hex[u&0xf]), 3
}

// wtf8Surrogate returns the surrogate code point encoded at s[i:i+3]
// (0xED 0xA0-0xBF 0x80-0xBF); ok is false for anything else.
func wtf8Surrogate[T ~string | ~[]byte](s T, i int) (rune, bool) {
	if i+3 > len(s) || s[i] != 0xED || s[i+1] < 0xA0 || s[i+1] > 0xBF || s[i+2] < 0x80 || s[i+2] > 0xBF {
		return 0, false
	}
	return 0xD000 | rune(s[i+1]&0x3F)<<6 | rune(s[i+2]&0x3F), true
}

// AppendJSONValue appends v to dst as JSON text. Use it instead of
// fastjson's MarshalTo, which writes a string it has unescaped with Go's
// quoting: \x01, \x80 and \U0001f600 escapes that are not JSON, so that a
// control character or invalid UTF-8 in a tool call's arguments or a
// transcript entry would come back as different text, or not parse at all.
// Strings and keys are written as AppendJSONString writes them; numbers keep
// their text; members keep their order.
func AppendJSONValue(dst []byte, v *fastjson.Value) []byte {
	return appendJSON(dst, v, jsonStyle{str: appendJSONBytes})
}

// AppendJSONValueFunc is AppendJSONValue with each string value (not a
// member name) written by str.
func AppendJSONValueFunc(dst []byte, v *fastjson.Value, str func(dst, s []byte) []byte) []byte {
	return appendJSON(dst, v, jsonStyle{str: str})
}

func appendJSONBytes(dst, s []byte) []byte { return AppendJSONString(dst, s) }

// jsonStyle is how appendJSON writes a value: its string values with str;
// with js, numbers, member names and objects as JSON.stringify writes what
// JSON.parse read (AppendJSStringify).
type jsonStyle struct {
	str func(dst, s []byte) []byte
	js  bool
}

// appendJSON is the one walk of a parsed value behind AppendJSONValue,
// AppendJSONValueFunc and AppendJSStringify.
func appendJSON(dst []byte, v *fastjson.Value, st jsonStyle) []byte {
	switch v.Type() {
	case fastjson.TypeString:
		s, _ := v.StringBytes()
		return st.str(dst, s)
	case fastjson.TypeNumber:
		if st.js {
			return appendJSNumber(dst, v.GetFloat64())
		}
	case fastjson.TypeArray:
		a, _ := v.Array()
		dst = append(dst, '[')
		for i, e := range a {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSON(dst, e, st)
		}
		return append(dst, ']')
	case fastjson.TypeObject:
		if st.js {
			return appendJSObject(dst, v, st)
		}
		o, _ := v.Object()
		dst = append(dst, '{')
		n := 0
		o.Visit(func(k []byte, e *fastjson.Value) {
			if n > 0 {
				dst = append(dst, ',')
			}
			n++
			dst = append(AppendJSONString(dst, k), ':')
			dst = appendJSON(dst, e, st)
		})
		return append(dst, '}')
	}
	// Numbers (their own text), true, false and null.
	return v.MarshalTo(dst)
}

// AppendJSON appends m to dst as one JSON object in the shape of pi-ai's
// messages (AssistantMessage, UserMessage, ToolResultMessage). A tool call
// whose Arguments are not decided yet is written with arguments {}.
func (m *Message) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"role":`...)
	dst = AppendJSONString(dst, m.Role.String())
	if m.Role == RoleToolResult {
		dst = append(dst, `,"toolCallId":`...)
		dst = AppendJSONString(dst, m.ToolCallID)
		dst = append(dst, `,"toolName":`...)
		dst = AppendJSONString(dst, m.ToolName)
	}
	dst = append(dst, `,"content":[`...)
	for i := range m.Content {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = m.Content[i].AppendJSON(dst)
		if m.Content[i].ReplayMarked && m.ReplayBaseURL != "" {
			dst = m.appendReplayMarker(dst[:len(dst)-1]) // inside the block's object
		}
	}
	dst = append(dst, ']')
	switch m.Role {
	case RoleToolResult:
		dst = append(dst, `,"isError":`...)
		dst = strconv.AppendBool(dst, m.IsError)
	case RoleAssistant:
		dst = append(dst, `,"stopReason":`...)
		dst = AppendJSONString(dst, m.StopReason.String())
		if m.StopReason == StopError || m.StopReason == StopAborted || m.ErrorMessage != "" {
			dst = append(dst, `,"errorMessage":`...)
			dst = AppendJSONString(dst, m.ErrorMessage)
		}
		dst = append(dst, `,"usage":`...)
		dst = m.Usage.AppendJSON(dst)
		dst = append(dst, `,"api":`...)
		dst = AppendJSONString(dst, string(m.API))
		dst = append(dst, `,"provider":`...)
		dst = AppendJSONString(dst, m.Provider)
		dst = append(dst, `,"model":`...)
		dst = AppendJSONString(dst, m.Model)
		if m.ResponseID != "" {
			dst = append(dst, `,"responseId":`...)
			dst = AppendJSONString(dst, m.ResponseID)
		}
	}
	if m.Timestamp != 0 {
		dst = append(dst, `,"timestamp":`...)
		dst = strconv.AppendInt(dst, m.Timestamp, 10)
	}
	return append(dst, '}')
}

// AppendJSON appends u in pi-ai's usage shape. Cost is written only when
// known (non-zero total).
func (u *Usage) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"input":`...)
	dst = strconv.AppendInt(dst, u.Input, 10)
	dst = append(dst, `,"output":`...)
	dst = strconv.AppendInt(dst, u.Output, 10)
	dst = append(dst, `,"cacheRead":`...)
	dst = strconv.AppendInt(dst, u.CacheRead, 10)
	dst = append(dst, `,"cacheWrite":`...)
	dst = strconv.AppendInt(dst, u.CacheWrite, 10)
	if u.ReasoningShown == ReasoningBeforeTotal {
		dst = append(dst, `,"reasoningTokens":`...)
		dst = strconv.AppendInt(dst, u.Reasoning, 10)
	}
	dst = append(dst, `,"totalTokens":`...)
	dst = strconv.AppendInt(dst, u.TotalTokens, 10)
	if u.ReasoningShown == ReasoningAfterTotal {
		dst = append(dst, `,"reasoningTokens":`...)
		dst = strconv.AppendInt(dst, u.Reasoning, 10)
	}
	if u.Cost.Total != 0 {
		c := &u.Cost
		dst = append(dst, `,"cost":{"input":`...)
		dst = strconv.AppendFloat(dst, c.Input, 'g', -1, 64)
		dst = append(dst, `,"output":`...)
		dst = strconv.AppendFloat(dst, c.Output, 'g', -1, 64)
		dst = append(dst, `,"cacheRead":`...)
		dst = strconv.AppendFloat(dst, c.CacheRead, 'g', -1, 64)
		dst = append(dst, `,"cacheWrite":`...)
		dst = strconv.AppendFloat(dst, c.CacheWrite, 'g', -1, 64)
		dst = append(dst, `,"total":`...)
		dst = strconv.AppendFloat(dst, c.Total, 'g', -1, 64)
		dst = append(dst, '}')
	}
	if u.CacheWrite1hShown {
		dst = append(dst, `,"cacheWrite1h":`...)
		dst = strconv.AppendInt(dst, u.CacheWrite1h, 10)
	}
	return append(dst, '}')
}

// AppendJSON appends b in pi-ai's block shape.
func (b *Block) AppendJSON(dst []byte) []byte {
	switch b.Type {
	case BlockText:
		dst = append(dst, `{"type":"text","text":`...)
		dst = AppendJSONString(dst, b.Text)
		dst = b.appendStreamIndex(dst)
		if len(b.Signature) > 0 {
			dst = append(dst, `,"textSignature":`...)
			dst = AppendJSONString(dst, b.Signature)
		}
	case BlockThinking:
		dst = append(dst, `{"type":"thinking","thinking":`...)
		dst = AppendJSONString(dst, b.Text)
		if len(b.Signature) > 0 || b.SignatureSet {
			dst = append(dst, `,"thinkingSignature":`...)
			dst = AppendJSONString(dst, b.Signature)
		}
		if b.Redacted {
			dst = append(dst, `,"redacted":true`...)
		}
		dst = b.appendStreamIndex(dst)
	case BlockToolCall:
		dst = append(dst, `{"type":"toolCall","id":`...)
		dst = AppendJSONString(dst, b.ID)
		dst = append(dst, `,"name":`...)
		dst = AppendJSONString(dst, b.Name)
		dst = append(dst, `,"arguments":`...)
		if len(b.Arguments) == 0 {
			dst = append(dst, "{}"...)
		} else {
			dst = appendCompactJSON(dst, b.Arguments)
		}
		if b.Unstopped {
			dst = append(dst, `,"partialJson":`...)
			dst = AppendJSONString(dst, b.RawArgs)
			dst = b.appendStreamIndex(dst)
		}
		if len(b.Signature) > 0 {
			dst = append(dst, `,"thoughtSignature":`...)
			dst = AppendJSONString(dst, b.Signature)
		}
	case BlockImage:
		dst = append(dst, `{"type":"image","data":`...)
		dst = AppendJSONString(dst, b.Text)
		dst = append(dst, `,"mimeType":`...)
		dst = AppendJSONString(dst, b.MimeType)
	}
	return append(dst, '}')
}

// appendStreamIndex writes the stream index an unstopped block keeps, in
// the place @openclaw/ai's object has it.
func (b *Block) appendStreamIndex(dst []byte) []byte {
	if !b.Unstopped {
		return dst
	}
	dst = append(dst, `,"index":`...)
	return strconv.AppendInt(dst, b.StreamIndex, 10)
}

// AppendEventJSON appends e as one JSON object in the replay format
// (spec: type, contentIndex, delta, content, toolCall, reason; never the
// partial message). m is the stream's message, which holds the content of
// *_end events.
func AppendEventJSON(dst []byte, e *Event, m *Message) []byte {
	dst = append(dst, `{"type":`...)
	dst = AppendJSONString(dst, e.Type.String())
	switch e.Type {
	case EventStart:
	case EventDone, EventError:
		dst = append(dst, `,"reason":`...)
		dst = AppendJSONString(dst, e.Reason.String())
	default:
		dst = append(dst, `,"contentIndex":`...)
		dst = strconv.AppendInt(dst, int64(e.ContentIndex), 10)
		switch e.Type {
		case EventTextDelta, EventThinkingDelta, EventToolCallDelta:
			dst = append(dst, `,"delta":`...)
			dst = AppendJSONString(dst, e.Delta)
		case EventTextEnd, EventThinkingEnd:
			if b := m.Block(e.ContentIndex); b != nil {
				dst = append(dst, `,"content":`...)
				dst = AppendJSONString(dst, b.Text)
			}
		case EventToolCallEnd:
			if b := m.Block(e.ContentIndex); b != nil {
				dst = append(dst, `,"toolCall":`...)
				dst = b.AppendJSON(dst)
			}
		}
	}
	return append(dst, '}')
}

// ErrBadMessage is returned by ParseMessage for JSON that is not a message.
// Typically it means a session file of another tool or a corrupt entry.
var ErrBadMessage = errors.New("llm: not a message")

// ParseMessage reads a pi-ai message (assistant, user or toolResult) from a
// parsed JSON value. User content may be a plain string. Unknown block
// types are skipped; unknown fields are ignored.
func ParseMessage(v *fastjson.Value) (Message, error) {
	var m Message
	if v == nil || v.Type() != fastjson.TypeObject {
		return m, ErrBadMessage
	}
	role, ok := ParseRole(string(v.GetStringBytes("role")))
	if !ok {
		return m, fmt.Errorf("%w: role %q", ErrBadMessage, v.GetStringBytes("role"))
	}
	m.Role = role
	if c := v.Get("content"); c != nil {
		switch c.Type() {
		case fastjson.TypeString:
			m.Content = append(m.Content, Block{Type: BlockText, Text: cloneBytes(c.GetStringBytes())})
		case fastjson.TypeArray:
			arr, _ := c.Array()
			for _, bv := range arr {
				if b, ok := parseBlock(bv); ok {
					m.Content = append(m.Content, b)
				}
			}
		}
	}
	if sr, ok := ParseStopReason(string(v.GetStringBytes("stopReason"))); ok {
		m.StopReason = sr
	}
	m.ErrorMessage = string(v.GetStringBytes("errorMessage"))
	m.API = API(v.GetStringBytes("api"))
	m.Provider = string(v.GetStringBytes("provider"))
	m.Model = string(v.GetStringBytes("model"))
	m.ResponseID = string(v.GetStringBytes("responseId"))
	m.ToolCallID = string(v.GetStringBytes("toolCallId"))
	m.ToolName = string(v.GetStringBytes("toolName"))
	m.IsError = v.GetBool("isError")
	m.Timestamp = v.GetInt64("timestamp")
	if u := v.Get("usage"); u != nil {
		m.Usage = Usage{
			Input:       u.GetInt64("input"),
			Output:      u.GetInt64("output"),
			CacheRead:   u.GetInt64("cacheRead"),
			CacheWrite:  u.GetInt64("cacheWrite"),
			TotalTokens: u.GetInt64("totalTokens"),
		}
		if c := u.Get("cost"); c != nil {
			m.Usage.Cost = Cost{
				Input: c.GetFloat64("input"), Output: c.GetFloat64("output"),
				CacheRead: c.GetFloat64("cacheRead"), CacheWrite: c.GetFloat64("cacheWrite"),
				Total: c.GetFloat64("total"),
			}
		}
	}
	return m, nil
}

func parseBlock(v *fastjson.Value) (Block, bool) {
	switch string(v.GetStringBytes("type")) {
	case "text":
		return Block{Type: BlockText, Text: cloneBytes(v.GetStringBytes("text")),
			Signature: cloneBytes(v.GetStringBytes("textSignature"))}, true
	case "thinking":
		return Block{Type: BlockThinking, Text: cloneBytes(v.GetStringBytes("thinking")),
			Signature: cloneBytes(v.GetStringBytes("thinkingSignature")), Redacted: v.GetBool("redacted")}, true
	case "toolCall", "toolUse", "functionCall":
		b := Block{Type: BlockToolCall, ID: cloneBytes(v.GetStringBytes("id")), Name: cloneBytes(v.GetStringBytes("name")),
			Signature: cloneBytes(v.GetStringBytes("thoughtSignature"))}
		args := v.Get("arguments")
		if args == nil {
			args = v.Get("input")
		}
		if args != nil {
			b.Arguments = AppendJSONValue(nil, args)
		}
		return b, true
	case "image":
		return Block{Type: BlockImage, Text: cloneBytes(v.GetStringBytes("data")), MimeType: cloneBytes(v.GetStringBytes("mimeType"))}, true
	}
	return Block{}, false
}

// appendCompactJSON appends the JSON text js without its line breaks and
// tabs outside strings, so that a message is always one line (arguments
// keep the model's own text otherwise). Within strings, JSON has no raw
// line breaks to keep.
func appendCompactJSON(dst, js []byte) []byte {
	if bytes.IndexAny(js, "\n\r\t") < 0 && bytes.IndexByte(js, 0xED) < 0 {
		return append(dst, js...)
	}
	in, esc := false, false
	for i := 0; i < len(js); i++ {
		c := js[i]
		switch {
		case esc:
			esc = false
		case in && c == '\\':
			esc = true
		case c == '"':
			in = !in
		case !in && (c == '\n' || c == '\r' || c == '\t'):
			continue
		case in && c == 0xED:
			// A lone surrogate the decoder kept (see AppendJSONString).
			if out, n := appendSurrogate(dst, js, i); n > 0 {
				dst, i = out, i+n-1
				continue
			}
		}
		dst = append(dst, c)
	}
	return dst
}

// appendReplayMarker appends @openclaw/ai's openclawReasoningReplay member
// (buildOpenAIResponsesReasoningReplayMetadata) and closes the block.
func (m *Message) appendReplayMarker(dst []byte) []byte {
	dst = append(dst, `,"openclawReasoningReplay":{"v":1,"source":"openai-responses","provider":`...)
	dst = AppendJSONString(dst, m.Provider)
	dst = append(dst, `,"api":`...)
	dst = AppendJSONString(dst, string(m.API))
	dst = append(dst, `,"model":`...)
	dst = AppendJSONString(dst, m.Model)
	dst = append(dst, `,"baseUrlHash":`...)
	dst = AppendJSONString(dst, ShortHash(strings.TrimSpace(m.ReplayBaseURL)))
	return append(dst, "}}"...)
}

// ShortHash is @openclaw/ai's shortHash (a 53-bit string hash in base 36,
// over UTF-16 code units), which its replay context names endpoints by.
func ShortHash(s string) string {
	h1, h2 := uint32(3735928559), uint32(1103547991)
	for _, u := range utf16.Encode([]rune(s)) {
		h1 = (h1 ^ uint32(u)) * 2654435761
		h2 = (h2 ^ uint32(u)) * 1597334677
	}
	h1 = (h1^h1>>16)*2246822507 ^ (h2^h2>>13)*3266489909
	h2 = (h2^h2>>16)*2246822507 ^ (h1^h1>>13)*3266489909
	return strconv.FormatUint(uint64(h2), 36) + strconv.FormatUint(uint64(h1), 36)
}
