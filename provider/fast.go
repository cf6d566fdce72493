package provider

import (
	"bytes"

	"github.com/ocbench/ocbench/llm"
)

// The fast paths decode the hot events of each wire (chat chunks, text and
// argument deltas) with the field-targeted scanner of jscan.go. Any other
// event, or an unusual shape (an error object, a usage chunk), goes to the
// fastjson reference decoders (chat.go, anthropic.go, responses.go) before
// the fast path has changed anything, so both give the same result; the
// fuzzers check that they do. Each fast path first tries the stream's
// learned shapes (shape.go); a scanned event it decodes itself may become
// one. The scan reports what it found as spans by role, and one apply
// function per wire acts on them, whichever found them.

// beginEvent prepares the per-event string arena: unescaped strings never
// outgrow the raw event, so slices handed out stay valid for the event.
func (d *Decoder) beginEvent(data []byte) {
	if cap(d.sbuf) < len(data) {
		d.sbuf = make([]byte, 0, len(data)+len(data)/2)
	}
	d.sbuf = d.sbuf[:0]
}

// str returns the unescaped string at v; nil when v is absent or not a
// string. ok is false for an invalid escape. The absent value (most of
// the optional members a chunk is asked for) is answered inline.
func (d *Decoder) str(v span) ([]byte, bool) {
	if v.s < 0 {
		return nil, true
	}
	return d.strAt(v)
}

func (d *Decoder) strAt(v span) ([]byte, bool) {
	if d.data[v.s] != '"' {
		return nil, true
	}
	raw := d.data[v.s+1 : v.e-1]
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw, true
	}
	if cap(d.sbuf)-len(d.sbuf) < len(raw) {
		// Never in one pass over an event; a fresh arena keeps the
		// strings already handed out valid.
		d.sbuf = make([]byte, 0, 2*len(raw)+len(d.data))
	}
	start := len(d.sbuf)
	out, ok := unescapeTo(d.sbuf, raw)
	if !ok {
		return nil, false
	}
	d.sbuf = out
	return out[start:len(out):len(out)], true
}

// key returns the member name it just read, unescaped when it has
// escapes (provider keys never have any).
func (d *Decoder) key(it *objIter, k []byte) []byte {
	if !it.keyEsc {
		return k
	}
	out, ok := unescapeTo(d.kbuf[:0], k)
	d.kbuf = out
	if !ok {
		return nil
	}
	return out
}

func first(dst *span, v span) {
	if !dst.ok() {
		*dst = v
	}
}

// b2i is 1 for true.
func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// applyShape applies an event that matched the learned shape sh, as the
// wire's fast path would after its scan.
func (d *Decoder) applyShape(data []byte, sh *shape) error {
	var err error
	switch d.wire {
	case WireOpenAIChat:
		return d.chatShaped(data, sh)
	case WireAnthropic:
		_, err = d.anthropicApply(data, sh.sp[:anthropicRoles], sh.aux&auxSawDelta != 0, sh)
	default:
		_, err = d.responsesApply(data, sh.sp[:responsesRoles], sh)
	}
	if !sh.laneSet && err == nil {
		d.setLane(sh)
	}
	return err
}

// ---- Chat Completions ----

