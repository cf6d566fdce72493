package scripted

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/ocbench/ocbench/llm"
)

// MaxScriptBytes bounds a script file.
const MaxScriptBytes = 16 << 20

// Parse reads a script in its JSON form:
//
//	{
//	  "latency": {"first_event": "200ms", "gap": "5ms"},
//	  "chunk": 8,
//	  "turns": [
//	    {"steps": [
//	       {"thinking": "Let me look.", "signature": "sig"},
//	       {"text": "I'll read it.", "chunk": 4},
//	       {"tool": {"name": "read", "args": {"path": "a.txt"}, "quirks": ["trailing_comma"]}},
//	       {"tools": [{"name": "read", "args": "{\"path\":\"b\"}"}, {"name": "ls", "args": {}}], "interleave": true},
//	       {"stall": "50ms"}, {"stall": "forever"},
//	       {"error": {"type": "overloaded_error", "message": "Overloaded"}},
//	       {"raw": {"event": "ping", "data": "{\"type\":\"ping\"}"}},
//	       {"comment": "keep-alive"},
//	       {"eof": true}
//	     ],
//	     "usage": {"input": 100, "output": 20, "cache_read": 1024, "cache_write": 0},
//	     "stop": "toolUse", "raw_stop": "", "error_message": "",
//	     "latency": {"gap": "1ms"},
//	     "http_error": {"status": 429, "retry_after": "2s", "message": "slow down"},
//	     "cut_at": 0}
//	  ]
//	}
//
// Each step has exactly one of text, thinking, tool, tools, stall, error,
// raw, eof, comment. Tool args given as a JSON string are sent verbatim (the way to
// script broken arguments); any other JSON value is sent compacted. Quirk
// names are those of Quirk.String ("fence", "pad_name", ...). Durations are
// Go duration strings, a number of milliseconds, or "forever" (stall
// only). Unknown fields are errors. Errors wrap ErrBadScript.
func Parse(data []byte) (*Script, error) {
	if len(data) > MaxScriptBytes {
		return nil, &ScriptError{Turn: -1, Step: -1, Msg: fmt.Sprintf("larger than %d bytes", MaxScriptBytes)}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var js jsonScript
	if err := dec.Decode(&js); err != nil {
		return nil, &ScriptError{Turn: -1, Step: -1, Msg: err.Error()}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &ScriptError{Turn: -1, Step: -1, Msg: "data after the script object"}
	}
	s := &Script{Chunk: js.Chunk}
	if js.Latency != nil {
		s.Latency = js.Latency.latency()
	}
	for ti := range js.Turns {
		t, err := js.Turns[ti].turn(ti)
		if err != nil {
			return nil, err
		}
		s.Turns = append(s.Turns, t)
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// Load reads and parses a script file.
func Load(path string) (*Script, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxScriptBytes+1))
	if err != nil {
		return nil, err
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

type jsonScript struct {
	Latency *jsonLatency `json:"latency"`
	Chunk   int          `json:"chunk"`
	Turns   []jsonTurn   `json:"turns"`
}

type jsonLatency struct {
	FirstEvent duration `json:"first_event"`
	Gap        duration `json:"gap"`
}

func (l *jsonLatency) latency() Latency {
	return Latency{FirstEvent: time.Duration(l.FirstEvent), Gap: time.Duration(l.Gap)}
}

type jsonTurn struct {
	Steps        []jsonStep     `json:"steps"`
	Stop         string         `json:"stop"`
	RawStop      string         `json:"raw_stop"`
	ErrorMessage string         `json:"error_message"`
	Usage        *jsonUsage     `json:"usage"`
	Latency      *jsonLatency   `json:"latency"`
	HTTPError    *jsonHTTPError `json:"http_error"`
	CutAt        int            `json:"cut_at"`
}

type jsonUsage struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cache_read"`
	CacheWrite int64 `json:"cache_write"`
	Reasoning  int64 `json:"reasoning"`
}

type jsonHTTPError struct {
	Status     int      `json:"status"`
	RetryAfter duration `json:"retry_after"`
	Type       string   `json:"type"`
	Message    string   `json:"message"`
	Body       string   `json:"body"`
}

type jsonStep struct {
	Text       *string    `json:"text"`
	Thinking   *string    `json:"thinking"`
	Signature  string     `json:"signature"`
	Redacted   bool       `json:"redacted"`
	Tool       *jsonCall  `json:"tool"`
	Tools      []jsonCall `json:"tools"`
	Interleave bool       `json:"interleave"`
	Chunk      int        `json:"chunk"`
	Stall      *duration  `json:"stall"`
	Error      *jsonError `json:"error"`
	Raw        *jsonRaw   `json:"raw"`
	EOF        bool       `json:"eof"`
	Comment    *string    `json:"comment"`
}

type jsonError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

type jsonRaw struct {
	Event string `json:"event"`
	Data  string `json:"data"`
}

type jsonCall struct {
	ID         string          `json:"id"`
	Name       string          `json:"name"`
	Args       json.RawMessage `json:"args"`
	Quirks     []string        `json:"quirks"`
	ReuseIndex bool            `json:"reuse_index"`
	NoIndex    bool            `json:"no_index"`
	Cut        int             `json:"cut"`
}

func (jt *jsonTurn) turn(ti int) (Turn, error) {
	t := Turn{RawStop: jt.RawStop, ErrorMessage: jt.ErrorMessage, CutAt: jt.CutAt}
	if jt.Stop != "" {
		r, ok := llm.ParseStopReason(jt.Stop)
		if !ok {
			return t, &ScriptError{Turn: ti, Step: -1, Msg: fmt.Sprintf("unknown stop reason %q", jt.Stop)}
		}
		t.Stop = r
	}
	if u := jt.Usage; u != nil {
		t.Usage = llm.Usage{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite, Reasoning: u.Reasoning}
	}
	if jt.Latency != nil {
		t.Latency = jt.Latency.latency()
	}
	if h := jt.HTTPError; h != nil {
		t.HTTPError = &HTTPError{Status: h.Status, RetryAfter: time.Duration(h.RetryAfter), Type: h.Type, Message: h.Message, Body: h.Body}
	}
	for si := range jt.Steps {
		st, err := jt.Steps[si].step()
		if err != nil {
			return t, &ScriptError{Turn: ti, Step: si, Msg: err.Error()}
		}
		t.Steps = append(t.Steps, st)
	}
	return t, nil
}

func (js *jsonStep) step() (Step, error) {
	var st Step
	n := 0
	set := func(k StepKind) {
		st.Kind = k
		n++
	}
	if js.Text != nil {
		set(StepText)
		st.Text = *js.Text
	}
	if js.Thinking != nil {
		set(StepThinking)
		st.Text, st.Signature, st.Redacted = *js.Thinking, js.Signature, js.Redacted
	}
	if js.Tool != nil {
		set(StepTools)
		c, err := js.Tool.call()
		if err != nil {
			return st, err
		}
		st.Calls = []Call{c}
	}
	if js.Tools != nil {
		set(StepTools)
		for i := range js.Tools {
			c, err := js.Tools[i].call()
			if err != nil {
				return st, err
			}
			st.Calls = append(st.Calls, c)
		}
		st.Interleave = js.Interleave
	}
	if js.Stall != nil {
		set(StepStall)
		st.Duration = time.Duration(*js.Stall)
	}
	if js.Error != nil {
		set(StepError)
		st.ErrType, st.Message = js.Error.Type, js.Error.Message
	}
	if js.Raw != nil {
		set(StepRaw)
		st.Event, st.Data = js.Raw.Event, js.Raw.Data
	}
	if js.EOF {
		set(StepEOF)
	}
	if js.Comment != nil {
		set(StepComment)
		st.Text = *js.Comment
	}
	if n != 1 {
		return st, fmt.Errorf("a step needs exactly one of text, thinking, tool, tools, stall, error, raw, eof, comment (it has %d)", n)
	}
	st.Chunk = js.Chunk
	return st, nil
}

func (jc *jsonCall) call() (Call, error) {
	c := Call{ID: jc.ID, Name: jc.Name, ReuseIndex: jc.ReuseIndex, NoIndex: jc.NoIndex, Cut: jc.Cut}
	raw := bytes.TrimSpace(jc.Args)
	switch {
	case len(raw) == 0:
		c.Args = "{}"
	case raw[0] == '"':
		if err := json.Unmarshal(raw, &c.Args); err != nil {
			return c, err
		}
	default:
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			return c, err
		}
		c.Args = b.String()
	}
	for _, name := range jc.Quirks {
		q, ok := ParseQuirk(name)
		if !ok {
			return c, fmt.Errorf("unknown quirk %q", name)
		}
		c.Args = Malform(c.Args, q)
		c.Name = MalformName(c.Name, q)
	}
	return c, nil
}

// duration reads a Go duration string, a number of milliseconds, or
// "forever" (zero: a stall until the context ends).
type duration time.Duration

func (d *duration) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		if s == "forever" {
			*d = 0
			return nil
		}
		v, err := time.ParseDuration(s)
		if err != nil {
			return err
		}
		if v < 0 {
			return fmt.Errorf("negative duration %q", s)
		}
		*d = duration(v)
		return nil
	}
	ms, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("duration %s is neither a string nor milliseconds", b)
	}
	if ms < 0 || ms > 1e12 {
		return fmt.Errorf("duration %s out of range", b)
	}
	*d = duration(time.Duration(ms * float64(time.Millisecond)))
	return nil
}
