package provider

import (
	"github.com/ocbench/ocbench/llm"
	"github.com/valyala/fastjson"
)

// anthropicEvent decodes one Anthropic Messages event.
func (d *Decoder) anthropicEvent(data []byte) error {
	v, err := d.parseEvent(data)
	if err != nil || v.Type() != fastjson.TypeObject {
		return d.badJSON()
	}
	typ := v.GetStringBytes("type")
	if len(typ) == 0 && !d.opts.OpenClaw {
		typ = d.name // @openclaw/ai reads the type from the data alone
	}
	switch string(typ) {
	case "content_block_delta":
		return d.anthropicDelta(v)
	case "ping":
	case "content_block_start":
		return d.anthropicStart(v)
	case "content_block_stop":
		if d.opts.OpenClaw && !hasIndex(v) {
			// @openclaw/ai ignores it: the block stays open.
			return nil
		}
		si := d.findSlot(0, getInt(v, "index"), anyKind)
		if si < 0 {
			return nil
		}
		s := &d.slots[si]
		d.msg.Content[s.ci].Unstopped = false
		if s.kind == llm.BlockToolCall && !s.delta && s.inLen > 0 {
			// A complete input in content_block_start and no deltas: the
			// start input is the arguments (emitted as one delta).
			in := d.side[s.inOff : s.inOff+s.inLen]
			if err := d.appendArgs(si, in); err != nil {
				return err
			}
		}
		d.closeSlot(si)
	case "message_start":
		d.oc.sawStart = true
		m := v.Get("message")
		if m == nil {
			return nil
		}
		d.setModel(m.GetStringBytes("model"))
		d.setResponseID(m.GetStringBytes("id"))
		if d.opts.OpenClaw {
			// applyAnthropicMessageStartUsage: a cache count absent or
			// null is 0, even after an earlier message_start.
			u := m.Get("usage")
			if absentOrNull(u.Get("cache_read_input_tokens")) {
				d.uCacheRead = 0
			}
			if absentOrNull(u.Get("cache_creation_input_tokens")) {
				d.uCacheWrite = 0
			}
		}
		if u := m.Get("usage"); u != nil {
			d.anthropicUsage(u)
			if d.opts.OpenClaw {
				d.ocAnthropicCacheWrite1h(u)
			}
		}
	case "message_delta":
		if dv := v.Get("delta"); dv != nil {
			if sr := dv.GetStringBytes("stop_reason"); len(sr) > 0 {
				d.anthropicStop(sr, dv.Get("stop_details"))
				if d.opts.OpenClaw && d.stopErr != nil && d.stopUnknown {
					// mapAnthropicStopReason throws at once: the usage of
					// this event is never read.
					d.oc.dropCalls = true
					d.fail(d.stopErr)
					return nil
				}
			}
		}
		if u := v.Get("usage"); u != nil {
			if !d.opts.OpenClaw || !d.ocAnthropicBilledIterations(u) {
				d.anthropicUsage(u)
				if d.opts.OpenClaw {
					d.ocAnthropicCacheWrite1h(u)
				}
			}
		}
		if d.stop == llm.StopToolUse || d.hasToolCalls() {
			d.oc.tagUpTo = len(d.msg.Content)
		}
	case "message_stop":
		d.stopped = true
		if !d.opts.OpenClaw {
			d.finish()
		}
		// @openclaw/ai reads on to the end of the body: what follows
		// message_stop (an error, another block) still counts.
	case "error":
		return providerError(v)
	}
	return nil
}

// anyKind matches a slot of any block type in findSlot.
const anyKind llm.BlockType = 255

