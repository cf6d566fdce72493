package wireenc

import (
	"math"
	"strconv"
	"strings"

	"github.com/ocbench/ocbench/llm"
)

// NoIndex, passed to SetWireIndex, sends a block's events without an index
// field (Gemini's OpenAI-compatible stream omits the tool-call index).
const NoIndex = -1

const unassigned = math.MinInt32

// maxBlocks bounds the content indexes an Encoder numbers; blocks past it
// all go out under index 0 rather than growing the table without bound.
const maxBlocks = 1 << 16

// Encoder writes one stream's events in one wire format. The zero value is
// ready after Reset. See the package documentation for the lifetime rules.
type Encoder struct {
	wire Wire
	opts Options
	meta Meta
	base string // meta.ID without its wire prefix: the stem of item ids

	seq    int64   // Responses sequence_number of the next event
	wix    []int32 // content index -> wire index (unassigned, NoIndex or >= 0)
	nTool  int32   // chat: tool calls numbered so far
	nBlock int32   // anthropic blocks / responses output items numbered so far

	prefix  []byte // chat: the chunk prefix up to and including `"choices":[`
	scratch []byte

	// Responses: the JSON of the last derived item id, and its key.
	idJSON  []byte
	idIdx   int
	idKind  string
	idValid bool
}

// NewEncoder returns an Encoder reset for w, meta and opts.
func NewEncoder(w Wire, meta Meta, opts Options) *Encoder {
	e := &Encoder{}
	e.Reset(w, meta, opts)
	return e
}

// Reset prepares e for a new stream, keeping its buffers.
func (e *Encoder) Reset(w Wire, meta Meta, opts Options) {
	e.wire, e.meta, e.opts = w, meta, opts
	e.base = meta.ID
	for _, p := range [...]string{"chatcmpl-", "resp_", "msg_"} {
		if strings.HasPrefix(e.base, p) {
			e.base = e.base[len(p):]
			break
		}
	}
	e.seq, e.nTool, e.nBlock = 0, 0, 0
	e.idValid = false
	e.wix = e.wix[:0]
	e.prefix = e.prefix[:0]
	if w == OpenAIChat {
		e.prefix = append(e.prefix, `data: {"id":`...)
		e.prefix = llm.AppendJSONString(e.prefix, meta.ID)
		e.prefix = append(e.prefix, `,"object":"chat.completion.chunk","created":`...)
		e.prefix = strconv.AppendInt(e.prefix, meta.Created, 10)
		e.prefix = append(e.prefix, `,"model":`...)
		e.prefix = llm.AppendJSONString(e.prefix, meta.Model)
		e.prefix = append(e.prefix, `,"choices":[`...)
	}
}

// Wire returns the wire e writes.
func (e *Encoder) Wire() Wire { return e.wire }

// Meta returns the identity e was reset with.
func (e *Encoder) Meta() Meta { return e.meta }

// SetWireIndex makes the block at content index ci go out under wire index
// idx (the tool_calls index on OpenAI Chat, the block index on Anthropic,
// the output_index on Responses) instead of the next free one, or without
// an index when idx is NoIndex. Call it before the block's start event. It
// is how the scripted provider reproduces a reused or missing index.
func (e *Encoder) SetWireIndex(ci, idx int) {
	if ci < 0 || ci > maxBlocks {
		return
	}
	e.grow(ci)
	e.wix[ci] = int32(idx)
}

func (e *Encoder) grow(ci int) {
	for len(e.wix) <= ci {
		e.wix = append(e.wix, unassigned)
	}
}

// index returns the wire index of content index ci, numbering it on first
// use with the counter of its kind.
func (e *Encoder) index(ci int, tool bool) int {
	if ci < 0 || ci > maxBlocks {
		return 0
	}
	e.grow(ci)
	if v := e.wix[ci]; v != unassigned {
		return int(v)
	}
	var n int32
	switch {
	case e.wire == OpenAIChat && tool:
		n = e.nTool
		e.nTool++
	case e.wire == OpenAIChat:
		n = 0
	default:
		n = e.nBlock
		e.nBlock++
	}
	e.wix[ci] = n
	return int(n)
}

