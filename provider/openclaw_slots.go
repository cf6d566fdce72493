package provider

import (
	"math"
	"strconv"

	"github.com/valyala/fastjson"
)

// @openclaw/ai's Responses transport keeps two registers of what is open
// (createResponsesOutputSlotTracker, createResponsesToolCallTracker): an
// output slot per reasoning or message item from its output_item.added to
// its output_item.done, and per function call with an output index until
// the call is finished; and each function call apart. An added item that
// finds its output index taken fails the stream ("reused active output
// index N", "reused active tool-call output index N"), as does a second
// reasoning or message item without an index while one is open.

// ocSlot is one entry of those registers.
type ocSlot struct {
	index   int64
	indexed bool
	typ     uint8 // ocItemCall, ocItemMessage, ocItemReasoning
	call    bool  // in the tool-call register (a function call)
	slot    bool  // in the output-slot register
}

// ocOutputIndex is readResponsesOutputIndex: the event's output_index when
// it is an integer number from 0 on.
func ocOutputIndex(v *fastjson.Value) (int64, bool) {
	x := v.Get("output_index")
	if x == nil || x.Type() != fastjson.TypeNumber {
		return 0, false
	}
	f := x.GetFloat64()
	switch {
	case f < 0 || f != math.Trunc(f) || math.IsInf(f, 1):
		return 0, false
	case f >= math.MaxInt64:
		return math.MaxInt64, true // (JavaScript tells such indexes apart; no stream has them)
	}
	return int64(f), true
}

// ocSlotAt is the entry of the register the transport finds at an output
// position: a call (calls) or an output slot (!calls) at index oi, or
// without an index; -1 for none.
func (d *Decoder) ocSlotAt(oi int64, indexed, calls bool) int {
	for i, s := range d.oc.slots {
		if (calls && s.call || !calls && s.slot) && s.indexed == indexed && (!indexed || s.index == oi) {
			return i
		}
	}
	return -1
}

// ocDropSlot removes entry i of the registers.
func (d *Decoder) ocDropSlot(i int) {
	if i >= 0 {
		d.oc.slots = append(d.oc.slots[:i], d.oc.slots[i+1:]...)
	}
}

// ocRegisterCall registers an added function call: false when the stream
// failed because a call, or (with an index) any item, is open at its index.
// It comes before the call's block, as the transport registers the call
// before it pushes the block.
func (d *Decoder) ocRegisterCall(v *fastjson.Value) bool {
	oi, indexed := ocOutputIndex(v)
	if indexed {
		switch {
		case d.ocSlotAt(oi, true, true) >= 0:
			d.ocFail("Responses stream reused active tool-call output index "+strconv.FormatInt(oi, 10), false, false)
			return false
		case d.ocSlotAt(oi, true, false) >= 0:
			d.ocFail("Responses stream reused active output index "+strconv.FormatInt(oi, 10), false, false)
			return false
		}
	}
	d.oc.slots = append(d.oc.slots, ocSlot{index: oi, indexed: indexed, typ: ocItemCall, call: true, slot: indexed})
	return true
}

// ocRegisterSlot registers an added reasoning or message item: false when
// the stream failed because its index is taken (or, without one, another
// unindexed item is open). It comes after the item's block, as the
// transport pushes the block first.
func (d *Decoder) ocRegisterSlot(v *fastjson.Value, typ uint8) bool {
	oi, indexed := ocOutputIndex(v)
	switch {
	case d.ocSlotAt(oi, indexed, false) < 0:
		d.oc.slots = append(d.oc.slots, ocSlot{index: oi, indexed: indexed, typ: typ, slot: true})
		return true
	case indexed:
		d.ocFail("Responses stream reused active output index "+strconv.FormatInt(oi, 10), false, false)
	default:
		d.ocFail("Responses stream added overlapping unindexed output items", false, false)
	}
	return false
}

// ocSlotTaken reports whether an added reasoning or message item will find
// its place in the output-slot register taken (ocRegisterSlot fails).
func (d *Decoder) ocSlotTaken(v *fastjson.Value) bool {
	oi, indexed := ocOutputIndex(v)
	return d.ocSlotAt(oi, indexed, false) >= 0
}

// ocFindSlot is the open reasoning or message item a done event resolves
// to (outputSlots.resolve), -1 for none: the one at its index, else the
// unindexed one, else the only indexed one of its type; of its type only.
func (d *Decoder) ocFindSlot(v *fastjson.Value, typ uint8) int {
	oi, indexed := ocOutputIndex(v)
	at := d.ocSlotAt(oi, indexed, false)
	if at < 0 && !indexed {
		for i, s := range d.oc.slots {
			if s.slot && s.typ == typ {
				if at >= 0 {
					return -1 // not the only one
				}
				at = i
			}
		}
	}
	if at < 0 || d.oc.slots[at].typ != typ {
		return -1
	}
	return at
}

// ocForgetSlot drops the open item a done reasoning or message event
// resolves to.
func (d *Decoder) ocForgetSlot(v *fastjson.Value, typ uint8) {
	d.ocDropSlot(d.ocFindSlot(v, typ))
}

// ocForgetCall drops a finished function call from both registers: the
// one at the done event's index, else the unindexed one.
func (d *Decoder) ocForgetCall(v *fastjson.Value) {
	oi, indexed := ocOutputIndex(v)
	d.ocDropSlot(d.ocSlotAt(oi, indexed, true))
}
