package provider

import (
	"bytes"
	"reflect"
	"sync"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/ocbench/ocbench/llm"
)

// This file is @openclaw/ai's reasoning-tag text partitioner, which its
// completions transport runs every content delta through: reasoning tags
// in the visible text (<think>…</think> and the other names below) are
// taken out, except inside Markdown code, and text that the tags or code
// could still claim is held until it is settled. Held text is flushed
// when a tool call or a reasoning delta arrives and at the normal end; a
// stream that fails loses it. What it emits is what the final message
// holds, so it is ported step by step, quirks included: it decides when
// to run a full Markdown parse (at most once per block between blank
// lines) and that changes what a failed stream keeps.
//
// Offsets are byte offsets; every character the partitioner looks for is
// ASCII, so they split the text where the transport's UTF-16 offsets do.

// ocChatText runs a content delta through the partitioner and appends
// what it settles.
func (d *Decoder) ocChatText(choice int32, s []byte) error {
	if !d.validText(s) {
		return d.badUTF8(s)
	}
	d.ocChatVisible(choice, d.oc.tags.push(s))
	return nil
}

// ocChatVisible appends settled visible text to the choice's text block,
// opening one when needed.
func (d *Decoder) ocChatVisible(choice int32, vis []byte) {
	if len(vis) == 0 {
		return
	}
	si := d.findSlot(choice, keyText, llm.BlockText)
	if si < 0 {
		d.closeProse(choice, keyText)
		si = d.open(choice, keyText, llm.BlockText)
	}
	ci := int(d.slots[si].ci)
	b := &d.msg.Content[ci]
	n := len(b.Text)
	d.ocQueued(ci, n)
	b.Text = append(b.Text, vis...)
	if d.oc.interrupted > 0 && len(jsTrim(vis)) > 0 {
		d.oc.confirmed, d.oc.interrupted = d.oc.interrupted, 0
	}
	// The delta is the block's own bytes: vis is reused by the next push.
	d.push(llm.EventTextDelta, ci, b.Text[n:len(b.Text):len(b.Text)])
}

// ocFlushTags settles what the partitioner holds (a tool call, a
// reasoning delta and the normal end flush it).
func (d *Decoder) ocFlushTags() {
	d.ocChatVisible(0, d.oc.tags.flush())
}

// ocBeginReasoning is the transport's beginReasoning for a reasoning
// delta: the partitioner turns strict, and what it holds is settled into
// the text block before the reasoning, unless content follows in the same
// delta while a tag or code span is still open.
func (d *Decoder) ocBeginReasoning(choice int32) error {
	d.oc.tags.markStrict()
	if d.oc.textFollows && d.oc.tags.hasPendingSyntax() {
		return nil
	}
	// sealTextBeforeReasoning: only with a text block open or text held;
	// the open text block ends, and when it has visible text it is the
	// text that reasoning interrupted.
	if d.findSlot(choice, keyText, llm.BlockText) < 0 && !d.oc.tags.hasPending() {
		return nil
	}
	d.ocFlushTags()
	if d.oc.sawNative {
		// After a tool call the transport's current block stays the call:
		// text is queued, and the queue's text deltas join into one block.
		return nil
	}
	if si := d.findSlot(choice, keyText, llm.BlockText); si >= 0 {
		ci := int(d.slots[si].ci)
		if len(jsTrim(d.msg.Content[ci].Text)) > 0 {
			d.oc.interrupted = ci + 1
		}
		d.closeSlot(si)
	}
	return nil
}

// ocTagInterrupted is the end of a chat turn that stops (not for tool use)
// after reasoning interrupted visible text that more visible text then
// followed: the text blocks before the first visible one after the
// interrupted block are commentary, it and the later ones the final
// answer (tagInterruptedTextPhases). Text before the last tool call holds
// its provisional commentary tag meanwhile (it counts in the numbering)
// and loses it after, as clearPendingCommentaryText does.
func (d *Decoder) ocTagInterrupted() {
	c := d.msg.Content
	from := d.oc.confirmed - 1
	final := -1
	for i := from + 1; i < len(c); i++ {
		if c[i].Type == llm.BlockText && len(jsTrim(c[i].Text)) > 0 {
			final = i
			break
		}
	}
	if final < 0 {
		return
	}
	var provisional uint64 // text blocks before the last tool call (64 at most are tracked)
	for i := 0; i < d.oc.tagUpTo && i < 64; i++ {
		if b := &c[i]; b.Type == llm.BlockText && len(b.Signature) == 0 && len(jsTrim(b.Text)) > 0 {
			provisional |= 1 << i
		}
	}
	d.ocTagCommentary(d.oc.tagUpTo)
	d.ocTagPhase(0, final, final, "commentary", "commentary")
	d.ocTagPhase(final, len(c), len(c), "final-answer", "final_answer")
	for i := range min(len(c), 64) {
		if provisional&(1<<i) != 0 {
			c[i].Signature = c[i].Signature[:0]
		}
	}
}

// ocReasoningTagNames are the tag names taken out (lower-cased).
var ocReasoningTagNames = [...]string{
	"think", "thinking", "thought", "reasoning", "internal", "antthinking",
	"antml:think", "antml:thinking", "antml:thought", "antml:reasoning",
	"mm:think", "mm:thinking", "mm:thought", "mm:reasoning",
}

func ocKnownTagName(name []byte) bool {
	for _, n := range ocReasoningTagNames {
		if len(n) == len(name) && asciiEqualFold(name, n) {
			return true
		}
	}
	return false
}

// ocTagNamePrefix reports whether some known name starts with name.
func ocTagNamePrefix(name []byte) bool {
	for _, n := range ocReasoningTagNames {
		if len(name) <= len(n) && asciiEqualFold(name, n[:len(name)]) {
			return true
		}
	}
	return false
}

