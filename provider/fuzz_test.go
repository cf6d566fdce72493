package provider

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider/synth"
)

// fuzzDecode checks, for any body: no panic, exactly one terminal event
// after a start event, blocks consistent with their deltas (a tool call's
// RawArgs is the concatenation of its toolcall_delta events), memory
// bounded by the input, and the same result whatever the read sizes.
func fuzzDecode(t *testing.T, w Wire, body []byte) {
	if os.Getenv("FUZZ_WATCHDOG") != "" {
		tm := time.AfterFunc(2*time.Second, func() { panic(fmt.Sprintf("watchdog: slow input %q", body)) })
		defer tm.Stop()
	}
	o := Options{MaxEventBytes: 64 << 10, MaxArgBytes: 32 << 10}
	r := decodeBytes(w, body, o)
	if err := checkInvariants(r, r.d.ArgMismatches()); err != nil {
		t.Fatalf("%v\nbody: %q", err, body)
	}
	size := 0
	for i := range r.msg.Content {
		b := &r.msg.Content[i]
		size += len(b.Text) + len(b.RawArgs) + len(b.Arguments) + len(b.ID) + len(b.Name) + len(b.Signature)
		if len(b.RawArgs) > o.MaxArgBytes {
			t.Fatalf("RawArgs %d over the limit", len(b.RawArgs))
		}
	}
	if size > 4*len(body)+64*len(r.msg.Content)+1024 {
		t.Fatalf("message holds %d bytes for a %d-byte body", size, len(body))
	}
	if r.msg.StopReason == llm.StopNone {
		t.Fatal("no stop reason")
	}
	// Differential: the fastjson reference decoders must agree with the
	// fast paths wherever both accept the JSON (the fast scanner is strict
	// RFC 8259, fastjson is lenient; lone surrogate escapes are decoded
	// differently on purpose).
	ref := NewDecoder(w, bytes.NewReader(body), o)
	ref.ref = true
	rr := drain(ref)
	// A body cut inside a line reports a JSON failure of the cut line as
	// truncation, so that case is skipped too.
	syntaxish := func(x result) bool {
		return errors.Is(x.err, ErrBadJSON) || (x.d.cut && errors.Is(x.err, ErrTruncated))
	}
	if !syntaxish(r) && !syntaxish(rr) && !hasSurrogateEscape(body) {
		if !reflect.DeepEqual(r.events, rr.events) {
			t.Fatalf("fast and reference events differ:\n%v\n%v\nerrs %v / %v", r.events, rr.events, r.err, rr.err)
		}
		if x, y, ok := sameMessage(r.msg, rr.msg, false); !ok {
			t.Fatalf("fast and reference messages differ:\n%s\n%s", x, y)
		}
	}
	// The OpenClaw rules (chat's reasoning-tag partitioner, the Responses
	// output tracker, ...): no panic, a stop reason, and the fast and
	// reference paths agree (generated ids by presence).
	oc := o
	oc.OpenClaw = true
	ro := decodeBytes(w, body, oc)
	if ro.msg.StopReason == llm.StopNone {
		t.Fatal("openclaw: no stop reason")
	}
	refo := NewDecoder(w, bytes.NewReader(body), oc)
	refo.ref = true
	rro := drain(refo)
	// The transports' own messages for JSON that does not parse: the
	// lenient reference may accept what JSON.parse refuses.
	ocSyntaxish := func(x result) bool {
		return syntaxish(x) || x.err != nil && (strings.Contains(x.err.Error(), "malformed_streaming_fragment") ||
			strings.Contains(x.err.Error(), "malformed server-sent event JSON"))
	}
	if !ocSyntaxish(ro) && !ocSyntaxish(rro) && !hasSurrogateEscape(body) {
		if x, y, ok := sameMessage(ro.msg, rro.msg, true); !ok {
			t.Fatalf("openclaw: fast and reference messages differ:\n%s\n%s\nbody: %q", x, y, body)
		}
	}
	// Differential: with the OpenClaw rules too, a decoder reused after
	// other streams (its OpenClaw state reset member by member) decodes
	// as a fresh one.
	for _, prior := range [][]byte{body, synthBody(w)} {
		again := NewDecoder(w, bytes.NewReader(prior), oc)
		drain(again)
		again.Reset(w, bytes.NewReader(body), oc)
		ra := drain(again)
		if x, y, ok := sameMessage(ro.msg, ra.msg, true); !ok || fmt.Sprint(ro.err) != fmt.Sprint(ra.err) || len(ro.events) != len(ra.events) {
			t.Fatalf("openclaw: a reused decoder differs (errs %v / %v, %d / %d events):\n%s\n%s", ro.err, ra.err, len(ro.events), len(ra.events), x, y)
		}
	}
	// Differential: decoding without shapes (every event through the
	// validating scan) must give exactly the same result, errors included.
	flat := NewDecoder(w, nil, o)
	flat.flat = true
	flat.Reset(w, bytes.NewReader(body), o)
	sameDecode(t, "without shapes", r, drain(flat))
	// Differential: a decoder that decoded streams of the wire before,
	// keeping the shapes it learned (as a pooled one does), must give the
	// same result: after the same body, after a synthetic stream, and
	// after streams whose ids differ from one to the next (kept shapes
	// rebased on each, with the holes that vary across streams).
	other := bytes.ReplaceAll(synthBody(w), []byte("SYNTH"), []byte("SYNTX"))
	for _, priors := range [][][]byte{{body}, {synthBody(w)}, {synthBody(w), other}, {other, synthBody(w), body}} {
		again := NewDecoder(w, bytes.NewReader(priors[0]), o)
		drain(again)
		for _, prior := range priors[1:] {
			again.Reset(w, bytes.NewReader(prior), o)
			drain(again)
		}
		again.Reset(w, bytes.NewReader(body), o)
		sameDecode(t, "with kept shapes", r, drain(again))
	}
	// Differential: one byte per read must give the same events and message.
	d := NewDecoder(w, iotest.OneByteReader(bytes.NewReader(body)), o)
	r2 := drain(d)
	if !reflect.DeepEqual(r.events, r2.events) {
		t.Fatalf("events differ with one-byte reads:\n%v\n%v", r.events, r2.events)
	}
	r.msg.Timestamp, r2.msg.Timestamp = 0, 0
	if a, b := r.msg.AppendJSON(nil), r2.msg.AppendJSON(nil); !bytes.Equal(a, b) {
		t.Fatalf("message differs with one-byte reads:\n%s\n%s", a, b)
	}
}

