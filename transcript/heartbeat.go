package transcript

import (
	"regexp"
	"strings"
	"unsafe"

	"github.com/ocbench/ocbench/llm"
)

// Heartbeat texts (OpenClaw src/auto-reply/tokens.ts and heartbeat.ts).
const (
	HeartbeatToken              = "HEARTBEAT_OK"
	HeartbeatPollPlaceholder    = "[OpenClaw heartbeat poll]"
	DefaultHeartbeatPrompt      = "Read HEARTBEAT.md if it exists (workspace context). Follow it strictly. Do not infer or repeat old tasks from prior chats. If nothing needs attention, reply HEARTBEAT_OK."
	DefaultHeartbeatAckMaxChars = 300

	heartbeatTaskPromptPrefix = "Run the following periodic tasks (only those due based on their intervals):"
	heartbeatTaskPromptAck    = "After completing all due tasks, reply HEARTBEAT_OK."
)

var (
	htmlTagRE     = regexp.MustCompile(`<[^>]*>`)
	nbspRE        = regexp.MustCompile(`(?i)&nbsp;`)
	leadMarkupRE  = regexp.MustCompile("^[*`~_]+")
	trailMarkupRE = regexp.MustCompile("[*`~_]+$")
	tokenAtEndRE  = regexp.MustCompile(regexp.QuoteMeta(HeartbeatToken) + `[^\w]{0,4}$`)
)

// textOf joins m's text blocks without a separator; nonText is set when m
// has any other block. The text of a message with one text block is a
// view of its bytes, valid while m is unchanged: callers classify it and
// do not keep it (the history filter asks this of every user message).
func textOf(m *llm.Message) (text string, nonText bool) {
	texts, only := 0, -1
	for i := range m.Content {
		if m.Content[i].Type != llm.BlockText {
			nonText = true
			continue
		}
		texts++
		only = i
	}
	if texts == 1 {
		t := m.Content[only].Text
		return unsafe.String(unsafe.SliceData(t), len(t)), nonText
	}
	var b strings.Builder
	for i := range m.Content {
		if m.Content[i].Type == llm.BlockText {
			b.Write(m.Content[i].Text)
		}
	}
	return b.String(), nonText
}

// stripTokenAtEdges removes HEARTBEAT_OK from the start and the end (the end
// may carry up to 4 non-word characters) until neither applies.
func stripTokenAtEdges(raw string) (string, bool) {
	text := jsTrim(raw)
	if text == "" || !strings.Contains(text, HeartbeatToken) {
		return text, false
	}
	didStrip := false
	for changed := true; changed; {
		changed = false
		next := jsTrim(text)
		if strings.HasPrefix(next, HeartbeatToken) {
			text = jsTrimStart(next[len(HeartbeatToken):])
			didStrip, changed = true, true
			continue
		}
		if tokenAtEndRE.MatchString(next) {
			idx := strings.LastIndex(next, HeartbeatToken)
			before := jsTrimEnd(next[:idx])
			if before == "" {
				text = ""
			} else {
				after := jsTrimStart(next[idx+len(HeartbeatToken):])
				text = jsTrimEnd(before + after)
			}
			didStrip, changed = true, true
		}
	}
	return jsTrim(jsCollapseSpace(text)), didStrip
}

// StripHeartbeatToken classifies a reply as OpenClaw's stripHeartbeatToken
// does. The token is removed from the start and end of the text (light
// markup * ` ~ _ at the edges and HTML tags tolerated); skip is true when
// nothing remains or, in heartbeat mode, when the rest is at most
// maxAckChars long (UTF-16 units; negative means the default 300). text is
// what remains.
func StripHeartbeatToken(raw string, heartbeatMode bool, maxAckChars int) (skip bool, text string, didStrip bool) {
	if maxAckChars < 0 {
		maxAckChars = DefaultHeartbeatAckMaxChars
	}
	trimmed := jsTrim(raw)
	if trimmed == "" {
		return true, "", false
	}
	normalized := htmlTagRE.ReplaceAllString(trimmed, " ")
	normalized = nbspRE.ReplaceAllString(normalized, " ")
	normalized = leadMarkupRE.ReplaceAllString(normalized, "")
	normalized = trailMarkupRE.ReplaceAllString(normalized, "")
	if !strings.Contains(trimmed, HeartbeatToken) && !strings.Contains(normalized, HeartbeatToken) {
		return false, trimmed, false
	}
	origText, origStrip := stripTokenAtEdges(trimmed)
	normText, normStrip := stripTokenAtEdges(normalized)
	pickText, pickStrip := normText, normStrip
	if origStrip && origText != "" {
		pickText, pickStrip = origText, origStrip
	}
	if !pickStrip {
		return false, trimmed, false
	}
	if pickText == "" {
		return true, "", true
	}
	rest := jsTrim(pickText)
	if heartbeatMode && u16len(rest) <= maxAckChars {
		return true, "", true
	}
	return false, rest, true
}

// IsHeartbeatUserMessage reports whether m is a heartbeat poll: a user
// message whose text (blocks joined, trimmed) is the poll placeholder,
// starts with heartbeatPrompt (when not empty), or is the periodic-task
// prompt.
func IsHeartbeatUserMessage(m *llm.Message, heartbeatPrompt string) bool {
	if m.Role != llm.RoleUser {
		return false
	}
	text, _ := textOf(m)
	trimmed := jsTrim(text)
	if trimmed == "" {
		return false
	}
	if trimmed == HeartbeatPollPlaceholder {
		return true
	}
	if p := jsTrim(heartbeatPrompt); p != "" && strings.HasPrefix(trimmed, p) {
		return true
	}
	return strings.HasPrefix(trimmed, heartbeatTaskPromptPrefix) && strings.Contains(trimmed, heartbeatTaskPromptAck)
}

// IsHeartbeatOKResponse reports whether m is a text-only assistant reply
// that classifies as a heartbeat acknowledgement.
func IsHeartbeatOKResponse(m *llm.Message, ackMaxChars int) bool {
	if m.Role != llm.RoleAssistant {
		return false
	}
	text, nonText := textOf(m)
	if nonText {
		return false
	}
	skip, _, _ := StripHeartbeatToken(text, true, ackMaxChars)
	return skip
}

// FilterHeartbeatPairs drops every (heartbeat poll, heartbeat ack) pair of
// adjacent messages; alerts (long replies) and everything else stay. With
// fewer than two messages msgs is returned unchanged. heartbeatPrompt is the
// configured prompt (DefaultHeartbeatPrompt unless overridden; empty skips
// that check); ackMaxChars < 0 means the default 300. msgs is not modified.
func FilterHeartbeatPairs(msgs []llm.Message, ackMaxChars int, heartbeatPrompt string) []llm.Message {
	if len(msgs) < 2 {
		return msgs
	}
	var out []llm.Message
	for i := 0; i < len(msgs); {
		if i+1 < len(msgs) && IsHeartbeatUserMessage(&msgs[i], heartbeatPrompt) && IsHeartbeatOKResponse(&msgs[i+1], ackMaxChars) {
			if out == nil {
				out = append(make([]llm.Message, 0, len(msgs)), msgs[:i]...)
			}
			i += 2
			continue
		}
		if out != nil {
			out = append(out, msgs[i])
		}
		i++
	}
	if out == nil {
		return msgs
	}
	return out
}