func asciiEqualFold(b []byte, s string) bool {
	for i := range b {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

func ocTagNameChar(c byte) bool {
	return '0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || c == ':'
}

// ocTagSpace is JavaScript's /\s/u on the rune at b[i]; it returns the
// rune's width, or 0 when it is not white space.
func ocTagSpace(b []byte, i int) int {
	c := b[i]
	if c < utf8.RuneSelf {
		if c == ' ' || '\t' <= c && c <= '\r' {
			return 1
		}
		return 0
	}
	r, n := utf8.DecodeRune(b[i:])
	if llm.IsJSSpace(r) {
		return n
	}
	return 0
}

func ocSkipTagSpace(b []byte, i int) int {
	for i < len(b) {
		n := ocTagSpace(b, i)
		if n == 0 {
			break
		}
		i += n
	}
	return i
}

type ocTag struct {
	index, end                     int
	isClose, selfClosing, private_ bool
}

const (
	ocTagInvalid = iota
	ocTagPending
	ocTagFound
)

// ocParseTagAt is parseReasoningTagAt: a known tag at text[start] ('<'),
// a tag that more text could complete (not final), or not a tag (next is
// where to look again).
func ocParseTagAt(text []byte, start int, final bool) (kind int, tag ocTag, next int) {
	invalid := func() (int, ocTag, int) {
		if j := bytes.IndexByte(text[start+1:], '<'); j >= 0 {
			return ocTagInvalid, ocTag{}, start + 1 + j
		}
		return ocTagInvalid, ocTag{}, len(text)
	}
	cur := ocSkipTagSpace(text, start+1)
	isClose := false
	if cur < len(text) && text[cur] == '/' {
		isClose = true
		cur = ocSkipTagSpace(text, cur+1)
	}
	nameStart := cur
	for cur < len(text) && ocTagNameChar(text[cur]) {
		cur++
	}
	name := text[nameStart:cur]
	if len(name) == 0 {
		if cur == len(text) && !final {
			return ocTagPending, ocTag{}, 0
		}
		return invalid()
	}
	if !ocKnownTagName(name) {
		if cur == len(text) && !final && ocTagNamePrefix(name) {
			return ocTagPending, ocTag{}, 0
		}
		return invalid()
	}
	if cur == len(text) {
		if final {
			return invalid()
		}
		return ocTagPending, ocTag{}, 0
	}
	if b := text[cur]; b != '/' && b != '>' && ocTagSpace(text, cur) == 0 {
		return invalid()
	}
	private_ := len(name) == len("internal") && asciiEqualFold(name, "internal")
	var quote, last byte
	for ; cur < len(text); cur++ {
		c := text[cur]
		if quote != 0 {
			if c == quote {
				quote = 0
			}
			continue
		}
		switch c {
		case '"', '\'':
			quote = c
			continue
		case '<':
			return invalid()
		case '>':
			return ocTagFound, ocTag{index: start, end: cur + 1, isClose: isClose,
				selfClosing: !isClose && last == '/', private_: private_}, 0
		}
		if n := ocTagSpace(text, cur); n == 0 {
			last = c
		} else {
			cur += n - 1
		}
	}
	if final {
		return invalid()
	}
	return ocTagPending, ocTag{}, 0
}

// ocScanTags is scanReasoningTags: the tags of text, and where a tag that
// more text could complete starts (-1 none). Offsets are added to base.
func ocScanTags(text []byte, final bool, tags []ocTag, base int) ([]ocTag, int) {
	cur := 0
	for cur < len(text) {
		j := bytes.IndexByte(text[cur:], '<')
		if j < 0 {
			break
		}
		start := cur + j
		kind, tag, next := ocParseTagAt(text, start, final)
		switch kind {
		case ocTagFound:
			tag.index += base
			tag.end += base
			tags = append(tags, tag)
			cur = tag.end - base
		case ocTagPending:
			return tags, base + start
		default:
			cur = next
		}
	}
	return tags, -1
}

// ocHasCloseTag reports whether scanReasoningTags finds a close tag in text.
func ocHasCloseTag(text []byte, final bool) bool {
	for cur := 0; cur < len(text); {
		j := bytes.IndexByte(text[cur:], '<')
		if j < 0 {
			return false
		}
		kind, tag, next := ocParseTagAt(text, cur+j, final)
		switch kind {
		case ocTagFound:
			if tag.isClose {
				return true
			}
			cur = tag.end
		case ocTagPending:
			return false
		default:
			cur = next
		}
	}
	return false
}

// ocTagNameStatus is reasoningTagNameStatus of the text from a '<'.
func ocTagNameStatus(text []byte) int {
	cur := ocSkipTagSpace(text, 1)
	if cur < len(text) && text[cur] == '/' {
		cur = ocSkipTagSpace(text, cur+1)
	}
	start := cur
	for cur < len(text) && ocTagNameChar(text[cur]) {
		cur++
	}
	name := text[start:cur]
	switch {
	case len(name) == 0:
		if cur == len(text) {
			return ocNamePartial
		}
		return ocNameInvalid
	case !ocKnownTagName(name):
		if cur == len(text) && ocTagNamePrefix(name) {
			return ocNamePartial
		}
		return ocNameInvalid
	case cur == len(text):
		return ocNamePartial
	}
	if b := text[cur]; b == '/' || b == '>' || ocTagSpace(text, cur) > 0 {
		return ocNameResolved
	}
	return ocNameInvalid
}

const (
	ocNamePartial = iota
	ocNameInvalid
	ocNameResolved
)

// ocTagProbe follows a tag that more text could complete.
type ocTagProbe struct {
	start, scannedThrough  int
	nameResolved, resolved bool
	quote                  rune
}

// advance is advancePendingTagProbe.
func (p *ocTagProbe) advance(text []byte) {
	for _, r := range string(text) {
		if p.quote != 0 {
			if r == p.quote {
				p.quote = 0
			}
			continue
		}
		switch r {
		case '"', '\'':
			p.quote = r
		case '>', '<':
			p.resolved = true
			return
		}
	}
}

// ocPendingReasoning is reasoning opened and not closed yet.
type ocPendingReasoning struct {
	content         []byte
	openTag         []byte
	containsPrivate bool
	protectedClose  bool
	visibleBefore   bool
}

// ocReduction is the state reduceReasoningText carries across calls.
type ocReduction struct {
	depth       int
	visibleEver bool
	pending     *ocPendingReasoning
	pend        ocPendingReasoning // pending's storage
	tags        []ocTag
}

const (
	ocModeVisible = iota // pushVisible: a stray close tag stays as text
	ocModeHide           // strict: a stray close tag discards the text before it
)

// reduce is reduceReasoningText with scope "all": it appends to out the
// visible text of text[start:], where tags inside code (spans) do not
// count, and returns out.
func (st *ocReduction) reduce(out []byte, text []byte, spans [][2]int, mode int, final bool, start int) []byte {
	base := len(out) // the hide mode drops what this call emitted
	emit := func(v []byte) {
		if len(v) == 0 {
			return
		}
		out = append(out, v...)
		if len(jsTrim(v)) > 0 {
			st.visibleEver = true
		}
	}
	appendText := func(v []byte) {
		if len(v) == 0 {
			return
		}
		if st.depth > 0 && st.pending != nil {
			st.pending.content = append(st.pending.content, v...)
			if !st.pending.protectedClose && ocHasCloseTag(v, true) {
				st.pending.protectedClose = true
			}
			return
		}
		emit(v)
	}
	tags, _ := ocScanTags(text[start:], final, st.tags[:0], start)
	n := 0
	for _, t := range tags {
		if !ocInsideCode(t.index, spans) {
			tags[n] = t
			n++
		}
	}
	tags = tags[:n]
	cursor := start
	for _, tag := range tags {
		before := text[cursor:tag.index]
		appendText(before)
		switch {
		case tag.selfClosing:
		case !tag.isClose:
			if st.depth == 0 {
				st.pend = ocPendingReasoning{content: st.pend.content[:0], openTag: append(st.pend.openTag[:0], text[tag.index:tag.end]...),
					containsPrivate: tag.private_, visibleBefore: st.visibleEver}
				st.pending = &st.pend
			} else if st.pending != nil {
				st.pending.containsPrivate = st.pending.containsPrivate || tag.private_
			}
			st.depth++
		case st.depth > 0:
			st.depth--
			if st.depth == 0 && st.pending != nil {
				// a closed reasoning block: thinking, which the caller drops
				st.pending = nil
			} else if st.pending != nil {
				st.pending.protectedClose = true
			}
		case mode == ocModeVisible:
			appendText(text[tag.index:tag.end])
		default:
			if len(jsTrim(before)) > 0 && len(jsTrim(text[tag.end:])) > 0 {
				out = out[:base] // keep only the thinking, which is not text
				st.visibleEver = false
			}
		}
		cursor = tag.end
	}
	appendText(text[cursor:])
	st.tags = tags[:0]
	if final && st.depth > 0 && st.pending != nil {
		p := st.pending
		if !p.containsPrivate && mode == ocModeVisible && !p.protectedClose {
			if p.visibleBefore {
				emit(p.openTag)
			}
			emit(p.content)
		}
		st.depth = 0
		st.pending = nil
	}
	return out
}

// ocInsideCode reports whether i is inside one of the sorted spans.
func ocInsideCode(i int, spans [][2]int) bool {
	lo, hi := 0, len(spans)-1
	for lo <= hi {
		m := (lo + hi) / 2
		switch s := spans[m]; {
		case i < s[0]:
			hi = m - 1
		case i >= s[1]:
			lo = m + 1
		default:
			return true
		}
	}
	return false
}

// ocPartitioner is createReasoningTagTextPartitioner's state.
type ocPartitioner struct {
	red             ocReduction
	source          []byte
	endedBlankBlock bool
	blockStart      int
	emitted         int
	holdStart       int // -1: none
	heldBacktick    int // -1: none
	strict          bool
	probe           *ocTagProbe
	probeStore      ocTagProbe
	fastChecked     int
	fastCodeSafe    bool
	fullParses      int
	spans           [][2]int // the last non-final parse's code spans
	spansSet        bool
	spansEnd        int
	openEndedCode   bool
	retainStart     int
	closeReparsed   bool
	own             ocOwnership
	heldSpans       [][2]int
	out             []byte
}

func (p *ocPartitioner) reset() {
	red := p.red
	red.depth, red.visibleEver, red.pending = 0, false, nil
	*p = ocPartitioner{red: red, source: p.source[:0], holdStart: -1, heldBacktick: -1,
		spans: p.spans[:0], own: p.own, heldSpans: p.heldSpans[:0], out: p.out[:0]}
}

func (p *ocPartitioner) setProbe(start, scanned int, rest []byte) {
	p.probeStore = ocTagProbe{start: start, scannedThrough: scanned}
	p.probe = &p.probeStore
	p.probe.advance(rest)
}

func (p *ocPartitioner) mode() int {
	if p.strict {
		return ocModeHide
	}
	return ocModeVisible
}

// markStrict: after a reasoning delta, every visible delta is held until
// the next flush.
func (p *ocPartitioner) markStrict() {
	p.strict = true
	if p.holdStart < 0 {
		p.holdStart = p.emitted
	}
}

func (p *ocPartitioner) hasPending() bool {
	return p.holdStart >= 0 && p.holdStart < len(p.source) || p.red.depth > 0 || p.emitted < len(p.source)
}

func (p *ocPartitioner) hasPendingSyntax() bool {
	return p.probe != nil || p.heldBacktick >= 0 || p.red.depth > 0
}

// push adds visible content and returns the text it settles (valid until
// the next call).
func (p *ocPartitioner) push(chunk []byte) []byte { return p.consume(chunk, false) }

// flush settles everything held.
func (p *ocPartitioner) flush() []byte { return p.consume(nil, true) }

func (p *ocPartitioner) emitText(v []byte) {
	p.out = append(p.out, v...)
	if len(jsTrim(v)) > 0 {
		p.red.visibleEver = true
	}
}

func (p *ocPartitioner) compact(retainStart int) {
	retainStart = min(retainStart, len(p.source))
	n := copy(p.source, p.source[retainStart:])
	p.source = p.source[:n]
	p.endedBlankBlock = ocEndsBlankBlock(p.source)
	p.blockStart, p.emitted = n, n
	p.holdStart, p.heldBacktick, p.probe = -1, -1, nil
	p.fastChecked, p.fastCodeSafe, p.fullParses = 0, false, 0
	p.spans, p.spansSet, p.spansEnd = p.spans[:0], false, 0
	p.openEndedCode, p.retainStart, p.closeReparsed = false, 0, false
}

func hasLineEndOrTick(b []byte) bool { return bytes.IndexAny(b, "\r\n`") >= 0 }
func hasLineEnd(b []byte) bool       { return bytes.IndexAny(b, "\r\n") >= 0 }

// lastLineStart is the start of the line holding source[at-1] (JavaScript's
// lastIndexOf from max(0, at-1), plus one).
func lastLineStart(src []byte, at int) int {
	return bytes.LastIndexAny(src[:min(max(0, at-1)+1, len(src))], "\r\n") + 1
}

// emitSafePrefix settles source[emitted:limit] as far as no later text can
// change it.
func (p *ocPartitioner) emitSafePrefix(limit int) {
	src := p.source
	if p.strict {
		if p.holdStart < 0 {
			p.holdStart = p.emitted
		}
		return
	}
	if p.red.depth > 0 {
		if p.holdStart < 0 {
			p.holdStart = p.emitted
		}
		if !p.fastCodeSafe || hasLineEndOrTick(src[p.emitted:limit]) {
			return
		}
		_, pendingAt := ocScanTags(src[p.emitted:limit], false, p.red.tags[:0], p.emitted)
		end := limit
		if pendingAt >= 0 {
			end = pendingAt
		}
		p.out = p.red.reduce(p.out, src[:end], nil, ocModeVisible, false, p.emitted)
		p.emitted, p.fastChecked = end, end
		p.holdStart = -1
		if pendingAt >= 0 {
			p.setProbe(end, limit, src[end+1:limit])
		}
		if p.red.depth > 0 || pendingAt >= 0 {
			p.holdStart = p.emitted
		}
		return
	}
	if p.holdStart >= 0 || p.emitted >= limit {
		return
	}
	for p.emitted < limit && p.holdStart < 0 {
		special := -1
		if j := bytes.IndexAny(src[p.emitted:limit], "<`"); j >= 0 {
			special = p.emitted + j
		}
		end := limit
		if special >= 0 {
			end = special
		}
		if special >= 0 && src[special] == '`' {
			p.heldBacktick = special
			p.holdStart = p.emitted
			return
		}
		if end > p.emitted {
			p.emitText(src[p.emitted:end])
			p.emitted = end
		}
		if special < 0 {
			return
		}
		tail := src[special:limit]
		kind, _, _ := ocParseTagAt(tail, 0, false)
		if kind == ocTagInvalid {
			p.out = append(p.out, '<')
			p.red.visibleEver = true
			p.emitted = special + 1
			continue
		}
		p.holdStart = special
		if kind == ocTagPending {
			p.setProbe(special, limit, tail[1:])
			return
		}
		if hasLineEnd(src[p.blockStart:special]) {
			return
		}
		invalidated := hasLineEndOrTick(src[p.fastChecked:special])
		if !p.fastCodeSafe || invalidated {
			if p.fullParses >= 1 {
				return
			}
			p.fullParses++
			p.own.parse(src[:limit])
			p.spans = append(p.spans[:0], p.own.spans...)
			p.spansSet, p.spansEnd = true, limit
			p.openEndedCode = spanEndsAt(p.spans, limit)
			p.retainStart = p.own.retainStart
			p.fastCodeSafe = bytes.IndexByte(src[p.blockStart:special], '`') < 0 && !ocInsideCode(special, p.spans)
		}
		if !p.fastCodeSafe {
			return
		}
		safe := limit
		if j := bytes.IndexAny(src[special:limit], "`\r\n"); j >= 0 {
			safe = special + j
		}
		_, pendingAt := ocScanTags(src[special:safe], false, p.red.tags[:0], special)
		end = safe
		if pendingAt >= 0 {
			end = pendingAt
		}
		p.out = p.red.reduce(p.out, src[:end], nil, ocModeVisible, false, special)
		p.emitted, p.fastChecked = end, end
		p.holdStart = -1
		if pendingAt >= 0 {
			p.holdStart = end
			p.setProbe(end, limit, src[end+1:limit])
		} else if p.red.depth > 0 {
			p.holdStart = p.emitted
		}
	}
}

func spanEndsAt(spans [][2]int, end int) bool {
	for _, s := range spans {
		if s[1] == end {
			return true
		}
	}
	return false
}

// processBlock settles source[:end]; spans and retain are a parse of the
// source already made (spansOK), else it parses when it needs to.
func (p *ocPartitioner) processBlock(end int, final bool, spans [][2]int, spansOK bool, retain int) {
	prevBlockStart := p.blockStart
	finalizePending := func() {
		if final && p.red.depth > 0 {
			p.out = p.red.reduce(p.out, nil, nil, p.mode(), true, 0)
		}
	}
	if end <= p.blockStart {
		finalizePending()
		return
	}
	if end <= p.emitted {
		finalizePending()
		p.blockStart = end
		p.fastChecked = max(p.fastChecked, end)
		return
	}
	p.emitSafePrefix(end)
	src := p.source
	if p.holdStart >= 0 && p.holdStart < end {
		held := src[p.holdStart:end]
		if !final {
			if p.probe != nil && !p.probe.resolved {
				return
			}
			p.probe = nil
			if _, pendingAt := ocScanTags(held, false, p.red.tags[:0], 0); pendingAt >= 0 {
				p.setProbe(p.holdStart+pendingAt, end, held[pendingAt+1:])
				return
			}
		}
		if !spansOK {
			p.own.parse(src[:end])
			spans, retain, spansOK = p.own.spans, p.own.retainStart, true
		}
		p.out = p.red.reduce(p.out, src[:end], spans, p.mode(), final, p.holdStart)
		p.emitted = end
	} else if p.emitted < end {
		p.emitText(src[p.emitted:end])
		p.emitted = end
	}
	finalizePending()
	crossed := hasLineEnd(src[prevBlockStart:end])
	if ls := lastLineStart(src, end); crossed && ls < end {
		p.blockStart = ls
	} else {
		p.blockStart = end
	}
	p.holdStart = -1
	if p.strict || p.red.depth > 0 {
		p.holdStart = end
	}
	p.heldBacktick = -1
	if p.red.depth == 0 {
		p.closeReparsed = false
	}
	p.probe = nil
	p.fastChecked = end
	openEnded := spansOK && spanEndsAt(spans, len(src))
	p.fastCodeSafe = !final && !crossed && p.emitted == len(src) && !openEnded
	if !final && p.red.depth == 0 && p.emitted == len(src) && p.endedBlankBlock &&
		!ocContainerLine(src[min(retain, len(src)):]) && !openEnded {
		p.compact(retain)
	}
}

func (p *ocPartitioner) consume(appended []byte, final bool) []byte {
	p.out = p.out[:0]
	prevEnded := p.endedBlankBlock
	p.source = append(p.source, appended...)
	src := p.source
	if len(appended) > 0 {
		last := appended[len(appended)-1]
		p.endedBlankBlock = (last == '\n' || last == '\r') && ocEndsBlankBlock(src)
	}
	block := appended
	for len(block) > 0 && (block[0] == '\r' || block[0] == '\n') {
		block = block[1:]
	}
	startsTopLevel := prevEnded && len(block) > 0 && block[0] != '\t' && block[0] != ' ' && !ocContainerLine(block)
	if pr := p.probe; pr != nil && !pr.resolved {
		pr.advance(src[pr.scannedThrough:])
		pr.scannedThrough = len(src)
		if !pr.nameResolved {
			st := ocTagNameStatus(src[pr.start:])
			pr.nameResolved = st == ocNameResolved
			pr.resolved = pr.resolved || st == ocNameInvalid
		}
	}
	if p.probe != nil && p.probe.resolved && p.holdStart >= 0 {
		p.probe, p.holdStart, p.heldBacktick = nil, -1, -1
	}
	if final {
		p.processBlock(len(src), true, nil, false, 0)
		p.compact(len(p.source))
		return p.out
	}
	p.emitSafePrefix(len(src))
	if !p.strict && p.holdStart >= 0 && p.holdStart < len(src) {
		p.tryHeld(appended, startsTopLevel)
		src = p.source // processBlock may have compacted it
	}
	if p.holdStart < 0 && p.red.depth == 0 && p.emitted == len(src) && p.endedBlankBlock &&
		(!ocContainerLine(src[min(p.retainStart, len(src)):]) || startsTopLevel) && p.fullParses < 1 {
		p.fullParses++
		p.own.parse(src)
		p.retainStart = p.own.retainStart
		p.openEndedCode = spanEndsAt(p.own.spans, len(src))
		if !p.openEndedCode {
			p.compact(p.own.retainStart)
		}
	}
	return p.out
}

// tryHeld is consume's attempt to settle held text with a Markdown parse.
func (p *ocPartitioner) tryHeld(appended []byte, startsTopLevel bool) {
	src := p.source
	ownStart := p.holdStart
	heldBacktick := p.heldBacktick >= 0
	if heldBacktick {
		ownStart = p.heldBacktick
	}
	lineStart := lastLineStart(src, ownStart)
	lineEnd := ocNextLineEnd(src, ownStart)
	tablePending := false
	if le := lineEnd; bytes.IndexByte(src[lineStart:pick(le < 0, len(src), le)], '|') >= 0 {
		if le < 0 {
			tablePending = true
		} else {
			step := 1
			if src[le] == '\r' && le+1 < len(src) && src[le+1] == '\n' {
				step = 2
			}
			tablePending = ocNextLineEnd(src, le+step) < 0
		}
	}
	completedBlank := p.endedBlankBlock
	runEnd := ownStart
	for runEnd < len(src) && src[runEnd] == '`' {
		runEnd++
	}
	laterTick := !heldBacktick || bytes.IndexByte(src[runEnd:], '`') >= 0
	terminatedTail := !heldBacktick || src[len(src)-1] != '`'
	var try bool
	switch {
	case p.probe != nil:
		try = p.probe.resolved
	case p.red.depth > 0:
		try = bytes.IndexByte(appended, '<') >= 0
	default:
		try = !heldBacktick || laterTick && terminatedTail || completedBlank
	}
	mayResolve := false
	if p.red.depth > 0 && !p.closeReparsed && bytes.IndexAny(appended, "<>") >= 0 {
		mayResolve = ocHasCloseTag(src[p.holdStart:], false)
	}
	reusable := p.spansSet && p.spansEnd == len(src)
	mayClose := completedBlank && !p.openEndedCode &&
		(startsTopLevel || !ocContainerLine(src[min(p.retainStart, len(src)):]))
	if !(try || mayResolve) || tablePending || !(reusable || p.fullParses < 1 || mayClose || mayResolve) {
		return
	}
	// processBlock may parse again (into p.own, p.spans): this parse's
	// spans are kept apart.
	retain := p.retainStart
	if reusable {
		p.heldSpans = append(p.heldSpans[:0], p.spans...)
	} else {
		p.fullParses++
		p.own.parse(src)
		p.heldSpans = append(p.heldSpans[:0], p.own.spans...)
		retain = p.own.retainStart
	}
	spans := p.heldSpans
	p.closeReparsed = p.closeReparsed || mayResolve
	p.retainStart = retain
	p.openEndedCode = spanEndsAt(spans, len(src))
	heldSpan := -1
	for i, s := range spans {
		if ownStart >= s[0] && ownStart < s[1] {
			heldSpan = i
			break
		}
	}
	inOpenEnded := heldSpan >= 0 && spans[heldSpan][1] == len(src)
	stableCode := heldSpan >= 0 && !inOpenEnded
	stableNonDelim := heldBacktick && heldSpan < 0 && completedBlank
	if !(!heldBacktick && !inOpenEnded || stableCode || stableNonDelim) {
		return
	}
	end := len(src)
	switch {
	case stableNonDelim || mayClose:
	case stableCode:
		end = spans[heldSpan][1]
		for end < len(src) && src[end] != '\r' && src[end] != '\n' && src[end] != '<' && src[end] != '`' {
			end++
		}
	default:
		if j := bytes.IndexByte(src[p.holdStart:], '`'); j >= 0 {
			end = p.holdStart + j
		}
	}
	if end <= p.holdStart {
		return
	}
	tagSuffix := end < len(src) && src[end] == '<' && !ocInsideCode(end, spans)
	p.processBlock(end, false, spans, true, retain)
	if tagSuffix {
		p.fastCodeSafe = true
		p.fastChecked = end
		p.emitSafePrefix(len(p.source))
	}
}

func pick(c bool, a, b int) int {
	if c {
		return a
	}
	return b
}

// ocNextLineEnd is findNextLineEnding: the first \r or \n at or after start.
func ocNextLineEnd(b []byte, start int) int {
	if start > len(b) {
		return -1
	}
	if j := bytes.IndexAny(b[start:], "\r\n"); j >= 0 {
		return start + j
	}
	return -1
}

// ocEndsBlankBlock is endsBlankBlock: the text ends with a line break
// after a line of only spaces and tabs.
func ocEndsBlankBlock(b []byte) bool {
	i := len(b) - 1
	switch {
	case i >= 0 && b[i] == '\n':
		i--
		if i >= 0 && b[i] == '\r' {
			i--
		}
	case i >= 0 && b[i] == '\r':
		i--
	default:
		return false
	}
	for i >= 0 && (b[i] == ' ' || b[i] == '\t') {
		i--
	}
	return i >= 0 && (b[i] == '\n' || b[i] == '\r')
}

// ocContainerLine is MARKDOWN_CONTAINER_LINE_RE (multiline): some line
// starts, after up to three spaces, with '>', a bullet and a blank, or a
// list number and a blank.
func ocContainerLine(b []byte) bool {
	for i := 0; i <= len(b); {
		j := i
		for j < len(b) && j-i < 3 && b[j] == ' ' {
			j++
		}
		if j < len(b) {
			switch c := b[j]; {
			case c == '>':
				return true
			case c == '-' || c == '+' || c == '*':
				if j+1 < len(b) && (b[j+1] == ' ' || b[j+1] == '\t') {
					return true
				}
			case '0' <= c && c <= '9':
				k := j
				for k < len(b) && k-j < 9 && '0' <= b[k] && b[k] <= '9' {
					k++
				}
				if k < len(b) && (b[k] == '.' || b[k] == ')') && k+1 < len(b) && (b[k+1] == ' ' || b[k+1] == '\t') {
					return true
				}
			}
		}
		// JavaScript's multiline ^ follows \n, \r, U+2028 and U+2029.
		next := -1
		for k := i; k < len(b); k++ {
			if b[k] == '\n' || b[k] == '\r' {
				next = k + 1
				break
			}
			if b[k] == 0xe2 && k+2 < len(b) && b[k+1] == 0x80 && (b[k+2] == 0xa8 || b[k+2] == 0xa9) {
				next = k + 3
				break
			}
		}
		if next < 0 {
			break
		}
		i = next
	}
	return false
}

// ocOwnership is parseMarkdownOwnership's answer: the code (spans and
// blocks) of a Markdown text, sorted, and where its last top-level block
// starts.
type ocOwnership struct {
	spans       [][2]int
	retainStart int
}

// ocMarkdown parses CommonMark with GitHub's tables and without HTML, as
// the transport's micromark configuration does.
var ocMarkdown = sync.OnceValue(func() parser.Parser {
	// (by type: the parsers are pointers to empty structs, which may all
	// compare equal)
	htmlBlock, rawHTML := reflect.TypeOf(parser.NewHTMLBlockParser()), reflect.TypeOf(parser.NewRawHTMLParser())
	var blocks, inlines []util.PrioritizedValue
	for _, v := range parser.DefaultBlockParsers() {
		if reflect.TypeOf(v.Value) != htmlBlock {
			blocks = append(blocks, v)
		}
	}
	for _, v := range parser.DefaultInlineParsers() {
		if reflect.TypeOf(v.Value) != rawHTML {
			inlines = append(inlines, v)
		}
	}
	return parser.NewParser(
		parser.WithBlockParsers(blocks...),
		parser.WithInlineParsers(inlines...),
		parser.WithParagraphTransformers(append(parser.DefaultParagraphTransformers(),
			util.Prioritized(extension.NewTableParagraphTransformer(), 200))...),
	)
})

func (o *ocOwnership) parse(src []byte) {
	o.spans = o.spans[:0]
	o.retainStart = len(src)
	if len(src) == 0 {
		return
	}
	if o.parseFlat(src) {
		return
	}
	o.spans = o.spans[:0]
	o.retainStart = len(src)
	doc := ocMarkdown().Parse(text.NewReader(src))
	if last := doc.LastChild(); last != nil {
		o.retainStart = ocBlockStart(last, src)
	}
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.CodeSpan:
			if s, ok := ocCodeSpanRange(n, src); ok {
				o.spans = append(o.spans, s)
			}
			return ast.WalkSkipChildren, nil
		case *ast.FencedCodeBlock:
			o.spans = append(o.spans, ocFencedRange(n, src))
			return ast.WalkSkipChildren, nil
		case *ast.CodeBlock:
			o.spans = append(o.spans, ocIndentedRange(n, src))
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	sortSpans(o.spans)
}

func sortSpans(s [][2]int) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j][0] < s[j-1][0]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// ocBlockStart is where a top-level block starts, as micromark's position
// has it: at its first character after the indentation (an indented code
// block's indentation is its own).
func ocBlockStart(n ast.Node, src []byte) int {
	switch n := n.(type) {
	case *ast.CodeBlock:
		return ocIndentedRange(n, src)[0]
	case *extast.Table:
		// its header row's line, after the indentation
		if c := n.FirstChild(); c != nil && c.FirstChild() != nil {
			if t := firstText(c.FirstChild()); t != nil {
				i := lastLineStart(src, t.Segment.Start+1)
				for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
					i++
				}
				return i
			}
		}
	}
	if p := n.Pos(); p >= 0 {
		return p
	}
	if l := n.Lines(); l != nil && l.Len() > 0 {
		return l.At(0).Start
	}
	if c := n.FirstChild(); c != nil {
		return ocBlockStart(c, src)
	}
	return len(src)
}

