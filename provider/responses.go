package provider

import (
	"bytes"
	"io"

	"github.com/ocbench/ocbench/llm"
	"github.com/valyala/fastjson"
)

// Responses slot keys: output_index<<20 | content_index for text, the
// output_index for tool calls and reasoning.
func textKey(outIdx, partIdx int64) int64 { return outIdx<<20 | partIdx&(1<<20-1) }

// textKey is the slot key of a text part; with Options.OpenClaw every part
// of a message item goes to one block, as @openclaw/ai has it.
func (d *Decoder) textKey(outIdx, partIdx int64) int64 {
	if d.opts.OpenClaw {
		partIdx = 0
	}
	return textKey(outIdx, partIdx)
}

// responsesEvent decodes one Responses API event.
func (d *Decoder) responsesEvent(data []byte) error {
	if d.isDone(data) {
		if d.stopped {
			d.finish()
			return nil
		}
		if d.opts.OpenClaw {
			// The SDK's stream ends at [DONE]: as the end of the body.
			d.readFailed(io.EOF)
			return nil
		}
		return ErrTruncated
	}
	v, err := d.parseEvent(data)
	if err != nil || v.Type() != fastjson.TypeObject {
		return d.badJSON()
	}
	if d.opts.OpenClaw {
		if msg := ocResponsesMalformed(v); msg != "" {
			d.ocFail(msg, false, false)
			return nil
		}
	}
	typ := v.GetStringBytes("type")
	if len(typ) == 0 && !d.opts.OpenClaw {
		typ = d.name
	}
	switch string(typ) {
	case "response.output_text.delta", "response.refusal.delta", "response.text.delta":
		oi := getInt(v, "output_index")
		return d.responsesText(d.textKey(oi, getInt(v, "content_index")), v.GetStringBytes("delta"))
	case "response.function_call_arguments.delta":
		si := d.responsesToolSlot(v)
		if si < 0 {
			return nil
		}
		d.slots[si].delta = true // the arguments were streamed
		return d.appendArgs(si, v.GetStringBytes("delta"))
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		oi := getInt(v, "output_index")
		si := d.findSlot(0, oi, llm.BlockThinking)
		if d.opts.OpenClaw {
			// @openclaw/ai keeps a reasoning delta only for a reasoning
			// item it was told of, and a summary delta only once the item
			// has a summary part to add it to.
			if si < 0 || string(typ) == "response.reasoning_summary_text.delta" && d.slots[si].parts == 0 {
				return nil
			}
		} else if si < 0 {
			si = d.open(0, oi, llm.BlockThinking)
		}
		return d.appendText(si, v.GetStringBytes("delta"))
	case "response.output_item.added":
		return d.responsesItemAdded(v)
	case "response.output_item.done":
		return d.responsesItemDone(v)
	case "response.function_call_arguments.done":
		si := d.responsesToolSlot(v)
		if si < 0 {
			return nil
		}
		d.slots[si].done = true
		if a := v.Get("arguments"); a != nil && a.Type() == fastjson.TypeString {
			b, _ := a.StringBytes()
			if s := &d.slots[si]; len(b) > 0 || len(d.msg.Content[s.ci].RawArgs) == 0 {
				s.delta = true // the arguments were streamed
			}
			return d.reconcileArgs(si, b)
		}
	case "response.output_text.done", "response.refusal.done":
		if d.opts.OpenClaw {
			return nil // @openclaw/ai takes the text from the item's done
		}
		oi := getInt(v, "output_index")
		key := d.textKey(oi, getInt(v, "content_index"))
		field := "text"
		if string(typ) == "response.refusal.done" {
			field = "refusal"
		}
		full := v.GetStringBytes(field)
		si := d.findSlot(0, key, llm.BlockText)
		if si < 0 {
			if len(full) == 0 {
				return nil
			}
			si = d.open(0, key, llm.BlockText)
		}
		if err := d.reconcileText(si, full); err != nil {
			return err
		}
		if !d.opts.OpenClaw { // there the message item's done ends it
			d.closeSlot(si)
		}
	case "response.reasoning_summary_part.added":
		oi := getInt(v, "output_index")
		si := d.findSlot(0, oi, llm.BlockThinking)
		if d.opts.OpenClaw {
			if si >= 0 {
				d.slots[si].parts++
			}
			return nil
		}
		if si >= 0 && getInt(v, "summary_index") > 0 {
			if len(d.msg.Content[d.slots[si].ci].Text) > 0 {
				return d.appendText(si, paraBreak)
			}
		}
	case "response.reasoning_summary_part.done":
		// @openclaw/ai ends each summary part with a paragraph break (the
		// reasoning item's done then replaces the text with the parts
		// joined); the extended decoder breaks between parts instead, at
		// the next part's start, so that a cut stream ends on the text.
		if d.opts.OpenClaw {
			if si := d.findSlot(0, getInt(v, "output_index"), llm.BlockThinking); si >= 0 && d.slots[si].parts > 0 {
				return d.appendText(si, paraBreak)
			}
		}
	case "response.created", "response.in_progress":
		if r := v.Get("response"); r != nil {
			d.setModel(r.GetStringBytes("model"))
			d.setResponseID(r.GetStringBytes("id"))
		}
	case "response.completed", "response.incomplete", "response.failed", "response.cancelled", "response.done":
		return d.responsesTerminal(v)
	case "error":
		if d.opts.OpenClaw {
			return ocResponsesError(v)
		}
		return providerError(v)
	}
	return nil
}

