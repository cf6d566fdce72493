package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/ocbench/ocbench/llm"
)

// Thinking budgets (tokens) for Anthropic's extended thinking by effort,
// as pi-ai sets them.
var thinkingBudget = map[string]int{"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384, "xhigh": 32768}

const defaultMaxTokens = 4096

// AppendRequestJSON appends the streaming request body of req in wire w's
// JSON to dst: Chat Completions (max_tokens or max_completion_tokens,
// stream_options.include_usage and prompt_cache_key as the endpoint's
// Compat allows: CompatFor), Responses (store:false) or Anthropic Messages
// (with cache_control breakpoints on the stable part of the system prompt,
// at req.CacheBoundary, and on the last user message).
//
// req.Options are encoded under the wire's own names (see
// llm.RequestOptions; Headers are the transport's business and are not
// read here). An option the wire has no equivalent for, or a malformed
// one, is refused with an *OptionError wrapping ErrUnsupportedOption or
// ErrInvalidOption, and dst is returned unchanged.
func AppendRequestJSON(dst []byte, w Wire, req *llm.Request) ([]byte, error) {
	if w >= numWires {
		return dst, fmt.Errorf("%w: wire %d", ErrUnknownAPI, w)
	}
	if err := checkOptions(w, req); err != nil {
		return dst, err
	}
	start := len(dst)
	var o object
	dst = append(dst, '{')
	switch w {
	case WireOpenAIResponses:
		dst = appendResponsesRequest(dst, &o, req)
	case WireAnthropic:
		dst = appendAnthropicRequest(dst, &o, req)
	default:
		dst = appendChatRequest(dst, &o, req)
	}
	dst = appendOptions(dst, &o, w, req)
	if len(req.Options.ExtraBody) > 0 {
		var err error
		if dst, err = mergeExtraBody(dst, &o, w, req.Options.ExtraBody); err != nil {
			return dst[:start], err
		}
	}
	return append(dst, '}'), nil
}

// maxMembers bounds the top-level members one encoder writes (14 at most
// today: TestEncoderMembersFit keeps the bound honest).
const maxMembers = 20

// object writes the members of one top-level JSON object and remembers
// their names, so that ExtraBody can refuse a member the encoder wrote.
// It lives on the encoder's stack: the names are the encoder's constants.
type object struct {
	n    int
	keys [maxMembers]string
}

func (o *object) key(dst []byte, key string) []byte {
	if o.n > 0 {
		dst = append(dst, ',')
	}
	if o.n < len(o.keys) {
		o.keys[o.n] = key
	}
	o.n++
	dst = llm.AppendJSONString(dst, key)
	return append(dst, ':')
}

// wrote reports whether the encoder wrote member key (unescaped).
func (o *object) wrote(key []byte) bool {
	for _, k := range o.keys[:min(o.n, len(o.keys))] {
		if k == string(key) {
			return true
		}
	}
	return false
}

func appendRaw(dst, raw []byte, fallback string) []byte {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || !jsonValid(raw) {
		return append(dst, fallback...)
	}
	return append(dst, raw...)
}

func maxTokens(req *llm.Request) int {
	if req.MaxTokens > 0 {
		return req.MaxTokens
	}
	if req.Model.MaxTokens > 0 {
		return req.Model.MaxTokens
	}
	return 0
}

// callID returns the provider-neutral part of a tool-call id: pi-ai's
// Responses ids are "call_id|item_id".
func callID(id []byte) []byte {
	if i := bytes.IndexByte(id, '|'); i >= 0 {
		return id[:i]
	}
	return id
}

// textLen is the length of m's text blocks joined.
func textLen(m *llm.Message) int {
	n := 0
	for i := range m.Content {
		if b := &m.Content[i]; b.Type == llm.BlockText {
			n += len(b.Text)
		}
	}
	return n
}

// appendTextString appends m's text blocks, joined, as one JSON string.
func appendTextString(dst []byte, m *llm.Message) []byte {
	dst = append(dst, '"')
	for i := range m.Content {
		if b := &m.Content[i]; b.Type == llm.BlockText {
			dst = appendJSONStringBody(dst, b.Text)
		}
	}
	return append(dst, '"')
}

// appendArgsString appends a tool call's arguments as a JSON string: the
// text as received when it is JSON, else "{}".
func appendArgsString(dst, args []byte) []byte {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || !jsonValid(args) {
		return append(dst, `"{}"`...)
	}
	return llm.AppendJSONString(dst, args)
}

// ---- Chat Completions ----

func appendChatRequest(dst []byte, o *object, req *llm.Request) []byte {
	dst = o.key(dst, "model")
	dst = llm.AppendJSONString(dst, req.Model.ID)
	dst = o.key(dst, "messages")
	dst = append(dst, '[')
	n := 0
	sep := func() {
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
	}
	if req.System != "" {
		sep()
		dst = append(dst, `{"role":"system","content":`...)
		dst = llm.AppendJSONString(dst, req.System)
		dst = append(dst, '}')
	}
	for i := range req.Messages {
		m := &req.Messages[i]
		switch m.Role {
		case llm.RoleUser:
			sep()
			dst = append(dst, `{"role":"user","content":`...)
			dst = appendChatUserContent(dst, m)
			dst = append(dst, '}')
		case llm.RoleAssistant:
			text := textLen(m)
			calls := 0
			for j := range m.Content {
				if m.Content[j].Type == llm.BlockToolCall {
					calls++
				}
			}
			if text == 0 && calls == 0 {
				continue
			}
			sep()
			dst = append(dst, `{"role":"assistant","content":`...)
			if text == 0 {
				dst = append(dst, "null"...)
			} else {
				dst = appendTextString(dst, m)
			}
			for j := range m.Content {
				b := &m.Content[j]
				// Reasoning is replayed in the field it came in
				// (reasoning_content, reasoning, ...), as pi-ai does.
				if b.Type == llm.BlockThinking && len(b.Text) > 0 && isReasoningField(b.Signature) {
					dst = append(dst, ',')
					dst = llm.AppendJSONString(dst, b.Signature)
					dst = append(dst, ':')
					dst = llm.AppendJSONString(dst, b.Text)
					break
				}
			}
			if calls > 0 {
				dst = append(dst, `,"tool_calls":[`...)
				k := 0
				for j := range m.Content {
					b := &m.Content[j]
					if b.Type != llm.BlockToolCall {
						continue
					}
					if k > 0 {
						dst = append(dst, ',')
					}
					k++
					dst = append(dst, `{"id":`...)
					dst = llm.AppendJSONString(dst, callID(b.ID))
					dst = append(dst, `,"type":"function","function":{"name":`...)
					dst = llm.AppendJSONString(dst, b.Name)
					dst = append(dst, `,"arguments":`...)
					dst = appendArgsString(dst, b.Arguments)
					dst = append(dst, "}}"...)
				}
				dst = append(dst, ']')
			}
			dst = append(dst, '}')
		case llm.RoleToolResult:
			sep()
			dst = append(dst, `{"role":"tool","tool_call_id":`...)
			dst = llm.AppendJSONString(dst, callID([]byte(m.ToolCallID)))
			dst = append(dst, `,"content":`...)
			dst = appendToolResultString(dst, m, "")
			dst = append(dst, '}')
		}
	}
	dst = append(dst, ']')
	compat := CompatFor(&req.Model)
	dst = o.key(dst, "stream")
	dst = append(dst, "true"...)
	if compat.StreamOptions {
		dst = o.key(dst, "stream_options")
		dst = append(dst, `{"include_usage":true}`...)
	}
	if mt := maxTokens(req); mt > 0 {
		dst = o.key(dst, compat.MaxTokensField)
		dst = strconv.AppendInt(dst, int64(mt), 10)
	}
	if req.Temperature != nil {
		dst = o.key(dst, "temperature")
		dst = strconv.AppendFloat(dst, *req.Temperature, 'g', -1, 64)
	}
	if req.Reasoning != "" {
		dst = o.key(dst, "reasoning_effort")
		dst = llm.AppendJSONString(dst, req.Reasoning)
	}
	if req.SessionID != "" && compat.PromptCacheKey {
		dst = o.key(dst, "prompt_cache_key")
		dst = llm.AppendJSONString(dst, req.SessionID)
	}
	if len(req.Tools) > 0 {
		dst = o.key(dst, "tools")
		dst = append(dst, '[')
		for i := range req.Tools {
			t := &req.Tools[i]
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"type":"function","function":{"name":`...)
			dst = llm.AppendJSONString(dst, t.Name)
			dst = append(dst, `,"description":`...)
			dst = llm.AppendJSONString(dst, t.Description)
			dst = append(dst, `,"parameters":`...)
			dst = appendRaw(dst, t.Parameters, `{"type":"object","properties":{}}`)
			dst = append(dst, "}}"...)
		}
		dst = append(dst, ']')
	}
	return dst
}

func isReasoningField(sig []byte) bool {
	for _, f := range reasoningFields {
		if string(sig) == f {
			return true
		}
	}
	return false
}

func appendChatUserContent(dst []byte, m *llm.Message) []byte {
	if len(m.Content) == 1 && m.Content[0].Type == llm.BlockText {
		return llm.AppendJSONString(dst, m.Content[0].Text)
	}
	dst = append(dst, '[')
	k := 0
	for i := range m.Content {
		b := &m.Content[i]
		switch b.Type {
		case llm.BlockText:
			if k > 0 {
				dst = append(dst, ',')
			}
			k++
			dst = append(dst, `{"type":"text","text":`...)
			dst = llm.AppendJSONString(dst, b.Text)
			dst = append(dst, '}')
		case llm.BlockImage:
			if k > 0 {
				dst = append(dst, ',')
			}
			k++
			dst = append(dst, `{"type":"image_url","image_url":{"url":"data:`...)
			dst = appendJSONStringBody(dst, b.MimeType)
			dst = append(dst, ";base64,"...)
			dst = appendJSONStringBody(dst, b.Text)
			dst = append(dst, `"}}`...)
		}
	}
	return append(dst, ']')
}

// appendJSONStringBody appends s escaped as inside a JSON string, without
// the quotes.
func appendJSONStringBody(dst, s []byte) []byte {
	n := len(dst)
	dst = llm.AppendJSONString(dst, s)
	copy(dst[n:], dst[n+1:len(dst)-1])
	return dst[:len(dst)-2]
}

// appendToolResultString appends a tool result's text blocks as one JSON
// string, joined by line breaks, an image as "(image omitted)"; empty
// stands in for a result with no text at all.
func appendToolResultString(dst []byte, m *llm.Message, empty string) []byte {
	dst = append(dst, '"')
	start := len(dst)
	for i := range m.Content {
		b := &m.Content[i]
		switch b.Type {
		case llm.BlockText:
			if len(dst) > start {
				dst = append(dst, `\n`...)
			}
			dst = appendJSONStringBody(dst, b.Text)
		case llm.BlockImage:
			if len(dst) > start {
				dst = append(dst, `\n`...)
			}
			dst = append(dst, "(image omitted)"...)
		}
	}
	if len(dst) == start {
		dst = append(dst, empty...)
	}
	return append(dst, '"')
}

// ---- Responses ----

func appendResponsesRequest(dst []byte, o *object, req *llm.Request) []byte {
	dst = o.key(dst, "model")
	dst = llm.AppendJSONString(dst, req.Model.ID)
	dst = o.key(dst, "input")
	dst = append(dst, '[')
	n := 0
	sep := func() {
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
	}
	if req.System != "" {
		sep()
		dst = append(dst, `{"role":"system","content":`...)
		dst = llm.AppendJSONString(dst, req.System)
		dst = append(dst, '}')
	}
	for i := range req.Messages {
		m := &req.Messages[i]
		switch m.Role {
		case llm.RoleUser:
			sep()
			dst = append(dst, `{"role":"user","content":[`...)
			k := 0
			for j := range m.Content {
				b := &m.Content[j]
				if b.Type != llm.BlockText && b.Type != llm.BlockImage {
					continue
				}
				if k > 0 {
					dst = append(dst, ',')
				}
				k++
				if b.Type == llm.BlockText {
					dst = append(dst, `{"type":"input_text","text":`...)
					dst = llm.AppendJSONString(dst, b.Text)
					dst = append(dst, '}')
				} else {
					dst = append(dst, `{"type":"input_image","detail":"auto","image_url":"data:`...)
					dst = appendJSONStringBody(dst, b.MimeType)
					dst = append(dst, ";base64,"...)
					dst = appendJSONStringBody(dst, b.Text)
					dst = append(dst, `"}`...)
				}
			}
			dst = append(dst, "]}"...)
		case llm.RoleAssistant:
			for j := range m.Content {
				b := &m.Content[j]
				switch b.Type {
				case llm.BlockThinking:
					// The reasoning item as received (its JSON is the signature).
					sig := bytes.TrimSpace(b.Signature)
					if len(sig) > 0 && sig[0] == '{' && jsonValid(sig) {
						sep()
						dst = append(dst, sig...)
					}
				case llm.BlockText:
					if len(b.Text) == 0 {
						continue
					}
					sep()
					// An id on every earlier assistant message item, as
					// pi-ai sends ("msg_<index>" when the text has none).
					dst = append(dst, `{"type":"message","role":"assistant","id":"msg_`...)
					dst = strconv.AppendInt(dst, int64(i), 10)
					if j > 0 {
						dst = append(dst, '_')
						dst = strconv.AppendInt(dst, int64(j), 10)
					}
					dst = append(dst, `","status":"completed","content":[{"type":"output_text","annotations":[],"text":`...)
					dst = llm.AppendJSONString(dst, b.Text)
					dst = append(dst, "}]}"...)
				case llm.BlockToolCall:
					sep()
					dst = append(dst, `{"type":"function_call","call_id":`...)
					dst = llm.AppendJSONString(dst, callID(b.ID))
					if k := bytes.IndexByte(b.ID, '|'); k >= 0 && k+1 < len(b.ID) {
						dst = append(dst, `,"id":`...)
						dst = llm.AppendJSONString(dst, b.ID[k+1:])
					}
					dst = append(dst, `,"name":`...)
					dst = llm.AppendJSONString(dst, b.Name)
					dst = append(dst, `,"arguments":`...)
					dst = appendArgsString(dst, b.Arguments)
					dst = append(dst, '}')
				}
			}
		case llm.RoleToolResult:
			sep()
			dst = append(dst, `{"type":"function_call_output","call_id":`...)
			dst = llm.AppendJSONString(dst, callID([]byte(m.ToolCallID)))
			dst = append(dst, `,"output":`...)
			dst = appendToolResultString(dst, m, "")
			dst = append(dst, '}')
		}
	}
	dst = append(dst, ']')
	dst = o.key(dst, "stream")
	dst = append(dst, "true"...)
	dst = o.key(dst, "store")
	dst = append(dst, "false"...)
	if mt := maxTokens(req); mt > 0 {
		dst = o.key(dst, "max_output_tokens")
		dst = strconv.AppendInt(dst, int64(mt), 10)
	}
	if req.Temperature != nil {
		dst = o.key(dst, "temperature")
		dst = strconv.AppendFloat(dst, *req.Temperature, 'g', -1, 64)
	}
	if req.Reasoning != "" {
		dst = o.key(dst, "reasoning")
		dst = append(dst, `{"effort":`...)
		dst = llm.AppendJSONString(dst, req.Reasoning)
		dst = append(dst, `,"summary":"auto"}`...)
		dst = o.key(dst, "include")
		dst = append(dst, `["reasoning.encrypted_content"]`...)
	}
	if req.SessionID != "" {
		dst = o.key(dst, "prompt_cache_key")
		dst = llm.AppendJSONString(dst, req.SessionID)
	}
	if len(req.Tools) > 0 {
		dst = o.key(dst, "tools")
		dst = append(dst, '[')
		for i := range req.Tools {
			t := &req.Tools[i]
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"type":"function","name":`...)
			dst = llm.AppendJSONString(dst, t.Name)
			dst = append(dst, `,"description":`...)
			dst = llm.AppendJSONString(dst, t.Description)
			dst = append(dst, `,"parameters":`...)
			dst = appendRaw(dst, t.Parameters, `{"type":"object","properties":{}}`)
			dst = append(dst, `,"strict":false}`...)
		}
		dst = append(dst, ']')
	}
	return dst
}

// ---- Anthropic Messages ----

// anthropicID makes a tool-call id acceptable to Anthropic
// (^[a-zA-Z0-9_-]{1,64}$).
func anthropicID(dst, id []byte) []byte {
	id = callID(id)
	start := len(dst)
	for _, c := range id {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' {
			dst = append(dst, c)
		} else {
			dst = append(dst, '_')
		}
		if len(dst)-start == 64 {
			break
		}
	}
	if len(dst) == start {
		dst = append(dst, "toolu_none"...)
	}
	return dst
}

const cacheControl = `,"cache_control":{"type":"ephemeral"}`

func appendAnthropicRequest(dst []byte, o *object, req *llm.Request) []byte {
	dst = o.key(dst, "model")
	dst = llm.AppendJSONString(dst, req.Model.ID)
	mt := maxTokens(req)
	if mt <= 0 {
		mt = defaultMaxTokens
	}
	budget := 0
	if req.Reasoning != "" {
		budget = thinkingBudget[req.Reasoning]
		if budget == 0 {
			budget = thinkingBudget["medium"]
		}
		mt += budget
		if req.Model.MaxTokens > 0 && mt > req.Model.MaxTokens {
			mt = req.Model.MaxTokens
			budget = min(budget, max(mt-1024, 1024))
		}
	}
	dst = o.key(dst, "max_tokens")
	dst = strconv.AppendInt(dst, int64(mt), 10)
	dst = o.key(dst, "stream")
	dst = append(dst, "true"...)
	if req.System != "" {
		dst = o.key(dst, "system")
		dst = append(dst, '[')
		cb := req.CacheBoundary
		if cb > 0 && cb < len(req.System) {
			dst = append(dst, `{"type":"text","text":`...)
			dst = llm.AppendJSONString(dst, req.System[:cb])
			dst = append(dst, cacheControl...)
			dst = append(dst, `},{"type":"text","text":`...)
			dst = llm.AppendJSONString(dst, req.System[cb:])
			dst = append(dst, '}')
		} else {
			dst = append(dst, `{"type":"text","text":`...)
			dst = llm.AppendJSONString(dst, req.System)
			if cb >= len(req.System) {
				dst = append(dst, cacheControl...)
			}
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	// The last user turn gets a breakpoint too, so the conversation prefix
	// is cached from one call to the next.
	lastUser := -1
	for i := range req.Messages {
		if req.Messages[i].Role != llm.RoleAssistant {
			lastUser = i
		}
	}
	dst = o.key(dst, "messages")
	dst = append(dst, '[')
	n := 0
	for i := 0; i < len(req.Messages); i++ {
		m := &req.Messages[i]
		switch m.Role {
		case llm.RoleUser:
			if n > 0 {
				dst = append(dst, ',')
			}
			n++
			dst = append(dst, `{"role":"user","content":[`...)
			k := 0
			for j := range m.Content {
				b := &m.Content[j]
				if b.Type != llm.BlockText && b.Type != llm.BlockImage {
					continue
				}
				if k > 0 {
					dst = append(dst, ',')
				}
				k++
				if b.Type == llm.BlockText {
					dst = append(dst, `{"type":"text","text":`...)
					dst = llm.AppendJSONString(dst, b.Text)
				} else {
					dst = append(dst, `{"type":"image","source":{"type":"base64","media_type":`...)
					dst = llm.AppendJSONString(dst, b.MimeType)
					dst = append(dst, `,"data":`...)
					dst = llm.AppendJSONString(dst, b.Text)
					dst = append(dst, '}')
				}
				if i == lastUser && j == len(m.Content)-1 {
					dst = append(dst, cacheControl...)
				}
				dst = append(dst, '}')
			}
			if k == 0 {
				dst = append(dst, `{"type":"text","text":"(empty)"}`...)
			}
			dst = append(dst, "]}"...)
		case llm.RoleToolResult:
			// Consecutive tool results share one user message.
			if n > 0 {
				dst = append(dst, ',')
			}
			n++
			dst = append(dst, `{"role":"user","content":[`...)
			for k := 0; i < len(req.Messages) && req.Messages[i].Role == llm.RoleToolResult; k, i = k+1, i+1 {
				m = &req.Messages[i]
				if k > 0 {
					dst = append(dst, ',')
				}
				dst = append(dst, `{"type":"tool_result","tool_use_id":"`...)
				dst = anthropicID(dst, []byte(m.ToolCallID))
				dst = append(dst, `","content":[`...)
				dst = append(dst, `{"type":"text","text":`...)
				dst = appendToolResultString(dst, m, "(no output)")
				dst = append(dst, "}]"...)
				if m.IsError {
					dst = append(dst, `,"is_error":true`...)
				}
				if i == lastUser {
					dst = append(dst, cacheControl...)
				}
				dst = append(dst, '}')
			}
			i--
			dst = append(dst, "]}"...)
		case llm.RoleAssistant:
			mark := len(dst)
			if n > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"role":"assistant","content":[`...)
			k := 0
			for j := range m.Content {
				b := &m.Content[j]
				switch b.Type {
				case llm.BlockText:
					if len(b.Text) == 0 {
						continue
					}
					if k > 0 {
						dst = append(dst, ',')
					}
					k++
					dst = append(dst, `{"type":"text","text":`...)
					dst = llm.AppendJSONString(dst, b.Text)
					dst = append(dst, '}')
				case llm.BlockThinking:
					if b.Redacted {
						if k > 0 {
							dst = append(dst, ',')
						}
						k++
						dst = append(dst, `{"type":"redacted_thinking","data":`...)
						dst = llm.AppendJSONString(dst, b.Signature)
						dst = append(dst, '}')
						continue
					}
					if len(b.Text) == 0 {
						continue
					}
					if k > 0 {
						dst = append(dst, ',')
					}
					k++
					if len(b.Signature) > 0 {
						dst = append(dst, `{"type":"thinking","thinking":`...)
						dst = llm.AppendJSONString(dst, b.Text)
						dst = append(dst, `,"signature":`...)
						dst = llm.AppendJSONString(dst, b.Signature)
					} else {
						// Unsigned thinking (another provider's) goes back as text.
						dst = append(dst, `{"type":"text","text":`...)
						dst = llm.AppendJSONString(dst, b.Text)
					}
					dst = append(dst, '}')
				case llm.BlockToolCall:
					if k > 0 {
						dst = append(dst, ',')
					}
					k++
					dst = append(dst, `{"type":"tool_use","id":"`...)
					dst = anthropicID(dst, b.ID)
					dst = append(dst, `","name":`...)
					dst = llm.AppendJSONString(dst, b.Name)
					dst = append(dst, `,"input":`...)
					args := bytes.TrimSpace(b.Arguments)
					if len(args) > 0 && args[0] == '{' && jsonValid(args) {
						dst = append(dst, args...)
					} else {
						dst = append(dst, "{}"...)
					}
					dst = append(dst, '}')
				}
			}
			if k == 0 {
				dst = dst[:mark] // nothing to send back
				continue
			}
			n++
			dst = append(dst, "]}"...)
		}
	}
	dst = append(dst, ']')
	if req.Temperature != nil && budget == 0 {
		dst = o.key(dst, "temperature")
		dst = strconv.AppendFloat(dst, *req.Temperature, 'g', -1, 64)
	}
	if budget > 0 {
		dst = o.key(dst, "thinking")
		dst = append(dst, `{"type":"enabled","budget_tokens":`...)
		dst = strconv.AppendInt(dst, int64(budget), 10)
		dst = append(dst, '}')
	}
	if len(req.Tools) > 0 {
		dst = o.key(dst, "tools")
		dst = append(dst, '[')
		for i := range req.Tools {
			t := &req.Tools[i]
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"name":`...)
			dst = llm.AppendJSONString(dst, t.Name)
			dst = append(dst, `,"description":`...)
			dst = llm.AppendJSONString(dst, t.Description)
			dst = append(dst, `,"input_schema":`...)
			dst = appendRaw(dst, t.Parameters, `{"type":"object","properties":{}}`)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	if req.SessionID != "" {
		dst = o.key(dst, "metadata")
		dst = append(dst, `{"user_id":`...)
		dst = llm.AppendJSONString(dst, req.SessionID)
		dst = append(dst, '}')
	}
	return dst
}

// ---- Request options ----

// checkOptions refuses, before anything is written, the options wire w has
// no equivalent for and the ones that are malformed or contradict the
// request.
func checkOptions(w Wire, req *llm.Request) error {
	op := &req.Options
	tc := op.ToolChoice
	switch {
	case tc.Mode > llm.ToolChoiceTool:
		return invalid(w, "tool_choice", "unknown mode "+strconv.Itoa(int(tc.Mode)))
	case tc.Mode == llm.ToolChoiceTool && tc.Name == "":
		return invalid(w, "tool_choice", "mode tool needs the tool's name")
	case tc.Mode != llm.ToolChoiceTool && tc.Name != "":
		return invalid(w, "tool_choice", "a name is given only with mode tool, not "+tc.Mode.String())
	case tc.Mode != llm.ToolChoiceDefault && len(req.Tools) == 0:
		return invalid(w, "tool_choice", "the request offers no tools")
	case tc.Mode == llm.ToolChoiceTool && !offers(req.Tools, tc.Name):
		return invalid(w, "tool_choice", "names tool "+strconv.Quote(tc.Name)+", which the request does not offer")
	case w == WireAnthropic && req.Reasoning != "" && (tc.Mode == llm.ToolChoiceRequired || tc.Mode == llm.ToolChoiceTool):
		// Anthropic: "Thinking may not be enabled when tool_choice forces tool use".
		return unsupported(w, "tool_choice", "Anthropic's extended thinking (Reasoning "+strconv.Quote(req.Reasoning)+") allows only tool_choice auto or none, not "+tc.Mode.String())
	}
	if op.ParallelToolCalls != nil && len(req.Tools) == 0 {
		return invalid(w, "parallel_tool_calls", "the request offers no tools")
	}
	if rf := op.ResponseFormat; rf != nil {
		if err := checkResponseFormat(w, rf); err != nil {
			return err
		}
	}
	if len(op.Stop) > 0 && w == WireOpenAIResponses {
		return unsupported(w, "stop", "the Responses API has no stop sequences")
	}
	for _, s := range op.Stop {
		if s == "" {
			return invalid(w, "stop", "an empty stop sequence")
		}
	}
	if p := op.TopP; p != nil && !(*p >= 0 && *p <= 1) {
		return invalid(w, "top_p", "must be within [0, 1], not "+strconv.FormatFloat(*p, 'g', -1, 64))
	}
	return nil
}

func offers(tools []llm.Tool, name string) bool {
	for i := range tools {
		if tools[i].Name == name {
			return true
		}
	}
	return false
}

func checkResponseFormat(w Wire, rf *llm.ResponseFormat) error {
	const opt = "response_format"
	switch rf.Type {
	case llm.ResponseText, llm.ResponseJSONObject:
		if len(rf.Schema) > 0 || rf.Name != "" || rf.Strict {
			return invalid(w, opt, "name, schema and strict go only with type json_schema, not "+rf.Type.String())
		}
		if rf.Type == llm.ResponseJSONObject && w == WireAnthropic {
			return unsupported(w, opt, "Anthropic's structured output takes a JSON schema only (output_config.format json_schema), not json_object")
		}
		return nil
	case llm.ResponseJSONSchema:
	default:
		return invalid(w, opt, "unknown type "+strconv.Itoa(int(rf.Type)))
	}
	if !optionObject(rf.Schema) {
		return invalid(w, opt, "the schema is not one JSON object (in UTF-8, nested at most 256 deep)")
	}
	if w != WireAnthropic && !schemaName(rf.Name) {
		// OpenAI: a name of a-z, A-Z, 0-9, '_' and '-', at most 64 long.
		return invalid(w, opt, "json_schema needs a name of 1-64 letters, digits, '_' or '-', not "+strconv.Quote(rf.Name))
	}
	return nil
}

func schemaName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// appendOptions writes the checked options under wire w's names.
func appendOptions(dst []byte, o *object, w Wire, req *llm.Request) []byte {
	op := &req.Options
	if tc := op.ToolChoice; tc.Mode != llm.ToolChoiceDefault || w == WireAnthropic && op.ParallelToolCalls != nil {
		dst = o.key(dst, "tool_choice")
		dst = appendToolChoice(dst, w, tc, op.ParallelToolCalls)
	}
	if p := op.ParallelToolCalls; p != nil && w != WireAnthropic {
		dst = o.key(dst, "parallel_tool_calls")
		dst = strconv.AppendBool(dst, *p)
	}
	if rf := op.ResponseFormat; rf != nil {
		dst = appendResponseFormat(dst, o, w, rf)
	}
	if len(op.Stop) > 0 {
		if w == WireAnthropic {
			dst = o.key(dst, "stop_sequences")
		} else {
			dst = o.key(dst, "stop")
		}
		dst = append(dst, '[')
		for i, s := range op.Stop {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = llm.AppendJSONString(dst, s)
		}
		dst = append(dst, ']')
	}
	if op.TopP != nil {
		dst = o.key(dst, "top_p")
		dst = strconv.AppendFloat(dst, *op.TopP, 'g', -1, 64)
	}
	return dst
}

// appendToolChoice writes a tool_choice value. Chat Completions: "auto",
// "none", "required" or {"type":"function","function":{"name":N}};
// Responses: the same strings or {"type":"function","name":N}; Anthropic:
// {"type":"auto"|"none"|"any"|"tool"[,"name":N]}, where parallel tool
// calls are switched with disable_parallel_tool_use (an auto choice is
// written for it when no mode is set; tool_choice none has no such member
// and needs none: it allows no call at all).
func appendToolChoice(dst []byte, w Wire, tc llm.ToolChoice, parallel *bool) []byte {
	if w == WireAnthropic {
		dst = append(dst, `{"type":`...)
		switch tc.Mode {
		case llm.ToolChoiceNone:
			return append(dst, `"none"}`...)
		case llm.ToolChoiceRequired:
			dst = append(dst, `"any"`...)
		case llm.ToolChoiceTool:
			dst = append(dst, `"tool","name":`...)
			dst = llm.AppendJSONString(dst, tc.Name)
		default:
			dst = append(dst, `"auto"`...)
		}
		if parallel != nil {
			dst = append(dst, `,"disable_parallel_tool_use":`...)
			dst = strconv.AppendBool(dst, !*parallel)
		}
		return append(dst, '}')
	}
	switch tc.Mode {
	case llm.ToolChoiceNone:
		return append(dst, `"none"`...)
	case llm.ToolChoiceRequired:
		return append(dst, `"required"`...)
	case llm.ToolChoiceTool:
		if w == WireOpenAIResponses {
			dst = append(dst, `{"type":"function","name":`...)
			dst = llm.AppendJSONString(dst, tc.Name)
			return append(dst, '}')
		}
		dst = append(dst, `{"type":"function","function":{"name":`...)
		dst = llm.AppendJSONString(dst, tc.Name)
		return append(dst, "}}"...)
	default:
		return append(dst, `"auto"`...)
	}
}

// appendResponseFormat writes the response format: Chat Completions'
// response_format {"type":"text"|"json_object"} or {"type":"json_schema",
// "json_schema":{"name","schema","strict"}}; Responses' text.format with
// the same types and the schema's members inline; Anthropic's
// output_config.format {"type":"json_schema","schema"} (plain text is
// Anthropic's only other output and needs no member; its schema outputs
// are always enforced, so Strict has nothing to switch).
func appendResponseFormat(dst []byte, o *object, w Wire, rf *llm.ResponseFormat) []byte {
	switch w {
	case WireAnthropic:
		if rf.Type != llm.ResponseJSONSchema {
			return dst
		}
		dst = o.key(dst, "output_config")
		dst = append(dst, `{"format":{"type":"json_schema","schema":`...)
		dst = append(dst, bytes.TrimSpace(rf.Schema)...)
		return append(dst, "}}"...)
	case WireOpenAIResponses:
		dst = o.key(dst, "text")
		dst = append(dst, `{"format":{"type":`...)
		switch rf.Type {
		case llm.ResponseJSONSchema:
			dst = append(dst, `"json_schema","name":`...)
			dst = llm.AppendJSONString(dst, rf.Name)
			dst = append(dst, `,"schema":`...)
			dst = append(dst, bytes.TrimSpace(rf.Schema)...)
			dst = append(dst, `,"strict":`...)
			dst = strconv.AppendBool(dst, rf.Strict)
		case llm.ResponseJSONObject:
			dst = append(dst, `"json_object"`...)
		default:
			dst = append(dst, `"text"`...)
		}
		return append(dst, "}}"...)
	default:
		dst = o.key(dst, "response_format")
		switch rf.Type {
		case llm.ResponseJSONSchema:
			dst = append(dst, `{"type":"json_schema","json_schema":{"name":`...)
			dst = llm.AppendJSONString(dst, rf.Name)
			dst = append(dst, `,"schema":`...)
			dst = append(dst, bytes.TrimSpace(rf.Schema)...)
			dst = append(dst, `,"strict":`...)
			dst = strconv.AppendBool(dst, rf.Strict)
			return append(dst, "}}"...)
		case llm.ResponseJSONObject:
			return append(dst, `{"type":"json_object"}`...)
		default:
			return append(dst, `{"type":"text"}`...)
		}
	}
}

// optionObject reports whether b is one JSON object in valid UTF-8, nested
// at most maxJSONDepth deep. The depth-bounded scanner runs first, so a
// deeply nested text is refused in one linear pass; encoding/json's
// validator after it is the strict one (the scanner and fastjson both let
// a raw control character through in a string that also holds an escape).
// Options are small and set once per call: the cost is not per event.
func optionObject(b []byte) bool {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	e := skipValue(b, i)
	return e > 0 && skipWS(b, e) == len(b) && utf8.Valid(b) && json.Valid(b)
}

// mergeExtraBody appends the members of extra, which must be one JSON
// object in valid UTF-8, to the body's top-level object. A member the
// encoder wrote, or one extra repeats, is refused: a JSON object with a
// member twice means whatever the reading parser makes of it.
func mergeExtraBody(dst []byte, o *object, w Wire, extra []byte) ([]byte, error) {
	const opt = "extra_body"
	if !utf8.Valid(extra) {
		return dst, invalid(w, opt, "not valid UTF-8")
	}
	if !optionObject(extra) {
		return dst, invalid(w, opt, "not one JSON object (nested at most 256 deep)")
	}
	it, _ := topIter(extra)
	var seenBuf [16][]byte
	seen := seenBuf[:0]
	for {
		raw, v, ok := it.next()
		if !ok {
			break
		}
		key := raw
		if it.keyEsc {
			// Escaped names are rare: compare them unescaped, on the heap.
			if key, ok = unescapeTo(nil, raw); !ok {
				return dst, invalid(w, opt, "a malformed member name")
			}
		}
		if o.wrote(key) {
			return dst, invalid(w, opt+"."+string(key), "the encoder writes this member itself")
		}
		for _, k := range seen {
			if bytes.Equal(k, key) {
				return dst, invalid(w, opt+"."+string(key), "the member appears twice")
			}
		}
		seen = append(seen, key)
		dst = append(dst, ',', '"')
		dst = append(dst, raw...)
		dst = append(dst, '"', ':')
		dst = append(dst, extra[v.s:v.e]...)
	}
	if !it.complete() {
		return dst, invalid(w, opt, "not one well-formed JSON object")
	}
	return dst, nil
}