// AppendEvent appends the wire events that encode ev to dst and returns
// the extended buffer. m is the stream's message: end events, done and
// error read block content, usage and the stop reason from it. Events of a
// kind the wire cannot carry (a thinking signature on OpenAI Chat) are
// dropped.
func (e *Encoder) AppendEvent(dst []byte, ev *llm.Event, m *llm.Message) []byte {
	switch ev.Type {
	case llm.EventStart:
		return e.appendStart(dst, m)
	case llm.EventTextStart, llm.EventThinkingStart, llm.EventToolCallStart:
		b := m.Block(ev.ContentIndex)
		if b == nil {
			return dst
		}
		idx := e.index(ev.ContentIndex, b.Type == llm.BlockToolCall)
		if b.Type == llm.BlockToolCall && e.opts.ToolArgs == BufferArgs {
			return dst
		}
		return e.appendBlockStart(dst, idx, b)
	case llm.EventTextDelta, llm.EventThinkingDelta, llm.EventToolCallDelta:
		if ev.Type == llm.EventToolCallDelta && e.opts.ToolArgs == BufferArgs {
			return dst
		}
		idx := e.index(ev.ContentIndex, ev.Type == llm.EventToolCallDelta)
		return e.appendDelta(dst, idx, ev.Type, ev.Delta, m.Block(ev.ContentIndex))
	case llm.EventTextEnd, llm.EventThinkingEnd, llm.EventToolCallEnd:
		b := m.Block(ev.ContentIndex)
		if b == nil {
			return dst
		}
		idx := e.index(ev.ContentIndex, b.Type == llm.BlockToolCall)
		if b.Type == llm.BlockToolCall && e.opts.ToolArgs == BufferArgs {
			dst = e.appendBlockStart(dst, idx, b)
			if args := FinalArgs(b); len(args) > 0 {
				dst = e.appendDelta(dst, idx, llm.EventToolCallDelta, args, b)
			}
		}
		return e.appendBlockEnd(dst, idx, b)
	case llm.EventDone:
		return e.AppendDoneRaw(dst, m, "")
	case llm.EventError:
		if e.wire == OpenAIResponses {
			return e.appendResponsesFailed(dst, m)
		}
		return e.AppendError(dst, errorType(m.StopReason), m.ErrorMessage)
	}
	return dst
}

// FinalArgs returns the argument text a tool call is sent with when it is
// written whole: Arguments once decided, else RawArgs as streamed.
func FinalArgs(b *llm.Block) []byte {
	if len(b.Arguments) > 0 {
		return b.Arguments
	}
	return b.RawArgs
}

func errorType(r llm.StopReason) string {
	if r == llm.StopAborted {
		return "aborted"
	}
	return "api_error"
}

func (e *Encoder) appendStart(dst []byte, m *llm.Message) []byte {
	switch e.wire {
	case OpenAIChat:
		return e.appendChatStart(dst)
	case Anthropic:
		return e.appendAnthropicStart(dst, m)
	case OpenAIResponses:
		return e.appendResponsesStart(dst)
	}
	return dst
}

func (e *Encoder) appendBlockStart(dst []byte, idx int, b *llm.Block) []byte {
	switch e.wire {
	case OpenAIChat:
		return e.appendChatBlockStart(dst, idx, b)
	case Anthropic:
		return e.appendAnthropicBlockStart(dst, idx, b)
	case OpenAIResponses:
		return e.appendResponsesBlockStart(dst, idx, b)
	}
	return dst
}

func (e *Encoder) appendDelta(dst []byte, idx int, t llm.EventType, delta []byte, b *llm.Block) []byte {
	switch e.wire {
	case OpenAIChat:
		return e.appendChatDelta(dst, idx, t, delta)
	case Anthropic:
		return e.appendAnthropicDelta(dst, idx, t, delta, b)
	case OpenAIResponses:
		return e.appendResponsesDelta(dst, idx, t, delta, b)
	}
	return dst
}

