package provider

import (
	"bytes"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"unicode/utf8"

	"github.com/ocbench/ocbench/llm"
	"github.com/valyala/fastjson"
)

// The end-of-stream checks of @openclaw/ai 2026.9.6's transports (spec
// streamwrap.md §1.5), applied when Options.OpenClaw is set: OpenClaw
// 2026.9.6 streams through these transports, and each checks the finished
// tool calls itself before any wrapper can fix them.

// Error messages of @openclaw/ai 2026.9.6's transports.
const (
	MsgChatMalformedToolCall      = "Provider returned an incomplete or malformed tool call"
	MsgChatNoFinishReason         = "Stream ended without finish_reason"
	MsgAnthropicMalformedArgs     = "Provider completed tool call with malformed JSON arguments"
	MsgAnthropicIncompleteCall    = "Provider completed stream with an incomplete tool call"
	MsgAnthropicNoTerminal        = "Anthropic stream ended before a terminal event"
	MsgAnthropicFragment          = "OpenClaw transport error: malformed_streaming_fragment"
	MsgResponsesInvalidArgs       = "Responses stream completed tool call with invalid JSON arguments"
	MsgResponsesNoName            = "Responses stream completed tool call without a function name"
	MsgResponsesUnresolved        = "Responses stream completed with unresolved tool calls"
	MsgResponsesEndedUnresolved   = "Responses stream ended with unresolved tool calls"
	MsgResponsesNoTerminal        = "OpenAI Responses stream ended before a terminal response event"
	MsgResponsesUntypedEvent      = "Responses stream delivered a malformed event without a string type"
	MsgSSEBufferExceeded          = "SSE response exceeded max buffer size (16777216 chars) without event boundary"
	MsgSSEMalformedJSON           = "Error reading response: malformed server-sent event JSON."
	msgResponsesChangedNamePrefix = "Responses stream changed tool-call function name from "
)

// TransportError is a turn refused by a transport's own end-of-stream
// check (Options.OpenClaw): a malformed or incomplete tool call, or a
// stream that ended without its terminal event. Message is the
// transport's errorMessage; Truncated marks a stream that ended early
// (errors.Is(err, ErrTruncated) holds then).
type TransportError struct {
	Message   string
	Truncated bool
}

func (e *TransportError) Error() string { return e.Message }

// Is makes a truncation match ErrTruncated.
func (e *TransportError) Is(target error) bool { return e.Truncated && target == ErrTruncated }

// ocState is the per-stream state of the OpenClaw checks: its scalars
// (ocFlags), zeroed as one small struct when a decoder is reset, and
// the members that keep their buffers across streams.
type ocState struct {
	ocFlags
	items []ocItem // Responses: output items by output index
	slots []ocSlot // Responses: the open items' registers (openclaw_slots.go)
	// chat: the tool calls' argument measures (openclaw_chatargs.go)
	argKeys   []ocArgKey
	argStates []ocArgState
	msg       ocMsgState
	tags      ocPartitioner   // chat: the reasoning-tag partitioner visible content goes through
	dp        fastjson.Parser // chat: a fast-path delta's reasoning_details
	legacy    ocLegacy        // chat: the legacy function_call delta
}

// ocFlags are ocState's scalars: a field added here is reset with them.
type ocFlags struct {
	sawDone      bool // chat: "data: [DONE]"
	sawFinish    bool // chat: a finish_reason
	finishStop   bool // chat: the last finish_reason maps to stop
	sawNative    bool // chat: a tool_calls element
	sawReasoning bool // chat: a reasoning delta (kept or not)
	sawStart     bool // anthropic: a message_start
	dropCalls    bool // remove the tool calls when the terminal event goes out
	tagUpTo      int  // text blocks before this index get a commentary tag (on failure)
	tagAll       bool // every text block gets a commentary tag
	nextKey      int64
	// chat: after a tool call the transport's current block stays that
	// call, and text and reasoning deltas wait in a queue until a new tool
	// call or the normal end appends them; a stream that fails first
	// loses them. postCI is the block the first queued delta went to (+1,
	// 0 none), postFrom that block's length before it.
	postCI      int
	postFrom    int
	textFollows bool // chat: the delta being read has content after its reasoning
	cw1h        int64
	cw1hShown   bool // anthropic: usage reported cache_creation.ephemeral_1h_input_tokens
	interrupted int  // chat: the text block reasoning interrupted (+1), until visible text follows
	confirmed   int  // chat: the interrupted block (+1) once visible text followed it
}

// jsTrim is JavaScript's String.prototype.trim.
func jsTrim(b []byte) []byte {
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if !llm.IsJSSpace(r) {
			break
		}
		b = b[n:]
	}
	for len(b) > 0 {
		r, n := utf8.DecodeLastRune(b)
		if !llm.IsJSSpace(r) {
			break
		}
		b = b[:len(b)-n]
	}
	return b
}

// jsonObject reports whether text is JSON.parse-able as a non-array
// object (JSON.parse allows surrounding whitespace: JSON's four).
func jsonObject(text []byte) bool {
	t := bytes.TrimLeft(text, " \t\r\n")
	return len(t) > 0 && t[0] == '{' && fastjson.ValidateBytes(text) == nil
}

// repairStringLiterals is @openclaw/ai's repairJson with
// preserveValidControlEscapes: inside strings, raw control characters are
// escaped and a backslash before an invalid escape is doubled; valid
// escapes are kept as written. It appends to dst and reports whether
// anything changed.
func repairStringLiterals(dst, s []byte) ([]byte, bool) {
	if bytes.IndexFunc(s, func(r rune) bool { return r == '\\' || r < 0x20 }) < 0 {
		return dst, false
	}
	start := len(dst)
	in := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !in {
			dst = append(dst, c)
			if c == '"' {
				in = true
			}
			continue
		}
		switch {
		case c == '"':
			dst = append(dst, c)
			in = false
		case c == '\\':
			if i+1 >= len(s) {
				dst = append(dst, '\\', '\\')
				continue
			}
			n := s[i+1]
			if n == 'u' {
				if i+6 <= len(s) && isHex4(s[i+2:i+6]) {
					dst = append(dst, s[i:i+6]...)
					i += 5
					continue
				}
				dst = append(dst, '\\', '\\')
				continue
			}
			switch n {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				dst = append(dst, '\\', n)
				i++
			default:
				dst = append(dst, '\\', '\\')
			}
		case c < 0x20:
			switch c {
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigit[c>>4], hexDigit[c&15])
			}
		default:
			dst = append(dst, c)
		}
	}
	return dst, !bytes.Equal(dst[start:], s)
}

