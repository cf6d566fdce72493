package fuzz

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/valyala/fastjson"

	"github.com/ocbench/ocbench/provider"
)

// Recording is a recorded body a mutation run starts from, with the replay
// flags it is read with.
type Recording struct {
	Name         string
	Wire         provider.Wire
	Tools        []string
	Reasoning    bool
	HTMLEntities bool
	Body         []byte
}

//go:embed corpus/*.sse
var corpusFS embed.FS

// EmbeddedRecordings returns the recordings built into ocbench: real
// provider streams of the three wires (the project's testdata/streams),
// each with the tools its calls name.
func EmbeddedRecordings() []Recording {
	rs, err := readRecordings(corpusFS, "corpus")
	if err != nil || len(rs) == 0 {
		panic(fmt.Sprintf("fuzz: embedded corpus: %v", err)) // the build embeds it
	}
	return rs
}

// LoadRecordings reads every NAME.sse under dir (recursively), with the
// --wire, --tools, --reasoning and --html-entities of NAME.flags when it
// exists; without one the wire is detected as `ocbench replay` detects it
// and the tools are the names the body's calls carry.
func LoadRecordings(dir string) ([]Recording, error) {
	rs, err := readRecordings(os.DirFS(dir), ".")
	if err == nil && len(rs) == 0 {
		err = fmt.Errorf("no .sse files under %s", dir)
	}
	return rs, err
}

func readRecordings(fsys fs.FS, root string) ([]Recording, error) {
	var rs []Recording
	err := fs.WalkDir(fsys, root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".sse") {
			return err
		}
		body, err := fs.ReadFile(fsys, path)
		if err != nil {
			return err
		}
		r := Recording{Name: strings.TrimPrefix(path, root+"/"), Body: body}
		flags, ferr := fs.ReadFile(fsys, strings.TrimSuffix(path, ".sse")+".flags")
		wireSet := false
		if ferr == nil {
			wireSet, err = r.parseFlags(string(flags))
			if err != nil {
				return fmt.Errorf("%s: %v", filepath.Base(path), err)
			}
		} else {
			r.Tools = callNames(body)
		}
		if !wireSet {
			r.Wire, _ = provider.DetectWire(body) // Chat Completions when none shows
		}
		rs = append(rs, r)
		return nil
	})
	sort.Slice(rs, func(i, j int) bool { return rs[i].Name < rs[j].Name })
	return rs, err
}

// parseFlags reads the replay flags a mutant keeps; the others (--repair)
// are the run's own.
func (r *Recording) parseFlags(s string) (wireSet bool, err error) {
	f := strings.Fields(s)
	for i := 0; i < len(f); i++ {
		switch f[i] {
		case "--wire", "--tools", "--repair":
			if i+1 >= len(f) {
				return wireSet, fmt.Errorf("%s without a value", f[i])
			}
			i++
			switch f[i-1] {
			case "--wire":
				w, ok := provider.ParseWire(f[i])
				if !ok {
					return wireSet, fmt.Errorf("unknown wire %q", f[i])
				}
				r.Wire, wireSet = w, true
			case "--tools":
				r.Tools = strings.Split(f[i], ",")
			}
		case "--reasoning":
			r.Reasoning = true
		case "--html-entities":
			r.HTMLEntities = true
		default:
			return wireSet, fmt.Errorf("flag %q is not one a mutation run replays with", f[i])
		}
	}
	return wireSet, nil
}

var callName = regexp.MustCompile(`"name"\s*:\s*"([A-Za-z0-9_.:-]{1,64})"`)