func (d *Decoder) chatFast(data []byte) error {
	if d.isDone(data) {
		d.oc.sawDone = true
		d.finish()
		return nil
	}
	if d.opts.OpenClaw && d.ocLegacyRoute(data) {
		return d.chatEvent(data) // the legacy function_call rules
	}
	if sh := d.shapeMatch(data); sh != nil {
		return d.applyShape(data, sh)
	}
	i := skipWS(data, 0)
	if i >= len(data) || data[i] != '{' || d.opts.OpenClaw && !ocWhole(data, i) {
		return d.badJSON()
	}
	d.chScan.elems, d.chScan.objs = 0, 0
	top := vIter{b: data, i: i + 1}
	// envEnd is the end of the leading run of envelope members (any
	// member but choices, usage and error); -1 once the run is over, or
	// when the chunk starts with the previous chunk's envelope (skipped
	// here: the same bytes validate the same way and, with the model and
	// id already known, mean nothing to the decoder).
	envEnd, envCand := 0, 0
	model, id, usage, errv := absent, absent, absent, absent
	if n := len(d.env); n > 0 && len(data) > n && string(data[:n]) == string(d.env) {
		top.i, top.started = n-1, true // at the comma that ends the envelope
		envEnd = -1
		// The skipped bytes hold the model and id where the chunk that
		// left them held them: a shape learned from this chunk has them,
		// for a stream of a pooled decoder that starts with its match.
		model, id = d.envModel, d.envID
	}
	d.chUsage = absent
	sawChoices, choicesArray := false, false
	for {
		k, ok := top.more()
		if !ok {
			break
		}
		var kn []byte
		if top.keyEsc {
			kn = d.unescKey(k)
		} else {
			kn = k
		}
		var v span
		switch string(kn) {
		case "choices", "usage", "error":
		default:
			if envEnd >= 0 {
				// Envelope member: validated and skipped; only the model
				// and id matter, and only until they are known.
				v, ok = top.skip()
				if !ok {
					return d.badJSON()
				}
				switch string(kn) {
				case "model":
					first(&model, v)
				case "id":
					first(&id, v)
				}
				envEnd = top.i
				continue
			}
		}
		if envEnd > 0 {
			envCand = envEnd
		}
		envEnd = -1
		switch string(kn) {
		case "choices":
			if !sawChoices && top.peek() == '[' {
				sawChoices, choicesArray = true, true
				arr, _ := top.child()
				if err := d.chatChoices(&arr); err != nil {
					d.chatIdentityCold(data)
					return err
				}
				if !top.resume(&arr) {
					return d.badJSON()
				}
				continue
			}
			sawChoices = true
			v, ok = top.skip()
		case "model":
			v, ok = top.skip()
			first(&model, v)
		case "id":
			v, ok = top.skip()
			first(&id, v)
		case "usage":
			v, ok = top.skip()
			first(&usage, v)
		case "error":
			v, ok = top.skip()
			first(&errv, v)
		default:
			_, ok = top.skip()
		}
		if !ok {
			return d.badJSON()
		}
	}
	if !top.closed || skipWS(data, top.i) != len(data) {
		return d.badJSON()
	}
	if !choicesArray && errv.ok() && !errv.isNull(data) {
		return d.chatEvent(data) // Slow path: in-band error (nothing applied yet).
	}
	if err := d.chatEnd(model, id, usage); err != nil {
		return err
	}
	d.keepEnvelope(data, envCand, model, id)
	if choicesArray && d.chScan.elems == d.chScan.objs && d.chScan.objs <= 1 {
		d.chatLearn(data, model, id, usage, errv)
	}
	return nil
}

// chatEnd applies what a chunk says besides its choices.
func (d *Decoder) chatEnd(model, id, usage span) error {
	if !d.gotModel {
		s, ok := d.str(model)
		if !ok {
			return d.badJSON()
		}
		d.setModel(s)
	}
	if !d.gotID {
		s, ok := d.str(id)
		if !ok {
			return d.badJSON()
		}
		d.setResponseID(s)
	}
	if usage.isObject(d.data) {
		d.chatUsageFast(usage)
	} else if d.chUsage.isObject(d.data) {
		// Moonshot reports usage inside the choice: read when the chunk has
		// no top-level usage, as @openclaw/ai does.
		d.chatUsageFast(d.chUsage)
	}
	return nil
}

// The spans the chat scan reports for a chunk of one choice (shape
// roles): the envelope's, the choice's, its delta's and up to len(d.tc)
// tool_calls elements' (id, index, name, arguments each).
const (
	crModel = iota
	crID
	crUsage
	crErr
	crChUsage
	crIdx
	crFr
	crContent
	crRefusal
	crReason
	crTools   = crReason + len(reasoningFields)
	crTC      = crTools + 1
	chatRoles = crTC + 4*4
)

// A chat shape's roles fill the shape's spans exactly.
const _ = uint(maxShapeRoles-chatRoles) + uint(chatRoles-maxShapeRoles)

// aux of a chat shape: the delta's flags, whether the choices array is
// empty (the usage chunk) and the tool_calls count.
const (
	auxPresent     = 1
	auxToolsInline = 2
	auxNoChoice    = 4
	auxNTCShift    = 8
)

func (t toolSpans) all() [4]span { return [4]span{t.id, t.index, t.name, t.args} }

// chatScan is what the scan of a chunk saw of its choices.
type chatScan struct {
	elems, objs int // elements of the choices array, objects among them
	idx, fr     span
	ds          deltaSpans
}

