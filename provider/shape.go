package provider

import (
	"encoding/binary"
	"math/bits"
)

// Shapes: the byte skeleton of the events a stream repeats.
//
// A provider sends the same event shape thousands of times (a chat chunk
// with one content delta, an Anthropic text_delta, a Responses text
// delta); only a few values change from one to the next (the text, an
// obfuscation pad, a sequence number). After the fast path has decoded an
// event whose kind (eventSig) it has decoded before in the stream, the
// decoder keeps its bytes as a shape: literal runs and holes,
// the holes being the string contents and numbers that differed from the
// event before. The next event is matched against the shape: the literal
// runs compared byte for byte, each string hole scanned to its closing
// quote with its escapes checked, each number hole checked as a number.
//
// A match proves what the validating scan would: putting a valid string
// content or a valid number where another stood keeps a valid document
// with the same members in the same places, so the scanner would find
// exactly the spans of the learned event, moved by the holes' lengths.
// The shape keeps those spans (by role: the text, the index, ...) and a
// match hands them, moved, to the same code that applies a scanned event.
// Anything that does not match (another shape, malformed JSON, whitespace
// moved) goes through the validating scan, which may learn it.

const (
	maxShapes     = 8  // shapes kept per stream, least recently used replaced
	maxShapeHoles = 40 // an event with more string and number values is not learned
	maxShapeRoles = 29 // spans a wire's scanner reports (chat's: chatRoles)
	// Learning stops for the rest of a stream whose events keep missing
	// (every event a new shape): past shapeMissFloor misses, when misses
	// outnumber hits twice.
	shapeMissFloor = 16
)

// hole is a string content (between the quotes) or a number of src.
type hole struct {
	s, e int32
	str  bool
}

// posRef places an offset of the learned event in a matched one: off
// bytes after base b of the match (0: the event's start; 2k+1 and 2k+2:
// the start and end of active hole k).
type posRef struct {
	b   int16
	off int32
}

// spanRef is a learned span that is present, placed.
type spanRef struct {
	role int16
	s, e posRef
}

type shape struct {
	// tpl is the event as it was framed when it lay whole in the read
	// window (its "event:" line and the data line up to the data, then
	// the data and the blank line), else the data; src is the data.
	tpl     []byte
	src     []byte
	pre     int
	name    span    // the event's name in tpl, absent when it had none
	framed  bool    // tpl holds the framing: the shape can match a window
	holes   []hole  // every string value and number of src, in order
	act     []int16 // the holes a match scans; the rest are literal
	ah      []hole  // the holes of act (compile), for match
	ahF     []hole  // ah placed in tpl, for a framed match
	learned [maxShapeRoles]span
	present uint64 // bit i: learned[i] is present (sp[i] is absent otherwise)
	// sp holds the spans of the last match: compile sets the absent
	// roles and those before every active hole, and every match writes
	// the others (refs).
	sp      [maxShapeRoles]span
	refs    []spanRef // the present ones that a match moves, placed
	nroles  int
	aux     uint32 // the wire's facts of the scan that are not spans
	refined bool   // act holds only the holes that varied
	// stale: kept from an earlier stream, with the holes that varied in
	// it (within) active, and those that differed between its template
	// and the stream before (across, once known; every hole before);
	// its first match makes the matched event its template (rebase).
	stale          bool
	within, across uint64 // bit k: hole k
	acrossKnown    bool
	// fixed has bit i set when role i is absent or lies in literal bytes
	// only: the same value in every event the shape matches.
	fixed uint64
	// memo is what the wire's apply derived from fixed roles alone (its
	// dispatch), valid when memoOK; compile clears it.
	memo   uint8
	memoOK bool
	// nums is what the wire's apply read of fixed number roles, valid
	// when numsOK; compile clears it. Chat: the choice index (fixedInt);
	// Anthropic: the index, and 1 when it is a number; Responses: the
	// output and content indexes, and 1 when the first is a number.
	nums   [3]int64
	numsOK bool
	used   uint64
	// lane is what every match of the shape means, once the wire's apply
	// has dispatched it from fixed roles (memo, nums): one append of the
	// string at active hole laneHole to the block of a known key
	// (lane.go); laneNone when it is not that simple. laneSet: decided
	// since compile.
	lane     uint8
	laneHole int
	laneSet  bool
	// lanePre and laneTail: the template's bytes before and after the
	// lane's hole when it is the only active one (else nil), for lane's
	// match; laneName: the event's name in the template (nil: none);
	// slot: the open slot the lane appended to the last time, while the
	// decoder's slotGen is slotGen (0: unknown).
	lanePre, laneTail, laneName []byte
	slot                        int32
	slotGen                     uint64
	// next is the shape matched after this one the last time another
	// one was, noShape if none (shapeState.follow).
	next uint8
}

