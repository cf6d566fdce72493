package provider

import (
	"bytes"
	"strconv"

	"github.com/valyala/fastjson"

	"github.com/ocbench/ocbench/llm"
)

// Before it applies a chat chunk's delta, @openclaw/ai's completions
// transport measures the arguments of each of its tool_calls
// (createOpenAICompletionsToolCallDeltaNormalizer): Buffer.byteLength of
// function.arguments (null and absent are ""), summed per call over the
// stream, the calls known by index and by id as one Map, and fails the
// stream past 256,000 bytes. Node's Buffer.byteLength throws on anything
// but a string, and reading the index of a null call throws too: both
// messages end the stream. The chunk's usage is taken before.

// ocMaxToolArgBytes is MAX_BUFFERED_TOOL_CALL_ARGUMENT_BYTES.
const ocMaxToolArgBytes = 256000

// ocArgKey is a key of the transport's Map: a number (an index, or an id
// that is a number) or a string (an id).
type ocArgKey struct {
	num   float64
	str   string
	isNum bool
	state int // into ocState.argStates
}

// ocArgState is one call's measure.
type ocArgState struct {
	bytes int
	high  bool // the arguments so far end with a high surrogate
}

// ocChatArgsCheck applies that measure to the chunk data (a chat event
// with the OpenClaw rules): false when the stream failed.
func (d *Decoder) ocChatArgsCheck(data []byte) bool {
	if !bytes.Contains(data, []byte(`"tool_calls"`)) {
		return true
	}
	v, err := d.oc.dp.ParseBytes(data)
	if err != nil || v.Type() != fastjson.TypeObject {
		return true // the decoder reports it
	}
	choices := v.Get("choices")
	if choices == nil || choices.Type() != fastjson.TypeArray {
		return true
	}
	arr, _ := choices.Array()
	if len(arr) == 0 || arr[0].Type() != fastjson.TypeObject {
		return true
	}
	delta := arr[0].Get("delta")
	if delta == nil || delta.Type() == fastjson.TypeNull {
		delta = arr[0].Get("message")
	}
	if delta == nil || delta.Type() != fastjson.TypeObject {
		return true
	}
	calls := delta.Get("tool_calls")
	if calls == nil || calls.Type() != fastjson.TypeArray {
		return true // (a string's characters are calls without arguments)
	}
	list, _ := calls.Array()
	for _, c := range list {
		msg := d.ocMeasureCall(c)
		if msg == "" {
			continue
		}
		d.chatUsage(v)
		d.ocFail(msg, false, true)
		return false
	}
	return true
}

// ocMeasureCall measures one tool_calls element: the message the transport
// throws, or "".
func (d *Decoder) ocMeasureCall(c *fastjson.Value) string {
	switch c.Type() {
	case fastjson.TypeNull:
		return "Cannot read properties of null (reading 'index')"
	case fastjson.TypeObject:
	default:
		return "" // a primitive has no index, id or function: "" is measured
	}
	st := d.ocArgStateOf(c)
	args := c.Get("function", "arguments")
	if f := c.Get("function"); f == nil || f.Type() != fastjson.TypeObject {
		args = nil
	}
	var s []byte
	if args != nil && args.Type() != fastjson.TypeNull {
		if args.Type() != fastjson.TypeString {
			return `The "string" argument must be of type string or an instance of Buffer or ArrayBuffer. Received ` + nodeTypeOf(args)
		}
		s, _ = args.StringBytes()
	}
	if len(s) == 0 {
		return ""
	}
	n := len(s)
	if st.high && len(s) >= 3 && s[0] == 0xED && s[1] >= 0xB0 {
		n -= 2 // a pair split across deltas is four bytes, not two replacements
	}
	st.bytes += n
	st.high = len(s) >= 3 && s[len(s)-3] == 0xED && s[len(s)-2] >= 0xA0 && s[len(s)-2] <= 0xAF
	if st.bytes > ocMaxToolArgBytes {
		return "Exceeded tool-call argument buffer limit"
	}
	return ""
}

// ocArgStateOf is the call's state: by its index when it is a number, else
// by its id when truthy, else a new one; kept under both keys.
func (d *Decoder) ocArgStateOf(c *fastjson.Value) *ocArgState {
	var keys [2]ocArgKey
	n := 0
	if x := c.Get("index"); x != nil && x.Type() == fastjson.TypeNumber {
		keys[n] = ocArgKey{num: x.GetFloat64(), isNum: true}
		n++
	}
	if id := c.Get("id"); jsTruthy(id) {
		switch id.Type() {
		case fastjson.TypeNumber:
			keys[n] = ocArgKey{num: id.GetFloat64(), isNum: true}
		case fastjson.TypeString:
			s, _ := id.StringBytes()
			keys[n] = ocArgKey{str: string(s)}
		default:
			// An object or array id is a key by identity: never found again.
			keys[n] = ocArgKey{str: "\x00" + strconv.Itoa(len(d.oc.argKeys)), isNum: false}
		}
		n++
	}
	state := -1
	for _, k := range keys[:n] {
		if i := d.ocArgFind(k); i >= 0 {
			state = i
			break
		}
	}
	if state < 0 {
		d.oc.argStates = append(d.oc.argStates, ocArgState{})
		state = len(d.oc.argStates) - 1
	}
	for _, k := range keys[:n] {
		k.state = state
		d.ocArgSet(k)
	}
	return &d.oc.argStates[state]
}

func (d *Decoder) ocArgFind(k ocArgKey) int {
	for _, e := range d.oc.argKeys {
		if e.isNum == k.isNum && e.num == k.num && e.str == k.str {
			return e.state
		}
	}
	return -1
}

func (d *Decoder) ocArgSet(k ocArgKey) {
	for i := range d.oc.argKeys {
		if e := &d.oc.argKeys[i]; e.isNum == k.isNum && e.num == k.num && e.str == k.str {
			e.state = k.state
			return
		}
	}
	d.oc.argKeys = append(d.oc.argKeys, k)
}

// nodeTypeOf is how Node names a received value in ERR_INVALID_ARG_TYPE:
// "type number (1.5)", "type boolean (true)", "an instance of Object".
func nodeTypeOf(v *fastjson.Value) string {
	switch v.Type() {
	case fastjson.TypeNumber:
		f := v.GetFloat64()
		if f == 0 && bytes.HasPrefix(bytes.TrimSpace(v.MarshalTo(nil)), []byte("-")) {
			return "type number (-0)"
		}
		return "type number (" + string(llm.AppendJSToString(nil, v)) + ")"
	case fastjson.TypeTrue:
		return "type boolean (true)"
	case fastjson.TypeFalse:
		return "type boolean (false)"
	case fastjson.TypeArray:
		return "an instance of Array"
	}
	return "an instance of Object"
}