// chatLearn keeps a chunk of one choice or none, scanned and applied
// without error, as a shape.
func (d *Decoder) chatLearn(data []byte, model, id, usage, errv span) {
	if d.opts.OpenClaw && errv.ok() {
		return // an error member is looked at in every chunk (ocSDKEvent)
	}
	var sp [chatRoles]span
	cs := &d.chScan
	if cs.objs == 0 {
		// No choice (the usage chunk): its spans are the envelope's.
		for i := range sp {
			sp[i] = absent
		}
		sp[crModel], sp[crID], sp[crUsage], sp[crErr] = model, id, usage, errv
		d.shapeLearn(data, sp[:], auxNoChoice)
		return
	}
	sp[crModel], sp[crID], sp[crUsage], sp[crErr], sp[crChUsage] = model, id, usage, errv, d.chUsage
	sp[crIdx], sp[crFr] = cs.idx, cs.fr
	sp[crContent], sp[crRefusal], sp[crTools] = cs.ds.content, cs.ds.refusal, cs.ds.tools
	copy(sp[crReason:crTools], cs.ds.reasoning[:])
	for i := range d.tc {
		if i < cs.ds.ntc {
			a := d.tc[i].all()
			copy(sp[crTC+4*i:], a[:])
		} else {
			for j := range 4 {
				sp[crTC+4*i+j] = absent
			}
		}
	}
	aux := uint32(min(cs.ds.ntc, 255)) << auxNTCShift
	if cs.ds.present {
		aux |= auxPresent
	}
	if cs.ds.toolsInline {
		aux |= auxToolsInline
	}
	d.shapeLearn(data, sp[:], aux)
}

// chatShaped applies a chunk that matched a learned shape, as chatFast
// would after its scan.
func (d *Decoder) chatShaped(data []byte, sh *shape) error {
	sp, aux := &sh.sp, sh.aux
	d.chUsage = sp[crChUsage]
	if aux&auxNoChoice != 0 {
		return d.chatEnd(sp[crModel], sp[crID], sp[crUsage]) // as chatFast with no choice
	}
	ds := deltaSpans{
		content: sp[crContent], refusal: sp[crRefusal], tools: sp[crTools],
		present: aux&auxPresent != 0, toolsInline: aux&auxToolsInline != 0,
		ntc: int(aux >> auxNTCShift),
	}
	copy(ds.reasoning[:], sp[crReason:crTools])
	for i := range min(ds.ntc, len(d.tc)) {
		b := crTC + 4*i
		d.tc[i] = toolSpans{id: sp[b], index: sp[b+1], name: sp[b+2], args: sp[b+3]}
	}
	if err := d.chatChoiceSpans(int32(sh.fixedInt(data, sp[crIdx], crIdx)), &ds, sp[crFr]); err != nil {
		d.chatIdentityCold(data)
		return err
	}
	return d.chatEnd(sp[crModel], sp[crID], sp[crUsage])
}

// keepEnvelope remembers the leading envelope members of a chunk decoded
// without error, which end at e, (through the comma after them), so that the next chunk
// can skip them when it repeats them byte for byte. The comma is part of
// the prefix so that a repeated prefix ends on the same value boundary.
// Only done once the model and response id are known: the envelope then
// carries nothing the decoder reads.
func (d *Decoder) keepEnvelope(data []byte, e int, model, id span) {
	if e <= 0 || !d.gotModel || !d.gotID {
		return
	}
	e = skipWS(data, e)
	if e >= len(data) || data[e] != ',' || e+1 > maxEnvelope {
		return
	}
	d.env = append(d.env[:0], data[:e+1]...)
	d.envModel, d.envID = absent, absent
	if model.ok() && model.e <= e {
		d.envModel = model
	}
	if id.ok() && id.e <= e {
		d.envID = id
	}
}

// maxEnvelope bounds the remembered envelope prefix.
const maxEnvelope = 1 << 10

// chatIdentityCold sets the model and response id when a chunk fails
// half-way, as the reference (which reads them first) does.
func (d *Decoder) chatIdentityCold(data []byte) {
	v, err := d.p.ParseBytes(data)
	if err != nil {
		return
	}
	if !d.gotModel {
		d.setModel(v.GetStringBytes("model"))
	}
	if !d.gotID {
		d.setResponseID(v.GetStringBytes("id"))
	}
}

func (d *Decoder) unescKey(k []byte) []byte {
	out, ok := unescapeTo(d.kbuf[:0], k)
	d.kbuf = out
	if !ok {
		return nil
	}
	return out
}

// chatChoices decodes the choices array in the same pass that validates it.
func (d *Decoder) chatChoices(arr *vIter) error {
	for {
		if _, ok := arr.more(); !ok {
			if !arr.closed {
				return d.badJSON()
			}
			return nil
		}
		d.chScan.elems++
		if arr.peek() != '{' || d.opts.OpenClaw && d.chScan.elems > 1 {
			// @openclaw/ai reads choices[0] alone.
			if _, ok := arr.skip(); !ok {
				return d.badJSON()
			}
			continue
		}
		c, _ := arr.child()
		d.chScan.objs++
		if err := d.chatChoiceInline(&c); err != nil {
			return err
		}
		if !arr.resume(&c) {
			return d.badJSON()
		}
	}
}

// deltaSpans are the members of a chat delta the decoder reads.
type deltaSpans struct {
	reasoning               [len(reasoningFields)]span
	content, refusal, tools span
	details                 span // reasoning_details, read with the OpenClaw rules only
	present                 bool
	// The first tool_calls array's elements are collected in d.tc while
	// it is validated (toolsInline) when it has at most len(d.tc) of them.
	toolsInline bool
	ntc         int
}