// shapeState is a decoder's shapes of the current stream.
type shapeState struct {
	sh           [maxShapes]shape
	ord          [maxShapes]uint8 // indexes into sh, most recently used first
	n            int
	hits, misses int
	off          bool
	tmp          []hole
	wire         Wire                     // of the streams the shapes were learned from
	pos          [1 + 2*maxShapeHoles]int // bases of the last match (posRef.b)
	esc          uint64                   // active holes of the last match with escapes (or control characters)
	lanes        bool                     // a shape of the wire got a lane (lane.go)
	keepCR       bool                     // of the streams the shapes were learned from: '\r' alone ends no line
	// seen holds the signatures (eventSig) of the last events of the
	// stream that the scan decoded and did not learn (seenN of them, the
	// next replaced at seenI): an event is learned on its signature's
	// second sighting, as most of a short stream's shapes (the role
	// chunk, a tool call's head, the finish, the usage) come once, and a
	// learn costs about two scans.
	seen         [8]uint64
	seenN, seenI uint8
	// prev holds seen as the last stream of the wire left it: an event
	// whose signature is there is learned on its first sighting, as one
	// that comes once in every stream (a role chunk, a finish) is then
	// matched in the next, its shape kept.
	prev  [8]uint64
	prevN uint8
}

// reset prepares the shapes for a new stream of wire w (off: none). The
// shapes of the previous stream are kept when it had the same wire: what
// a shape proves of the events it matches holds for any stream of the
// wire, so a pooled decoder that meets the same shapes again (the same
// upstream's deltas) skips learning them, and one that does not learns
// its own in their place, least recently used first. A kept shape also
// has the holes active again whose values stood still in the last stream
// but differ from stream to stream (a response id, a creation time: the
// first time, every hole), so that a stream with other ids costs a match
// instead of a scan per shape; its first match makes the matched event
// its template (rebase).
func (s *shapeState) reset(w Wire, off, keepCR bool) {
	s.hits, s.misses, s.off = 0, 0, off
	s.prev, s.prevN = s.seen, s.seenN
	s.seenN, s.seenI = 0, 0
	if off || w != s.wire || keepCR != s.keepCR {
		s.prevN = 0
		// (Where a lone CR ends a line no template holds a '\r', which
		// a framed match could take for a byte of a line: the shapes
		// learned where it does not are not kept.)
		s.n, s.wire, s.lanes, s.keepCR = 0, w, false, keepCR
		return
	}
	// Every shape is kept, in its order: each was learned on a second
	// sighting of its signature. One matched again (refined) is made
	// stale; one never matched is kept as learned, every hole active,
	// and its first match refines it.
	for _, i := range s.ord[:s.n] {
		if sh := &s.sh[i]; sh.refined {
			sh.unrefine()
		}
	}
}

// unrefine makes sh stale: the holes that varied in the stream (within)
// and those that vary across streams (across; every hole until known)
// active, until its next match rebases it. A shape none of whose values
// varied across streams (an Anthropic delta's) is left as it is.
func (sh *shape) unrefine() {
	if sh.acrossKnown && sh.across == 0 {
		return // no value varies across streams: it stays as refined
	}
	sh.within = 0
	for _, k := range sh.act {
		sh.within |= 1 << k
	}
	on := ^uint64(0)
	if sh.acrossKnown {
		on = sh.within | sh.across
	}
	sh.setAct(on)
	sh.refined, sh.stale = false, true
	sh.compile()
}