var paraBreak = []byte("\n\n")

// responsesText applies a text delta of the text part at key.
func (d *Decoder) responsesText(key int64, frag []byte) error {
	if d.opts.OpenClaw {
		return d.ocMessageText(key, frag)
	}
	si := d.findSlot(0, key, llm.BlockText)
	if si < 0 {
		si = d.open(0, key, llm.BlockText)
	}
	return d.appendText(si, frag)
}

// ocReasoningDone gives a finished reasoning item's thinking as @openclaw/ai
// does: the item's summary texts joined by paragraph breaks, else its
// content texts joined so, else what streamed.
func (d *Decoder) ocReasoningDone(b *llm.Block, item *fastjson.Value) error {
	for _, field := range [...]string{"summary", "content"} {
		parts := item.GetArray(field)
		n := len(d.side)
		for i, p := range parts {
			if i > 0 {
				d.side = append(d.side, paraBreak...)
			}
			d.side = appendJSText(d.side, p.Get("text"))
		}
		joined := d.side[n:]
		d.side = d.side[:n]
		if len(joined) == 0 {
			continue
		}
		if !d.validText(joined) {
			return d.badUTF8(joined)
		}
		b.Text = append(b.Text[:0], joined...)
		return nil
	}
	return nil
}

// appendJSText appends a value as JavaScript's Array.prototype.join
// renders an element: null and absent as nothing, anything else as
// String() writes it (llm.AppendJSToString).
func appendJSText(dst []byte, v *fastjson.Value) []byte {
	if v == nil || v.Type() == fastjson.TypeNull {
		return dst
	}
	return llm.AppendJSToString(dst, v)
}

// responsesToolSlot finds the open tool call of an arguments event, by
// output_index, else by item_id (the part of Block.ID after '|').
func (d *Decoder) responsesToolSlot(v *fastjson.Value) int {
	if oi := v.Get("output_index"); oi != nil && oi.Type() == fastjson.TypeNumber {
		if si := d.findSlot(0, getInt(oi), llm.BlockToolCall); si >= 0 {
			return si
		}
	}
	if id := v.GetStringBytes("item_id"); len(id) > 0 {
		for i := range d.slots {
			s := &d.slots[i]
			if s.kind == llm.BlockToolCall && itemIDOf(d.msg.Content[s.ci].ID, id) {
				return i
			}
		}
	}
	return -1
}

func itemIDOf(blockID, itemID []byte) bool {
	i := bytes.IndexByte(blockID, '|')
	return i >= 0 && bytes.Equal(blockID[i+1:], itemID)
}

func (d *Decoder) responsesItemAdded(v *fastjson.Value) error {
	item := v.Get("item")
	if item == nil {
		return nil
	}
	oi := getInt(v, "output_index")
	if d.opts.OpenClaw {
		// Held text gets its block before any other item starts.
		if err := d.ocMaterialize(); err != nil {
			return err
		}
		if ocItemType(item) != ocItemMessage {
			d.oc.msg.last = 0
			defer d.ocTrackItem(v, item, oi, false)
		}
	}
	switch string(ocItemKind(item, d.opts.OpenClaw)) {
	case "function_call", "custom_tool_call":
		if d.opts.OpenClaw && !d.ocRegisterCall(v) {
			return nil
		}
		if si := d.findSlot(0, oi, llm.BlockToolCall); si >= 0 {
			d.closeSlot(si)
		}
		si := d.open(0, oi, llm.BlockToolCall)
		if err := d.setToolIdentity(si, item); err != nil {
			return err
		}
		if d.opts.OpenClaw && d.ocItemConflict(v, item, oi) {
			return nil
		}
		if a := item.GetStringBytes("arguments"); len(a) > 0 {
			return d.appendArgs(si, a)
		}
	case "reasoning":
		// @openclaw/ai pushes a reasoning item's block before it finds
		// the item's index taken.
		if d.findSlot(0, oi, llm.BlockThinking) < 0 || d.opts.OpenClaw {
			si := d.open(0, oi, llm.BlockThinking)
			if a := item.GetArray("summary"); a != nil {
				d.slots[si].parts = int32(len(a)) // summary parts the item came with
			}
		}
	case "message":
		// @openclaw/ai opens the text block with the item, text or not.
		if d.opts.OpenClaw {
			d.ocMessageAdded(v, item, oi)
		}
	}
	if d.opts.OpenClaw && !d.ocItemConflict(v, item, oi) {
		if t := ocItemType(item); t == ocItemReasoning || t == ocItemMessage {
			d.ocRegisterSlot(v, t)
		}
	}
	return nil
}

