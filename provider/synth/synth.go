// Package synth generates deterministic synthetic provider streams for
// tests and benchmarks: the 2,000-event shapes of the peer measurements
// (text deltas drawn from a word list with quotes, backslashes, blank
// lines, markdown, backticks, non-ASCII and HTML, plus two tool calls whose
// argument JSON arrives in ~4-byte fragments), in each wire format.
//
// It owns the generators and the expected decoded content. It does not
// decode (package provider) or serve streams (provider/scripted).
package synth

import (
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/ocbench/ocbench/llm"
)

// Call is one expected tool call.
type Call struct {
	ID, Name, Args string
}

// Stream is a generated body with what decoding it must give.
type Stream struct {
	Body  []byte
	Text  string
	Calls []Call
	// Usage as llm reports it (pi-ai semantics).
	Usage llm.Usage
	// Events is the number of SSE events in Body.
	Events int
}

var words = []string{
	"the", "stream", "decoder", "\"quoted\"", "back\\slash", "\n\n", "**bold**", "`code`",
	"café", "—", "<html>", "tool", "call", "arguments", "and", "with", "JSON", "fragment",
	"é", "line\n", "tab\t", "{braces}", "[list]", "done.", "a", "is", "of", "to",
}

// fragment counts per 2,000 events, as in the peer benchmark.
func toolFragments(events int) int {
	n := events * 395 / 2000
	return max(n, 1)
}

func textDeltas(rng *rand.Rand, n int) []string {
	out := make([]string, n)
	for i := range out {
		w := words[rng.IntN(len(words))]
		if i > 0 && w != "\n\n" && w != "line\n" {
			w = " " + w
		}
		out[i] = w
	}
	return out
}

const goSource = "package stream\n\nimport (\n\t\"bufio\"\n\t\"io\"\n)\n\n// Decoder reads events.\ntype Decoder struct {\n\tbr *bufio.Reader\n\tbuf []byte\n}\n\nfunc (d *Decoder) Next() ([]byte, error) {\n\tline, err := d.br.ReadSlice('\\n')\n\tif err != nil {\n\t\treturn nil, err\n\t}\n\tif len(line) > 0 && line[0] == ':' {\n\t\treturn nil, nil // \"comment\"\n\t}\n\td.buf = append(d.buf[:0], line...)\n\treturn d.buf, nil\n}\n"

func jsonString(s string) string {
	return string(llm.AppendJSONString(nil, s))
}

func editArgs() string {
	src := goSource
	for len(src) < 1500 {
		src += goSource
	}
	src = src[:1500]
	return `{"path":"internal/stream/decoder.go","old_string":"func (d *Decoder) Next()","new_string":` + jsonString(src) + `}`
}

func shellArgs() string {
	var b strings.Builder
	b.WriteString(`{"command":"`)
	for i := 0; b.Len() < 1500; i++ {
		b.WriteString(`cd /work/repo && go test ./pkg` + strconv.Itoa(i) + `/... -run 'Test.*Decoder' -count=1 2>&1 | tee \"out ` + strconv.Itoa(i) + `.log\"; `)
	}
	b.WriteString(`echo done","timeout_ms":120000,"cwd":"/work/repo","env":{"GOFLAGS":"-count=1","CGO_ENABLED":"0"}}`)
	return b.String()
}

// split cuts s into n fragments at evenly spaced points, each moved by up
// to one byte at random.
func split(rng *rand.Rand, s string, n int) []string {
	if n <= 1 || len(s) < 2*n {
		return []string{s}
	}
	cuts := make([]int, 0, n+1)
	cuts = append(cuts, 0)
	for i := 1; i < n; i++ {
		c := i*len(s)/n + rng.IntN(3) - 1
		if c <= cuts[len(cuts)-1] {
			c = cuts[len(cuts)-1] + 1
		}
		cuts = append(cuts, c)
	}
	cuts = append(cuts, len(s))
	out := make([]string, n)
	for i := range out {
		out[i] = s[cuts[i]:cuts[i+1]]
	}
	return out
}

type plan struct {
	text  []string
	calls []Call
	frags [][]string
}

func makePlan(events int, seed uint64, overhead int) plan {
	rng := rand.New(rand.NewPCG(seed, 2))
	nf := toolFragments(events)
	nt := max(events-overhead-2*nf, 1)
	p := plan{text: textDeltas(rng, nt)}
	p.calls = []Call{
		{ID: "call_edit_" + strconv.FormatUint(seed, 10), Name: "edit_file", Args: editArgs()},
		{ID: "call_shell_" + strconv.FormatUint(seed, 10), Name: "run_shell", Args: shellArgs()},
	}
	for _, c := range p.calls {
		p.frags = append(p.frags, split(rng, c.Args, nf))
	}
	return p
}