// setAct makes the holes of the mask on active.
func (sh *shape) setAct(on uint64) {
	sh.act = sh.act[:0]
	for k := range sh.holes {
		if on&(1<<k) != 0 {
			sh.act = append(sh.act, int16(k))
		}
	}
}

// rebase makes data, which matched the stale sh with the positions pos,
// its template: every hole and learned span moves to where it lies in
// data (an active hole where the match found it, a literal one as far
// from the active hole before it as in the template; remap has placed
// every present span in sh.sp). The active holes whose values differ
// from the template's, but stood still within the last stream, are the
// ones that vary across streams. The shape is then refined as it was in
// the last stream (within active).
func (sh *shape) rebase(data []byte, pos *[1 + 2*maxShapeHoles]int) {
	diff := uint64(0)
	oldBase, newBase := int32(0), int32(0) // ends of the last active hole
	a := 0                                 // active holes passed
	for k := range sh.holes {
		h := &sh.holes[k]
		if a < len(sh.act) && int(sh.act[a]) == k {
			ns, ne := int32(pos[2*a+1]), int32(pos[2*a+2])
			if string(data[ns:ne]) != string(sh.src[h.s:h.e]) {
				diff |= 1 << k
			}
			oldBase, newBase = h.e, ne
			h.s, h.e = ns, ne
			a++
			continue
		}
		h.s, h.e = newBase+(h.s-oldBase), newBase+(h.e-oldBase)
	}
	sh.across |= diff &^ sh.within
	sh.acrossKnown = true
	copy(sh.learned[:sh.nroles], sh.sp[:sh.nroles])
	sh.tpl = append(sh.tpl[:sh.pre], data...)
	if sh.framed {
		sh.tpl = append(sh.tpl, "\n\n"...)
	}
	sh.src = sh.tpl[sh.pre : sh.pre+len(data)]
	sh.setAct(sh.within)
	sh.refined, sh.stale = true, false
	sh.compile()
}

// shapeMatch returns the learned shape data matches, nil when none does.
// The matched event's spans are in its sp until the shape's next match.
//
// An event that windowEvent framed (d.frame set) has been tried against
// the framed shapes already (shapedEvent): only the others are tried. A
// framed shape could match its data only under another framing, which
// the scan then decodes.
func (d *Decoder) shapeMatch(data []byte) *shape {
	sh, _ := d.shapes.find(data, false, d.frame != nil)
	return sh
}

// find returns the learned shape b matches, with the data it matched,
// nil when none does. framed: b is the read window at the start of an
// event, matched against the framed shapes (framing, data, blank line);
// a miss there is not counted, as the event then goes the unframed way.
// unframedOnly: b is data, matched against the shapes that are not framed.
func (s *shapeState) find(b []byte, framed, unframedOnly bool) (*shape, []byte) {
	if s.off {
		return nil, nil
	}
	for j := 0; j < s.n; j++ {
		i := s.ord[j]
		sh := &s.sh[i]
		if framed && !sh.framed || unframedOnly && sh.framed {
			continue
		}
		e, _ := sh.match(b, framed, &s.pos)
		if e < 0 {
			continue
		}
		if j > 0 {
			s.follow(i, j)
		}
		s.hits++
		data := b[:e]
		if framed {
			data = b[sh.pre:e]
		}
		sh.remap(&s.pos)
		switch {
		case sh.stale:
			if len(data) <= maxShapeBytes { // else it stays stale
				sh.rebase(data, &s.pos)
			}
		case !sh.refined:
			sh.refine(data, &s.pos)
		}
		return sh, data
	}
	if s.n > 0 && !framed {
		s.misses++
		if s.misses > shapeMissFloor && s.misses > 2*s.hits {
			s.off = true
		}
	}
	return nil, nil
}