// setToolIdentity sets a Responses tool call's id in pi-ai's form
// call_id|item_id, and its name.
func (d *Decoder) setToolIdentity(si int, item *fastjson.Value) error {
	b := &d.msg.Content[d.slots[si].ci]
	callID := item.GetStringBytes("call_id")
	itemID := item.GetStringBytes("id")
	if d.opts.OpenClaw && len(b.ID) == 0 {
		// resolveResponsesToolCallId: both trimmed, a generated call id
		// when there is none, and no "|" without an item id.
		callID, itemID = jsTrim(callID), jsTrim(itemID)
		if !d.validText(callID) || !d.validText(itemID) {
			return d.badUTF8(append(callID[:len(callID):len(callID)], itemID...))
		}
		if len(callID) > 0 {
			b.ID = append(b.ID[:0], callID...)
		} else {
			b.ID = appendRandomHex(append(b.ID[:0], "call_"...))
		}
		if len(itemID) > 0 {
			b.ID = append(append(b.ID, '|'), itemID...)
		}
	}
	if len(b.ID) == 0 && (len(callID) > 0 || len(itemID) > 0) {
		if !d.validText(callID) || !d.validText(itemID) {
			return d.badUTF8(append(callID[:len(callID):len(callID)], itemID...))
		}
		b.ID = append(b.ID[:0], callID...)
		b.ID = append(b.ID, '|')
		b.ID = append(b.ID, itemID...)
	}
	if name := item.GetStringBytes("name"); len(name) > 0 && len(b.Name) == 0 {
		return d.setField(&b.Name, name)
	}
	return nil
}

func (d *Decoder) responsesItemDone(v *fastjson.Value) error {
	item := v.Get("item")
	if item == nil {
		return nil
	}
	oi := getInt(v, "output_index")
	if d.opts.OpenClaw {
		if d.ocConflicts(v, item, oi) {
			// A reasoning or message item that finds no open slot of its
			// own gets one, block first, before its identity is checked.
			if t := ocItemType(item); (t == ocItemReasoning || t == ocItemMessage) && d.ocFindSlot(v, t) < 0 {
				if t == ocItemReasoning {
					d.open(0, oi, llm.BlockThinking)
				} else {
					d.open(0, textKey(oi, 0), llm.BlockText)
				}
			}
			d.ocItemConflict(v, item, oi)
			return nil
		}
		defer d.ocTrackItem(v, item, oi, true)
		typ := ocItemType(item)
		switch typ {
		case ocItemReasoning, ocItemMessage:
			defer d.ocForgetSlot(v, typ)
		case ocItemCall:
			defer d.ocForgetCall(v)
		}
		if typ != ocItemMessage {
			d.oc.msg.last = 0
		}
		if m := &d.oc.msg; m.held && (typ != ocItemMessage || m.heldOI != oi) {
			if err := d.ocMaterialize(); err != nil {
				return err
			}
		}
		if typ == ocItemMessage {
			return d.ocMessageDone(v, item, oi)
		}
	}
	switch string(ocItemKind(item, d.opts.OpenClaw)) {
	case "function_call", "custom_tool_call":
		si := d.findSlot(0, oi, llm.BlockToolCall)
		if si < 0 {
			if len(d.msg.Content) > 0 && d.hasToolCallItem(item.GetStringBytes("id")) {
				return nil // already ended
			}
			if d.opts.OpenClaw {
				if failed, _ := d.ocCheckCallDone(nil, nil, false, item); failed {
					return nil // (no block: the transport validates first)
				}
			}
			si = d.open(0, oi, llm.BlockToolCall)
		}
		useStreamed := false
		if d.opts.OpenClaw {
			var failed bool
			if failed, useStreamed = d.ocResponsesItemDone(si, item); failed {
				return nil
			}
		}
		if err := d.setToolIdentity(si, item); err != nil {
			return err
		}
		if useStreamed {
			d.closeSlot(si)
			return nil
		}
		field := "arguments"
		if item.Get("arguments") == nil {
			field = "input"
		}
		if a := item.Get(field); a != nil && a.Type() == fastjson.TypeString {
			b, _ := a.StringBytes()
			if err := d.reconcileArgs(si, b); err != nil {
				return err
			}
		}
		d.closeSlot(si)
	case "message":
		for i := 0; i < len(d.slots); i++ {
			if d.slots[i].kind == llm.BlockText && d.slots[i].key>>20 == oi {
				d.closeSlot(i)
				i--
			}
		}
	case "reasoning":
		si := d.findSlot(0, oi, llm.BlockThinking)
		if si < 0 {
			si = d.open(0, oi, llm.BlockThinking)
		}
		// pi-ai keeps the whole reasoning item (with its encrypted
		// content) as the signature, to send it back.
		b := &d.msg.Content[d.slots[si].ci]
		b.Signature = llm.AppendJSONValue(b.Signature[:0], item)
		if d.opts.OpenClaw {
			if err := d.ocReasoningDone(b, item); err != nil {
				return err
			}
			b.ReplayMarked = jsTruthy(item.Get("encrypted_content"))
		}
		d.closeSlot(si)
	}
	return nil
}

