package provider

import (
	"bytes"
	"errors"

	"github.com/valyala/fastjson"

	"github.com/ocbench/ocbench/llm"
)

// The legacy chat function_call delta, as @openclaw/ai's completions
// transport normalizes it (createOpenAICompletionsToolCallDeltaNormalizer):
// a function_call's name and arguments gather into one pending call (index
// 0, a generated call_ id) that becomes a tool call only when a chunk ends
// with finish_reason "function_call"; content that comes while the call is
// pending waits and follows the call; any other finish_reason drops the
// call and lets the content go; a modern tool_calls delta, once seen,
// drops the pending call and makes function_call ignored from then on.

const (
	legacyMaxArgBytes    = 256000 // MAX_BUFFERED_TOOL_CALL_ARGUMENT_BYTES
	legacyMaxFollowBytes = 256000 // MAX_BUFFERED_LEGACY_FOLLOWING_DELTA_BYTES
	legacyMaxFollow      = 1024   // MAX_BUFFERED_LEGACY_FOLLOWING_DELTAS
)

// MsgLegacyFollowLimit and MsgToolArgsLimit are the transport's messages
// when its buffers are full.
const (
	MsgLegacyFollowLimit = "Exceeded legacy tool-call content buffer limit"
	MsgToolArgsLimit     = "Exceeded tool-call argument buffer limit"
)

type ocLegacy struct {
	pending, named, sawModern bool
	id, name, args            []byte
	argBytes                  int
	follow                    [][]byte // waiting deltas, as JSON
	followBytes               int
	p                         fastjson.Parser
}

// ocLegacyRoute reports whether a chat chunk must take the reference path,
// where the legacy rules are applied.
func (d *Decoder) ocLegacyRoute(data []byte) bool {
	return d.oc.legacy.pending || !d.oc.legacy.sawModern && bytes.Contains(data, []byte(`"function_call"`))
}

func (d *Decoder) ocLegacyDelta(choice int32, delta *fastjson.Value, fr []byte) error {
	lg := &d.oc.legacy
	if tc := delta.Get("tool_calls"); tc != nil && tc.Type() == fastjson.TypeArray && len(tc.GetArray()) > 0 {
		if err := d.ocLegacyRelease(choice); err != nil {
			return err
		}
		lg.sawModern, lg.pending, lg.argBytes = true, false, 0
		return d.chatDelta(choice, delta)
	}
	fc := delta.Get("function_call")
	if lg.sawModern || fc == nil && !lg.pending {
		return d.chatDelta(choice, delta)
	}
	leading := false
	if ordinaryContent(delta) {
		if lg.pending {
			js := llm.AppendJSStringify(nil, delta)
			if lg.followBytes+len(js) > legacyMaxFollowBytes || len(lg.follow) >= legacyMaxFollow {
				return &TransportError{Message: MsgLegacyFollowLimit}
			}
			lg.followBytes += len(js)
			lg.follow = append(lg.follow, js)
		} else {
			leading = true
		}
	}
	if fc != nil && (jsTruthy(fc.Get("name")) || jsTruthy(fc.Get("arguments"))) {
		var name []byte
		if !lg.named {
			name = fc.GetStringBytes("name")
		}
		args := fc.GetStringBytes("arguments")
		if lg.argBytes+len(args)+len(name) > legacyMaxArgBytes {
			return &TransportError{Message: MsgToolArgsLimit}
		}
		lg.argBytes += len(args) + len(name)
		if !lg.pending {
			lg.pending, lg.named = true, false
			lg.id = appendRandomHex(append(lg.id[:0], "call_"...))
			lg.name, lg.args = lg.name[:0], lg.args[:0]
		}
		if len(name) > 0 {
			lg.name, lg.named = append(lg.name[:0], name...), true
		}
		lg.args = append(lg.args, args...)
	}
	if !lg.pending {
		return d.chatDelta(choice, delta)
	}
	if leading {
		if err := d.chatDelta(choice, delta); err != nil {
			return err
		}
	}
	switch {
	case string(fr) == "function_call":
		lg.pending, lg.argBytes = false, 0
		js := []byte(`{"index":0,"id":`)
		js = llm.AppendJSONString(js, lg.id)
		js = append(js, `,"type":"function","function":{`...)
		if lg.named {
			js = append(llm.AppendJSONString(append(js, `"name":`...), lg.name), ',')
		}
		js = append(llm.AppendJSONString(append(js, `"arguments":`...), lg.args), "}}"...)
		call, err := lg.p.ParseBytes(js)
		if err != nil {
			return errors.New("provider: legacy function call: " + err.Error()) // not reached: the text is ours
		}
		if err := d.chatTool(choice, 0, call); err != nil {
			return err
		}
		return d.ocLegacyRelease(choice)
	case len(fr) > 0:
		lg.pending, lg.argBytes = false, 0
		return d.ocLegacyRelease(choice)
	}
	return nil
}

// ocLegacyRelease applies the deltas that waited behind a pending call.
func (d *Decoder) ocLegacyRelease(choice int32) error {
	lg := &d.oc.legacy
	follow := lg.follow
	lg.follow, lg.followBytes = lg.follow[:0], 0
	var p fastjson.Parser
	for _, js := range follow {
		v, err := p.ParseBytes(js)
		if err != nil {
			return err
		}
		if err := d.chatDelta(choice, v); err != nil {
			return err
		}
	}
	return nil
}

// ordinaryContent is the transport's hasOrdinaryContent: a member other
// than role, function_call and tool_calls with observable content.
func ordinaryContent(delta *fastjson.Value) bool {
	o, _ := delta.Object()
	found := false
	o.Visit(func(k []byte, v *fastjson.Value) {
		switch string(k) {
		case "role", "function_call", "tool_calls":
		default:
			found = found || observable(v)
		}
	})
	return found
}

func observable(v *fastjson.Value) bool {
	switch v.Type() {
	case fastjson.TypeString:
		s, _ := v.StringBytes()
		return len(s) > 0
	case fastjson.TypeArray:
		a, _ := v.Array()
		for _, e := range a {
			if observable(e) {
				return true
			}
		}
	case fastjson.TypeObject:
		o, _ := v.Object()
		found := false
		o.Visit(func(k []byte, e *fastjson.Value) {
			switch string(k) {
			case "type", "id", "index":
			default:
				found = found || observable(e)
			}
		})
		return found
	}
	return false
}
