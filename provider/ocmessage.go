package provider

import (
	"bytes"

	"github.com/valyala/fastjson"

	"github.com/ocbench/ocbench/llm"
)

// @openclaw/ai 2026.9.6's Responses message items (Options.OpenClaw).
//
// A message item opens its text block when it is added, with its phase's
// text signature, except right after another message's text ended (the
// "last text block", cleared by any other item): then its text is held
// while it and that text are prefixes one of the other, because the item
// may be a snapshot of the same text grown longer. Its done then extends
// the earlier block instead of adding one when its text, in the same
// phase, continues it; held text that departs, or another item, makes the
// block at last. A message's done sets the block's text to the item's
// listed content. Text deltas of an item with no block are dropped.

// ocMsgState is the message state of an OpenClaw Responses decode.
type ocMsgState struct {
	last      int32 // the last text block's index +1 (0: none)
	lastPhase []byte
	lastHas   bool // the last text block's item had a (string) phase

	held      bool // a message item's text is held (it has no block yet)
	heldOI    int64
	heldIdx   bool // its added event had an output index
	heldCand  int32
	heldText  []byte
	heldID    []byte
	heldPhase []byte
}

func (m *ocMsgState) reset() {
	*m = ocMsgState{lastPhase: m.lastPhase[:0], heldText: m.heldText[:0], heldID: m.heldID[:0], heldPhase: m.heldPhase[:0]}
}

// itemPhase is a message item's phase when it is a string.
func itemPhase(item *fastjson.Value) ([]byte, bool) {
	p := item.Get("phase")
	if p == nil || p.Type() != fastjson.TypeString {
		return nil, false
	}
	s, _ := p.StringBytes()
	return s, true
}

// ocMessageAdded opens a message item's text block, or holds its text when
// the last text block may be what it grows.
func (d *Decoder) ocMessageAdded(v, item *fastjson.Value, oi int64) {
	m := &d.oc.msg
	key := textKey(oi, 0)
	if d.findSlot(0, key, llm.BlockText) >= 0 && !d.ocSlotTaken(v) {
		return // (with its index taken, the transport pushes a block, then fails)
	}
	phase, _ := itemPhase(item)
	if m.last > 0 {
		m.held, m.heldOI, m.heldIdx, m.heldCand = true, oi, hasOutputIndex(v), m.last-1
		m.heldText = m.heldText[:0]
		m.heldID = append(m.heldID[:0], item.GetStringBytes("id")...)
		m.heldPhase = append(m.heldPhase[:0], phase...)
		return
	}
	si := d.open(0, key, llm.BlockText)
	if len(phase) > 0 {
		ocSetSignature(&d.msg.Content[d.slots[si].ci], item.GetStringBytes("id"), phase)
	}
	d.ocTrackItem(v, item, oi, false)
}

// ocMessageText applies a text delta of the message at key: to its block,
// to its held text, or nowhere.
func (d *Decoder) ocMessageText(key int64, frag []byte) error {
	if si := d.findSlot(0, key, llm.BlockText); si >= 0 {
		return d.appendText(si, frag)
	}
	m := &d.oc.msg
	if !m.held || textKey(m.heldOI, 0) != key {
		return nil
	}
	if !d.validText(frag) {
		return d.badUTF8(frag)
	}
	m.heldText = append(m.heldText, frag...)
	prior := d.msg.Content[m.heldCand].Text
	if bytes.HasPrefix(prior, m.heldText) || bytes.HasPrefix(m.heldText, prior) {
		return nil
	}
	return d.ocMaterialize()
}

// ocMaterialize gives held text its own block (start, then its text as one
// delta).
func (d *Decoder) ocMaterialize() error {
	m := &d.oc.msg
	if !m.held {
		return nil
	}
	m.held = false
	si := d.open(0, textKey(m.heldOI, 0), llm.BlockText)
	b := &d.msg.Content[d.slots[si].ci]
	if len(m.heldPhase) > 0 {
		ocSetSignature(b, m.heldID, m.heldPhase)
	}
	if m.last-1 == m.heldCand {
		m.last = 0
	}
	d.ocTrack(ocItemMessage, nil, m.heldID, m.heldOI, m.heldIdx, false)
	if len(m.heldText) > 0 {
		return d.appendText(si, m.heldText)
	}
	return nil
}