const hexDigit = "0123456789abcdef"

func isHex4(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// ocFail ends the stream with a TransportError; drop removes the tool
// calls when the error goes out.
func (d *Decoder) ocFail(msg string, truncated, drop bool) {
	d.oc.dropCalls = d.oc.dropCalls || drop
	d.fail(&TransportError{Message: msg, Truncated: truncated})
}

// ocResponsesFailedCalls: a failed Responses turn, whatever failed it, keeps
// its open tool calls with the arguments @openclaw/ai parsed so far: only
// at arguments.done, or at preview checkpoints from 512 characters on;
// before either, {}.
func (d *Decoder) ocResponsesFailedCalls() {
	for i := range d.slots {
		s := &d.slots[i]
		if b := &d.msg.Content[s.ci]; s.kind == llm.BlockToolCall && !s.done && len(b.RawArgs) < 512 {
			b.Arguments = append(b.Arguments[:0], "{}"...)
		}
	}
}

// ocChatFinish is finalizeOpenAICompletionsToolCalls at the end of a chat
// stream, after every open block has ended.
func (d *Decoder) ocChatFinish() {
	d.oc.postCI = 0 // the normal end appends the queue
	reason := d.stop
	if reason == llm.StopNone {
		reason = llm.StopStop
	}
	calls := d.hasToolCalls()
	if reason == llm.StopToolUse && !calls {
		reason = llm.StopStop
	}
	if reason == llm.StopStop && calls && (d.oc.finishStop || d.oc.sawNative && d.oc.sawDone) && !d.hasVisibleText() {
		reason = llm.StopToolUse
	}
	if d.oc.confirmed > 0 && reason != llm.StopToolUse && reason != llm.StopError {
		d.ocTagInterrupted()
	}
	d.oc.tagUpTo = 0 // provisional commentary tags are cleared
	if reason != llm.StopToolUse {
		d.oc.dropCalls = calls
		if reason == llm.StopError {
			d.oc.tagAll = d.oc.sawReasoning
			d.fail(d.stopError())
			return
		}
		d.ocKeepFinishError()
		d.state = stateFinished
		d.setUsage()
		d.q = append(d.q, llm.Event{Type: llm.EventDone, Reason: reason})
		return
	}
	for i := range d.msg.Content {
		b := &d.msg.Content[i]
		if b.Type != llm.BlockToolCall {
			continue
		}
		if len(jsTrim(b.Name)) == 0 || len(jsTrim(b.RawArgs)) == 0 || !jsonObject(b.RawArgs) {
			d.oc.tagAll = d.oc.sawReasoning
			d.ocFail(MsgChatMalformedToolCall, false, true)
			return
		}
	}
	d.oc.tagAll = true
	d.ocKeepFinishError()
	d.state = stateFinished
	d.setUsage()
	d.q = append(d.q, llm.Event{Type: llm.EventDone, Reason: llm.StopToolUse})
}

// ocKeepFinishError: the completions transport sets errorMessage for a
// finish_reason that maps to an error and never clears it, so a turn a
// later finish_reason ends well keeps the earlier one's message.
func (d *Decoder) ocKeepFinishError() {
	if se, ok := d.stopErr.(*StopReasonError); ok {
		d.msg.ErrorMessage = se.Message
	}
}

// hasVisibleText reports a text block with non-blank text.
func (d *Decoder) hasVisibleText() bool {
	for i := range d.msg.Content {
		b := &d.msg.Content[i]
		if b.Type == llm.BlockText && len(jsTrim(b.Text)) > 0 {
			return true
		}
	}
	return false
}

// ocAnthropicFinish is the end of consumeAnthropicStream: the checks in
// their order, then every sealed tool call's terminal argument check.
func (d *Decoder) ocAnthropicFinish() {
	if d.stop == llm.StopError {
		d.oc.dropCalls = true
		d.fail(d.stopError())
		return
	}
	for i := range d.slots {
		if d.slots[i].kind == llm.BlockToolCall {
			// No block is ended: the transport throws first.
			d.ocFail(MsgAnthropicIncompleteCall, false, true)
			return
		}
	}
	// A text or thinking block its content_block_stop never reached gets no
	// end event, and a thinking block no signature from its deltas.
	for i := range d.slots {
		d.ocPendingSignature(&d.slots[i])
	}
	d.slots = d.slots[:0]
	d.slotGen++
	for i := range d.msg.Content {
		b := &d.msg.Content[i]
		if b.Type != llm.BlockToolCall || len(b.RawArgs) == 0 || b.Unstopped {
			// An unstopped call was never sealed: it is not checked.
			continue
		}
		if jsonObject(b.RawArgs) {
			continue
		}
		fixed, changed := repairStringLiterals(d.kbuf[:0], b.RawArgs)
		d.kbuf = fixed[:0]
		if changed && jsonObject(fixed) {
			b.Arguments = append(b.Arguments[:0], bytes.TrimSpace(fixed)...)
			continue
		}
		d.ocFail(MsgAnthropicMalformedArgs, false, true)
		return
	}
	reason := d.stop
	if reason == llm.StopNone {
		reason = llm.StopStop
	}
	if reason == llm.StopToolUse || d.hasToolCalls() {
		d.oc.tagAll = true
	}
	d.state = stateFinished
	d.setUsage()
	d.q = append(d.q, llm.Event{Type: llm.EventDone, Reason: reason})
}

// ocResponsesItemDone is resolveCompletedResponsesToolCall at a function
// call's output_item.done: the name must not change (the trim decorator
// may have renamed the live block in place), and the arguments must parse
// as an object. It reports whether the stream failed; useStreamed is set
// when the streamed text, not the item's, is the arguments.
func (d *Decoder) ocResponsesItemDone(si int, item *fastjson.Value) (failed, useStreamed bool) {
	b := &d.msg.Content[d.slots[si].ci]
	return d.ocCheckCallDone(b.Name, b.RawArgs, d.slots[si].delta, item)
}

// ocCheckCallDone is ocResponsesItemDone on what streamed of the call (its
// name, its arguments, whether they came as deltas): nothing, for a call
// first seen at its done, which the transport validates before it makes
// the call's block.
func (d *Decoder) ocCheckCallDone(name, rawArgs []byte, delta bool, item *fastjson.Value) (failed, useStreamed bool) {
	if ocIncompleteItem(item) {
		d.ocFail(msgResponsesIncomplete, false, false)
		return true, false
	}
	streamed := jsTrim(name)
	completed := jsTrim(item.GetStringBytes("name"))
	if len(streamed) > 0 && len(completed) > 0 && !bytes.Equal(streamed, completed) {
		d.ocFail(msgResponsesChangedNamePrefix+string(streamed)+" to "+string(completed), false, false)
		return true, false
	}
	if len(streamed) == 0 && len(completed) == 0 {
		d.ocFail(MsgResponsesNoName, false, false)
		return true, false
	}
	av := item.Get("arguments")
	var done []byte
	hasDone := av != nil && av.Type() == fastjson.TypeString
	if hasDone {
		done, _ = av.StringBytes()
	}
	text := rawArgs
	switch {
	case delta && len(rawArgs) > 0 && hasDone && !bytes.Equal(rawArgs, done) && jsonObject(rawArgs):
		useStreamed = true
	case len(done) > 0:
		text = done
	}
	if !jsonObject(text) {
		d.ocFail(MsgResponsesInvalidArgs, false, false)
		return true, false
	}
	return false, useStreamed
}

// ocRemoveToolCalls removes the message's tool-call blocks, keeping the
// others in order; blocks move by swapping so that each block's buffers
// stay referenced once (decoders are pooled).
func (d *Decoder) ocRemoveToolCalls() {
	c := d.msg.Content
	k := 0
	for i := range c {
		if c[i].Type == llm.BlockToolCall {
			continue
		}
		if k != i {
			c[k], c[i] = c[i], c[k]
		}
		k++
	}
	d.msg.Content = c[:k]
}

// ocRemoveBlock removes block i, keeping the others in order (by swapping,
// as ocRemoveToolCalls).
func (d *Decoder) ocRemoveBlock(i int) {
	c := d.msg.Content
	for ; i+1 < len(c); i++ {
		c[i], c[i+1] = c[i+1], c[i]
	}
	d.msg.Content = c[:len(c)-1]
}

// ocQueued notes a text or thinking delta appended to block ci (of length
// n before) while it would wait in the transport's post-tool-call queue.
func (d *Decoder) ocQueued(ci, n int) {
	if d.oc.sawNative && d.oc.postCI == 0 {
		d.oc.postCI, d.oc.postFrom = ci+1, n
	}
}

// ocDropQueued removes what waited in the post-tool-call queue.
func (d *Decoder) ocDropQueued() {
	ci := d.oc.postCI - 1
	d.oc.postCI = 0
	for i := len(d.msg.Content) - 1; i >= ci && i >= 0; i-- {
		b := &d.msg.Content[i]
		if b.Type != llm.BlockText && b.Type != llm.BlockThinking {
			continue
		}
		if i == ci && d.oc.postFrom > 0 {
			b.Text = b.Text[:min(d.oc.postFrom, len(b.Text))]
			continue
		}
		d.ocRemoveBlock(i)
	}
}

// ocTagCommentary gives text blocks @openclaw/ai's commentary text phase
// (tagPendingCommentaryText): every non-blank text block without a
// textSignature, before index upTo, gets
// {"v":1,"id":"commentary-<n>-<24 hex>","phase":"commentary"}, n counting
// the text blocks that already have a signature.
func (d *Decoder) ocTagCommentary(upTo int) {
	d.ocTagPhase(0, len(d.msg.Content), upTo, "commentary", "commentary")
}

// ocTagPhase is tagUnphasedText over the blocks [from, to): each unsigned
// text block with visible text before index upTo gets
// {"v":1,"id":"<prefix>-<n>-<24 hex>","phase":"<phase>"}, n counting from
// the signed text blocks of the range.
func (d *Decoder) ocTagPhase(from, to, upTo int, prefix, phase string) {
	c := d.msg.Content[from:to]
	n := 0
	for i := range c {
		if c[i].Type == llm.BlockText && len(c[i].Signature) > 0 {
			n++
		}
	}
	for i := range c {
		b := &c[i]
		if from+i >= upTo || b.Type != llm.BlockText || len(b.Signature) > 0 || len(jsTrim(b.Text)) == 0 {
			continue
		}
		s := append(b.Signature[:0], `{"v":1,"id":"`...)
		s = append(s, prefix...)
		s = append(s, '-')
		s = appendInt(s, n)
		s = append(s, '-')
		s = appendRandomHex(s)
		s = append(s, `","phase":"`...)
		s = append(s, phase...)
		s = append(s, `"}`...)
		b.Signature = s
		n++
	}
}

// appendRandomHex appends 24 random lowercase hex digits (@openclaw/ai's
// generated ids take a UUID's first 24).
func appendRandomHex(dst []byte) []byte {
	var rnd [12]byte
	for j := range rnd {
		rnd[j] = byte(rand.Uint32())
	}
	return hex.AppendEncode(dst, rnd[:])
}

// ocIncompleteItem: an item whose status is set and is not "completed"
// (resolveCompletedResponsesToolCall refuses such a function call).
func ocIncompleteItem(it *fastjson.Value) bool {
	st := it.Get("status")
	return st != nil && jsTruthy(st) && string(it.GetStringBytes("status")) != "completed"
}

func appendInt(b []byte, n int) []byte {
	if n >= 10 {
		b = appendInt(b, n/10)
	}
	return append(b, byte('0'+n%10))
}

// ocTerminal applies the OpenClaw checks' effects on the message when the
// terminal event goes out.
func (d *Decoder) ocTerminal() {
	if !d.opts.OpenClaw {
		return
	}
	if d.oc.postCI > 0 {
		// The turn failed before the queue was appended.
		d.ocDropQueued()
	}
	switch {
	case d.oc.tagAll:
		d.ocTagCommentary(len(d.msg.Content))
	case d.oc.tagUpTo > 0:
		d.ocTagCommentary(d.oc.tagUpTo)
	}
	d.oc.tagAll, d.oc.tagUpTo = false, 0
	if d.wire == WireAnthropic && d.state >= stateFinished && d.err != nil {
		// A thinking block still open when the turn failed has no
		// signature yet: its deltas were pending until content_block_stop.
		for i := range d.slots {
			d.ocPendingSignature(&d.slots[i])
		}
		// The transport's catch deletes every block's index and
		// partialJson.
		for i := range d.msg.Content {
			d.msg.Content[i].Unstopped = false
		}
		if claude5Refusals(d.opts.Model) {
			// The streaming refusal contract of Claude 5 models: the
			// transport holds their events and, when the turn fails,
			// discards them and the whole content.
			d.msg.Content = d.msg.Content[:0]
		}
	}
	if d.oc.dropCalls {
		d.ocRemoveToolCalls()
		d.oc.dropCalls = false
	}
}

// ocPendingSignature drops the signature an open Anthropic thinking block
// took from signature deltas: @openclaw/ai holds them until the block's
// content_block_stop, and the block's own signature is "" from the first.
func (d *Decoder) ocPendingSignature(s *slot) {
	if s.kind == llm.BlockThinking && s.delta {
		d.msg.Content[s.ci].Signature = d.msg.Content[s.ci].Signature[:0]
	}
}

// ocAnthropicOrphan: a content_block_start for an index whose block is
// still open takes the index over, and @openclaw/ai never ends the first
// block: no end event, it keeps its index and loses its pending signature;
// a tool call is never sealed, its arguments stay the start's input (an
// object or an array, else {}) and its deltas stay its partialJson.
func (d *Decoder) ocAnthropicOrphan(si int) {
	s := &d.slots[si]
	d.ocPendingSignature(s)
	if s.kind == llm.BlockToolCall {
		b := &d.msg.Content[s.ci]
		in := d.side[s.inOff : s.inOff+s.inLen]
		if len(in) == 0 || in[0] != '{' && in[0] != '[' {
			in = emptyObject
		}
		b.Arguments = append(b.Arguments[:0], in...)
	}
	d.slots = append(d.slots[:si], d.slots[si+1:]...)
	d.slotGen++
}

var emptyObject = []byte("{}")

// ocBadData handles an event whose data the decoder refused as JSON, as
// the wire's OpenClaw transport does; it reports whether the event was
// dealt with. Data that is not JSON fails the turn: the OpenAI SDK's SSE
// reader says so in its own words (the Anthropic rule is below). Valid
// JSON that is not an object is skipped by the completions transport (a
// chunk without choices) and refused by the Responses one (no string
// type). An object the decoder refused for its members fails as before,
// unless the Responses checks name it.
func (d *Decoder) ocBadData(data []byte) bool {
	if d.wire == WireAnthropic {
		return d.ocAnthropicBadData(data)
	}
	if d.cut {
		return false // the cut tail: the truncation rules apply
	}
	v, err := d.p.ParseBytes(data)
	if err != nil || !jsParses(data) { // (Parse takes bad escapes and control characters)
		d.ocFail(MsgSSEMalformedJSON, false, d.wire == WireOpenAIChat)
		return true
	}
	if d.wire == WireOpenAIChat {
		return v.Type() != fastjson.TypeObject
	}
	if msg := ocResponsesMalformed(v); msg != "" {
		d.ocFail(msg, false, false)
		return true
	}
	return false
}

// ocResponsesMalformed is @openclaw/ai's check of each Responses event
// before it is read (adaptResponsesStream): the message of the failure,
// or "" for an event that passes.
func ocResponsesMalformed(v *fastjson.Value) string {
	if v.Type() != fastjson.TypeObject {
		return MsgResponsesUntypedEvent
	}
	t := v.Get("type")
	if t == nil || t.Type() != fastjson.TypeString {
		return MsgResponsesUntypedEvent
	}
	typ, _ := t.StringBytes()
	var member string
	var want fastjson.Type
	switch string(typ) {
	case "response.function_call_arguments.delta", "response.output_text.delta",
		"response.reasoning_summary_text.delta", "response.reasoning_text.delta",
		"response.refusal.delta", "response.text.delta":
		member, want = "delta", fastjson.TypeString
	case "response.output_item.added", "response.output_item.done":
		member, want = "item", fastjson.TypeObject
	case "response.created", "response.completed", "response.incomplete", "response.failed":
		member, want = "response", fastjson.TypeObject
	default:
		return ""
	}
	if m := v.Get(member); m == nil || m.Type() != want {
		return "Responses stream delivered malformed " + string(typ) + " " + member
	}
	return ""
}

// ocResponsesTerminal is the OpenClaw reading of response.completed and
// response.incomplete (finalizeResponse): the status, or "incomplete" for
// an incomplete event without one, gives the stop reason
// (mapResponsesTerminalStopReason: in_progress, queued and none are a
// stop; an incomplete response cut by the content filter is an error);
// an incomplete event fails with its tool calls still open; the completed
// event, or a length stop, recovers what the output list has.
func (d *Decoder) ocResponsesTerminal(v, r *fastjson.Value) error {
	d.ocBackfillReasoning(r.GetArray("output"))
	completed := string(v.GetStringBytes("type")) == "response.completed"
	status := r.GetStringBytes("status")
	if len(status) == 0 && !completed {
		status = []byte("incomplete")
	}
	d.setRawStop(status)
	d.stopped = true
	switch string(status) {
	case "completed", "in_progress", "queued", "":
		d.stop = llm.StopStop
	case "incomplete":
		d.stop = llm.StopLength
		if string(r.GetStringBytes("incomplete_details", "reason")) == "content_filter" {
			d.stop = llm.StopError
			d.stopErr = &StopReasonError{Raw: "content_filter", Message: "Provider incomplete_reason: content_filter"}
		}
	case "failed", "cancelled":
		d.stop = llm.StopError
		d.stopErr = &StopReasonError{Raw: string(status), Message: "An unknown error occurred"}
	default:
		d.stop = llm.StopError
		d.stopErr = &StopReasonError{Raw: string(status), Message: "Unhandled stop reason: " + string(status)}
		d.finish()
		return nil
	}
	if !completed && d.hasOpenToolCall() {
		if d.stopErr != nil {
			d.finish()
		} else {
			d.ocFail(MsgResponsesUnresolved, false, false)
		}
		return nil
	}
	if (completed || d.stop == llm.StopLength) && d.ocTerminalOutput(r.GetArray("output"), completed) {
		return nil
	}
	d.finish()
	return nil
}

// ocChatReasoningShown: the completions transport's usage carries
// reasoningTokens when the chunk's usage reports a number of them (each
// usage replaces the last).
func (d *Decoder) ocChatReasoningShown(reported bool) {
	if !d.opts.OpenClaw {
		return
	}
	d.uReasonShown = llm.ReasoningHidden
	if reported {
		d.uReasonShown = llm.ReasoningBeforeTotal
	}
}

// ocChatTotal: the completions transport's total is the sum of its
// buckets as they are, so a negative output count makes it negative where
// the other profiles stop at 0.
func (d *Decoder) ocChatTotal() {
	if d.opts.OpenClaw {
		d.uTotalFloor = math.MinInt64
	}
}

// ocResponsesUsage applies mapResponsesTerminalUsage's rules over the
// plain reading: counts that are not non-negative numbers are 0, the total
// is the reported one when that is larger, and reasoningTokens follows it
// when reported.
func (d *Decoder) ocResponsesUsage(u *fastjson.Value) {
	count := func(keys ...string) int64 {
		x := u.Get(keys...)
		if x == nil || x.Type() != fastjson.TypeNumber {
			return 0
		}
		return max(getInt(x), 0)
	}
	d.uCacheRead = count("input_tokens_details", "cached_tokens")
	d.uCacheWrite = count("input_tokens_details", "cache_write_tokens")
	d.uIn = max(count("input_tokens")-d.uCacheRead-d.uCacheWrite, 0)
	d.uOut = count("output_tokens")
	d.uTotalFloor = count("total_tokens")
	d.uReasonShown = llm.ReasoningHidden
	if hasNumber(u.Get("output_tokens_details"), "reasoning_tokens") {
		d.uReasonShown = llm.ReasoningAfterTotal
	}
}

// ocAnthropicBadData: an Anthropic event's data was refused as JSON.
// @openclaw/ai skips "[DONE]" and JSON that is not an object (it has no
// type); data that is not JSON fails the turn (parseAnthropicSseEventData),
// a cut tail included. It reports whether the event was dealt with; an
// object refused for its members fails as before.
func (d *Decoder) ocAnthropicBadData(data []byte) bool {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	switch {
	case string(trimmed) == "[DONE]":
		return true
	case !jsParses(data):
		d.ocFail(MsgAnthropicFragment, d.cut, true)
		return true
	}
	return len(trimmed) > 0 && trimmed[0] != '{' // valid JSON: skipped unless an object
}

// ocAnthropicEOF: the body ended without message_stop and without a stop
// reason.
func (d *Decoder) ocAnthropicEOF() {
	if d.hasOpenToolCall() {
		d.ocFail(MsgAnthropicIncompleteCall, true, true)
		return
	}
	if !d.oc.sawStart && len(d.msg.Content) == 0 {
		// @openclaw/ai checks for a terminal event only in a stream that
		// began: one with a message_start or a content block. An empty
		// body, or one of pings only, ends as a stop with no content.
		d.finish()
		return
	}
	d.ocFail(MsgAnthropicNoTerminal, true, true)
}

func (d *Decoder) hasOpenToolCall() bool {
	for i := range d.slots {
		if d.slots[i].kind == llm.BlockToolCall {
			return true
		}
	}
	return false
}

// ocChatToolCall applies one tool_calls element as @openclaw/ai's
// completions transport does: the block of its index, else of its id,
// else a new one; a block is never split. A new id replaces the block's
// id and the arguments append to the same buffer; a name replaces the
// block's name.
func (d *Decoder) ocChatToolCall(choice int32, hasIndex bool, index int64, id, name, args []byte) error {
	d.ocFlushTags() // before the call: the text it settles precedes it
	d.oc.sawNative = true
	d.oc.tagUpTo = len(d.msg.Content)
	si := -1
	if hasIndex {
		si = d.findSlot(choice, index, llm.BlockToolCall)
	}
	if si < 0 && len(id) > 0 {
		for i := range d.slots {
			s := &d.slots[i]
			if s.choice == choice && s.kind == llm.BlockToolCall && bytes.Equal(d.msg.Content[s.ci].ID, id) {
				si = i
				break
			}
		}
	}
	if si < 0 {
		key := index
		if !hasIndex {
			d.oc.nextKey--
			key = -1<<32 + d.oc.nextKey
		}
		d.closeProse(choice, -1)
		d.oc.postCI = 0 // a new call appends the queue first
		si = d.open(choice, key, llm.BlockToolCall)
	}
	b := &d.msg.Content[d.slots[si].ci]
	if len(id) > 0 {
		if err := d.setField(&b.ID, id); err != nil {
			return err
		}
	}
	if len(name) > 0 {
		if err := d.setField(&b.Name, name); err != nil {
			return err
		}
	}
	if len(args) > 0 {
		return d.appendArgs(si, args)
	}
	return nil
}

// ocItem is an output item @openclaw/ai's Responses transport tracks: by
// its output index when the event had one, and by its identity.
type ocItem struct {
	index   int64
	indexed bool
	done    bool // its output_item.done arrived
	typ     uint8
	callID  []byte
	id      []byte
}

// Output item types, as the tracker tells them apart.
const (
	ocItemCall uint8 = 1 + iota
	ocItemMessage
	ocItemReasoning
	ocItemCompaction
	ocItemOther
)

// ocItemKind is an output item's type as the decoder dispatches on it:
// @openclaw/ai's Responses transport streams function calls only, so with
// its rules a custom tool call (a freeform input, xAI's server-side
// searches) is an item like any other, not a tool call.
func ocItemKind(item *fastjson.Value, openclaw bool) []byte {
	t := item.GetStringBytes("type")
	if openclaw && string(t) == "custom_tool_call" {
		return nil
	}
	return t
}

func ocItemType(item *fastjson.Value) uint8 {
	switch string(item.GetStringBytes("type")) {
	case "function_call":
		return ocItemCall
	case "message":
		return ocItemMessage
	case "reasoning":
		return ocItemReasoning
	case "compaction":
		return ocItemCompaction
	}
	return ocItemOther
}

// ocItemConflict fails the stream when an output item reuses the output
// index of an earlier item of another type or call id
// (ResponsesOutputIdentityError). Only indexed items are compared.
func (d *Decoder) ocItemConflict(v, item *fastjson.Value, oi int64) bool {
	if d.ocConflicts(v, item, oi) {
		d.ocFail("Responses stream changed output item identity", false, false)
		return true
	}
	return false
}

// ocConflicts is ocItemConflict's test alone. The transport checks the
// identity of reasoning, message and function-call items only.
func (d *Decoder) ocConflicts(v, item *fastjson.Value, oi int64) bool {
	typ, callID := ocItemType(item), item.GetStringBytes("call_id")
	if !hasOutputIndex(v) || typ != ocItemCall && typ != ocItemMessage && typ != ocItemReasoning {
		return false
	}
	for i := range d.oc.items {
		o := &d.oc.items[i]
		if !o.indexed || o.index != oi {
			continue
		}
		return o.typ != typ || len(o.callID) > 0 && len(callID) > 0 && !bytes.Equal(o.callID, callID)
	}
	return false
}

// ocTrackItem records an output item's identity, by its output index when
// the event has one; done marks its output_item.done.
func (d *Decoder) ocTrackItem(v, item *fastjson.Value, oi int64, done bool) {
	d.ocTrack(ocItemType(item), item.GetStringBytes("call_id"), item.GetStringBytes("id"), oi, hasOutputIndex(v), done)
}

func (d *Decoder) ocTrack(typ uint8, callID, id []byte, oi int64, indexed, done bool) {
	if d.state >= stateFinished || typ == ocItemOther || typ == ocItemCompaction {
		// The output tracker records the items that make blocks only:
		// reasoning, messages and function calls.
		return
	}
	o := d.ocFindItem(typ, callID, id, oi, indexed)
	if o == nil {
		if len(d.oc.items) < cap(d.oc.items) {
			d.oc.items = d.oc.items[:len(d.oc.items)+1]
		} else {
			d.oc.items = append(d.oc.items, ocItem{})
		}
		o = &d.oc.items[len(d.oc.items)-1]
		o.index, o.indexed, o.done, o.typ = oi, indexed, false, typ
		o.callID, o.id = o.callID[:0], o.id[:0]
	}
	if len(callID) > 0 {
		o.callID = append(o.callID[:0], callID...)
	}
	if len(id) > 0 {
		o.id = append(o.id[:0], id...)
	}
	o.done = o.done || done
}

// ocFindItem is the output tracker's lookup: the item seen at output index
// oi (when there is one), else the item of the same identity: a reasoning
// or message item by its id, a function call by its call_id, else its id.
func (d *Decoder) ocFindItem(typ uint8, callID, id []byte, oi int64, indexed bool) *ocItem {
	if indexed {
		for i := range d.oc.items {
			if o := &d.oc.items[i]; o.indexed && o.index == oi {
				return o
			}
		}
	}
	key := id
	switch typ {
	case ocItemCall:
		if len(callID) > 0 {
			key = callID
		}
	case ocItemMessage, ocItemReasoning:
	default:
		return nil
	}
	if len(key) == 0 {
		return nil
	}
	for i := range d.oc.items {
		o := &d.oc.items[i]
		if o.typ != typ || indexed && o.indexed && o.index != oi {
			continue
		}
		k := o.id
		if typ == ocItemCall && len(o.callID) > 0 {
			k = o.callID
		}
		if bytes.Equal(k, key) {
			return o
		}
	}
	return nil
}

func hasOutputIndex(v *fastjson.Value) bool {
	_, ok := ocOutputIndex(v)
	return ok
}

// ocRefusalMessage is formatAnthropicRefusalMessage: "Anthropic refusal",
// then " (category: C)" and ": EXPLANATION" or "." (trimmed, when not
// blank).
func ocRefusalMessage(details *fastjson.Value) string {
	var cat, ex []byte
	if details != nil && details.Type() == fastjson.TypeObject {
		cat = jsTrim(details.GetStringBytes("category"))
		ex = jsTrim(details.GetStringBytes("explanation"))
	}
	msg := "Anthropic refusal"
	if len(cat) > 0 {
		msg += " (category: " + string(cat) + ")"
	}
	if len(ex) > 0 {
		return msg + ": " + string(ex)
	}
	return msg + "."
}

// ocResponsesFailed is normalizeResponsesFailedEvent's message.
func ocResponsesFailed(r *fastjson.Value) string {
	if e := r.Get("error"); e != nil && e.Type() == fastjson.TypeObject {
		code, msg := jsTrim(e.GetStringBytes("code")), jsTrim(e.GetStringBytes("message"))
		if len(code) > 0 || len(msg) > 0 {
			if len(code) == 0 {
				code = []byte("unknown")
			}
			if len(msg) == 0 {
				msg = []byte("no message")
			}
			return string(code) + ": " + string(msg)
		}
	}
	if reason := r.GetStringBytes("incomplete_details", "reason"); len(reason) > 0 {
		return "incomplete: " + string(reason)
	}
	return "Unknown error (no error details in response)"
}

// Messages of the terminal-output rules of @openclaw/ai's Responses
// transport.
const (
	msgResponsesRepeatedCall = "Responses stream repeated a terminal tool-call identity"
	msgResponsesIncomplete   = "Responses stream completed with an incomplete terminal tool call"
	msgResponsesOmitted      = "Responses stream omitted an output item before completed output"
)

// ocTerminalOutput applies what @openclaw/ai's Responses transport takes from
// the terminal response's output list (prepareTerminalToolCalls, then
// recoverTerminalOutput), calls saying whether its function calls count
// (response.completed; a response.incomplete cut by length recovers text
// only). Every function call listed and not yet done must be valid, and
// every tool call still open must be listed; an item never streamed may not
// come before one that was; then each message and function call not yet
// done is finished from the list, in order: a started text takes the
// listed text (its delta when that extends it), an unseen message with text
// becomes a block, a function call takes the listed arguments. It reports
// whether the turn failed.
func (d *Decoder) ocTerminalOutput(items []*fastjson.Value, calls bool) bool {
	if calls {
		matched := 0
		for i, it := range items {
			if ocItemType(it) != ocItemCall {
				continue
			}
			callID := it.GetStringBytes("call_id")
			for _, prev := range items[:i] {
				if len(callID) > 0 && ocItemType(prev) == ocItemCall && bytes.Equal(prev.GetStringBytes("call_id"), callID) {
					d.ocFail(msgResponsesRepeatedCall, false, false)
					return true
				}
			}
			o := d.ocFindItem(ocItemCall, callID, it.GetStringBytes("id"), int64(i), true)
			if o != nil && o.done {
				continue
			}
			si := d.ocTerminalCallSlot(it, int64(i))
			if msg := d.ocTerminalCallError(it, si, o != nil); msg != "" {
				d.ocFail(msg, false, false)
				return true
			}
			if si >= 0 {
				matched++
			}
		}
		open := 0
		for i := range d.slots {
			if d.slots[i].kind == llm.BlockToolCall {
				open++
			}
		}
		if matched != open {
			d.ocFail(MsgResponsesUnresolved, false, false)
			return true
		}
	}
	later := false
	for i := len(items) - 1; i >= 0; i-- {
		it := items[i]
		typ := ocItemType(it)
		seen := d.ocFindItem(typ, it.GetStringBytes("call_id"), it.GetStringBytes("id"), int64(i), true) != nil
		switch {
		case typ == ocItemReasoning:
			later = later || seen
		case typ != ocItemCall && typ != ocItemMessage:
		case seen:
			later = true
		case typ == ocItemCall && !calls:
		case later:
			d.ocFail(msgResponsesOmitted, false, false)
			return true
		}
	}
	for i, it := range items {
		typ := ocItemType(it)
		if typ != ocItemMessage {
			d.oc.msg.last = 0
		}
		if typ != ocItemMessage && (typ != ocItemCall || !calls) {
			continue
		}
		if o := d.ocFindItem(typ, it.GetStringBytes("call_id"), it.GetStringBytes("id"), int64(i), true); o != nil && o.done {
			continue
		}
		var err error
		if typ == ocItemMessage {
			err = d.ocTerminalText(it, int64(i))
		} else {
			err = d.ocTerminalCall(it, int64(i))
		}
		if err != nil {
			d.fail(err)
			return true
		}
	}
	return false
}

// ocTerminalCallSlot is the open tool call a listed function call finishes:
// the one at its output index, else the one of its item id.
func (d *Decoder) ocTerminalCallSlot(it *fastjson.Value, oi int64) int {
	if si := d.findSlot(0, oi, llm.BlockToolCall); si >= 0 {
		return si
	}
	if id := it.GetStringBytes("id"); len(id) > 0 {
		for i := range d.slots {
			if s := &d.slots[i]; s.kind == llm.BlockToolCall && itemIDOf(d.msg.Content[s.ci].ID, id) {
				return i
			}
		}
	}
	return -1
}

// ocTerminalCallError is resolveCompletedResponsesToolCall's verdict on a
// listed function call (with the open call si finishes, if any): "" when it
// may run.
func (d *Decoder) ocTerminalCallError(it *fastjson.Value, si int, tracked bool) string {
	if tracked && si < 0 {
		return MsgResponsesUnresolved
	}
	if ocIncompleteItem(it) {
		return msgResponsesIncomplete
	}
	var streamed []byte
	if si >= 0 {
		streamed = jsTrim(d.msg.Content[d.slots[si].ci].Name)
	}
	completed := jsTrim(it.GetStringBytes("name"))
	switch {
	case len(streamed) > 0 && len(completed) > 0 && !bytes.Equal(streamed, completed):
		return msgResponsesChangedNamePrefix + string(streamed) + " to " + string(completed)
	case len(streamed) == 0 && len(completed) == 0:
		return MsgResponsesNoName
	}
	if a := it.Get("arguments"); a == nil || a.Type() != fastjson.TypeString || !jsonObject(it.GetStringBytes("arguments")) {
		return MsgResponsesInvalidArgs
	}
	return ""
}

// ocTerminalCall finishes a listed function call: the open call it matches,
// else a new block, with the listed identity and arguments.
func (d *Decoder) ocTerminalCall(it *fastjson.Value, oi int64) error {
	si := d.ocTerminalCallSlot(it, oi)
	if si < 0 {
		si = d.open(0, oi, llm.BlockToolCall)
	}
	if err := d.setToolIdentity(si, it); err != nil {
		return err
	}
	// The listed arguments replace what streamed, with no delta: the call
	// ends with them.
	args := it.GetStringBytes("arguments")
	if !d.validText(args) {
		return d.badUTF8(args)
	}
	if len(args) > d.opts.MaxArgBytes {
		return &LimitError{What: "tool-call arguments", Limit: d.opts.MaxArgBytes}
	}
	b := &d.msg.Content[d.slots[si].ci]
	b.RawArgs = append(b.RawArgs[:0], args...)
	d.closeSlot(si)
	return nil
}

// ocTerminalText finishes a listed message: its text is its listed text;
// a started block takes it (with the delta, when it extends what
// streamed), else it extends the last text block as a message's done
// would, else it becomes a new block when it is not empty.
func (d *Decoder) ocTerminalText(it *fastjson.Value, oi int64) error {
	n := len(d.side)
	d.side = appendMessageText(d.side, it)
	text := d.side[n:]
	defer func() { d.side = d.side[:n] }()
	si := d.findSlot(0, textKey(oi, 0), llm.BlockText)
	if si < 0 && len(text) == 0 {
		return nil
	}
	if !d.validText(text) {
		return d.badUTF8(text)
	}
	id := it.GetStringBytes("id")
	phase, has := itemPhase(it)
	if si < 0 && d.ocExtendLast(text, id, phase, has) {
		return nil
	}
	started := si >= 0
	if !started {
		si = d.open(0, textKey(oi, 0), llm.BlockText)
	}
	b := &d.msg.Content[d.slots[si].ci]
	if started && len(text) > len(b.Text) && bytes.HasPrefix(text, b.Text) {
		if err := d.appendText(si, text[len(b.Text):]); err != nil {
			return err
		}
	} else {
		b.Text = append(b.Text[:0], text...)
	}
	ocSetSignature(b, id, phase)
	d.ocSetLast(d.slots[si].ci, phase, has)
	d.closeSlot(si)
	return nil
}

// jsTruthy is JavaScript's truthiness of a JSON value (an absent one,
// nil, is undefined: false).
func jsTruthy(v *fastjson.Value) bool {
	if v == nil {
		return false
	}
	switch v.Type() {
	case fastjson.TypeString:
		s, _ := v.StringBytes()
		return len(s) > 0
	case fastjson.TypeNumber:
		return v.GetFloat64() != 0
	case fastjson.TypeTrue, fastjson.TypeObject, fastjson.TypeArray:
		return true
	}
	return false
}

// ocAnthropicOrphanText applies a text delta that no started block takes as
// @openclaw/ai's transport does: it starts a text block, which later events
// of the same index reach; a delta without an index starts a block of its
// own that nothing else reaches (and that never ends).
func (d *Decoder) ocAnthropicOrphanText(index int64, indexed bool, text []byte) error {
	if !indexed {
		index = int64(len(d.msg.Content)) // the block's position is its index
	}
	si := d.anthropicOpen(index, llm.BlockText)
	err := d.appendText(si, text)
	if !indexed {
		d.slots = append(d.slots[:si], d.slots[si+1:]...)
		d.slotGen++
	}
	return err
}

func hasNumber(v *fastjson.Value, key string) bool {
	x := v.Get(key)
	return x != nil && x.Type() == fastjson.TypeNumber
}

// ocAnthropicCacheWrite1h: @openclaw/ai's usage carries cacheWrite1h from
// an object cache_creation's ephemeral_1h_input_tokens, when that is a
// non-negative number; an absent one leaves the last value.
func (d *Decoder) ocAnthropicCacheWrite1h(u *fastjson.Value) {
	cc := u.Get("cache_creation")
	if cc == nil || cc.Type() != fastjson.TypeObject {
		return
	}
	if n, ok := ocCount(cc.Get("ephemeral_1h_input_tokens")); ok {
		d.oc.cw1h, d.oc.cw1hShown = n, true
	}
}

// ocCount is asNonNegativeFiniteNumber.
func ocCount(v *fastjson.Value) (int64, bool) {
	if v == nil || v.Type() != fastjson.TypeNumber {
		return 0, false
	}
	f := v.GetFloat64()
	if f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return int64(f), true
}

// ocAnthropicBilledIterations is readAnthropicCompactionBilledUsage: when a
// message_delta's usage.iterations (every one an object with the four
// counts non-negative) holds a compaction, the usage is their sums and
// cacheWrite1h theirs. It reports whether it applied.
func (d *Decoder) ocAnthropicBilledIterations(u *fastjson.Value) bool {
	it := u.Get("iterations")
	if it == nil || it.Type() != fastjson.TypeArray {
		return false
	}
	arr, _ := it.Array()
	if len(arr) == 0 {
		return false
	}
	var in, out, cr, cw, cw1h int64
	compaction := false
	for _, r := range arr {
		if r.Type() != fastjson.TypeObject {
			return false
		}
		a, ok1 := ocCount(r.Get("input_tokens"))
		b, ok2 := ocCount(r.Get("output_tokens"))
		c, ok3 := ocCount(r.Get("cache_read_input_tokens"))
		w, ok4 := ocCount(r.Get("cache_creation_input_tokens"))
		if !ok1 || !ok2 || !ok3 || !ok4 {
			return false
		}
		compaction = compaction || string(r.GetStringBytes("type")) == "compaction"
		in, out, cr, cw = in+a, out+b, cr+c, cw+w
		if cc := r.Get("cache_creation"); cc != nil && cc.Type() == fastjson.TypeObject {
			if h, ok := ocCount(cc.Get("ephemeral_1h_input_tokens")); ok {
				cw1h += h
			}
		}
	}
	if !compaction {
		return false
	}
	d.uIn, d.uOut, d.uCacheRead, d.uCacheWrite = in, out, cr, cw
	d.oc.cw1h, d.oc.cw1hShown = cw1h, true
	return true
}

// ocBackfillReasoning is backfillReasoning at the terminal event: a
// reasoning item of the response's output with encrypted content gives it
// to the thinking block of the same item (its thinkingSignature, when that
// has none) and marks the block for reasoning replay.
func (d *Decoder) ocBackfillReasoning(items []*fastjson.Value) {
	for _, it := range items {
		if ocItemType(it) != ocItemReasoning || !jsTruthy(it.Get("encrypted_content")) {
			continue
		}
		id := it.GetStringBytes("id")
		if len(id) == 0 {
			continue
		}
		for i := range d.msg.Content {
			b := &d.msg.Content[i]
			if b.Type != llm.BlockThinking || len(b.Signature) == 0 {
				continue
			}
			stored, err := fastjson.ParseBytes(b.Signature)
			if err != nil || stored.Type() != fastjson.TypeObject || !bytes.Equal(stored.GetStringBytes("id"), id) {
				continue
			}
			if !jsTruthy(stored.Get("encrypted_content")) {
				// {...stored, encrypted_content}: replaced in place when
				// present (falsy), else added last
				o, _ := stored.Object()
				o.Set("encrypted_content", it.Get("encrypted_content"))
				b.Signature = llm.AppendJSONValue(b.Signature[:0], stored)
			}
			b.ReplayMarked = true
			break
		}
	}
}

// ReplayBaseURL is the endpoint a replayed recording is taken to come from
// (ocbench replay and the fuzzer's differential runs): OpenClaw's Responses
// reasoning replay marker names it by hash.
const ReplayBaseURL = "http://127.0.0.1/v1"

// ocReasoningDetails is readOpenAICompletionsReasoningBatch's first rule:
// a delta's reasoning_details entries of type "reasoning.text" with text
// are its reasoning (a thinking block signed "reasoning_details"), and the
// plain reasoning fields are then not read. It reports whether any was.
func (d *Decoder) ocReasoningDetails(choice int32, rd *fastjson.Value) (bool, error) {
	if rd == nil || rd.Type() != fastjson.TypeArray {
		return false, nil
	}
	arr, _ := rd.Array()
	used := false
	for _, it := range arr {
		if it.Type() != fastjson.TypeObject || string(it.GetStringBytes("type")) != "reasoning.text" {
			continue
		}
		t := it.Get("text")
		if t == nil || t.Type() != fastjson.TypeString {
			continue
		}
		s, _ := t.StringBytes()
		if len(s) == 0 {
			continue
		}
		used = true
		if err := d.chatThinking(choice, "reasoning_details", s); err != nil {
			return true, err
		}
	}
	return used, nil
}

// ocWhole reports whether data holds one JSON value from i on. With the
// OpenClaw rules an event is JSON.parse'd whole before any of it counts;
// the one-pass scans apply members as they validate them, so an event
// that turns out malformed further on is refused before they start.
func ocWhole(data []byte, i int) bool {
	e := skipValue(data, i)
	return e >= 0 && skipWS(data, e) == len(data)
}
