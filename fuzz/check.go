package fuzz

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/valyala/fastjson"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider"
	"github.com/ocbench/ocbench/streamwrap"
	"github.com/ocbench/ocbench/streamwrap/repair"
)

// Violation is one broken invariant on one case.
type Violation struct {
	Rule   string // "object", "invented", "truncated-executed", "superset", "panic", "hang"
	Call   int    // the tool call's position, -1 for the whole turn
	Detail string
}

func (v Violation) String() string {
	if v.Call >= 0 {
		return fmt.Sprintf("%s (call %d): %s", v.Rule, v.Call, v.Detail)
	}
	return v.Rule + ": " + v.Detail
}

// Outcome is what one case did under the extended profile.
type Outcome struct {
	Calls      int // tool calls generated
	Executed   int // tool calls handed to tools (stop reason toolUse)
	Repaired   int // executed calls whose arguments differ from the text sent
	Refused    int // tool calls not executed
	Violations []Violation
}

// runner decodes a case and runs the chain; it holds the reusable parts
// of one worker.
type runner struct {
	p fastjson.Parser
	q fastjson.Parser
}

// turn runs c's body through a decoder and the whole chain with profile
// and returns a copy of the final message.
func (r *runner) turn(ctx context.Context, c *Case, profile repair.Profile) *llm.Message {
	return r.turnWith(ctx, c, profile, profile == repair.ProfileOpenClaw)
}

// turnWith is turn with @openclaw/ai's transport checks (the provider's
// own refusals, provider.Options.OpenClaw) on or off: off, the openclaw
// profile is OpenClaw's wrappers over a provider that refuses nothing,
// which the superset rule compares extended with.
func (r *runner) turnWith(ctx context.Context, c *Case, profile repair.Profile, transport bool) *llm.Message {
	base := func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		d := provider.GetDecoder(c.Wire, bytes.NewReader(c.Body),
			provider.Options{API: req.Model.API, Provider: req.Model.Provider, Model: req.Model.ID,
				Reasoning: req.Model.Reasoning, OpenClaw: transport, BaseURL: provider.ReplayBaseURL})
		d.SetContext(ctx)
		return &pooled{Decoder: d}, nil
	}
	fn := streamwrap.Chain(base, streamwrap.Options{Profile: profile, LiveTools: streamwrap.NewAllowlist(c.Tools...)})
	st, err := fn(ctx, Request(c))
	if err != nil {
		return &llm.Message{StopReason: llm.StopError, ErrorMessage: err.Error()}
	}
	m, _ := llm.Drain(st)
	out := m.Clone()
	st.Close()
	return out
}

// Request is the request a case is replayed with (also by `ocbench replay`
// with the flags the failure file names).
func Request(c *Case) *llm.Request {
	model := c.Model
	if model == "" {
		model = "fuzz-1"
	}
	return &llm.Request{Model: llm.Model{ID: model, API: c.Wire.API(), Provider: "openai-compatible", HTMLEntityArgs: c.HTMLEntities, Reasoning: c.Reasoning}}
}

type pooled struct {
	*provider.Decoder
	done bool
}

func (p *pooled) Close() error {
	if p.done {
		return nil
	}
	p.done = true
	provider.PutDecoder(p.Decoder)
	return nil
}

