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

// ocRegisterCall registers an added function call: false when the stream
// failed because a call, or (with an index) any item, is open at its index.
// It comes before the call's block, as the transport registers the call
// before it pushes the block.
func (d *Decoder) ocRegisterCall(v *fastjson.Value) bool {
	oi, indexed := ocOutputIndex(v)
	if indexed {
		for _, s := range d.oc.slots {
			if s.call && s.indexed && s.index == oi {
				d.ocFail("Responses stream reused active tool-call output index "+strconv.FormatInt(oi, 10), false, false)
				return false
			}
		}
		for _, s := range d.oc.slots {
			if s.slot && s.indexed && s.index == oi {
				d.ocFail("Responses stream reused active output index "+strconv.FormatInt(oi, 10), false, false)
				return false
			}
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
	for _, s := range d.oc.slots {
		if !s.slot || s.indexed != indexed || indexed && s.index != oi {
			continue
		}
		if indexed {
			d.ocFail("Responses stream reused active output index "+strconv.FormatInt(oi, 10), false, false)
		} else {
			d.ocFail("Responses stream added overlapping unindexed output items", false, false)
		}
		return false
	}
	d.oc.slots = append(d.oc.slots, ocSlot{index: oi, indexed: indexed, typ: typ, slot: true})
	return true
}

// ocFindSlot is the open reasoning or message item a done event resolves
// to (outputSlots.resolve), -1 for none: the one at its index, else the
// unindexed one, else the only indexed one of its type; of its type only.
func (d *Decoder) ocFindSlot(v *fastjson.Value, typ uint8) int {
	oi, indexed := ocOutputIndex(v)
	at := -1
	for i, s := range d.oc.slots {
		if s.slot && s.indexed == indexed && (!indexed || s.index == oi) {
			at = i
			break
		}
	}
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
	if at := d.ocFindSlot(v, typ); at >= 0 {
		d.oc.slots = append(d.oc.slots[:at], d.oc.slots[at+1:]...)
	}
}

// ocForgetCall drops a finished function call from both registers: the
// one at the done event's index, else the only unindexed one.
func (d *Decoder) ocForgetCall(v *fastjson.Value) {
	oi, indexed := ocOutputIndex(v)
	at := -1
	for i, s := range d.oc.slots {
		if s.call && (indexed && s.indexed && s.index == oi || !indexed && !s.indexed) {
			at = i
			break
		}
	}
	if at >= 0 {
		d.oc.slots = append(d.oc.slots[:at], d.oc.slots[at+1:]...)
	}
}

// ocSlotTaken reports whether an added reasoning or message item will find
// its place in the output-slot register taken (ocRegisterSlot fails).
func (d *Decoder) ocSlotTaken(v *fastjson.Value) bool {
	oi, indexed := ocOutputIndex(v)
	for _, s := range d.oc.slots {
		if s.slot && s.indexed == indexed && (!indexed || s.index == oi) {
			return true
		}
	}
	return false
}