// toolSpans are the members of one tool_calls element the decoder reads.
type toolSpans struct{ id, index, name, args span }

// chatToolsInline validates the tool_calls array at dc's current value
// and collects its elements' members in the same pass. Containers
// descended into here count against the depth limit as they would in
// skipValue of the whole array. ok is false for malformed JSON.
func (d *Decoder) chatToolsInline(dc *vIter, ds *deltaSpans) bool {
	start := dc.i
	arr, _ := dc.child()
	for {
		if _, ok := arr.more(); !ok {
			if !arr.closed {
				return false
			}
			break
		}
		ts := toolSpans{absent, absent, absent, absent}
		if arr.peek() == '{' {
			o, _ := arr.child()
			sawFn := false
			for {
				k, ok := o.more()
				if !ok {
					if !o.closed {
						return false
					}
					break
				}
				if o.keyEsc {
					k = d.unescKey(k)
				}
				var v span
				switch string(k) {
				case "function":
					if !sawFn && o.peek() == '{' {
						sawFn = true
						f, _ := o.child()
						for {
							fk, ok := f.more()
							if !ok {
								if !f.closed {
									return false
								}
								break
							}
							if f.keyEsc {
								fk = d.unescKey(fk)
							}
							fv, ok := f.skipN(maxJSONDepth - 3)
							if !ok {
								return false
							}
							switch string(fk) {
							case "name":
								first(&ts.name, fv)
							case "arguments":
								first(&ts.args, fv)
							}
						}
						if !o.resume(&f) {
							return false
						}
						continue
					}
					sawFn = true
					_, ok = o.skipN(maxJSONDepth - 2)
				case "id":
					v, ok = o.skipN(maxJSONDepth - 2)
					first(&ts.id, v)
				case "index":
					v, ok = o.skipN(maxJSONDepth - 2)
					first(&ts.index, v)
				default:
					_, ok = o.skipN(maxJSONDepth - 2)
				}
				if !ok {
					return false
				}
			}
			if !arr.resume(&o) {
				return false
			}
		} else if _, ok := arr.skipN(maxJSONDepth - 1); !ok {
			return false
		}
		if ds.ntc < len(d.tc) {
			d.tc[ds.ntc] = ts
		}
		ds.ntc++
	}
	if !dc.resume(&arr) {
		return false
	}
	ds.tools = span{start, dc.i}
	ds.toolsInline = ds.ntc <= len(d.tc)
	return true
}

func (d *Decoder) chatChoiceInline(c *vIter) error {
	data := d.data
	idx, fr := absent, absent
	ds := deltaSpans{content: absent, refusal: absent, tools: absent, details: absent}
	for i := range ds.reasoning {
		ds.reasoning[i] = absent
	}
	var ms deltaSpans // choice.message, the OpenClaw fallback for a missing delta
	sawDelta, deltaNull := false, false
	for {
		k, ok := c.more()
		if !ok {
			if !c.closed {
				return d.badJSON()
			}
			break
		}
		if c.keyEsc {
			k = d.unescKey(k)
		}
		var v span
		switch string(k) {
		case "index":
			v, ok = c.skip()
			first(&idx, v)
		case "delta":
			if sawDelta || c.peek() != '{' {
				deltaNull = !sawDelta && c.peek() == 'n'
				sawDelta = true
				_, ok = c.skip()
				break
			}
			sawDelta = true
			ok = d.deltaInline(c, &ds)
		case "message":
			// @openclaw/ai reads choice.delta ?? choice.message.
			if !d.opts.OpenClaw || ms.present || c.peek() != '{' {
				_, ok = c.skip()
				break
			}
			ms = deltaSpans{content: absent, refusal: absent, tools: absent, details: absent}
			for i := range ms.reasoning {
				ms.reasoning[i] = absent
			}
			ok = d.deltaInline(c, &ms)
		case "finish_reason":
			v, ok = c.skip()
			first(&fr, v)
		case "usage":
			v, ok = c.skip()
			first(&d.chUsage, v)
		default:
			_, ok = c.skip()
		}
		if !ok {
			return d.badJSON()
		}
	}
	if (!sawDelta || deltaNull) && ms.present {
		ds = ms
	}
	if d.chScan.objs == 1 {
		d.chScan.idx, d.chScan.fr, d.chScan.ds = idx, fr, ds
	}
	return d.chatChoiceSpans(int32(intOf(data, idx)), &ds, fr)
}

