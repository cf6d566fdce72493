package provider

import (
	"bytes"

	"github.com/ocbench/ocbench/llm"
	"github.com/valyala/fastjson"
)

// Slot keys of the chat wire: tool calls use their index (or -1-position
// when the server sends none); text and thinking use these.
const (
	keyText     int64 = 1 << 40
	keyThinking int64 = 1<<40 + 1
)

var reasoningFields = [...]string{"reasoning_content", "reasoning", "reasoning_text"}

// chatEvent decodes one Chat Completions chunk.
func (d *Decoder) chatEvent(data []byte) error {
	if d.isDone(data) {
		d.oc.sawDone = true
		d.finish()
		return nil
	}
	v, err := d.parseEvent(data)
	if err != nil {
		return d.badJSON()
	}
	if v.Type() != fastjson.TypeObject {
		return d.badJSON()
	}
	if !d.gotModel {
		d.setModel(v.GetStringBytes("model"))
	}
	if !d.gotID {
		d.setResponseID(v.GetStringBytes("id"))
	}
	choices := v.Get("choices")
	if choices != nil && choices.Type() == fastjson.TypeArray {
		arr, _ := choices.Array()
		for i, c := range arr {
			if d.opts.OpenClaw && i > 0 {
				break // @openclaw/ai reads choices[0] alone
			}
			if err := d.chatChoice(c); err != nil {
				return err
			}
		}
	} else if e := v.Get("error"); e != nil && e.Type() != fastjson.TypeNull && !d.opts.OpenClaw {
		// (With the OpenClaw rules a truthy error failed the stream
		// before, in ocSDKEvent; a falsy one is nothing.)
		return providerError(e)
	}
	d.chatUsage(v)
	return nil
}

// chatUsage takes a chunk's usage (Moonshot's inside the first choice
// when the chunk has none at top level).
func (d *Decoder) chatUsage(v *fastjson.Value) {
	u := v.Get("usage")
	if u == nil || u.Type() != fastjson.TypeObject {
		// Moonshot: usage inside the first choice, read when the chunk has
		// no top-level usage.
		u = v.Get("choices", "0", "usage")
	}
	if u != nil && u.Type() == fastjson.TypeObject {
		prompt := getInt(u, "prompt_tokens")
		cv := u.Get("prompt_tokens_details", "cached_tokens")
		if cv == nil || cv.Type() == fastjson.TypeNull {
			// Some compatible servers (DeepSeek) report the hit at top level.
			cv = u.Get("prompt_cache_hit_tokens")
		}
		cached := getInt(cv)
		d.uCacheRead = cached
		// The cache write, where a server reports it (@openclaw/ai's order:
		// OpenAI's field, then the Anthropic-style names some compatible
		// servers use).
		ptd := u.Get("prompt_tokens_details")
		switch {
		case hasNumber(ptd, "cache_write_tokens"):
			d.uCacheWrite = getInt(ptd, "cache_write_tokens")
		case hasNumber(ptd, "cache_creation_input_tokens"):
			d.uCacheWrite = getInt(ptd, "cache_creation_input_tokens")
		default:
			d.uCacheWrite = getInt(u, "cache_creation_input_tokens")
		}
		d.uIn = max(prompt-cached-d.uCacheWrite, 0)
		d.uOut = getInt(u, "completion_tokens")
		d.uReason = getInt(u, "completion_tokens_details", "reasoning_tokens")
		d.ocChatReasoningShown(hasNumber(u.Get("completion_tokens_details"), "reasoning_tokens"))
		d.ocChatTotal()
	}
}

func isDone(data []byte) bool {
	if len(data) < 6 || data[0] == '{' {
		return false // the common case, a JSON object, needs no trimming to tell
	}
	return string(bytes.TrimSpace(data)) == "[DONE]"
}

// isDone is isDone, but with the OpenClaw rules only the exact data
// "[DONE]" ends the stream: the openai SDK compares it as it is and
// JSON.parses anything else, so " [DONE]" is malformed JSON there.
func (d *Decoder) isDone(data []byte) bool {
	if d.opts.OpenClaw {
		return string(data) == "[DONE]"
	}
	return isDone(data)
}

// providerError converts an in-band {"type":..., "message":...} or
// {"error":{...}} value.
func providerError(e *fastjson.Value) error {
	if e.Type() == fastjson.TypeString {
		b, _ := e.StringBytes()
		return &ProviderError{Message: string(b)}
	}
	if inner := e.Get("error"); inner != nil && inner.Type() == fastjson.TypeObject {
		e = inner
	}
	typ := e.GetStringBytes("type")
	if len(typ) == 0 || string(typ) == "error" {
		// The Responses "error" event carries its kind in "code".
		if c := e.Get("code"); c != nil && c.Type() == fastjson.TypeString {
			typ, _ = c.StringBytes()
		}
	}
	pe := &ProviderError{Type: string(typ), Message: string(e.GetStringBytes("message"))}
	if pe.Message == "" {
		pe.Message = excerpt(llm.AppendJSONValue(nil, e))
	}
	return pe
}