func (d *Decoder) anthropicStart(v *fastjson.Value) error {
	idx := getInt(v, "index")
	if d.opts.OpenClaw && !hasIndex(v) {
		idx = -1 // @openclaw/ai's key of a block without an index
	}
	cb := v.Get("content_block")
	if cb == nil {
		return nil
	}
	if si := d.findSlot(0, idx, anyKind); si >= 0 {
		// A second start for an open index: end the first block.
		if d.opts.OpenClaw {
			d.ocAnthropicOrphan(si)
		} else {
			d.closeSlot(si)
		}
	}
	switch string(cb.GetStringBytes("type")) {
	case "text":
		si := d.anthropicOpen(idx, llm.BlockText)
		if t := cb.GetStringBytes("text"); len(t) > 0 {
			return d.appendText(si, t)
		}
	case "thinking":
		si := d.anthropicOpen(idx, llm.BlockThinking)
		if d.opts.OpenClaw {
			d.msg.Content[d.slots[si].ci].SignatureSet = true
		}
		if sig := cb.GetStringBytes("signature"); len(sig) > 0 {
			b := &d.msg.Content[d.slots[si].ci]
			if err := d.setField(&b.Signature, sig); err != nil {
				return err
			}
		}
		if t := cb.GetStringBytes("thinking"); len(t) > 0 {
			return d.appendText(si, t)
		}
	case "redacted_thinking":
		si := d.anthropicOpen(idx, llm.BlockThinking)
		b := &d.msg.Content[d.slots[si].ci]
		b.Redacted = true
		b.Text = append(b.Text[:0], "[Reasoning redacted]"...)
		return d.setField(&b.Signature, cb.GetStringBytes("data"))
	case "tool_use":
		// @openclaw/ai tags the text before a tool call as commentary.
		d.oc.tagUpTo = len(d.msg.Content)
		si := d.anthropicOpen(idx, llm.BlockToolCall)
		b := &d.msg.Content[d.slots[si].ci]
		if err := d.setField(&b.ID, cb.GetStringBytes("id")); err != nil {
			return err
		}
		if err := d.setField(&b.Name, cb.GetStringBytes("name")); err != nil {
			return err
		}
		if in := cb.Get("input"); in != nil && !emptyInput(in) && (!d.opts.OpenClaw || isContainer(in)) {
			// Keep a non-placeholder start input aside: deltas, if any
			// follow, carry the whole input again (trpc-agent-go #1649).
			// @openclaw/ai takes one that is not an object or an array as
			// {}.
			off := len(d.side)
			d.side = llm.AppendJSONValue(d.side, in)
			if len(d.side)-off > d.opts.MaxArgBytes {
				return &LimitError{What: "tool-call arguments", Limit: d.opts.MaxArgBytes}
			}
			s := &d.slots[si]
			s.inOff, s.inLen = int32(off), int32(len(d.side)-off)
		}
	}
	// Other block types (server tools, search results) are not part of the
	// message; their deltas are ignored.
	return nil
}

// anthropicOpen opens a block for a content_block_start of stream index
// idx. With the OpenClaw rules the block is unstopped (it keeps its index)
// until its content_block_stop.
func (d *Decoder) anthropicOpen(idx int64, t llm.BlockType) int {
	si := d.open(0, idx, t)
	if d.opts.OpenClaw {
		b := &d.msg.Content[d.slots[si].ci]
		b.Unstopped, b.StreamIndex = true, idx
	}
	return si
}

func isContainer(v *fastjson.Value) bool {
	return v.Type() == fastjson.TypeObject || v.Type() == fastjson.TypeArray
}

func absentOrNull(v *fastjson.Value) bool { return v == nil || v.Type() == fastjson.TypeNull }

func hasIndex(v *fastjson.Value) bool {
	x := v.Get("index")
	return x != nil && x.Type() == fastjson.TypeNumber
}

func emptyInput(v *fastjson.Value) bool {
	switch v.Type() {
	case fastjson.TypeNull:
		return true
	case fastjson.TypeObject:
		o, _ := v.Object()
		return o.Len() == 0
	case fastjson.TypeString:
		b, _ := v.StringBytes()
		return len(b) == 0
	}
	return false
}