// follow makes the shape i, matched at ord[j] (j > 0) after the shape at
// ord[0], the most recently used, and the shape that followed it the
// last time it was matched second: a stream's shapes come in the same
// order every time (role, text deltas, a tool call's head, its argument
// deltas, the finish), which most recently used first would try last.
func (s *shapeState) follow(i uint8, j int) {
	s.sh[s.ord[0]].next = i
	copy(s.ord[1:j+1], s.ord[:j])
	s.ord[0] = i
	nx := s.sh[i].next
	for k := 2; k < s.n; k++ {
		if s.ord[k] == nx {
			copy(s.ord[2:k+1], s.ord[1:k])
			s.ord[1] = nx
			break
		}
	}
}

// match compares b with the shape, leaving the active holes' spans (in
// the data) in pos, and returns the end of the data in b, -1 when b does
// not match. Unframed, b is the data and must match to its end; framed,
// b is the read window, which must hold the framing, then the data, then
// the blank line: the data line then ends where the template's does, as
// no hole holds a line feed (and the template's last byte, the data's,
// is not a carriage return, as windowEvent framed it). Nor does a hole
// hold a carriage return, which could end a line there (see source); the
// template holds none unless '\r' alone ends no line (shapeState.keepCR).
// escs has a bit per active string hole with escapes or control
// characters.
func (sh *shape) match(b []byte, framed bool, pos *[1 + 2*maxShapeHoles]int) (int, uint64) {
	var escs uint64
	src, holes, off := sh.src, sh.ah, 0
	if framed {
		src, holes, off = sh.tpl, sh.ahF, sh.pre
	}
	p, lit := 0, 0 // next byte of b; start of the next literal run in src
	q := pos[1:]   // the next hole's span
	for k, h := range holes {
		n := int(h.s) - lit
		if len(b)-p < n || string(b[p:p+n]) != string(src[lit:h.s]) {
			return -1, 0
		}
		p += n
		start := p
		if h.str {
			e := quickString(b, p-1) // most deltas and pads: short, plain
			if e < 0 {
				var esc bool
				if e, esc = holeString(b, p, framed); e < 0 {
					return -1, 0
				}
				if esc {
					escs |= 1 << k
				}
			}
			p = e - 1
		} else {
			e := skipNumber(b, p)
			if e < 0 {
				return -1, 0
			}
			p = e
		}
		q[0], q[1] = start-off, p-off
		q = q[2:]
		lit = int(h.e)
	}
	// The tail: unframed, the data's end; framed, with the blank line.
	n := len(src) - lit
	if len(b)-p < n || !framed && len(b)-p != n || !sameTail(b[p:p+n], src[lit:]) {
		return -1, 0
	}
	if framed {
		return p + n - 2, escs
	}
	return p + n, escs
}

// sameTail reports whether a and t, of one length, hold the same bytes;
// a framed template's short tail (its closing brackets and the blank
// line) is compared with two loads, inline, instead of a call.
func sameTail(a, t []byte) bool {
	switch n := len(a); {
	case n >= 4 && n <= 8:
		return binary.LittleEndian.Uint32(a)^binary.LittleEndian.Uint32(t)|
			binary.LittleEndian.Uint32(a[n-4:])^binary.LittleEndian.Uint32(t[n-4:]) == 0
	case n == 3:
		return binary.LittleEndian.Uint16(a)^binary.LittleEndian.Uint16(t)|uint16(a[2]^t[2]) == 0
	}
	return string(a) == string(t)
}

// holeString scans in full the string hole whose content starts at b[p]:
// it returns the index after its closing quote (-1 when it is not a valid
// string, or holds a line feed or carriage return in a framed match) and
// whether it has escapes or control characters.
func holeString(b []byte, p int, framed bool) (int, bool) {
	return checkEscapes(b, p-1, framed)
}

