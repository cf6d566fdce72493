package gateway

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/valyala/fastjson"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/tokenize"
)

// countTokens answers POST /v1/messages/count_tokens ({"input_tokens":N})
// with the project's tokenizer. Anthropic's own tokenizer is not public:
// Claude models are counted with cl100k_base, the usual approximation
// (within some 10-20% of Anthropic's count on English and code); OpenAI
// model names are counted with their own encoding (o200k_base for gpt-4o,
// gpt-4.1, o-series and gpt-5; cl100k_base for gpt-4 and gpt-3.5).
// What is counted: the system prompt, the text of every message block
// (tool_use inputs and tool_result contents included) and the tool
// definitions (name, description, schema), plus a few tokens of framing
// per message as chat templates add. Images are not counted.
func (s *Server) countTokens(w http.ResponseWriter, r *http.Request, body []byte) {
	p := parserPool.Get()
	defer parserPool.Put(p)
	v, err := p.ParseBytes(body)
	if err != nil || v.Type() != fastjson.TypeObject {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "body is not a JSON object")
		return
	}
	model := string(v.GetStringBytes("model"))
	if model == "" || v.Get("messages") == nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", `"model" and "messages" are required`)
		return
	}
	c, err := tokenize.Get(EncodingFor(model))
	if err != nil {
		writeError(w, http.StatusInternalServerError, "api_error", "tokenizer unavailable")
		return
	}
	n := 0
	count := func(b []byte) {
		k, _ := c.Count(string(b))
		n += k
	}
	countContent(v.Get("system"), count)
	msgs := v.GetArray("messages")
	for _, m := range msgs {
		countContent(m.Get("content"), count)
	}
	n += 4 * len(msgs) // role and turn framing
	for _, t := range v.GetArray("tools") {
		count(t.GetStringBytes("name"))
		count(t.GetStringBytes("description"))
		if sc := t.Get("input_schema"); sc != nil {
			count(llm.AppendJSONValue(nil, sc))
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"input_tokens":` + strconv.Itoa(n) + "}\n"))
}

// countContent counts a content value: a string, or an array of blocks.
func countContent(v *fastjson.Value, count func([]byte)) {
	if v == nil {
		return
	}
	switch v.Type() {
	case fastjson.TypeString:
		count(v.GetStringBytes())
	case fastjson.TypeArray:
		for _, b := range v.GetArray() {
			switch string(b.GetStringBytes("type")) {
			case "text":
				count(b.GetStringBytes("text"))
			case "thinking":
				count(b.GetStringBytes("thinking"))
			case "tool_use":
				count(b.GetStringBytes("name"))
				if in := b.Get("input"); in != nil {
					count(llm.AppendJSONValue(nil, in))
				}
			case "tool_result":
				countContent(b.Get("content"), count)
			}
		}
	}
}

// EncodingFor is the tiktoken encoding that counts (or, for models whose
// tokenizer is not public, approximates) model's tokens: o200k_base for
// gpt-4o, gpt-4.1, gpt-5 and the o-series, cl100k_base for everything
// else (gpt-4, gpt-3.5, Claude, open models).
func EncodingFor(model string) tokenize.Encoding {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:] // "openai/gpt-4o" on routers
	}
	for _, p := range [...]string{"gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4", "chatgpt-4o", "gpt-oss"} {
		if strings.HasPrefix(m, p) {
			return tokenize.O200kBase
		}
	}
	return tokenize.Cl100kBase
}
