package scripted

import (
	"errors"
	"fmt"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider/wireenc"
	"github.com/valyala/fastjson"
)

// ErrBadRequest is wrapped by the errors of request bodies the HTTP
// endpoints cannot read. Typically it means a client speaking another
// wire on this path, or a body that is not JSON.
var ErrBadRequest = errors.New("scripted: bad request")

// requestInfo is what a request body says about the answer's form.
type requestInfo struct {
	stream       bool
	includeUsage bool
}

// parseRequest reads a wire request body into the llm.Request a Picker
// sees: model, system prompt, messages (roles, text, tool calls and tool
// results) and tools. Consecutive assistant items are one message.
func parseRequest(w wireenc.Wire, body []byte) (*llm.Request, requestInfo, error) {
	var info requestInfo
	v, err := fastjson.ParseBytes(body)
	if err != nil {
		return nil, info, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	if v.Type() != fastjson.TypeObject {
		return nil, info, fmt.Errorf("%w: the body is not a JSON object", ErrBadRequest)
	}
	req := &llm.Request{}
	req.Model.ID = string(v.GetStringBytes("model"))
	req.Model.API = w.API()
	info.stream = v.GetBool("stream")
	info.includeUsage = v.GetBool("stream_options", "include_usage")
	req.MaxTokens = v.GetInt("max_tokens")
	switch w {
	case wireenc.OpenAIChat:
		for _, m := range v.GetArray("messages") {
			switch string(m.GetStringBytes("role")) {
			case "system", "developer":
				req.System += contentText(m.Get("content"))
			case "user":
				addText(req, llm.RoleUser, m.Get("content"))
			case "assistant":
				am := assistant(req)
				if t := contentText(m.Get("content")); t != "" {
					am.Content = append(am.Content, llm.Block{Type: llm.BlockText, Text: []byte(t)})
				}
				for _, tc := range m.GetArray("tool_calls") {
					am.Content = append(am.Content, llm.Block{Type: llm.BlockToolCall,
						ID: clone(tc.GetStringBytes("id")), Name: clone(tc.GetStringBytes("function", "name")),
						Arguments: clone(tc.GetStringBytes("function", "arguments"))})
				}
			case "tool", "function":
				req.Messages = append(req.Messages, llm.Message{Role: llm.RoleToolResult,
					ToolCallID: string(m.GetStringBytes("tool_call_id")),
					Content:    []llm.Block{{Type: llm.BlockText, Text: []byte(contentText(m.Get("content")))}}})
			}
		}
		for _, t := range v.GetArray("tools") {
			req.Tools = append(req.Tools, llm.Tool{Name: string(t.GetStringBytes("function", "name")),
				Description: string(t.GetStringBytes("function", "description"))})
		}
	case wireenc.Anthropic:
		req.System = contentText(v.Get("system"))
		for _, m := range v.GetArray("messages") {
			c := m.Get("content")
			switch string(m.GetStringBytes("role")) {
			case "user":
				if c != nil && c.Type() == fastjson.TypeArray {
					for _, b := range c.GetArray() {
						if string(b.GetStringBytes("type")) == "tool_result" {
							req.Messages = append(req.Messages, llm.Message{Role: llm.RoleToolResult,
								ToolCallID: string(b.GetStringBytes("tool_use_id")), IsError: b.GetBool("is_error"),
								Content: []llm.Block{{Type: llm.BlockText, Text: []byte(contentText(b.Get("content")))}}})
						}
					}
				}
				if t := contentText(c); t != "" || !hasToolResult(c) {
					addText(req, llm.RoleUser, c)
				}
			case "assistant":
				am := assistant(req)
				if c != nil && c.Type() == fastjson.TypeString {
					am.Content = append(am.Content, llm.Block{Type: llm.BlockText, Text: clone(c.GetStringBytes())})
				}
				for _, b := range c.GetArray() {
					switch string(b.GetStringBytes("type")) {
					case "text":
						am.Content = append(am.Content, llm.Block{Type: llm.BlockText, Text: clone(b.GetStringBytes("text"))})
					case "tool_use":
						var args []byte
						if in := b.Get("input"); in != nil {
							args = llm.AppendJSONValue(nil, in)
						}
						am.Content = append(am.Content, llm.Block{Type: llm.BlockToolCall,
							ID: clone(b.GetStringBytes("id")), Name: clone(b.GetStringBytes("name")), Arguments: args})
					}
				}
			}
		}
		for _, t := range v.GetArray("tools") {
			req.Tools = append(req.Tools, llm.Tool{Name: string(t.GetStringBytes("name")), Description: string(t.GetStringBytes("description"))})
		}
	case wireenc.OpenAIResponses:
		req.System = string(v.GetStringBytes("instructions"))
		req.MaxTokens = v.GetInt("max_output_tokens")
		in := v.Get("input")
		if in != nil && in.Type() == fastjson.TypeString {
			addText(req, llm.RoleUser, in)
		}
		for _, it := range in.GetArray() {
			switch string(it.GetStringBytes("type")) {
			case "function_call", "custom_tool_call":
				am := assistant(req)
				am.Content = append(am.Content, llm.Block{Type: llm.BlockToolCall,
					ID: clone(it.GetStringBytes("call_id")), Name: clone(it.GetStringBytes("name")),
					Arguments: clone(it.GetStringBytes("arguments"))})
			case "function_call_output", "custom_tool_call_output":
				req.Messages = append(req.Messages, llm.Message{Role: llm.RoleToolResult,
					ToolCallID: string(it.GetStringBytes("call_id")),
					Content:    []llm.Block{{Type: llm.BlockText, Text: []byte(contentText(it.Get("output")))}}})
			case "reasoning":
				assistant(req)
			case "", "message":
				switch string(it.GetStringBytes("role")) {
				case "system", "developer":
					req.System += contentText(it.Get("content"))
				case "user":
					addText(req, llm.RoleUser, it.Get("content"))
				case "assistant":
					am := assistant(req)
					if t := contentText(it.Get("content")); t != "" {
						am.Content = append(am.Content, llm.Block{Type: llm.BlockText, Text: []byte(t)})
					}
				}
			}
		}
		for _, t := range v.GetArray("tools") {
			req.Tools = append(req.Tools, llm.Tool{Name: string(t.GetStringBytes("name")), Description: string(t.GetStringBytes("description"))})
		}
	}
	return req, info, nil
}

func clone(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return append([]byte(nil), b...)
}

// assistant returns the trailing assistant message of req, adding one
// when the last message is not an assistant's.
func assistant(req *llm.Request) *llm.Message {
	if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == llm.RoleAssistant {
		return &req.Messages[n-1]
	}
	req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant})
	return &req.Messages[len(req.Messages)-1]
}

func addText(req *llm.Request, r llm.Role, c *fastjson.Value) {
	req.Messages = append(req.Messages, llm.Message{Role: r, Content: []llm.Block{{Type: llm.BlockText, Text: []byte(contentText(c))}}})
}

func hasToolResult(c *fastjson.Value) bool {
	for _, b := range c.GetArray() {
		if string(b.GetStringBytes("type")) == "tool_result" {
			return true
		}
	}
	return false
}

// contentText returns the text of a content value: a string, or the
// concatenated text parts of an array (text, input_text, output_text).
func contentText(c *fastjson.Value) string {
	if c == nil {
		return ""
	}
	switch c.Type() {
	case fastjson.TypeString:
		return string(c.GetStringBytes())
	case fastjson.TypeArray:
		var out []byte
		for _, p := range c.GetArray() {
			switch string(p.GetStringBytes("type")) {
			case "text", "input_text", "output_text", "":
				out = append(out, p.GetStringBytes("text")...)
			}
		}
		return string(out)
	}
	return ""
}