// callNames returns the distinct names a body's tool calls (or anything
// else) carry as "name" strings: the allowlist a recording without flags
// is replayed with.
func callNames(body []byte) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range callName.FindAllSubmatch(body, -1) {
		if n := string(m[1]); !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// mutantSalt keeps a mutation run's random stream apart from the cases'.
const mutantSalt = 0x9e3779b97f4a7c15

// GenerateMutant returns case i of a mutation run with seed: a body that
// hostile or broken upstreams could send, made from a recording of corpus
// or from GenerateVariant's case i (half each), with one to three of the
// mutations below, named in Case.Variant. The run replays it as its
// recording is replayed, the allowlist sometimes emptied or short of a
// name, and the model the body names first (as the replay tool takes it).
//
// Mutations: an event dropped, doubled, or swapped with the next; a foreign
// event put in (a keep-alive comment, a ping, an unknown type, an in-band
// error, an early end, an empty or non-JSON data line, an event of the
// wire's that does not belong there); a JSON value of one event replaced
// (another type, an odd number, an escaped, empty or surrogate string),
// its member deleted or given a duplicate key; a data line split in two or
// without its space; an event line removed or renamed; a byte replaced by
// a JSON or SSE delimiter; and over the whole body, CRLF or CR line ends,
// a byte-order mark, or a cut at any byte.
func GenerateMutant(corpus []Recording, seed, i uint64) *Case {
	r := rand.New(rand.NewPCG(seed^mutantSalt, i))
	var c *Case
	if len(corpus) == 0 || r.IntN(2) == 0 {
		c = GenerateVariant(seed, i)
		c.Variant = append([]string{fmt.Sprintf("from generated case %d", i)}, c.Variant...)
	} else {
		rec := &corpus[r.IntN(len(corpus))]
		c = &Case{Seed: seed, Index: i, Wire: rec.Wire, Tools: append([]string(nil), rec.Tools...),
			Reasoning: rec.Reasoning, HTMLEntities: rec.HTMLEntities, Body: rec.Body,
			Variant: []string{"from " + rec.Name}}
	}
	c.Mutant = true
	c.Calls = nil // what the generated case meant no longer holds
	m := mutant{r: r, wire: c.Wire, evs: splitEvents(c.Body)}
	for n := 1 + r.IntN(3); n > 0; {
		if m.eventOp() {
			n--
		}
	}
	body := bytes.Join(m.evs, nil)
	switch k := r.IntN(20); {
	case k == 0:
		body = bytes.ReplaceAll(body, []byte("\n"), []byte("\r\n"))
		m.note("CRLF line ends")
	case k == 1:
		body = bytes.ReplaceAll(body, []byte("\n"), []byte("\r"))
		m.note("CR line ends")
	case k == 2:
		body = append([]byte("\xef\xbb\xbf"), body...)
		m.note("byte-order mark")
	case k < 6 && len(body) > 1:
		n := 1 + r.IntN(len(body)-1)
		body = body[:n:n]
		m.note("cut at byte " + strconv.Itoa(n))
	}
	c.Body = body
	c.Variant = append(c.Variant, m.notes...)
	switch k := r.IntN(8); {
	case k == 0:
		c.Tools = nil
		c.Variant = append(c.Variant, "no allowlist")
	case k == 1 && len(c.Tools) > 0:
		j := r.IntN(len(c.Tools))
		c.Variant = append(c.Variant, "allowlist without "+c.Tools[j])
		c.Tools = append(c.Tools[:j:j], c.Tools[j+1:]...)
	}
	if r.IntN(5) == 0 {
		c.Reasoning = !c.Reasoning
		c.Variant = append(c.Variant, "reasoning "+strconv.FormatBool(c.Reasoning))
	}
	c.Model, _ = provider.DetectModel(c.Body)
	if c.Model == "" {
		c.Model = "replay"
	}
	return c
}

// splitEvents splits body after each blank line ("\n\n"); the pieces
// joined give body back.
func splitEvents(body []byte) [][]byte {
	var evs [][]byte
	for len(body) > 0 {
		i := bytes.Index(body, []byte("\n\n"))
		if i < 0 {
			evs = append(evs, body)
			break
		}
		evs = append(evs, body[:i+2:i+2])
		body = body[i+2:]
	}
	return evs
}

type mutant struct {
	r     *rand.Rand
	wire  provider.Wire
	evs   [][]byte
	notes []string
}

func (m *mutant) note(s string) { m.notes = append(m.notes, s) }

// eventOp applies one event-level mutation; false when the one drawn did
// not apply (the caller draws again).
func (m *mutant) eventOp() bool {
	r, n := m.r, len(m.evs)
	k := 0
	if n > 0 {
		k = r.IntN(n)
	}
	switch r.IntN(10) {
	case 0:
		if n == 0 {
			return false
		}
		m.evs = append(m.evs[:k:k], m.evs[k+1:]...)
		m.note(fmt.Sprintf("event %d dropped", k))
	case 1:
		if n == 0 {
			return false
		}
		m.evs = append(m.evs[:k+1:k+1], m.evs[k:]...)
		m.note(fmt.Sprintf("event %d doubled", k))
	case 2:
		if n < 2 || k == n-1 {
			return false
		}
		m.evs[k], m.evs[k+1] = m.evs[k+1], m.evs[k]
		m.note(fmt.Sprintf("events %d and %d swapped", k, k+1))
	case 3, 4:
		at := r.IntN(n + 1)
		ev := foreignEvents[m.wire][r.IntN(len(foreignEvents[m.wire]))]
		if r.IntN(3) == 0 {
			ev = foreignEvents[3][r.IntN(len(foreignEvents[3]))]
		}
		if at > 0 && !bytes.HasSuffix(m.evs[at-1], []byte("\n\n")) {
			return false // after a last event without its blank line it would join it
		}
		m.evs = append(m.evs[:at:at], append([][]byte{[]byte(ev)}, m.evs[at:]...)...)
		m.note(fmt.Sprintf("put in at %d: %q", at, strings.TrimSpace(ev)))
	case 5, 6, 7:
		return n > 0 && m.jsonOp(k)
	case 8:
		return n > 0 && m.lineOp(k)
	case 9:
		if n == 0 || len(m.evs[k]) == 0 {
			return false
		}
		ev := bytes.Clone(m.evs[k])
		j := r.IntN(len(ev))
		ev[j] = flipBytes[r.IntN(len(flipBytes))]
		m.evs[k] = ev
		m.note(fmt.Sprintf("event %d byte %d is %q", k, j, ev[j]))
	}
	return true
}

// flipBytes replace a byte of an event: JSON and SSE delimiters, a NUL, a
// letter.
const flipBytes = "{}[]\",:\\\n \x00x"

// foreignEvents are events put into a body: per wire, then (index 3) for
// any wire.
var foreignEvents = [4][]string{
	provider.WireOpenAIChat: {
		"data: {\"choices\":[]}\n\n",
		"data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{}}]}\n\n",
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" more\"},\"finish_reason\":null}]}\n\n",
		"data: {\"choices\":[{\"index\":1,\"delta\":{\"content\":\"other choice\"}}]}\n\n",
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"hmm\"}}]}\n\n",
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":3,\"id\":\"call_x\",\"function\":{\"name\":\"read\",\"arguments\":\"{}\"}}]}}]}\n\n",
		"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":3,\"total_tokens\":10}}\n\n",
		"data: {\"error\":{\"message\":\"upstream overloaded\",\"type\":\"server_error\"}}\n\n",
		"data: [DONE]\n\n",
	},
	provider.WireOpenAIResponses: {
		"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"content_index\":0,\"item_id\":\"msg_x\",\"delta\":\" more\"}\n\n",
		"event: response.reasoning_summary_text.delta\ndata: {\"type\":\"response.reasoning_summary_text.delta\",\"output_index\":0,\"summary_index\":0,\"item_id\":\"rs_x\",\"delta\":\"hmm\"}\n\n",
		"event: response.refusal.delta\ndata: {\"type\":\"response.refusal.delta\",\"output_index\":0,\"content_index\":0,\"item_id\":\"msg_x\",\"delta\":\"no\"}\n\n",
		"event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":5,\"item\":{\"type\":\"function_call\",\"id\":\"fc_x\",\"call_id\":\"call_x\",\"name\":\"read\",\"arguments\":\"\"}}\n\n",
		"event: error\ndata: {\"type\":\"error\",\"code\":\"server_error\",\"message\":\"boom\"}\n\n",
		"event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"id\":\"resp_x\",\"status\":\"failed\",\"error\":{\"code\":\"server_error\",\"message\":\"boom\"}}}\n\n",
		"event: response.incomplete\ndata: {\"type\":\"response.incomplete\",\"response\":{\"id\":\"resp_x\",\"status\":\"incomplete\",\"incomplete_details\":{\"reason\":\"max_output_tokens\"}}}\n\n",
		"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_x\",\"status\":\"completed\",\"output\":[],\"usage\":{\"input_tokens\":5,\"output_tokens\":2,\"total_tokens\":7}}}\n\n",
		"event: response.queued\ndata: {\"type\":\"response.queued\",\"response\":{\"id\":\"resp_x\",\"status\":\"queued\"}}\n\n",
	},
	provider.WireAnthropic: {
		"event: ping\ndata: {\"type\":\"ping\"}\n\n",
		"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\" more\"}}\n\n",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"citations_delta\",\"citation\":{\"type\":\"char_location\",\"cited_text\":\"x\"}}}\n\n",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"c2ln\"}}\n\n",
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":7,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\n\n",
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":8,\"content_block\":{\"type\":\"redacted_thinking\",\"data\":\"abc\"}}\n\n",
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":5}}\n\n",
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
	},
	3: {
		": keep-alive\n\n",
		"retry: 100\n\n",
		"id: 7\n\n",
		"data:\n\n",
		"data: not json\n\n",
		"data: {\"truncated\":\n\n",
		"data: {}\n\n",
		"data: []\n\n",
		"data: null\n\n",
		"event: unknown_event\ndata: {\"type\":\"unknown_event\",\"x\":1}\n\n",
		"data: {\"type\":\"response.unknown\",\"x\":1}\n\n",
		"\n\n",
	},
}

// lineOp mutates the SSE lines of event k.
func (m *mutant) lineOp(k int) bool {
	ev := m.evs[k]
	switch m.r.IntN(4) {
	case 0: // "data: x" -> "data:x"
		i, _, ok := fieldLine(ev, "data: ")
		if !ok {
			return false
		}
		m.evs[k] = append(ev[:i+5:i+5], ev[i+6:]...)
		m.note(fmt.Sprintf("event %d data without its space", k))
	case 1: // one data line split in two (SSE joins them with "\n")
		i, end, ok := fieldLine(ev, "data: ")
		if !ok || end < i+8 {
			return false
		}
		at := i + 6 + m.r.IntN(end-i-6)
		m.evs[k] = append(append(append([]byte(nil), ev[:at]...), "\ndata: "...), ev[at:]...)
		m.note(fmt.Sprintf("event %d data split at byte %d", k, at-i-6))
	case 2: // the event line removed
		i, end, ok := fieldLine(ev, "event: ")
		if !ok {
			return false
		}
		m.evs[k] = append(ev[:i:i], ev[end+1:]...)
		m.note(fmt.Sprintf("event %d without its event line", k))
	case 3: // the event line renamed
		i, end, ok := fieldLine(ev, "event: ")
		if !ok {
			return false
		}
		name := eventNames[m.r.IntN(len(eventNames))]
		m.evs[k] = append(append(ev[:i+7:i+7], name...), ev[end:]...)
		m.note(fmt.Sprintf("event %d named %s", k, name))
	}
	return true
}

// fieldLine finds the first line of ev that starts with prefix (at i) and
// its line feed (at end).
func fieldLine(ev []byte, prefix string) (i, end int, ok bool) {
	i = bytes.Index(ev, []byte(prefix))
	if i < 0 {
		return 0, 0, false
	}
	n := bytes.IndexByte(ev[i:], '\n')
	if n < 0 {
		return 0, 0, false
	}
	return i, i + n, true
}

var eventNames = []string{"ping", "error", "message_start", "message_delta", "message_stop", "content_block_start",
	"content_block_delta", "content_block_stop", "response.completed", "response.output_text.delta", "response.failed", "done", "x"}

// rawValues replace a JSON value; a string value may also become one of
// stringValues.
var rawValues = []string{`null`, `0`, `-1`, `1.5`, `1e2`, `1e400`, `12345678901234567890`, `true`, `false`, `""`, `"x"`,
	`{}`, `[]`, `[1,2]`, `{"a":1}`, `"\ud800"`, `"\ud83d\ude00"`, `"\u0000"`, `"a\nb"`, "\"a\x01b\"", `"0"`, `-0`, `0.0`}

// jsonOp mutates one JSON value of event k's (one-line) data.
func (m *mutant) jsonOp(k int) bool {
	ev := m.evs[k]
	i := bytes.Index(ev, []byte("data: {"))
	if i < 0 {
		return false
	}
	start := i + 6
	end := start + bytes.IndexByte(ev[start:], '\n')
	if end < start {
		end = len(ev)
	}
	var p fastjson.Parser
	root, err := p.ParseBytes(ev[start:end])
	if err != nil {
		return false
	}
	type node struct {
		parent *fastjson.Value
		key    string // in an object
		idx    int    // in an array, when key is ""
		v      *fastjson.Value
	}
	var nodes []node
	var walk func(v *fastjson.Value, depth int)
	walk = func(v *fastjson.Value, depth int) {
		if depth > 8 {
			return
		}
		switch v.Type() {
		case fastjson.TypeObject:
			o, _ := v.Object()
			o.Visit(func(key []byte, c *fastjson.Value) {
				nodes = append(nodes, node{parent: v, key: string(key), v: c})
				walk(c, depth+1)
			})
		case fastjson.TypeArray:
			a, _ := v.Array()
			for j, c := range a {
				nodes = append(nodes, node{parent: v, idx: j, v: c})
				walk(c, depth+1)
			}
		}
	}
	walk(root, 0)
	if len(nodes) == 0 {
		return false
	}
	nd := nodes[m.r.IntN(len(nodes))]
	old := nd.v.MarshalTo(nil)
	var raw, what string
	switch op := m.r.IntN(6); {
	case op == 0 && nd.key != "":
		o, _ := nd.parent.Object()
		o.Del(nd.key)
		what = "deleted"
	case op == 1 && nd.key != "":
		raw = rawValues[m.r.IntN(len(rawValues))]
		q := strconv.Quote(nd.key) // keys of the recordings need no JSON-only escape
		if m.r.IntN(2) == 0 {
			raw, what = string(old)+","+q+":"+raw, "followed by a duplicate "+raw
		} else {
			raw, what = raw+","+q+":"+string(old), "after a duplicate "+raw
		}
	case op == 2 && nd.v.Type() == fastjson.TypeString:
		s := nd.v.GetStringBytes()
		switch m.r.IntN(4) {
		case 0:
			raw = jsonEscapeAll(string(s))
		case 1:
			raw = strconv.Quote(string(s[:len(s)/2]))
		case 2:
			raw = strconv.Quote(string(s) + "\u00e9\u2028")
		default:
			raw = strconv.Quote(strings.ToUpper(string(s)))
		}
		what = "became " + raw
	default:
		raw = rawValues[m.r.IntN(len(rawValues))]
		what = "became " + raw
	}
	if raw != "" {
		var a fastjson.Arena
		ph := a.NewString(placeholder)
		if nd.key != "" {
			o, _ := nd.parent.Object()
			o.Set(nd.key, ph)
		} else {
			nd.parent.SetArrayItem(nd.idx, ph)
		}
	}
	out := root.MarshalTo(nil)
	if raw != "" {
		out = bytes.Replace(out, []byte(`"`+placeholder+`"`), []byte(raw), 1)
	}
	m.evs[k] = append(append(ev[:start:start], out...), ev[end:]...)
	where := nd.key
	if where == "" {
		where = "[" + strconv.Itoa(nd.idx) + "]"
	}
	m.note(fmt.Sprintf("event %d: %s (was %.40s) %s", k, where, old, what))
	return true
}

const placeholder = "ocbench-mutant-placeholder-5f0e"

// jsonEscapeAll quotes s with every character as a \u escape.
func jsonEscapeAll(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		if r > 0xffff {
			r1, r2 := (r-0x10000)>>10+0xd800, (r-0x10000)&0x3ff+0xdc00
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
			continue
		}
		fmt.Fprintf(&b, `\u%04x`, r)
	}
	b.WriteByte('"')
	return b.String()
}