// deltaInline collects the members of the delta object at c's current
// value into ds in the same pass that validates it. ok is false for
// malformed JSON.
func (d *Decoder) deltaInline(c *vIter, ds *deltaSpans) bool {
	ds.present = true
	dc, _ := c.child()
	for {
		dk, ok := dc.more()
		if !ok {
			break
		}
		if dc.keyEsc {
			dk = d.unescKey(dk)
		}
		if string(dk) == "tool_calls" && !ds.tools.ok() && dc.peek() == '[' {
			if !d.chatToolsInline(&dc, ds) {
				return false
			}
			continue
		}
		dv, ok := dc.skip()
		if !ok {
			return false
		}
		switch string(dk) {
		case "content":
			first(&ds.content, dv)
		case "tool_calls":
			first(&ds.tools, dv)
		case "refusal":
			first(&ds.refusal, dv)
		case "reasoning_content":
			first(&ds.reasoning[0], dv)
		case "reasoning":
			first(&ds.reasoning[1], dv)
		case "reasoning_text":
			first(&ds.reasoning[2], dv)
		case "reasoning_details":
			first(&ds.details, dv)
		}
	}
	return c.resume(&dc)
}

// chatChoiceSpans applies a validated choice's delta and finish reason.
func (d *Decoder) chatChoiceSpans(choice int32, ds *deltaSpans, fr span) error {
	data := d.data
	if d.opts.OpenClaw {
		choice = 0 // choices[0] is the answer, whatever its index says
	}
	if ds.present {
		used := false
		if d.opts.OpenClaw && ds.details.s >= 0 && ds.details.e > ds.details.s {
			c, _ := d.str(ds.content)
			r, _ := d.str(ds.refusal)
			d.oc.textFollows = len(c) > 0 || len(r) > 0
			v, err := d.oc.dp.ParseBytes(data[ds.details.s:ds.details.e])
			if err != nil {
				return d.badJSON()
			}
			if used, err = d.ocReasoningDetails(choice, v); err != nil {
				return err
			}
		}
		// Most deltas have no reasoning member, and content or refusal
		// but not both: absent members are passed over inline.
		if r := &ds.reasoning; !used && r[0].s&r[1].s&r[2].s >= 0 {
			if d.opts.OpenClaw {
				c, _ := d.str(ds.content)
				r, _ := d.str(ds.refusal)
				d.oc.textFollows = len(c) > 0 || len(r) > 0
			}
			for i := range ds.reasoning {
				s, ok := d.str(ds.reasoning[i])
				if !ok {
					return d.badJSON()
				}
				if len(s) > 0 {
					if err := d.chatThinking(choice, reasoningFields[i], s); err != nil {
						return err
					}
					break
				}
			}
		}
		if ds.content.s >= 0 {
			if err := d.chatTextAt(choice, ds.content); err != nil {
				return err
			}
		}
		if ds.refusal.s >= 0 {
			if err := d.chatTextAt(choice, ds.refusal); err != nil {
				return err
			}
		}
		if ds.toolsInline {
			for pos := range ds.ntc {
				t := &d.tc[pos]
				if err := d.chatToolApply(choice, pos, t.id, t.index, t.name, t.args); err != nil {
					return err
				}
			}
		} else if arr, ok := iterArr(data, ds.tools); ok {
			for pos := 0; ; pos++ {
				t, ok := arr.next()
				if !ok {
					break
				}
				if err := d.chatToolFast(choice, pos, t); err != nil {
					return err
				}
			}
		}
	}
	s, ok := d.str(fr)
	if !ok {
		return d.badJSON()
	}
	if d.opts.OpenClaw && fr.ok() && d.data[fr.s] != '"' {
		if x, err := d.oc.dp.ParseBytes(d.data[fr.s:fr.e]); err == nil {
			if t, truthy := ocFinishText(x); truthy {
				d.chatFinish(choice, t)
			}
		}
		return nil
	}
	if len(s) > 0 {
		d.chatFinish(choice, s)
	}
	return nil
}

// chatTextAt applies the string at v, when it is a non-empty one, as the
// choice's text.
func (d *Decoder) chatTextAt(choice int32, v span) error {
	s, ok := d.strAt(v)
	if !ok {
		return d.badJSON()
	}
	if len(s) > 0 {
		return d.chatText(choice, s)
	}
	return nil
}