func (d *Decoder) hasToolCallItem(itemID []byte) bool {
	for i := range d.msg.Content {
		b := &d.msg.Content[i]
		if b.Type == llm.BlockToolCall && itemIDOf(b.ID, itemID) {
			return true
		}
	}
	return false
}

// reconcileArgs applies final arguments: when they extend the streamed
// text, the rest is emitted as one more delta; when they differ, the final
// text wins (counted in ArgMismatches).
func (d *Decoder) reconcileArgs(si int, full []byte) error {
	b := &d.msg.Content[d.slots[si].ci]
	if bytes.HasPrefix(full, b.RawArgs) {
		if rest := full[len(b.RawArgs):]; len(rest) > 0 {
			return d.appendArgs(si, rest)
		}
		return nil
	}
	if !d.validText(full) {
		return d.badUTF8(full)
	}
	if len(full) > d.opts.MaxArgBytes {
		return &LimitError{What: "tool-call arguments", Limit: d.opts.MaxArgBytes}
	}
	d.argMismatches++
	b.RawArgs = append(b.RawArgs[:0], full...)
	return nil
}

func (d *Decoder) reconcileText(si int, full []byte) error {
	b := &d.msg.Content[d.slots[si].ci]
	if len(full) > len(b.Text) && bytes.HasPrefix(full, b.Text) {
		return d.appendText(si, full[len(b.Text):])
	}
	return nil
}

func (d *Decoder) responsesTerminal(v *fastjson.Value) error {
	if d.opts.OpenClaw {
		switch string(v.GetStringBytes("type")) {
		case "response.cancelled", "response.done":
			return nil // not terminal events to @openclaw/ai
		}
	}
	r := v.Get("response")
	if r == nil {
		r = v
	}
	d.setModel(r.GetStringBytes("model"))
	d.setResponseID(r.GetStringBytes("id"))
	if u := r.Get("usage"); u != nil && u.Type() == fastjson.TypeObject {
		in := getInt(u, "input_tokens")
		cached := getInt(u, "input_tokens_details", "cached_tokens")
		write := getInt(u, "input_tokens_details", "cache_write_tokens")
		d.uCacheRead = cached
		d.uCacheWrite = write
		d.uIn = max(in-cached-write, 0)
		d.uOut = getInt(u, "output_tokens")
		d.uReason = getInt(u, "output_tokens_details", "reasoning_tokens")
		if d.opts.OpenClaw {
			d.ocResponsesUsage(u)
		}
	}
	if d.opts.OpenClaw {
		if string(v.GetStringBytes("type")) == "response.failed" {
			// Whatever its status says.
			return &ProviderError{Type: string(r.GetStringBytes("error", "code")), Message: ocResponsesFailed(r)}
		}
		return d.ocResponsesTerminal(v, r)
	}
	status := r.GetStringBytes("status")
	if len(status) == 0 {
		status = bytes.TrimPrefix(v.GetStringBytes("type"), []byte("response."))
	}
	d.setRawStop(status)
	d.stopped = true
	switch string(status) {
	case "completed":
		d.stop = llm.StopStop
	case "incomplete":
		reason := r.GetStringBytes("incomplete_details", "reason")
		if string(reason) == "content_filter" {
			d.stop = llm.StopError
			d.stopErr = &StopReasonError{Raw: "content_filter", Message: "The provider's content filter stopped the response (incomplete: content_filter)."}
		} else {
			d.stop = llm.StopLength
		}
	case "failed", "cancelled":
		msg := r.GetStringBytes("error", "message")
		code := r.GetStringBytes("error", "code")
		if len(msg) == 0 {
			msg = []byte("The response " + string(status) + ".")
		}
		return &ProviderError{Type: string(code), Message: string(msg)}
	default:
		d.stop = llm.StopError
		d.stopErr = &StopReasonError{Raw: string(status), Message: "Unhandled stop reason: " + string(status)}
	}
	d.finish()
	return nil
}