// fixedInt is intOf(data, v) for role v of a matched event, read once
// while the shape holds the role fixed.
func (sh *shape) fixedInt(data []byte, v span, role int) int64 {
	if sh.numsOK {
		return sh.nums[0]
	}
	n := intOf(data, v)
	if sh.fixed&(1<<role) != 0 {
		sh.nums[0], sh.numsOK = n, true
	}
	return n
}

// refine keeps as holes only those whose bytes differ between the learned
// event and data, which matched it with the positions pos.
func (sh *shape) refine(data []byte, pos *[1 + 2*maxShapeHoles]int) {
	act := sh.act[:0]
	for k, hi := range sh.act {
		h := sh.holes[hi]
		if string(data[pos[2*k+1]:pos[2*k+2]]) != string(sh.src[h.s:h.e]) {
			act = append(act, hi)
		}
	}
	sh.act = act
	sh.refined = true
	sh.compile()
}

// remap moves the learned spans that a match moves to the matched event;
// the others stay as compile left them.
func (sh *shape) remap(pos *[1 + 2*maxShapeHoles]int) {
	for _, r := range sh.refs {
		sh.sp[r.role] = span{pos[r.s.b] + int(r.s.off), pos[r.e.b] + int(r.e.off)}
	}
}

// compile places the learned spans relative to the active holes.
func (sh *shape) compile() {
	sh.ah, sh.ahF = sh.ah[:0], sh.ahF[:0]
	for _, hi := range sh.act {
		h := sh.holes[hi]
		sh.ah = append(sh.ah, h)
		if sh.framed {
			pre := int32(sh.pre)
			sh.ahF = append(sh.ahF, hole{s: h.s + pre, e: h.e + pre, str: h.str})
		}
	}
	sh.refs = sh.refs[:0]
	// An absent role is fixed (learn made its span absent); a moved one's
	// span is written by every match (and kept here: refine compiles
	// after the match's remap); a fixed one's below.
	sh.fixed = ^sh.present & (1<<sh.nroles - 1)
	sh.memo, sh.memoOK, sh.numsOK = 0, false, false
	sh.lane, sh.laneSet = laneNone, false
	for m := sh.present; m != 0; m &= m - 1 {
		i := bits.TrailingZeros64(m)
		v := sh.learned[i]
		r := spanRef{role: int16(i), s: sh.place(v.s), e: sh.place(v.e)}
		if r.s.b == 0 && r.e.b == 0 {
			// Before every active hole: the same offsets in every match.
			sh.sp[i] = span{int(r.s.off), int(r.e.off)}
		} else {
			sh.refs = append(sh.refs, r)
		}
		if sh.literal(v) {
			sh.fixed |= 1 << i
		}
	}
}

// literal reports whether no active hole lies within v.
func (sh *shape) literal(v span) bool {
	for _, hi := range sh.act {
		h := sh.holes[hi]
		if int(h.e) >= v.s && int(h.s) < v.e {
			return false
		}
	}
	return true
}

func (sh *shape) place(o int) posRef {
	for k := len(sh.act) - 1; k >= 0; k-- {
		h := sh.holes[sh.act[k]]
		if o == int(h.s) {
			return posRef{b: int16(2*k + 1)}
		}
		if o >= int(h.e) {
			return posRef{b: int16(2*k + 2), off: int32(o - int(h.e))}
		}
	}
	return posRef{off: int32(o)}
}

// shapeLearn keeps data, which the validating scan accepted and found the
// spans sp in (aux: the wire's other facts of the scan), as a shape.
func (d *Decoder) shapeLearn(data []byte, sp []span, aux uint32) {
	s := &d.shapes
	if s.off || len(data) > maxShapeBytes || !s.again(eventSig(sp, aux)) {
		return
	}
	fresh := s.n < maxShapes
	var i uint8
	if fresh {
		i = s.free()
	} else {
		i = s.ord[s.n-1] // least recently used
	}
	if !s.sh[i].learn(d.frame, d.frameName, data, sp, aux, &s.tmp) {
		return
	}
	last := s.n - 1
	if fresh {
		last = s.n
		s.n++
	}
	if last > 0 && s.ord[0] != i {
		s.sh[s.ord[0]].next = i // (see follow)
	}
	s.sh[i].next = noShape
	copy(s.ord[1:last+1], s.ord[:last])
	s.ord[0] = i
}