func (d *Decoder) anthropicDelta(v *fastjson.Value) error {
	indexed := hasNumber(v, "index")
	si := -1
	if indexed || !d.opts.OpenClaw {
		si = d.findSlot(0, getInt(v, "index"), anyKind)
	}
	dv := v.Get("delta")
	if dv == nil {
		return nil
	}
	if si < 0 {
		if t := dv.Get("text"); d.opts.OpenClaw && string(dv.GetStringBytes("type")) == "text_delta" && t != nil && t.Type() == fastjson.TypeString {
			return d.ocAnthropicOrphanText(getInt(v, "index"), indexed, dv.GetStringBytes("text"))
		}
		return nil
	}
	s := &d.slots[si]
	switch string(dv.GetStringBytes("type")) {
	case "text_delta":
		if s.kind == llm.BlockText {
			return d.appendText(si, dv.GetStringBytes("text"))
		}
	case "input_json_delta":
		if s.kind == llm.BlockToolCall {
			pj := dv.GetStringBytes("partial_json")
			if len(pj) > 0 {
				s.delta = true
			}
			return d.appendArgs(si, pj)
		}
	case "thinking_delta":
		if s.kind == llm.BlockThinking {
			return d.appendText(si, dv.GetStringBytes("thinking"))
		}
	case "signature_delta":
		if s.kind == llm.BlockThinking {
			sig := dv.GetStringBytes("signature")
			b := &d.msg.Content[s.ci]
			if !d.validText(sig) {
				return d.badUTF8(sig)
			}
			if d.opts.OpenClaw && !s.delta {
				// @openclaw/ai replaces the start's signature with the
				// deltas, applied at content_block_stop.
				b.Signature = b.Signature[:0]
			}
			s.delta = true
			b.Signature = append(b.Signature, sig...)
		}
	}
	return nil
}

func (d *Decoder) anthropicUsage(u *fastjson.Value) {
	// message_delta usage is cumulative: a present field replaces the
	// earlier value (prefer the final one).
	d.anthropicCount(&d.uIn, u.Get("input_tokens"))
	d.anthropicCount(&d.uOut, u.Get("output_tokens"))
	d.anthropicCount(&d.uCacheRead, u.Get("cache_read_input_tokens"))
	d.anthropicCount(&d.uCacheWrite, u.Get("cache_creation_input_tokens"))
}

// anthropicCount sets *dst from a usage count, if it is a number (with the
// OpenClaw rules, a non-negative one: @openclaw/ai ignores the others).
func (d *Decoder) anthropicCount(dst *int64, x *fastjson.Value) {
	if x == nil || x.Type() != fastjson.TypeNumber {
		return
	}
	if n := getInt(x); n >= 0 || !d.opts.OpenClaw {
		*dst = n
	}
}

func (d *Decoder) anthropicStop(sr []byte, details *fastjson.Value) {
	d.setRawStop(sr)
	d.stopUnknown = false
	d.stopped = true
	switch string(sr) {
	case "end_turn", "stop_sequence", "pause_turn", "compaction":
		d.stop = llm.StopStop
	case "max_tokens", "model_context_window_exceeded":
		d.stop = llm.StopLength
	case "tool_use":
		d.stop = llm.StopToolUse
	case "refusal":
		d.stop = llm.StopError
		if d.opts.OpenClaw {
			d.stopErr = &StopReasonError{Raw: "refusal", Message: ocRefusalMessage(details)}
			return
		}
		msg := "The model refused to answer (stop_reason: refusal)."
		if details != nil {
			if ex := details.GetStringBytes("explanation"); len(ex) > 0 {
				msg = string(ex)
			}
		}
		d.stopErr = &StopReasonError{Raw: "refusal", Message: msg}
	case "sensitive":
		if d.opts.OpenClaw {
			// An error stop reason without a message.
			d.stop = llm.StopError
			d.stopErr = &StopReasonError{Raw: "sensitive", Message: "An unknown error occurred"}
			return
		}
		fallthrough
	default:
		d.stopUnknown = true
		d.stop = llm.StopError
		d.stopErr = &StopReasonError{Raw: string(sr), Message: "Unhandled stop reason: " + string(sr)}
	}
}