// ocMessageDone ends a message item: the earlier block grows when the
// held text was a snapshot of it, else the item's block (made now if its
// text was held) takes the item's listed text.
func (d *Decoder) ocMessageDone(v, item *fastjson.Value, oi int64) error {
	m := &d.oc.msg
	key := textKey(oi, 0)
	si := d.findSlot(0, key, llm.BlockText)
	held := m.held && textKey(m.heldOI, 0) == key
	if si < 0 && !held {
		// A done with no added: the item starts here.
		d.ocMessageAdded(v, item, oi)
		si = d.findSlot(0, key, llm.BlockText)
		held = m.held && textKey(m.heldOI, 0) == key
	}
	n := len(d.side)
	defer func() { d.side = d.side[:n] }()
	var text []byte
	if c := item.Get("content"); c != nil && c.Type() != fastjson.TypeNull {
		d.side = appendMessageText(d.side, item)
		text = d.side[n:]
	} else if held {
		text = m.heldText
	} else if si >= 0 {
		text = d.msg.Content[d.slots[si].ci].Text
	}
	if !d.validText(text) {
		return d.badUTF8(text)
	}
	phase, has := itemPhase(item)
	id := item.GetStringBytes("id")
	if held {
		m.held = false
		if m.last-1 == m.heldCand && d.ocExtendLast(text, id, phase, has) {
			return nil
		}
		if m.last-1 == m.heldCand {
			m.last = 0
		}
		si = d.open(0, key, llm.BlockText)
	}
	b := &d.msg.Content[d.slots[si].ci]
	b.Text = append(b.Text[:0], text...)
	ocSetSignature(b, id, phase)
	d.ocSetLast(d.slots[si].ci, phase, has)
	d.closeSlot(si)
	return nil
}

// ocExtendLast is the snapshot collapse: when text, in the same phase,
// continues the last text block's text, that block takes it (signed by the
// new item, and ended again) and ocExtendLast reports true.
func (d *Decoder) ocExtendLast(text, id, phase []byte, has bool) bool {
	m := &d.oc.msg
	if m.last == 0 || m.lastHas != has || !bytes.Equal(m.lastPhase, phase) {
		return false
	}
	ci := m.last - 1
	last := &d.msg.Content[ci]
	if len(last.Text) == 0 || len(text) <= len(last.Text) || !bytes.HasPrefix(text, last.Text) {
		return false
	}
	last.Text = append(last.Text[:0], text...)
	ocSetSignature(last, id, phase)
	d.push(llm.EventTextEnd, int(ci), nil)
	return true
}

// appendMessageText appends a message item's listed text: its parts'
// texts, a part of another type giving its refusal, joined.
func appendMessageText(dst []byte, item *fastjson.Value) []byte {
	for _, p := range item.GetArray("content") {
		switch string(p.GetStringBytes("type")) {
		case "output_text", "text":
			dst = append(dst, p.GetStringBytes("text")...)
		default:
			dst = append(dst, p.GetStringBytes("refusal")...)
		}
	}
	return dst
}

// ocSetLast records block ci as the last text block, of the given phase.
func (d *Decoder) ocSetLast(ci int32, phase []byte, has bool) {
	m := &d.oc.msg
	m.last = ci + 1
	m.lastPhase, m.lastHas = append(m.lastPhase[:0], phase...), has
}

// ocSetSignature is encodeTextSignatureV1(id, phase): the phase only when
// it is not empty.
func ocSetSignature(b *llm.Block, id, phase []byte) {
	s := append(b.Signature[:0], `{"v":1,"id":`...)
	s = llm.AppendJSONString(s, id)
	if len(phase) > 0 {
		s = append(s, `,"phase":`...)
		s = llm.AppendJSONString(s, phase)
	}
	b.Signature = append(s, '}')
}