func firstText(n ast.Node) *ast.Text {
	for ; n != nil; n = n.NextSibling() {
		if t, ok := n.(*ast.Text); ok {
			return t
		}
		if t := firstText(n.FirstChild()); t != nil {
			return t
		}
	}
	return nil
}

// ocCodeSpanRange is the span from the opening backtick run through the
// closing one.
func ocCodeSpanRange(n *ast.CodeSpan, src []byte) ([2]int, bool) {
	start := n.Pos()
	if start < 0 || start >= len(src) || src[start] != '`' {
		return [2]int{}, false
	}
	run := 0
	for start+run < len(src) && src[start+run] == '`' {
		run++
	}
	from := start + run
	if last := n.LastChild(); last != nil {
		if t, ok := last.(*ast.Text); ok {
			from = max(from, t.Segment.Stop)
		}
	}
	for i := from; i+run <= len(src); i++ {
		if src[i] != '`' {
			continue
		}
		j := i
		for j < len(src) && src[j] == '`' {
			j++
		}
		if j-i == run {
			return [2]int{start, j}, true
		}
		i = j - 1
	}
	return [2]int{}, false
}

// ocFencedRange: from the opening fence through the closing fence (the
// end of its line, without the line break), or to the end of the text
// when no fence closes it.
func ocFencedRange(n *ast.FencedCodeBlock, src []byte) [2]int {
	start := n.Pos()
	if start < 0 {
		start = 0
	}
	fence := src[start]
	run := 0
	for start+run < len(src) && src[start+run] == fence {
		run++
	}
	// the line after the opening fence, or after the last content line
	next := ocNextLineEnd(src, start)
	if l := n.Lines(); l.Len() > 0 {
		next = ocNextLineEnd(src, l.At(l.Len()-1).Start)
	}
	if next < 0 {
		return [2]int{start, len(src)}
	}
	next = skipLineBreak(src, next)
	// the closing fence: up to 3 spaces (past any container prefix), a run
	// of the fence character at least as long, then only blanks
	lineEnd := ocNextLineEnd(src, next)
	if lineEnd < 0 {
		lineEnd = len(src)
	}
	line := src[next:lineEnd]
	i := bytes.IndexByte(line, fence)
	if i >= 0 {
		j := i
		for j < len(line) && line[j] == fence {
			j++
		}
		if j-i >= run && len(bytes.Trim(line[j:], " \t")) == 0 {
			return [2]int{start, lineEnd}
		}
	}
	// Unclosed: at top level it runs to the end of the text; in a
	// container it ends with the container, before the line break.
	if n.Parent() != nil && n.Parent().Kind() == ast.KindDocument {
		return [2]int{start, len(src)}
	}
	end := ocNextLineEnd(src, start)
	if l := n.Lines(); l.Len() > 0 {
		end = ocNextLineEnd(src, l.At(l.Len()-1).Start)
	}
	if end < 0 {
		end = len(src)
	}
	return [2]int{start, end}
}

