package provider

import (
	"bytes"

	"github.com/valyala/fastjson"

	"github.com/ocbench/ocbench/llm"
)

// ocSDKEvent does what the openai SDK's stream, which OpenClaw reads Chat
// Completions and Responses bodies through, does with an event before the
// transport sees it (data "[DONE]" aside, which ends the stream first):
//   - an event named "thread.*" reaches the transport as {event, data},
//     which the Chat Completions transport makes nothing of (the event is
//     ignored) and the Responses one fails as an event without a type;
//   - an event named "error" fails the stream with an APIError made from
//     data.error, or the whole data when it has none;
//   - data whose error member is truthy fails it with an APIError made from
//     that member, whatever else the chunk holds (choices included).
//
// handled is false for every other event (and for data that is not JSON,
// which the decoder reports as malformed).
func (d *Decoder) ocSDKEvent(data []byte) (handled bool, err error) {
	isErr := string(d.name) == "error"
	thread := bytes.HasPrefix(d.name, []byte("thread."))
	if !isErr && !thread && !bytes.Contains(data, []byte(`"error"`)) {
		return false, nil
	}
	v, perr := d.p.ParseBytes(data)
	if perr != nil {
		return false, nil
	}
	var e *fastjson.Value
	switch {
	case thread:
		if d.wire == WireOpenAIResponses {
			// {event, data} has no string type.
			d.ocFail(MsgResponsesUntypedEvent, false, false)
		}
		return true, nil
	case isErr:
		// data?.error ?? data
		if e = v.Get("error"); e == nil || e.Type() == fastjson.TypeNull {
			e = v
		}
	case v.Type() == fastjson.TypeObject && jsTruthy(v.Get("error")):
		e = v.Get("error")
	default:
		return false, nil
	}
	return true, &ProviderError{Message: sdkErrorMessage(e)}
}

// sdkErrorMessage is the message of the openai SDK's APIError for an error
// value without an HTTP status (APIError.makeMessage): its message when
// that is a non-empty string, else JSON.stringify of its message when
// truthy, else JSON.stringify of the value when truthy.
func sdkErrorMessage(e *fastjson.Value) string {
	if m := e.Get("message"); jsTruthy(m) {
		if m.Type() == fastjson.TypeString {
			return string(m.GetStringBytes())
		}
		return string(llm.AppendJSStringify(nil, m))
	}
	if jsTruthy(e) {
		return string(llm.AppendJSStringify(nil, e))
	}
	return "(no status code or body)"
}

// ocResponsesError is the error a Responses event of type "error" fails the
// stream with in @openclaw/ai: the message of its error object (or of the
// event), prefixed with "Error Code CODE: " when it has a code, and
// "Unknown error" without a message.
func ocResponsesError(v *fastjson.Value) error {
	details := v
	if e := v.Get("error"); e != nil && e.Type() == fastjson.TypeObject {
		details = e
	}
	var msg, code string
	if m := details.Get("message"); m != nil && m.Type() == fastjson.TypeString {
		msg = string(m.GetStringBytes())
	}
	if c := details.Get("code"); c != nil {
		switch c.Type() {
		case fastjson.TypeString:
			code = string(jsTrim(c.GetStringBytes()))
		case fastjson.TypeNumber, fastjson.TypeTrue, fastjson.TypeFalse:
			code = string(jsTrim(llm.AppendJSStringify(nil, c)))
		}
	}
	switch {
	case msg == "":
		msg = "Unknown error"
	case code != "":
		msg = "Error Code " + code + ": " + msg
	}
	return &ProviderError{Type: code, Message: msg}
}