// chatUsageFast reads a validated usage object (the reference's rules).
func (d *Decoder) chatUsageFast(u span) {
	data := d.data
	prompt, completion, hit, ptd, ctd, ccit := absent, absent, absent, absent, absent, absent
	it, _ := iterObj(data, u)
	for {
		k, v, ok := it.next()
		if !ok {
			break
		}
		switch string(d.key(&it, k)) {
		case "prompt_tokens":
			first(&prompt, v)
		case "completion_tokens":
			first(&completion, v)
		case "prompt_cache_hit_tokens":
			first(&hit, v)
		case "prompt_tokens_details":
			first(&ptd, v)
		case "completion_tokens_details":
			first(&ctd, v)
		case "cache_creation_input_tokens":
			first(&ccit, v)
		}
	}
	// prompt_tokens_details in one pass: cached_tokens,
	// cache_write_tokens and cache_creation_input_tokens.
	var pd [3]span
	d.members(ptd, ptdNames, pd[:])
	cv := pd[0]
	if !cv.ok() || cv.isNull(data) {
		cv = hit // the cached count ?? the top-level hit (DeepSeek)
	}
	cached := intOf(data, cv)
	d.uCacheRead = cached
	// The cache write, in chatUsage's order.
	var cw int64
	switch {
	case pd[1].isNumber(data):
		cw = intOf(data, pd[1])
	case pd[2].isNumber(data):
		cw = intOf(data, pd[2])
	default:
		cw = intOf(data, ccit)
	}
	d.uCacheWrite = cw
	d.uIn = max(intOf(data, prompt)-cached-d.uCacheWrite, 0)
	d.uOut = intOf(data, completion)
	var reported bool
	d.uReason, reported = d.memberNumber(ctd, "reasoning_tokens")
	d.ocChatReasoningShown(reported)
	d.ocChatTotal()
}

// memberNumber is the integer member name of the validated object at o
// (intOf), and whether that member is a number.
func (d *Decoder) memberNumber(o span, name string) (int64, bool) {
	v := d.member(o, name)
	return intOf(d.data, v), v.isNumber(d.data)
}

// member is the first member name of the validated object at o, or absent.
func (d *Decoder) member(o span, name string) span {
	var v [1]span
	d.members(o, []string{name}, v[:])
	return v[0]
}

// members sets out[i] to the first member names[i] of the validated
// object at o, absent when there is none (or o is no object).
func (d *Decoder) members(o span, names []string, out []span) {
	for i := range out {
		out[i] = absent
	}
	it, ok := iterObj(d.data, o)
	if !ok {
		return
	}
	for {
		k, v, ok := it.next()
		if !ok {
			return
		}
		k = d.key(&it, k)
		for i, name := range names {
			if string(k) == name && !out[i].ok() {
				out[i] = v
			}
		}
	}
}

// ptdNames are the members of a chat usage's prompt_tokens_details that
// chatUsageFast reads.
var ptdNames = []string{"cached_tokens", "cache_write_tokens", "cache_creation_input_tokens"}

func (d *Decoder) chatToolFast(choice int32, pos int, t span) error {
	data := d.data
	id, fn, index := absent, absent, absent
	if it, ok := iterObj(data, t); ok {
		for {
			k, v, ok := it.next()
			if !ok {
				break
			}
			switch string(d.key(&it, k)) {
			case "id":
				first(&id, v)
			case "function":
				first(&fn, v)
			case "index":
				first(&index, v)
			}
		}
	}
	name, args := absent, absent
	if it, ok := iterObj(data, fn); ok {
		for {
			k, v, ok := it.next()
			if !ok {
				break
			}
			switch string(d.key(&it, k)) {
			case "name":
				first(&name, v)
			case "arguments":
				first(&args, v)
			}
		}
	}
	return d.chatToolApply(choice, pos, id, index, name, args)
}

// chatToolApply applies one tool_calls element from its members' spans.
func (d *Decoder) chatToolApply(choice int32, pos int, id, index, name, args span) error {
	data := d.data
	idS, ok1 := d.str(id)
	nameS, ok2 := d.str(name)
	argsS, ok3 := d.str(args)
	if !ok1 || !ok2 || !ok3 {
		return d.badJSON()
	}
	return d.chatToolCall(choice, pos, index.isNumber(data), intOf(data, index), idS, nameS, argsS)
}

// ---- Anthropic Messages ----

// The spans the Anthropic scan reports (shape roles).
const (
	arType = iota
	arIndex
	arDType
	arText
	arPJ
	arThinking
	arSig
	anthropicRoles
)

const auxSawDelta = 1