func skipLineBreak(b []byte, i int) int {
	if i < len(b) && b[i] == '\r' {
		i++
		if i < len(b) && b[i] == '\n' {
			i++
		}
		return i
	}
	if i < len(b) && b[i] == '\n' {
		i++
	}
	return i
}

// ocIndentedRange: from the start of its first line (the indentation is
// part of it) to the end of its last non-blank line, without the break.
func ocIndentedRange(n *ast.CodeBlock, src []byte) [2]int {
	l := n.Lines()
	if l.Len() == 0 {
		p := max(n.Pos(), 0)
		return [2]int{p, p}
	}
	// the indentation: four columns back from the content, inside any
	// container prefix
	start, col := l.At(0).Start, 0
	if n.Parent() != nil && n.Parent().Kind() == ast.KindDocument {
		start, col = lastLineStart(src, start+1), 4
	}
	for start > 0 && col < 4 && (src[start-1] == ' ' || src[start-1] == '\t') {
		start--
		if src[start] == '\t' {
			col = 4
		} else {
			col++
		}
	}
	end := l.At(l.Len() - 1).Stop
	for end > start && (src[end-1] == '\n' || src[end-1] == '\r') {
		end--
	}
	return [2]int{start, end}
}

// parseFlat parses, without allocating, a text whose blocks are only
// paragraphs, ATX headings and fenced code at top level: what model prose
// mostly is. It reports false, having decided nothing, on any line that
// could start something else (a container, a table, indented code, a
// setext underline or thematic break, a link definition, a tab in the
// indentation); goldmark parses those.
func (o *ocOwnership) parseFlat(src []byte) bool {
	var (
		fence     byte // the open fence's character, 0 none
		fenceRun  int
		fenceAt   int
		paraStart = -1 // the open paragraph's first character
	)
	closePara := func(end int) {
		if paraStart >= 0 {
			o.inlineCode(src[:end], paraStart)
			paraStart = -1
		}
	}
	for ls := 0; ls < len(src); {
		le := ocNextLineEnd(src, ls)
		next := len(src)
		if le < 0 {
			le = len(src)
		} else {
			next = skipLineBreak(src, le)
		}
		line := src[ls:le]
		ind := 0
		for ind < len(line) && line[ind] == ' ' {
			ind++
		}
		if fence != 0 {
			if ind <= 3 && ocFenceCloses(line[ind:], fence, fenceRun) {
				o.spans = append(o.spans, [2]int{fenceAt, le})
				fence = 0
			}
			ls = next
			continue
		}
		rest := line[ind:]
		if len(rest) == 0 || len(bytes.Trim(rest, " \t")) == 0 {
			if len(rest) > 0 && bytes.IndexByte(rest, '\t') >= 0 {
				return false
			}
			closePara(ls)
			ls = next
			continue
		}
		if ind > 3 || rest[0] == '\t' {
			return false // indented code or a paragraph continuation: tabs and indents are goldmark's
		}
		if ocFlatComplex(rest) {
			return false
		}
		if c := rest[0]; c == '`' || c == '~' {
			run := 0
			for run < len(rest) && rest[run] == c {
				run++
			}
			if run >= 3 && (c == '~' || bytes.IndexByte(rest[run:], '`') < 0) {
				closePara(ls)
				fence, fenceRun, fenceAt = c, run, ls+ind
				o.retainStart = fenceAt
				ls = next
				continue
			}
		}
		if rest[0] == '#' {
			h := 0
			for h < len(rest) && rest[h] == '#' {
				h++
			}
			if h <= 6 && (h == len(rest) || rest[h] == ' ' || rest[h] == '\t') {
				closePara(ls)
				o.retainStart = ls + ind
				o.inlineCode(src[:le], ls+ind+h)
				ls = next
				continue
			}
		}
		if paraStart < 0 {
			paraStart = ls + ind
			o.retainStart = paraStart
		}
		ls = next
	}
	if fence != 0 {
		o.spans = append(o.spans, [2]int{fenceAt, len(src)})
	}
	closePara(len(src))
	return true
}

