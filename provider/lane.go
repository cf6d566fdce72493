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

// Results of lane.
const (
	laneNo     = iota // no lane matched: nothing changed
	laneDirect        // the event decoded, left in d.ev
	laneTaken         // the event decoded (queued) or failed with lane's error
)

// lane decodes the event at the start of the read window when the most
// recently used shape has a lane and matches it, as find would have
// matched it first. Step calls it only when a shape of the wire has a
// lane (shapeState.lanes), so that the events of a wire without lanes pay
// nothing more.
func (d *Decoder) lane() (int, error) {
	s := &d.shapes
	if s.n == 0 || s.off {
		return laneNo, nil
	}
	sh := &s.sh[s.ord[0]]
	if sh.lane == laneNone {
		return laneNo, nil
	}
	b := d.win
	var hs, he, e int // the lane's hole and the data's end, in b
	var esc bool      // the string has escapes or control characters: strAt's
	var u []byte      // the string unescaped (unescapeShort), when not nil
	if pre := sh.lanePre; pre != nil {
		// One active hole, a string (an Anthropic delta's): the template's
		// bytes before it, the string, the template's bytes after it.
		hs = len(pre)
		if len(b) < hs || string(b[:hs]) != string(pre) {
			return laneNo, nil
		}
		q := quickString(b, hs-1)
		if q < 0 {
			if q, u, esc = d.laneString(b, hs); q < 0 {
				return laneNo, nil
			}
		}
		he = q - 1
		tail := sh.laneTail
		if len(b)-he < len(tail) || !sameTail(b[he:he+len(tail)], tail) {
			return laneNo, nil
		}
		e = he + len(tail) - 2
	} else {
		var escs uint64
		if e, escs = sh.match(b, true, &s.pos); e < 0 {
			return laneNo, nil
		}
		k := sh.laneHole
		hs, he = s.pos[2*k+1]+sh.pre, s.pos[2*k+2]+sh.pre
		esc = escs&(1<<k) != 0
	}
	s.hits++
	if e-sh.pre > d.opts.MaxEventBytes || d.opts.OpenClaw && !d.ocClean(b[sh.pre:e]) {
		return laneTaken, d.event()
	}
	// take's, but for the name: the template's, the same bytes.
	d.frame = nil
	d.pass(b, e)
	d.name, d.nameBorrowed = sh.laneName, false
	d.data, d.dataBorrowed = b[sh.pre:e], true
	// The event's apply, as the wire's would do it, the lane's string at
	// data[hs:he], or u. Only strAt and laneMissed use the event's strings
	// arena after this: beginEvent is theirs.
	hs, he = hs-sh.pre, he-sh.pre
	if sh.lane == laneRText && d.opts.OpenClaw {
		return laneTaken, d.laneMissed(sh, hs, he)
	}
	si := int(sh.slot)
	if sh.slotGen != d.slotGen {
		si = d.laneSlot(sh)
	} else if checkCaches {
		if want := d.laneSlot(sh); si != want {
			panic("BUG: provider: a lane's cached slot is stale (a change of d.slots without slotGen++)")
		}
	}
	if si < 0 || d.slots[si].kind != laneKind[sh.lane] {
		return laneTaken, d.laneMissed(sh, hs, he)
	}
	v := d.data[hs:he]
	if u != nil {
		v = u
	} else if esc {
		var ok bool
		d.beginEvent(d.data)
		if v, ok = d.strAt(span{hs - 1, he + 1}); !ok {
			return laneTaken, d.badJSON()
		}
	}
	var err error
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
	if err != nil {
		return laneTaken, err
	}
	return laneDirect, nil // the delta event left in d.ev (the only one)
}

// laneString scans the string hole at b[hs] of a lane that quickString
// left undecided, as holeString does: it returns the index after the
// closing quote (-1: no match) and either the string unescaped (u, in the
// event's strings arena, which the next event's beginEvent empties) or
// esc, when the string has escapes or control characters that it leaves
// to strAt.
func (d *Decoder) laneString(b []byte, hs int) (q int, u []byte, esc bool) {
	q, n := unescapeShort(d.sbuf[:cap(d.sbuf)], b, hs-1)
	switch {
	case n < 0:
		q, esc = holeString(b, hs, true)
	case n > 0 && q >= 0:
		d.sbuf = d.sbuf[:n]
		u = d.sbuf[:n:n]
	}
	return q, u, esc
}

// setLane decides sh's lane after the wire's apply dispatched a match of
// it (sh.laneSet is cleared by compile).
func (d *Decoder) setLane(sh *shape) {
	sh.laneSet = true
	sh.lane = laneNone
	sh.lanePre, sh.laneTail, sh.laneName, sh.slotGen = nil, nil, nil, 0
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
			if len(sh.ahF) == 1 {
				sh.lanePre, sh.laneTail = sh.tpl[:sh.ahF[0].s], sh.tpl[sh.ahF[0].e:]
			}
			if sh.name.s >= 0 {
				sh.laneName = sh.tpl[sh.name.s:sh.name.e:sh.name.e]
			}
			return
		}
	}
	sh.lane = laneNone
}

// laneSlot returns the open slot sh's lane appends to, -1 if none, and
// keeps it in sh until a slot opens or closes (lane asks it then).
func (d *Decoder) laneSlot(sh *shape) int {
	var si int
	switch sh.lane {
	case laneText, laneThink, laneArgs:
		si = d.findSlot(0, sh.nums[0], anyKind)
	case laneRText:
		si = d.findSlot(0, d.textKey(sh.nums[0], sh.nums[1]), llm.BlockText)
	case laneRArgs:
		si = d.findSlot(0, sh.nums[0], llm.BlockToolCall)
	}
	sh.slot, sh.slotGen = int32(si), d.slotGen
	return si
}

// laneKind is the block type each lane appends to.
var laneKind = [...]llm.BlockType{
	laneText:  llm.BlockText,
	laneThink: llm.BlockThinking,
	laneArgs:  llm.BlockToolCall,
	laneRText: llm.BlockText,
	laneRArgs: llm.BlockToolCall,
}

// laneMissed applies a lane's match, its string at data[s:e], the general
// way.
func (d *Decoder) laneMissed(sh *shape, s, e int) error {
	d.beginEvent(d.data)
	k := sh.laneHole
	d.shapes.pos[2*k+1], d.shapes.pos[2*k+2] = s, e
	sh.remap(&d.shapes.pos)
	return d.applyShape(d.data, sh)
}