func (d *Decoder) chatChoice(c *fastjson.Value) error {
	choice := int32(c.GetInt("index"))
	if d.opts.OpenClaw {
		choice = 0 // choices[0] is the answer, whatever its index says
	}
	delta := c.Get("delta")
	if d.opts.OpenClaw && absentOrNull(delta) {
		delta = c.Get("message") // @openclaw/ai reads choice.delta ?? choice.message
	}
	if delta != nil && delta.Type() == fastjson.TypeObject {
		var err error
		if d.opts.OpenClaw {
			err = d.ocLegacyDelta(choice, delta, c.GetStringBytes("finish_reason"))
		} else {
			err = d.chatDelta(choice, delta)
		}
		if err != nil {
			return err
		}
	}
	if v := c.Get("finish_reason"); v != nil && v.Type() != fastjson.TypeString && d.opts.OpenClaw {
		if t, truthy := ocFinishText(v); truthy {
			d.chatFinish(choice, t)
		}
	} else if fr := c.GetStringBytes("finish_reason"); len(fr) > 0 {
		d.chatFinish(choice, fr)
	}
	return nil
}

// ocFinishText is what @openclaw/ai makes of a finish_reason that is not a
// string: nothing when it is falsy (null, false, 0), else its String()
// (empty for []), which names no known reason, so the turn fails with
// "Provider finish_reason: " and that text.
func ocFinishText(v *fastjson.Value) (text []byte, truthy bool) {
	if !jsTruthy(v) {
		return nil, false
	}
	return llm.AppendJSToString(nil, v), true
}