// ocFenceCloses reports whether line (after its indentation) closes a
// fence of run c's.
func ocFenceCloses(line []byte, c byte, run int) bool {
	n := 0
	for n < len(line) && line[n] == c {
		n++
	}
	return n >= run && len(bytes.Trim(line[n:], " \t")) == 0
}

// ocFlatComplex reports whether a line (after up to three spaces) could
// start a block parseFlat leaves to goldmark, or hold a table row.
func ocFlatComplex(rest []byte) bool {
	if bytes.IndexByte(rest, '|') >= 0 {
		return true
	}
	switch c := rest[0]; {
	case c == '>':
		return true
	case c == '[':
		return bytes.Contains(rest, []byte("]:")) // a link reference definition
	case c == '-' || c == '+' || c == '*' || c == '_' || c == '=':
		if len(rest) == 1 || rest[1] == ' ' || rest[1] == '\t' {
			return true
		}
		// a thematic break or setext underline: only c, spaces and tabs
		return len(bytes.Trim(rest, string(c)+" \t")) == 0
	case '0' <= c && c <= '9':
		k := 0
		for k < len(rest) && k < 10 && '0' <= rest[k] && rest[k] <= '9' {
			k++
		}
		return k < len(rest) && (rest[k] == '.' || rest[k] == ')')
	}
	return false
}