func (p *plan) stream(body []byte, events int, u llm.Usage) *Stream {
	return &Stream{Body: body, Text: strings.Join(p.text, ""), Calls: p.calls, Usage: u, Events: events}
}

func obfuscation(rng *rand.Rand) string {
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	n := 3 + rng.IntN(12)
	b := make([]byte, n)
	for i := range b {
		b[i] = letters[rng.IntN(len(letters))]
	}
	return string(b)
}

// OpenAIChat generates a Chat Completions stream of about events chunks:
// a role chunk, text deltas, two parallel tool calls whose fragments
// interleave by index, a finish chunk, a usage chunk and data: [DONE].
func OpenAIChat(events int, seed uint64) *Stream {
	p := makePlan(events, seed, 5)
	rng := rand.New(rand.NewPCG(seed, 3))
	var b []byte
	n := 0
	head := `data: {"id":"chatcmpl-SYNTH0000000000000000000000","object":"chat.completion.chunk","created":1770933892,"model":"gpt-4.1-2025-04-14","system_fingerprint":"fp_de604bd877","choices":[{"index":0,"delta":`
	tail := func(finish string) string {
		return `,"logprobs":null,"finish_reason":` + finish + `}],"usage":null,"obfuscation":"` + obfuscation(rng) + `"}` + "\n\n"
	}
	b = append(b, head+`{"role":"assistant","content":"","refusal":null}`+tail("null")...)
	n++
	for _, t := range p.text {
		b = append(b, head+`{"content":`+jsonString(t)+`}`+tail("null")...)
		n++
	}
	for i, c := range p.calls {
		b = append(b, head+`{"tool_calls":[{"index":`+strconv.Itoa(i)+`,"id":"`+c.ID+`","type":"function","function":{"name":"`+c.Name+`","arguments":""}}]}`+tail("null")...)
		n++
	}
	for j := 0; j < len(p.frags[0]) || j < len(p.frags[1]); j++ {
		for i := range p.calls {
			if j < len(p.frags[i]) {
				b = append(b, head+`{"tool_calls":[{"index":`+strconv.Itoa(i)+`,"function":{"arguments":`+jsonString(p.frags[i][j])+`}}]}`+tail("null")...)
				n++
			}
		}
	}
	b = append(b, head+`{}`+tail(`"tool_calls"`)...)
	n++
	b = append(b, `data: {"id":"chatcmpl-SYNTH0000000000000000000000","object":"chat.completion.chunk","created":1770933892,"model":"gpt-4.1-2025-04-14","system_fingerprint":"fp_de604bd877","choices":[],"usage":{"prompt_tokens":20480,"completion_tokens":2000,"total_tokens":22480,"prompt_tokens_details":{"cached_tokens":19200,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},"obfuscation":"x"}`+"\n\n"...)
	n++
	b = append(b, "data: [DONE]\n\n"...)
	u := llm.Usage{Input: 1280, Output: 2000, CacheRead: 19200, TotalTokens: 22480}
	return p.stream(b, n, u)
}