// sameDecode fails t unless o has r's events, error and message (but its
// timestamp).
func sameDecode(t *testing.T, how string, r, o result) {
	t.Helper()
	if !reflect.DeepEqual(r.events, o.events) || fmt.Sprint(r.err) != fmt.Sprint(o.err) {
		t.Fatalf("events differ %s:\n%v\n%v\nerrs %v / %v", how, r.events, o.events, r.err, o.err)
	}
	o.msg.Timestamp = r.msg.Timestamp
	if a, b := r.msg.AppendJSON(nil), o.msg.AppendJSON(nil); !bytes.Equal(a, b) {
		t.Fatalf("message differs %s:\n%s\n%s", how, a, b)
	}
}

var synthBodies sync.Map // Wire -> a short synthetic stream's body

// synthBody returns a short synthetic stream of wire w.
func synthBody(w Wire) []byte {
	if b, ok := synthBodies.Load(w); ok {
		return b.([]byte)
	}
	gen := map[Wire]func(int, uint64) *synth.Stream{WireOpenAIChat: synth.OpenAIChat, WireAnthropic: synth.Anthropic, WireOpenAIResponses: synth.Responses}[w]
	b := gen(40, 9).Body
	synthBodies.Store(w, b)
	return b
}

func addSeeds(f *testing.F, prefix string) {
	for _, c := range recordedCases {
		if bytes.HasPrefix([]byte(c.file), []byte(prefix)) {
			f.Add(readStream(f, c.file))
		}
	}
}

// sameMessage compares two decoded messages as JSON, timestamps aside
// (and generated ids by presence when generated is set).
func sameMessage(m, n *llm.Message, generated bool) (x, y []byte, ok bool) {
	a, b := *m, *n
	a.Timestamp, b.Timestamp = 0, 0
	x, y = a.AppendJSON(nil), b.AppendJSON(nil)
	if generated {
		x = generatedRE.ReplaceAll(x, []byte("${1}<random>"))
		y = generatedRE.ReplaceAll(y, []byte("${1}<random>"))
	}
	return x, y, bytes.Equal(x, y)
}

func FuzzOpenAIChat(f *testing.F) {
	addSeeds(f, "openai-c")
	f.Add(sse(chunk(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"x","arguments":"{"}},{"index":1,"id":"b","function":{"name":"y"}}]}`, ""), chunk(`{"tool_calls":[{"id":"c","function":{"arguments":"}"}}]}`, "tool_calls")))
	f.Fuzz(func(t *testing.T, body []byte) { fuzzDecode(t, WireOpenAIChat, body) })
}

func FuzzAnthropic(f *testing.F) {
	addSeeds(f, "anthropic")
	f.Fuzz(func(t *testing.T, body []byte) { fuzzDecode(t, WireAnthropic, body) })
}

func FuzzResponses(f *testing.F) {
	addSeeds(f, "openai-responses")
	f.Fuzz(func(t *testing.T, body []byte) { fuzzDecode(t, WireOpenAIResponses, body) })
}

func hasSurrogateEscape(b []byte) bool {
	for i := 0; i+3 < len(b); i++ {
		if b[i] == '\\' && b[i+1] == 'u' && (b[i+2] == 'd' || b[i+2] == 'D') {
			return true
		}
	}
	return false
}