func (e *Encoder) appendBlockEnd(dst []byte, idx int, b *llm.Block) []byte {
	switch e.wire {
	case Anthropic:
		return e.appendAnthropicBlockEnd(dst, idx, b)
	case OpenAIResponses:
		return e.appendResponsesBlockEnd(dst, idx, b)
	}
	return dst // chat has no block boundaries
}

// AppendDoneRaw appends the events that finish a successful stream: the
// stop reason, the usage of m and the wire's end marker. raw, when not
// empty, is written as the wire's stop reason verbatim (e.g. "refusal",
// "content_filter", "pause_turn"); otherwise m.StopReason is mapped to
// the wire's name. On Responses, raw is the reason of a
// response.incomplete ("max_output_tokens", "content_filter"), or
// "completed"/"failed" to force that status.
func (e *Encoder) AppendDoneRaw(dst []byte, m *llm.Message, raw string) []byte {
	switch e.wire {
	case OpenAIChat:
		return e.appendChatDone(dst, m, raw)
	case Anthropic:
		return e.appendAnthropicDone(dst, m, raw)
	case OpenAIResponses:
		return e.appendResponsesDone(dst, m, raw)
	}
	return dst
}

// AppendError appends the wire's in-band error event: an Anthropic
// "event: error", a Responses "error" event, or a chat "data:
// {"error":{...}}" line. typ is the provider's error type or code
// ("overloaded_error", "server_error", ...).
func (e *Encoder) AppendError(dst []byte, typ, message string) []byte {
	switch e.wire {
	case OpenAIChat:
		dst = append(dst, `data: {"error":{"message":`...)
		dst = llm.AppendJSONString(dst, message)
		dst = append(dst, `,"type":`...)
		dst = llm.AppendJSONString(dst, typ)
		return append(dst, ",\"code\":null}}\n\n"...)
	case Anthropic:
		dst = append(dst, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":"...)
		dst = llm.AppendJSONString(dst, typ)
		dst = append(dst, `,"message":`...)
		dst = llm.AppendJSONString(dst, message)
		return append(dst, "}}\n\n"...)
	case OpenAIResponses:
		dst = append(dst, "event: error\ndata: {\"type\":\"error\",\"code\":"...)
		dst = llm.AppendJSONString(dst, typ)
		dst = append(dst, `,"message":`...)
		dst = llm.AppendJSONString(dst, message)
		dst = append(dst, `,"param":null`...)
		return e.appendSeqEnd(dst)
	}
	return dst
}

// AppendRaw appends one SSE event with the given event name (omitted when
// empty) and data, written verbatim on one data line. Use it for events
// the Encoder has no method for, or for deliberately broken ones.
func AppendRaw(dst []byte, event, data string) []byte {
	if event != "" {
		dst = append(dst, "event: "...)
		dst = append(dst, event...)
		dst = append(dst, '\n')
	}
	dst = append(dst, "data: "...)
	dst = append(dst, data...)
	return append(dst, "\n\n"...)
}

// AppendComment appends an SSE comment line (a keep-alive).
func AppendComment(dst []byte, text string) []byte {
	dst = append(dst, ": "...)
	dst = append(dst, text...)
	return append(dst, "\n\n"...)
}

// appendSeqEnd closes a Responses payload with its sequence number.
func (e *Encoder) appendSeqEnd(dst []byte) []byte {
	dst = append(dst, `,"sequence_number":`...)
	dst = strconv.AppendInt(dst, e.seq, 10)
	e.seq++
	return append(dst, "}\n\n"...)
}

// appendIndexField appends `,"<name>":idx` unless idx is NoIndex.
func appendIndexField(dst []byte, name string, idx int) []byte {
	if idx == NoIndex {
		return dst
	}
	dst = append(dst, ',', '"')
	dst = append(dst, name...)
	dst = append(dst, '"', ':')
	return strconv.AppendInt(dst, int64(idx), 10)
}