// noShape is no index into shapeState.sh.
const noShape = 0xff

// eventSig is what the scan found of an event, in one word: the roles
// present and the wire's other facts (aux). Two events of one shape have
// the same; events of different shapes may too (a role chunk and a text
// delta), which only makes the second learned on its first sighting.
func eventSig(sp []span, aux uint32) uint64 {
	var m uint64
	for i, v := range sp {
		if v.ok() {
			m |= 1 << i
		}
	}
	return m | uint64(aux)<<maxShapeRoles
}

// again reports whether an event of signature sig has been scanned in
// the stream before, or in the last one; if not, it remembers sig.
func (s *shapeState) again(sig uint64) bool {
	for _, v := range s.seen[:s.seenN] {
		if v == sig {
			return true
		}
	}
	for _, v := range s.prev[:s.prevN] {
		if v == sig {
			return true
		}
	}
	s.seen[s.seenI] = sig
	s.seenI = (s.seenI + 1) % uint8(len(s.seen))
	if int(s.seenN) < len(s.seen) {
		s.seenN++
	}
	return false
}

// free returns the first shape slot that ord[:n] does not use (reset
// may have left the kept ones anywhere).
func (s *shapeState) free() uint8 {
	for c := uint8(0); ; c++ {
		used := false
		for _, o := range s.ord[:s.n] {
			used = used || o == c
		}
		if !used {
			return c
		}
	}
}

// maxShapeBytes bounds the events kept as shapes.
const maxShapeBytes = 8 << 10

// learn makes the shape data's: every string value (not member names)
// and number a hole, until a match refines them. frame is what preceded
// the data in the read window when windowEvent framed the event (name:
// where its name lies in it), nil otherwise.
// tmp is scratch for the holes, swapped in when data is learned.
func (sh *shape) learn(frame []byte, name span, data []byte, sp []span, aux uint32, tmp *[]hole) bool {
	holes := (*tmp)[:0]
	defer func() { *tmp = holes }()
	for i := 0; i < len(data); {
		c := data[i]
		switch {
		case c == '"':
			e := skipString(data, i)
			if e < 0 {
				return false
			}
			if j := skipWS(data, e); j < len(data) && data[j] == ':' {
				i = e // a member name
				continue
			}
			holes = append(holes, hole{s: int32(i + 1), e: int32(e - 1), str: true})
			i = e
		case c == '-' || c >= '0' && c <= '9':
			e := skipNumber(data, i)
			if e < 0 {
				return false
			}
			holes = append(holes, hole{s: int32(i), e: int32(e)})
			i = e
		default:
			i++
			continue
		}
		if len(holes) > maxShapeHoles {
			return false
		}
	}
	sh.holes, holes = holes, sh.holes
	// The framed match needs the template's last byte literal: a JSON
	// object's closing brace.
	sh.framed = frame != nil && data[len(data)-1] == '}'
	if !sh.framed {
		frame, name = nil, absent
	}
	sh.pre, sh.name = len(frame), name
	sh.tpl = append(append(sh.tpl[:0], frame...), data...)
	if sh.framed {
		sh.tpl = append(sh.tpl, "\n\n"...)
	}
	sh.src = sh.tpl[sh.pre : sh.pre+len(data)]
	sh.act = sh.act[:0]
	for k := range sh.holes {
		sh.act = append(sh.act, int16(k))
	}
	sh.nroles = copy(sh.learned[:], sp)
	sh.present = 0
	for i, v := range sp {
		if v.ok() {
			sh.present |= 1 << i
		} else {
			sh.sp[i] = absent
		}
	}
	sh.aux = aux
	sh.refined, sh.stale = false, false
	sh.within, sh.across, sh.acrossKnown = 0, 0, false
	sh.compile()
	return true
}