func (d *Decoder) anthropicFast(data []byte) error {
	if sh := d.shapeMatch(data); sh != nil {
		return d.applyShape(data, sh)
	}
	i := skipWS(data, 0)
	if i >= len(data) || data[i] != '{' || d.opts.OpenClaw && !ocWhole(data, i) {
		return d.badJSON()
	}
	top := vIter{b: data, i: i + 1}
	var sp [anthropicRoles]span
	for i := range sp {
		sp[i] = absent
	}
	sawDelta := false
	for {
		k, ok := top.more()
		if !ok {
			break
		}
		if top.keyEsc {
			k = d.unescKey(k)
		}
		var v span
		switch string(k) {
		case "type":
			v, ok = top.skip()
			first(&sp[arType], v)
		case "index":
			v, ok = top.skip()
			first(&sp[arIndex], v)
		case "delta":
			if sawDelta || top.peek() != '{' {
				sawDelta = true
				_, ok = top.skip()
				break
			}
			// The delta's members are collected in the same pass that
			// validates them.
			sawDelta = true
			c, _ := top.child()
			for {
				dk, ok := c.more()
				if !ok {
					break
				}
				if c.keyEsc {
					dk = d.unescKey(dk)
				}
				dv, ok := c.skip()
				if !ok {
					return d.badJSON()
				}
				switch string(dk) {
				case "type":
					first(&sp[arDType], dv)
				case "text":
					first(&sp[arText], dv)
				case "partial_json":
					first(&sp[arPJ], dv)
				case "thinking":
					first(&sp[arThinking], dv)
				case "signature":
					first(&sp[arSig], dv)
				}
			}
			ok = top.resume(&c)
		default:
			_, ok = top.skip()
		}
		if !ok {
			return d.badJSON()
		}
	}
	if !top.closed || skipWS(data, top.i) != len(data) {
		return d.badJSON()
	}
	fast, err := d.anthropicApply(data, sp[:], sawDelta, nil)
	if fast && err == nil {
		var aux uint32
		if sawDelta {
			aux = auxSawDelta
		}
		d.shapeLearn(data, sp[:], aux)
	}
	return err
}

// Anthropic event and delta types, as anthropicApply dispatches on them.
const (
	atOther uint8 = iota // the reference decoder's
	atDelta
	atPing
)

const (
	adOther uint8 = iota
	adText
	adJSON
	adThinking
	adSignature
)

// anthropicApply applies a validated event from its scanned spans (of a
// matched shape sh, or nil). fast reports an event decoded here, not by
// the reference decoder.
func (d *Decoder) anthropicApply(data []byte, sp []span, sawDelta bool, sh *shape) (fast bool, err error) {
	var tc, dc uint8
	dtOK := true
	if sh != nil && sh.memoOK {
		// The shape's type and delta type are literal: dispatched before.
		tc, dc = sh.memo&3, sh.memo>>2
	} else {
		t, ok := d.str(sp[arType])
		if !ok {
			return false, d.badJSON()
		}
		named := len(t) == 0
		if named && !d.opts.OpenClaw {
			t = d.name // @openclaw/ai reads the type from the data alone
		}
		switch string(t) {
		case "content_block_delta":
			tc = atDelta
		case "ping":
			tc = atPing
		}
		var dt []byte
		dt, dtOK = d.str(sp[arDType])
		switch string(dt) {
		case "text_delta":
			dc = adText
		case "input_json_delta":
			dc = adJSON
		case "thinking_delta":
			dc = adThinking
		case "signature_delta":
			dc = adSignature
		}
		if const2 := uint64(1)<<arType | 1<<arDType; sh != nil && !named && dtOK && sh.fixed&const2 == const2 {
			sh.memo, sh.memoOK = tc|dc<<2, true
		}
	}
	switch tc {
	case atDelta:
	case atPing:
		return true, nil
	default:
		return false, d.anthropicEvent(data) // Slow path: the few structural events.
	}
	var idx int64
	var indexed bool
	if sh != nil && sh.numsOK {
		idx, indexed = sh.nums[0], sh.nums[1] != 0
	} else {
		index := sp[arIndex]
		idx, indexed = intOf(data, index), index.isNumber(data)
		if sh != nil && sh.fixed&(1<<arIndex) != 0 {
			sh.nums, sh.numsOK = [3]int64{idx, b2i(indexed)}, true
		}
	}
	si := -1
	if indexed || !d.opts.OpenClaw {
		si = d.findSlot(0, idx, anyKind)
	}
	if si < 0 && d.opts.OpenClaw && sawDelta && dtOK && dc == adText && sp[arText].isString(data) {
		v, ok := d.str(sp[arText])
		if !ok {
			return true, d.badJSON()
		}
		return true, d.ocAnthropicOrphanText(idx, indexed, v)
	}
	if si < 0 || !sawDelta {
		return true, nil
	}
	if !dtOK {
		return true, d.badJSON()
	}
	s := &d.slots[si]
	var field span
	switch dc {
	case adText:
		field = sp[arText]
	case adJSON:
		field = sp[arPJ]
	case adThinking:
		field = sp[arThinking]
	case adSignature:
		field = sp[arSig]
	default:
		return true, nil
	}
	v, ok := d.str(field)
	if !ok {
		return true, d.badJSON()
	}
	switch dc {
	case adText:
		if s.kind == llm.BlockText {
			return true, d.appendText(si, v)
		}
	case adJSON:
		if s.kind == llm.BlockToolCall {
			if len(v) > 0 {
				s.delta = true
			}
			return true, d.appendArgs(si, v)
		}
	case adThinking:
		if s.kind == llm.BlockThinking {
			return true, d.appendText(si, v)
		}
	case adSignature:
		if s.kind == llm.BlockThinking {
			if !d.validText(v) {
				return true, d.badUTF8(v)
			}
			b := &d.msg.Content[s.ci]
			if d.opts.OpenClaw && !s.delta {
				b.Signature = b.Signature[:0] // as anthropicDelta
			}
			s.delta = true
			b.Signature = append(b.Signature, v...)
		}
	}
	return true, nil
}