// chatDelta applies a choice's delta: reasoning, content, refusal and
// tool-call fragments.
func (d *Decoder) chatDelta(choice int32, delta *fastjson.Value) error {
	{
		d.oc.textFollows = len(delta.GetStringBytes("content")) > 0 || len(delta.GetStringBytes("refusal")) > 0
		used := false
		if d.opts.OpenClaw {
			var err error
			if used, err = d.ocReasoningDetails(choice, delta.Get("reasoning_details")); err != nil {
				return err
			}
		}
		for i := 0; i < len(reasoningFields) && !used; i++ {
			if s := delta.GetStringBytes(reasoningFields[i]); len(s) > 0 {
				if err := d.chatThinking(choice, reasoningFields[i], s); err != nil {
					return err
				}
				break
			}
		}
		if s := delta.GetStringBytes("content"); len(s) > 0 {
			if err := d.chatText(choice, s); err != nil {
				return err
			}
		}
		if s := delta.GetStringBytes("refusal"); len(s) > 0 {
			if err := d.chatText(choice, s); err != nil {
				return err
			}
		}
		if tc := delta.Get("tool_calls"); tc != nil && tc.Type() == fastjson.TypeArray {
			arr, _ := tc.Array()
			for j, t := range arr {
				if err := d.chatTool(choice, j, t); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// closeProse ends the open text or thinking block of a choice, except one
// of type keep.
func (d *Decoder) closeProse(choice int32, keep int64) {
	for i := 0; i < len(d.slots); i++ {
		s := &d.slots[i]
		if s.choice == choice && (s.key == keyText || s.key == keyThinking) && s.key != keep {
			d.closeSlot(i)
			i--
		}
	}
}

func (d *Decoder) chatText(choice int32, s []byte) error {
	if d.opts.OpenClaw {
		return d.ocChatText(choice, s)
	}
	si := d.findSlot(choice, keyText, llm.BlockText)
	if si < 0 {
		d.closeProse(choice, keyText)
		si = d.open(choice, keyText, llm.BlockText)
	}
	return d.appendText(si, s)
}

func (d *Decoder) chatThinking(choice int32, field string, s []byte) error {
	d.oc.sawReasoning = true
	// The partitioner turns strict and flushes what it held.
	if d.opts.OpenClaw {
		if err := d.ocBeginReasoning(choice); err != nil {
			return err
		}
	}
	if !d.opts.Reasoning {
		// Not a reasoning model: @openclaw/ai drops the deltas.
		return nil
	}
	si := d.findSlot(choice, keyThinking, llm.BlockThinking)
	if si < 0 {
		d.closeProse(choice, keyThinking)
		si = d.open(choice, keyThinking, llm.BlockThinking)
		// pi-ai records which field carried the reasoning, to replay it.
		b := &d.msg.Content[d.slots[si].ci]
		b.Signature = append(b.Signature[:0], field...)
	}
	if d.opts.OpenClaw {
		ci := int(d.slots[si].ci)
		d.ocQueued(ci, len(d.msg.Content[ci].Text))
	}
	return d.appendText(si, s)
}

func (d *Decoder) chatTool(choice int32, pos int, t *fastjson.Value) error {
	id := t.GetStringBytes("id")
	fn := t.Get("function")
	var name, args []byte
	if fn != nil {
		name = fn.GetStringBytes("name")
		args = fn.GetStringBytes("arguments")
	}
	iv := t.Get("index")
	hasIndex := iv != nil && iv.Type() == fastjson.TypeNumber
	var index int64
	if hasIndex {
		index = getInt(iv)
	}
	return d.chatToolCall(choice, pos, hasIndex, index, id, name, args)
}

// chatToolCall applies one tool_calls element: keyed by (choice, index),
// by id when the index is missing, else by position in the chunk.
func (d *Decoder) chatToolCall(choice int32, pos int, hasIndex bool, index int64, id, name, args []byte) error {
	if d.opts.OpenClaw {
		return d.ocChatToolCall(choice, hasIndex, index, id, name, args)
	}
	var key int64
	si := -1
	if hasIndex {
		key = index
		si = d.findSlot(choice, key, llm.BlockToolCall)
	} else {
		// No index (Gemini's compatible endpoint, some proxies): key by id,
		// else by position in the chunk.
		key = -1 - int64(pos)
		if len(id) == 0 && len(name) > 0 {
			// Neither index nor id, but a name: a new call when the open
			// one at this position already holds a complete object
			// (@openclaw/ai opens a block for every such fragment; a
			// continuation carries no name).
			if si := d.findSlot(choice, key, llm.BlockToolCall); si >= 0 && jsonObject(d.msg.Content[d.slots[si].ci].RawArgs) {
				d.closeSlot(si)
			}
		}
		if len(id) > 0 {
			for i := range d.slots {
				s := &d.slots[i]
				if s.choice == choice && s.kind == llm.BlockToolCall && bytes.Equal(d.msg.Content[s.ci].ID, id) {
					si = i
					key = s.key
					break
				}
			}
		}
		if si < 0 {
			si = d.findSlot(choice, key, llm.BlockToolCall)
		}
	}
	if si >= 0 && len(id) > 0 {
		if old := d.msg.Content[d.slots[si].ci].ID; len(old) > 0 && !bytes.Equal(old, id) {
			// The same index reused for a new call (Qwen, DeepSeek,
			// proxies that number every call 0): end the old one.
			d.closeSlot(si)
			si = -1
		}
	}
	if si < 0 {
		d.closeProse(choice, -1)
		si = d.open(choice, key, llm.BlockToolCall)
	}
	b := &d.msg.Content[d.slots[si].ci]
	if len(id) > 0 && len(b.ID) == 0 {
		if err := d.setField(&b.ID, id); err != nil {
			return err
		}
	}
	if len(name) > 0 && !bytes.Equal(b.Name, name) {
		// A later name replaces the earlier one, as pi-ai and @openclaw/ai
		// have it.
		if err := d.setField(&b.Name, name); err != nil {
			return err
		}
	}
	if len(args) > 0 {
		return d.appendArgs(si, args)
	}
	return nil
}

func (d *Decoder) chatFinish(choice int32, fr []byte) {
	// @openclaw/ai's completions transport only notes a finish_reason: its
	// blocks stay open, deltas after it continue them, and a later
	// finish_reason replaces it.
	for i := 0; i < len(d.slots) && !d.opts.OpenClaw; i++ {
		if d.slots[i].choice == choice {
			d.closeSlot(i)
			i--
		}
	}
	d.stopped = true
	if choice != 0 && d.stop != llm.StopNone {
		return
	}
	d.setRawStop(fr)
	d.oc.sawFinish = true
	// mapOpenAIStopReason, with the singular tool_call the completions
	// transport allows.
	switch string(fr) {
	case "stop", "end":
		d.stop = llm.StopStop
	case "length":
		d.stop = llm.StopLength
	case "tool_calls", "function_call", "tool_call":
		d.stop = llm.StopToolUse
	default:
		d.stop = llm.StopError
		d.stopErr = &StopReasonError{Raw: string(fr), Message: "Provider finish_reason: " + string(fr)}
	}
	d.oc.finishStop = d.stop == llm.StopStop
}