// inlineCode adds the code spans of the inline text src[from:] (a
// paragraph's or heading's lines; a backslash escapes a backtick, an
// autolink is passed over).
func (o *ocOwnership) inlineCode(src []byte, from int) {
	for i := from; i < len(src); {
		switch src[i] {
		case '\\':
			i += 2
			continue
		case '<':
			if end := ocAutolinkEnd(src, i); end > 0 {
				i = end
				continue
			}
		case '`':
			run := 0
			for i+run < len(src) && src[i+run] == '`' {
				run++
			}
			if end := ocCodeSpanClose(src, i+run, run); end > 0 {
				o.spans = append(o.spans, [2]int{i, end})
				i = end
			} else {
				i += run
			}
			continue
		}
		i++
	}
}

// ocCodeSpanClose is the end of the first run of exactly run backticks at
// or after i, or -1.
func ocCodeSpanClose(src []byte, i, run int) int {
	for i < len(src) {
		j := bytes.IndexByte(src[i:], '`')
		if j < 0 {
			return -1
		}
		k := i + j
		n := 0
		for k+n < len(src) && src[k+n] == '`' {
			n++
		}
		if n == run {
			return k + n
		}
		i = k + n
	}
	return -1
}

// ocAutolinkEnd is the end of a CommonMark autolink at src[i] ('<'): a
// URI (a scheme of 2 to 32 letters, digits, '+', '.', '-', then ':' and
// no spaces, '<' or '>') or an e-mail address, then '>'; 0 when there is
// none.
func ocAutolinkEnd(src []byte, i int) int {
	j := i + 1
	k := j
	for k < len(src) && k-j <= 32 && (isAlnum(src[k]) || k > j && (src[k] == '+' || src[k] == '.' || src[k] == '-')) {
		k++
	}
	if k-j >= 2 && k-j <= 32 && k < len(src) && src[k] == ':' && isAlpha(src[j]) {
		for k++; k < len(src); k++ {
			switch c := src[k]; {
			case c == '>':
				return k + 1
			case c <= ' ' || c == '<' || c == 0x7f:
				return 0
			}
		}
		return 0
	}
	// e-mail: local@domain
	k = j
	for k < len(src) && (isAlnum(src[k]) || bytes.IndexByte([]byte(".!#$%&'*+/=?^_`{|}~-"), src[k]) >= 0) {
		k++
	}
	if k == j || k >= len(src) || src[k] != '@' {
		return 0
	}
	k++
	start := k
	for k < len(src) && (isAlnum(src[k]) || src[k] == '-' || src[k] == '.') {
		k++
	}
	if k > start && k < len(src) && src[k] == '>' && isAlnum(src[k-1]) {
		return k + 1
	}
	return 0
}

func isAlpha(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isAlnum(c byte) bool { return isAlpha(c) || '0' <= c && c <= '9' }