// ---- Responses ----

// The spans the Responses scan reports (shape roles).
const (
	rrType = iota
	rrOI
	rrCI
	rrItem
	rrDelta
	responsesRoles
)

func (d *Decoder) responsesFast(data []byte) error {
	if d.isDone(data) {
		return d.responsesEvent(data)
	}
	if sh := d.shapeMatch(data); sh != nil {
		return d.applyShape(data, sh)
	}
	it, ok := topIter(data)
	if !ok {
		return d.badJSON()
	}
	var sp [responsesRoles]span
	for i := range sp {
		sp[i] = absent
	}
	for {
		k, v, ok := it.next()
		if !ok {
			break
		}
		switch string(d.key(&it, k)) {
		case "type":
			first(&sp[rrType], v)
		case "output_index":
			first(&sp[rrOI], v)
		case "content_index":
			first(&sp[rrCI], v)
		case "item_id":
			first(&sp[rrItem], v)
		case "delta":
			first(&sp[rrDelta], v)
		}
	}
	if !it.complete() {
		return d.badJSON()
	}
	fast, err := d.responsesApply(data, sp[:], nil)
	if fast && err == nil {
		d.shapeLearn(data, sp[:], 0)
	}
	return err
}

// Responses event types, as responsesApply dispatches on them.
const (
	rtOther uint8 = iota // the reference decoder's
	rtText
	rtArgs
)

// responsesApply applies a validated event from its scanned spans. fast
// reports an event decoded here, not by the reference decoder.
func (d *Decoder) responsesApply(data []byte, sp []span, sh *shape) (fast bool, err error) {
	var tc uint8
	if sh != nil && sh.memoOK {
		tc = sh.memo // the shape's type is literal: dispatched before
	} else {
		t, ok := d.str(sp[rrType])
		if !ok {
			return false, d.badJSON()
		}
		named := len(t) == 0
		if named && !d.opts.OpenClaw {
			t = d.name // @openclaw/ai reads the type from the data alone
		}
		switch string(t) {
		case "response.output_text.delta", "response.refusal.delta":
			tc = rtText
		case "response.function_call_arguments.delta":
			tc = rtArgs
		}
		if sh != nil && !named && sh.fixed&(1<<rrType) != 0 {
			sh.memo, sh.memoOK = tc, true
		}
	}
	// The output and content indexes, read once per shape when it holds
	// them fixed.
	var oiN, ciN int64
	var oiNum bool
	if sh != nil && sh.numsOK {
		oiN, ciN, oiNum = sh.nums[0], sh.nums[1], sh.nums[2] != 0
	} else {
		oi := sp[rrOI]
		oiN, ciN, oiNum = intOf(data, oi), intOf(data, sp[rrCI]), oi.isNumber(data)
		if const2 := uint64(1)<<rrOI | 1<<rrCI; sh != nil && sh.fixed&const2 == const2 {
			sh.nums, sh.numsOK = [3]int64{oiN, ciN, b2i(oiNum)}, true
		}
	}
	delta := sp[rrDelta]
	if tc != rtOther && d.opts.OpenClaw && !delta.isString(data) {
		return false, d.responsesEvent(data) // @openclaw/ai refuses the event there
	}
	switch tc {
	case rtText:
		key := d.textKey(oiN, ciN)
		s, ok := d.str(delta)
		if !ok {
			return true, d.badJSON()
		}
		return true, d.responsesText(key, s)
	case rtArgs:
		si := -1
		if oiNum {
			si = d.findSlot(0, oiN, llm.BlockToolCall)
		}
		if si < 0 {
			id, ok := d.str(sp[rrItem])
			if !ok {
				return true, d.badJSON()
			}
			if len(id) > 0 {
				for i := range d.slots {
					s := &d.slots[i]
					if s.kind == llm.BlockToolCall && itemIDOf(d.msg.Content[s.ci].ID, id) {
						si = i
						break
					}
				}
			}
		}
		if si < 0 {
			return true, nil
		}
		s, ok := d.str(delta)
		if !ok {
			return true, d.badJSON()
		}
		d.slots[si].delta = true // the arguments were streamed
		return true, d.appendArgs(si, s)
	}
	return false, d.responsesEvent(data) // Slow path: structural events.
}