// check runs c under profile (and, for the superset rule, under both
// openclaw and extended) and returns the outcome. The argument invariants
// (an object, nothing invented, nothing truncated executed) are extended's
// promises; openclaw reproduces OpenClaw, which breaks them on purpose.
func (r *runner) check(ctx context.Context, c *Case, profile repair.Profile) Outcome {
	o := Outcome{Calls: len(c.Calls)}
	ext := r.turn(ctx, c, profile)
	strict := profile == repair.ProfileExtended
	calls := ext.ToolCalls(nil)
	executed := ext.StopReason == llm.StopToolUse
	if executed {
		// Extended drops an unrepairable call on its own and executes the
		// others: the calls missing from the message were refused.
		o.Executed = len(calls)
		o.Refused = max(0, len(c.Calls)-len(calls))
	} else {
		o.Refused = len(c.Calls)
	}
	if (c.Cut || c.Length) && executed && strict {
		o.Violations = append(o.Violations, Violation{Rule: "truncated-executed", Call: -1,
			Detail: "a call cut short by the stream end or the length limit was handed to a tool"})
	}
	for k, ci := range calls {
		b := &ext.Content[ci]
		if !executed {
			continue
		}
		if !bytes.Equal(bytes.TrimSpace(b.RawArgs), b.Arguments) {
			o.Repaired++
		}
		if !strict {
			continue
		}
		v, err := r.p.ParseBytes(b.Arguments)
		if err != nil || v.Type() != fastjson.TypeObject {
			o.Violations = append(o.Violations, Violation{Rule: "object", Call: k, Detail: fmt.Sprintf("arguments %.120q are not a JSON object", b.Arguments)})
			continue
		}
		if g := r.generated(c, b); g != nil {
			if bad := r.invented(v, g.SentArgs, c.HTMLEntities); bad != "" {
				o.Violations = append(o.Violations, Violation{Rule: "invented", Call: k,
					Detail: fmt.Sprintf("%s is not in what the model sent (meant %.120q, sent %.120q)", bad, g.Args, g.SentArgs)})
			}
		}
	}
	if profile != repair.ProfileExtended {
		ext = r.turn(ctx, c, repair.ProfileExtended)
	}
	o.Violations = append(o.Violations, r.superset(ctx, c, ext)...)
	return o
}

// generated finds the call of c that block b carries, by its scripted id
// ("call_<k>"; Responses ids carry it before the "|").
func (r *runner) generated(c *Case, b *llm.Block) *Call {
	id := string(b.ID)
	if i := strings.IndexByte(id, '|'); i >= 0 {
		id = id[:i]
	}
	n, ok := strings.CutPrefix(id, "call_")
	if !ok {
		return nil
	}
	var k int
	if _, err := fmt.Sscanf(n, "%d", &k); err != nil || k < 1 || k > len(c.Calls) {
		return nil
	}
	return &c.Calls[k-1]
}

// invented returns the first key or value of got that the text the
// model sent does not hold, in any of the spellings a repair reads
// (as is, JSON-escaped once or twice, Python literals, HTML entities when
// the model encodes them), or "" when there is none. Repairs may drop
// content (a second concatenated object) but never add any.
func (r *runner) invented(got *fastjson.Value, sent string, entities bool) string {
	if entities {
		sent = string(repair.DecodeHTMLEntities(nil, []byte(sent)))
	}
	lower := strings.ToLower(sent)
	has := func(s string) bool {
		if s == "" || strings.Contains(sent, s) {
			return true
		}
		// Each double encoding escapes the text once more; quirks nest
		// a few levels deep at most.
		for i := 0; i < 4; i++ {
			e := string(llm.AppendJSONString(nil, s))
			s = e[1 : len(e)-1]
			if strings.Contains(sent, s) {
				return true
			}
		}
		return false
	}
	bad := ""
	var walk func(v *fastjson.Value)
	walk = func(v *fastjson.Value) {
		if bad != "" {
			return
		}
		switch v.Type() {
		case fastjson.TypeObject:
			o, _ := v.Object()
			o.Visit(func(k []byte, c *fastjson.Value) {
				if bad == "" && !has(string(k)) {
					bad = "key " + strconv.Quote(string(k))
				}
				walk(c)
			})
		case fastjson.TypeArray:
			a, _ := v.Array()
			for _, c := range a {
				walk(c)
			}
		case fastjson.TypeString:
			if s := string(v.GetStringBytes()); !has(s) {
				bad = "value " + strconv.Quote(s)
			}
		case fastjson.TypeTrue, fastjson.TypeFalse, fastjson.TypeNull:
			lit := v.String()
			if !strings.Contains(lower, lit) && !(lit == "null" && strings.Contains(lower, "none")) {
				bad = "literal " + lit
			}
		case fastjson.TypeNumber:
			if n := v.String(); !strings.Contains(sent, n) {
				bad = "number " + n
			}
		}
	}
	walk(got)
	return bad
}

// leaves calls f with "path=value" for every scalar in v, and
// "path={}"/"path=[]" for empty containers.
func leaves(v *fastjson.Value, path string, f func(string)) {
	switch v.Type() {
	case fastjson.TypeObject:
		o, _ := v.Object()
		if o.Len() == 0 {
			f(path + "={}")
		}
		o.Visit(func(k []byte, c *fastjson.Value) { leaves(c, path+"."+string(k), f) })
	case fastjson.TypeArray:
		a, _ := v.Array()
		if len(a) == 0 {
			f(path + "=[]")
		}
		for i, c := range a {
			leaves(c, fmt.Sprintf("%s[%d]", path, i), f)
		}
	default:
		f(path + "=" + string(v.MarshalTo(nil)))
	}
}