// Anthropic generates a Messages stream: message_start, a text block with
// a ping, two sequential tool_use blocks, message_delta and message_stop.
func Anthropic(events int, seed uint64) *Stream {
	p := makePlan(events, seed, 6+4)
	var b []byte
	n := 0
	ev := func(typ, data string) {
		b = append(b, "event: "+typ+"\ndata: "+data+"\n\n"...)
		n++
	}
	ev("message_start", `{"type":"message_start","message":{"model":"claude-sonnet-4-5-20250929","id":"msg_01SYNTH000000000000000000","type":"message","role":"assistant","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1280,"cache_creation_input_tokens":512,"cache_read_input_tokens":18688,"cache_creation":{"ephemeral_5m_input_tokens":512,"ephemeral_1h_input_tokens":0},"output_tokens":1,"service_tier":"standard"}}}`)
	ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
	ev("ping", `{"type": "ping"}`)
	for _, t := range p.text {
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+jsonString(t)+`}}`)
	}
	ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
	for i, c := range p.calls {
		idx := strconv.Itoa(i + 1)
		ev("content_block_start", `{"type":"content_block_start","index":`+idx+`,"content_block":{"type":"tool_use","id":"`+c.ID+`","name":"`+c.Name+`","input":{}}}`)
		for _, f := range p.frags[i] {
			ev("content_block_delta", `{"type":"content_block_delta","index":`+idx+`,"delta":{"type":"input_json_delta","partial_json":`+jsonString(f)+`}}`)
		}
		ev("content_block_stop", `{"type":"content_block_stop","index":`+idx+`}`)
	}
	ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"input_tokens":1280,"cache_creation_input_tokens":512,"cache_read_input_tokens":18688,"output_tokens":2000}}`)
	ev("message_stop", `{"type":"message_stop"}`)
	u := llm.Usage{Input: 1280, Output: 2000, CacheRead: 18688, CacheWrite: 512, TotalTokens: 1280 + 2000 + 18688 + 512}
	return p.stream(b, n, u)
}

// Responses generates an OpenAI Responses stream: created, in_progress, a
// message item with output_text deltas, two function_call items (arguments
// deltas, .done, item done) and response.completed.
func Responses(events int, seed uint64) *Stream {
	p := makePlan(events, seed, 14)
	rng := rand.New(rand.NewPCG(seed, 4))
	var b []byte
	n := 0
	seq := 0
	ev := func(typ, data string) {
		b = append(b, "event: "+typ+"\ndata: {\"type\":\""+typ+"\","+data+",\"sequence_number\":"+strconv.Itoa(seq)+"}\n\n"...)
		seq++
		n++
	}
	const resp = `"response":{"id":"resp_SYNTH0000000000000000000000000000","object":"response","created_at":1787659560,"status":"in_progress","model":"gpt-5.1-2025-11-13","output":[],"usage":null}`
	ev("response.created", resp)
	ev("response.in_progress", resp)
	const msgID = "msg_SYNTH00000000000000000000000000000000000000000000"
	ev("response.output_item.added", `"output_index":0,"item":{"id":"`+msgID+`","type":"message","status":"in_progress","content":[],"role":"assistant"}`)
	ev("response.content_part.added", `"item_id":"`+msgID+`","output_index":0,"content_index":0,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":""}`)
	for _, t := range p.text {
		ev("response.output_text.delta", `"item_id":"`+msgID+`","output_index":0,"content_index":0,"delta":`+jsonString(t)+`,"logprobs":[],"obfuscation":"`+obfuscation(rng)+`"`)
	}
	text := jsonString(strings.Join(p.text, ""))
	ev("response.output_text.done", `"item_id":"`+msgID+`","output_index":0,"content_index":0,"text":`+text+`,"logprobs":[]`)
	ev("response.content_part.done", `"item_id":"`+msgID+`","output_index":0,"content_index":0,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":`+text+`}`)
	ev("response.output_item.done", `"output_index":0,"item":{"id":"`+msgID+`","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"logprobs":[],"text":`+text+`}],"role":"assistant"}`)
	calls := make([]Call, len(p.calls))
	for i, c := range p.calls {
		oi := strconv.Itoa(i + 1)
		itemID := "fc_SYNTH" + strconv.Itoa(i) + "000000000000000000000000000000000000000000"
		calls[i] = Call{ID: c.ID + "|" + itemID, Name: c.Name, Args: c.Args}
		ev("response.output_item.added", `"output_index":`+oi+`,"item":{"id":"`+itemID+`","type":"function_call","status":"in_progress","arguments":"","call_id":"`+c.ID+`","name":"`+c.Name+`"}`)
		for _, f := range p.frags[i] {
			ev("response.function_call_arguments.delta", `"item_id":"`+itemID+`","output_index":`+oi+`,"delta":`+jsonString(f)+`,"obfuscation":"`+obfuscation(rng)+`"`)
		}
		ev("response.function_call_arguments.done", `"item_id":"`+itemID+`","output_index":`+oi+`,"arguments":`+jsonString(c.Args))
		ev("response.output_item.done", `"output_index":`+oi+`,"item":{"id":"`+itemID+`","type":"function_call","status":"completed","arguments":`+jsonString(c.Args)+`,"call_id":"`+c.ID+`","name":"`+c.Name+`"}`)
	}
	ev("response.completed", `"response":{"id":"resp_SYNTH0000000000000000000000000000","object":"response","created_at":1787659560,"status":"completed","model":"gpt-5.1-2025-11-13","output":[],"usage":{"input_tokens":20480,"input_tokens_details":{"cache_write_tokens":0,"cached_tokens":19200},"output_tokens":2000,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":22480}}`)
	s := p.stream(b, n, llm.Usage{Input: 1280, Output: 2000, CacheRead: 19200, TotalTokens: 22480})
	s.Calls = calls
	return s
}

// OpenAIChatStream returns the body of OpenAIChat(events, seed).
func OpenAIChatStream(events int, seed uint64) []byte { return OpenAIChat(events, seed).Body }

// AnthropicStream returns the body of Anthropic(events, seed).
func AnthropicStream(events int, seed uint64) []byte { return Anthropic(events, seed).Body }

// ResponsesStream returns the body of Responses(events, seed).
func ResponsesStream(events int, seed uint64) []byte { return Responses(events, seed).Body }
