package provider

import "github.com/ocbench/ocbench/llm"

// Lanes: the delta events of a stream, decoded in one step.
//
// Most events of a stream match the shape that the event before matched,
// and for the deltas (an Anthropic text or argument delta, a Responses
// text or argument delta) what the wire's apply does with them is decided
// by the shape's literal bytes alone: the same type, the same block key,
// the delta being one string hole. Once the apply has dispatched such a
// shape from its fixed roles (memo, nums), the shape gets a lane: Step
// matches the most recently used shape first, and when it has a lane and
// matches, appends the hole's string to the block directly, without the
// shape search, the span remapping and the wire's dispatch. Whatever the
// lane does not cover (no open block of the key, another block type, the
// OpenClaw rules' own text path) goes the way it went before, with the
// same match.

const (
	laneNone  uint8 = iota
	laneText        // Anthropic text_delta: text of the slot keyed nums[0]
	laneThink       // Anthropic thinking_delta: thinking of that slot
	laneArgs        // Anthropic input_json_delta: arguments of that slot
	laneRText       // Responses output text delta: text of textKey(nums[0], nums[1])
	laneRArgs       // Responses function call arguments delta: the call of output index nums[0]
)

// laneMatch matches b, the read window at the start of an event, against
// the most recently used shape when that has a lane, as find would try it
// first. It returns the shape and the end of the event's data in b, or
// -1. (The check is inlined: most events of a wire without lanes pay
// nothing more.)
func (s *shapeState) laneMatch(b []byte) (*shape, int) {
	if !s.lanes {
		return nil, -1
	}
	return s.laneMatchMRU(b)
}

func (s *shapeState) laneMatchMRU(b []byte) (*shape, int) {
	if s.n == 0 || s.off {
		return nil, -1
	}
	sh := &s.sh[s.ord[0]]
	if sh.lane == laneNone {
		return nil, -1
	}
	var e int
	if len(sh.ahF) == 1 {
		e = sh.matchOne(b, &s.pos, &s.esc)
	} else {
		e, s.esc = sh.match(b, true, &s.pos)
	}
	if e < 0 {
		return nil, -1
	}
	s.hits++
	return sh, e
}

// matchOne is match, framed, for a shape with one active hole, a string
// (an Anthropic delta's): the template's bytes before it, the string, the
// template's bytes after it.
func (sh *shape) matchOne(b []byte, pos *[1 + 2*maxShapeHoles]int, escs *uint64) int {
	h := sh.ahF[0]
	hs, he := int(h.s), int(h.e)
	if !h.str || len(b) < hs || string(b[:hs]) != string(sh.tpl[:hs]) {
		return -1
	}
	e := quickString(b, hs-1)
	*escs = 0
	if e < 0 {
		var esc bool
		if e, esc = holeString(b, hs, true); e < 0 {
			return -1
		}
		if esc {
			*escs = 1
		}
	}
	p := e - 1
	tail := sh.tpl[he:]
	n := len(tail)
	if len(b)-p < n {
		return -1
	}
	if !sameTail(b[p:p+n], tail) {
		return -1
	}
	pos[1], pos[2] = hs-sh.pre, p-sh.pre
	return p + n - 2
}

// setLane decides sh's lane after the wire's apply dispatched a match of
// it (sh.laneSet is cleared by compile).
func (d *Decoder) setLane(sh *shape) {
	sh.laneSet = true
	sh.lane = laneNone
	if !sh.framed || !sh.refined || !sh.memoOK || !sh.numsOK {
		return
	}
	var role int
	switch d.wire {
	case WireAnthropic:
		if sh.aux&auxSawDelta == 0 || sh.memo&3 != atDelta || sh.nums[1] == 0 {
			return
		}
		switch sh.memo >> 2 {
		case adText:
			sh.lane, role = laneText, arText
		case adThinking:
			sh.lane, role = laneThink, arThinking
		case adJSON:
			sh.lane, role = laneArgs, arPJ
		default:
			return
		}
	case WireOpenAIResponses:
		switch sh.memo {
		case rtText:
			sh.lane = laneRText
		case rtArgs:
			if sh.nums[2] == 0 {
				return
			}
			sh.lane = laneRArgs
		default:
			return
		}
		role = rrDelta
	default:
		return
	}
	// The role must be the string of one active hole, quotes included.
	v := sh.learned[role]
	for k, hi := range sh.act {
		if h := sh.holes[hi]; h.str && v.s == int(h.s)-1 && v.e == int(h.e)+1 {
			sh.laneHole = k
			d.shapes.lanes = true
			return
		}
	}
	sh.lane = laneNone
}

// laneApply applies the event that laneMatch matched with sh (taken as
// d.data), as the wire's apply would. direct reports the delta event
// left in d.ev instead of the queue (a lane's event is the only one).
func (d *Decoder) laneApply(sh *shape) (direct bool, err error) {
	k := sh.laneHole
	s, e := d.shapes.pos[2*k+1], d.shapes.pos[2*k+2]
	v := d.data[s:e]
	var si int
	switch sh.lane {
	case laneText, laneThink, laneArgs:
		si = d.findSlot(0, sh.nums[0], anyKind)
	case laneRText:
		if d.opts.OpenClaw {
			return false, d.laneMissed(sh)
		}
		si = d.findSlot(0, d.textKey(sh.nums[0], sh.nums[1]), llm.BlockText)
	case laneRArgs:
		si = d.findSlot(0, sh.nums[0], llm.BlockToolCall)
	}
	if si < 0 || d.slots[si].kind != laneKind[sh.lane] {
		return false, d.laneMissed(sh)
	}
	if d.shapes.esc&(1<<k) != 0 {
		var ok bool
		if v, ok = d.strAt(span{s - 1, e + 1}); !ok {
			return false, d.badJSON()
		}
	}
	switch sh.lane {
	case laneArgs:
		if len(v) > 0 {
			d.slots[si].delta = true
		}
		err = d.addArgs(si, v, false)
		d.ev.ArgsOnly = err == nil // the append was all the event did
	case laneRArgs:
		d.slots[si].delta = true // the arguments were streamed
		err = d.addArgs(si, v, false)
		d.ev.ArgsOnly = err == nil
	default:
		err = d.addText(si, v, false)
	}
	return err == nil, err
}

// laneKind is the block type each lane appends to.
var laneKind = [...]llm.BlockType{
	laneText:  llm.BlockText,
	laneThink: llm.BlockThinking,
	laneArgs:  llm.BlockToolCall,
	laneRText: llm.BlockText,
	laneRArgs: llm.BlockToolCall,
}

// laneMissed applies a lane's match the general way.
func (d *Decoder) laneMissed(sh *shape) error {
	sh.remap(&d.shapes.pos)
	return d.applyShape(d.data, sh)
}