// superset checks the rule of spec replay.md: where openclaw's arguments
// are the whole text parsed as valid JSON or come from OpenClaw's own
// repair, on a stream that ended normally, extended yields the same call,
// even where the openclaw profile's provider check refuses the turn: the
// openclaw side is OpenClaw's wrappers over a provider that refuses
// nothing.
func (r *runner) superset(ctx context.Context, c *Case, ext *llm.Message) []Violation {
	if c.Cut || c.Length {
		return nil
	}
	oc := r.turnWith(ctx, c, repair.ProfileOpenClaw, false)
	if oc.StopReason != llm.StopToolUse {
		return nil
	}
	var out []Violation
	ocCalls, extCalls := oc.ToolCalls(nil), ext.ToolCalls(nil)
	used := make([]bool, len(extCalls))
	req := Request(c)
	gate := streamwrap.ShouldRepairMalformedToolCallArguments(req.Model.Provider, req.Model.API)
	for k, ci := range ocCalls {
		b := &oc.Content[ci]
		if v, err := r.p.ParseBytes(b.Arguments); err != nil || v.Type() != fastjson.TypeObject {
			// Extended hands tools objects only; OpenClaw's non-object
			// arguments (a string, null, an array) are outside the rule.
			continue
		}
		fromJSON := repair.Valid(b.RawArgs) && sameJSON(&r.p, &r.q, b.RawArgs, b.Arguments)
		fromRepair := false
		if gate && !fromJSON {
			if got, _, _, _, ok := repair.OpenClawExtract(nil, b.RawArgs, b.Name); ok {
				fromRepair = sameJSON(&r.p, &r.q, got, b.Arguments)
			}
		}
		if !fromJSON && !fromRepair {
			continue // from pi-ai's lossy parse: extended may do better
		}
		j := -1
		if ext.StopReason == llm.StopToolUse {
			j = matchCall(oc, ext, ocCalls, extCalls, k, used)
		}
		if j < 0 {
			out = append(out, Violation{Rule: "superset", Call: k, Detail: fmt.Sprintf("openclaw executes %.120q, extended does not (%s)", b.Arguments, ext.ErrorMessage)})
			continue
		}
		used[j] = true
		if !sameJSON(&r.p, &r.q, b.Arguments, ext.Content[extCalls[j]].Arguments) {
			out = append(out, Violation{Rule: "superset", Call: k, Detail: fmt.Sprintf("openclaw %.120q, extended %.120q", b.Arguments, ext.Content[extCalls[j]].Arguments)})
		}
	}
	return out
}

// matchCall finds the extended call that is openclaw's k-th call: the
// unused one with the same id, else (ids generated for missing ids may
// differ) the unused one of the same name nearest to
// position k; -1 when there is none. Positions alone do not pair
// them: extended drops an unrepairable call on its own, which openclaw
// may keep (from pi-ai's lossy parse), shifting the calls after it.
func matchCall(oc, ext *llm.Message, ocCalls, extCalls []int, k int, used []bool) int {
	b := &oc.Content[ocCalls[k]]
	if id := bytes.TrimSpace(b.ID); len(id) > 0 {
		for j, ci := range extCalls {
			if !used[j] && bytes.Equal(bytes.TrimSpace(ext.Content[ci].ID), id) {
				return j
			}
		}
	}
	best := -1
	for j, ci := range extCalls {
		if used[j] || !bytes.Equal(ext.Content[ci].Name, b.Name) {
			continue
		}
		if best < 0 || absInt(j-k) < absInt(best-k) {
			best = j
		}
	}
	return best
}

func absInt(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// sameJSON compares two JSON texts semantically (same leaves).
func sameJSON(p, q *fastjson.Parser, a, b []byte) bool {
	va, err1 := p.ParseBytes(a)
	vb, err2 := q.ParseBytes(b)
	if err1 != nil || err2 != nil {
		return bytes.Equal(a, b)
	}
	la, lb := map[string]int{}, map[string]int{}
	leaves(va, "", func(s string) { la[s]++ })
	leaves(vb, "", func(s string) { lb[s]++ })
	if len(la) != len(lb) {
		return false
	}
	for k, n := range la {
		if lb[k] != n {
			return false
		}
	}
	return true
}
