package provider

import (
	"bytes"
	"strconv"

	"github.com/ocbench/ocbench/llm"
)

// Thinking budgets (tokens) for Anthropic's extended thinking by effort,
// as pi-ai sets them.
var thinkingBudget = map[string]int{"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384, "xhigh": 32768}

const defaultMaxTokens = 4096

// AppendRequestJSON appends the streaming request body of req in wire w's
// JSON to dst: Chat Completions (max_tokens or max_completion_tokens,
// stream_options.include_usage and prompt_cache_key as the endpoint's
// Compat allows: CompatFor),
// Responses (store:false) or Anthropic Messages (with cache_control
// breakpoints on the stable part of the system prompt, at
// req.CacheBoundary, and on the last user message).
func AppendRequestJSON(dst []byte, w Wire, req *llm.Request) []byte {
	switch w {
	case WireOpenAIResponses:
		return appendResponsesRequest(dst, req)
	case WireAnthropic:
		return appendAnthropicRequest(dst, req)
	default:
		return appendChatRequest(dst, req)
	}
}

func appendKey(dst []byte, first *bool, key string) []byte {
	if !*first {
		dst = append(dst, ',')
	}
	*first = false
	dst = llm.AppendJSONString(dst, key)
	return append(dst, ':')
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

func joinText(m *llm.Message, dst []byte) []byte {
	for i := range m.Content {
		if b := &m.Content[i]; b.Type == llm.BlockText {
			dst = append(dst, b.Text...)
		}
	}
	return dst
}

// ---- Chat Completions ----

func appendChatRequest(dst []byte, req *llm.Request) []byte {
	first := true
	dst = append(dst, '{')
	dst = appendKey(dst, &first, "model")
	dst = llm.AppendJSONString(dst, req.Model.ID)
	dst = appendKey(dst, &first, "messages")
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
	var scratch []byte
	for i := range req.Messages {
		m := &req.Messages[i]
		switch m.Role {
		case llm.RoleUser:
			sep()
			dst = append(dst, `{"role":"user","content":`...)
			dst = appendChatUserContent(dst, m)
			dst = append(dst, '}')
		case llm.RoleAssistant:
			scratch = joinText(m, scratch[:0])
			calls := 0
			for j := range m.Content {
				if m.Content[j].Type == llm.BlockToolCall {
					calls++
				}
			}
			if len(scratch) == 0 && calls == 0 {
				continue
			}
			sep()
			dst = append(dst, `{"role":"assistant","content":`...)
			if len(scratch) == 0 {
				dst = append(dst, "null"...)
			} else {
				dst = llm.AppendJSONString(dst, scratch)
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
					scratch = appendRaw(scratch[:0], b.Arguments, "{}")
					dst = llm.AppendJSONString(dst, scratch)
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
			dst = llm.AppendJSONString(dst, toolResultText(m, scratch[:0]))
			dst = append(dst, '}')
		}
	}
	dst = append(dst, ']')
	compat := CompatFor(&req.Model)
	dst = appendKey(dst, &first, "stream")
	dst = append(dst, "true"...)
	if compat.StreamOptions {
		dst = appendKey(dst, &first, "stream_options")
		dst = append(dst, `{"include_usage":true}`...)
	}
	if mt := maxTokens(req); mt > 0 {
		dst = appendKey(dst, &first, compat.MaxTokensField)
		dst = strconv.AppendInt(dst, int64(mt), 10)
	}
	if req.Temperature != nil {
		dst = appendKey(dst, &first, "temperature")
		dst = strconv.AppendFloat(dst, *req.Temperature, 'g', -1, 64)
	}
	if req.Reasoning != "" {
		dst = appendKey(dst, &first, "reasoning_effort")
		dst = llm.AppendJSONString(dst, req.Reasoning)
	}
	if req.SessionID != "" && compat.PromptCacheKey {
		dst = appendKey(dst, &first, "prompt_cache_key")
		dst = llm.AppendJSONString(dst, req.SessionID)
	}
	if len(req.Tools) > 0 {
		dst = appendKey(dst, &first, "tools")
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
	return append(dst, '}')
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

func toolResultText(m *llm.Message, dst []byte) []byte {
	for i := range m.Content {
		b := &m.Content[i]
		switch b.Type {
		case llm.BlockText:
			if len(dst) > 0 {
				dst = append(dst, '\n')
			}
			dst = append(dst, b.Text...)
		case llm.BlockImage:
			if len(dst) > 0 {
				dst = append(dst, '\n')
			}
			dst = append(dst, "(image omitted)"...)
		}
	}
	return dst
}

// ---- Responses ----

func appendResponsesRequest(dst []byte, req *llm.Request) []byte {
	first := true
	dst = append(dst, '{')
	dst = appendKey(dst, &first, "model")
	dst = llm.AppendJSONString(dst, req.Model.ID)
	dst = appendKey(dst, &first, "input")
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
	var scratch []byte
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
					scratch = appendRaw(scratch[:0], b.Arguments, "{}")
					dst = llm.AppendJSONString(dst, scratch)
					dst = append(dst, '}')
				}
			}
		case llm.RoleToolResult:
			sep()
			dst = append(dst, `{"type":"function_call_output","call_id":`...)
			dst = llm.AppendJSONString(dst, callID([]byte(m.ToolCallID)))
			dst = append(dst, `,"output":`...)
			dst = llm.AppendJSONString(dst, toolResultText(m, scratch[:0]))
			dst = append(dst, '}')
		}
	}
	dst = append(dst, ']')
	dst = appendKey(dst, &first, "stream")
	dst = append(dst, "true"...)
	dst = appendKey(dst, &first, "store")
	dst = append(dst, "false"...)
	if mt := maxTokens(req); mt > 0 {
		dst = appendKey(dst, &first, "max_output_tokens")
		dst = strconv.AppendInt(dst, int64(mt), 10)
	}
	if req.Temperature != nil {
		dst = appendKey(dst, &first, "temperature")
		dst = strconv.AppendFloat(dst, *req.Temperature, 'g', -1, 64)
	}
	if req.Reasoning != "" {
		dst = appendKey(dst, &first, "reasoning")
		dst = append(dst, `{"effort":`...)
		dst = llm.AppendJSONString(dst, req.Reasoning)
		dst = append(dst, `,"summary":"auto"}`...)
		dst = appendKey(dst, &first, "include")
		dst = append(dst, `["reasoning.encrypted_content"]`...)
	}
	if req.SessionID != "" {
		dst = appendKey(dst, &first, "prompt_cache_key")
		dst = llm.AppendJSONString(dst, req.SessionID)
	}
	if len(req.Tools) > 0 {
		dst = appendKey(dst, &first, "tools")
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
	return append(dst, '}')
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

func appendAnthropicRequest(dst []byte, req *llm.Request) []byte {
	first := true
	dst = append(dst, '{')
	dst = appendKey(dst, &first, "model")
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
	dst = appendKey(dst, &first, "max_tokens")
	dst = strconv.AppendInt(dst, int64(mt), 10)
	dst = appendKey(dst, &first, "stream")
	dst = append(dst, "true"...)
	if req.System != "" {
		dst = appendKey(dst, &first, "system")
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
	dst = appendKey(dst, &first, "messages")
	dst = append(dst, '[')
	n := 0
	var scratch []byte
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
				scratch = toolResultText(m, scratch[:0])
				dst = append(dst, `{"type":"text","text":`...)
				if len(scratch) == 0 {
					dst = append(dst, `"(no output)"`...)
				} else {
					dst = llm.AppendJSONString(dst, scratch)
				}
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
		dst = appendKey(dst, &first, "temperature")
		dst = strconv.AppendFloat(dst, *req.Temperature, 'g', -1, 64)
	}
	if budget > 0 {
		dst = appendKey(dst, &first, "thinking")
		dst = append(dst, `{"type":"enabled","budget_tokens":`...)
		dst = strconv.AppendInt(dst, int64(budget), 10)
		dst = append(dst, '}')
	}
	if len(req.Tools) > 0 {
		dst = appendKey(dst, &first, "tools")
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
		dst = appendKey(dst, &first, "metadata")
		dst = append(dst, `{"user_id":`...)
		dst = llm.AppendJSONString(dst, req.SessionID)
		dst = append(dst, '}')
	}
	return append(dst, '}')
}
