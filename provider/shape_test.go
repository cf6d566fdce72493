package provider

import (
	"bytes"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// shapeVariants are edits of a learned event: values the holes must take
// (escapes, other numbers), values they must refuse (bad escapes, bad
// numbers, a string where a number stood) and structural changes that
// must miss the shape (whitespace, members, trailing bytes).
func shapeVariants(ev string) []string {
	var out []string
	rep := func(old, new string) {
		if strings.Contains(ev, old) {
			out = append(out, strings.Replace(ev, old, new, 1))
		}
	}
	for _, v := range []string{
		`\"`, `\\`, `\/`, `\n`, `\u00e9`, `\ud83d\ude00`, `\ud800`, `é`, "\x01", "\xff",
		`\x`, `\u12`, `\`, `"`, `\\"`, `\\\"`,
		// Raw line ends: the event's framing changes (a framed shape must
		// not match across them).
		"\n", "\n\n", "\r\n", "a\n\ndata: {}\n\n", "\n\nevent: x\ndata: {\"a\":\"",
	} {
		// Into the first string hole whose content is a delta.
		for _, k := range []string{`"content":"`, `"text":"`, `"partial_json":"`, `"delta":"`, `"arguments":"`} {
			rep(k, k+v)
		}
	}
	for _, n := range []string{`1`, `12`, `-1`, `01`, `1.5`, `1e3`, `-`, `1.`, `"0"`, `null`, `0 `, ` 0`} {
		for _, k := range []string{`"index":`, `"output_index":`, `"sequence_number":`, `"created":`} {
			if i := strings.Index(ev, k); i >= 0 {
				j := i + len(k)
				e := j
				for e < len(ev) && (ev[e] >= '0' && ev[e] <= '9' || ev[e] == '-') {
					e++
				}
				if e > j {
					out = append(out, ev[:j]+n+ev[e:])
				}
			}
		}
	}
	out = append(out, ev+" ", " "+ev, ev+"x", ev[:len(ev)-1], ev[:len(ev)-1]+`,"x":1}`,
		strings.Replace(ev, `":`, `" :`, 1), strings.Replace(ev, `,"`, `, "`, 1),
		strings.Replace(ev, `{"`, `{"zz":[1,{"a":"b"}],"`, 1))
	return out
}

// decodeBoth decodes body with and without shapes and fails t when the
// events, error or message differ.
func decodeBoth(t *testing.T, w Wire, body []byte, o Options) {
	t.Helper()
	r := decodeBytes(w, body, o)
	flat := NewDecoder(w, nil, o)
	flat.flat = true
	flat.Reset(w, bytes.NewReader(body), o)
	sameOutcome(t, "without shapes", body, r, drain(flat))
}

// sameOutcome fails t unless o has r's events, error and message (but
// its timestamp and OpenClaw's random commentary ids); how says what o
// did differently.
func sameOutcome(t *testing.T, how string, body []byte, r, o result) {
	t.Helper()
	if !reflect.DeepEqual(r.events, o.events) || fmt.Sprint(r.err) != fmt.Sprint(o.err) {
		t.Fatalf("events differ %s:\n%v\n%v\nerrs %v / %v\nbody %q", how, r.events, o.events, r.err, o.err, body)
	}
	o.msg.Timestamp = r.msg.Timestamp
	a := commentaryID.ReplaceAll(r.msg.AppendJSON(nil), nil)
	b := commentaryID.ReplaceAll(o.msg.AppendJSON(nil), nil)
	if !bytes.Equal(a, b) {
		t.Fatalf("message differs %s:\n%s\n%s\nbody %q", how, a, b, body)
	}
}

var skeleton = regexp.MustCompile(`"(?:[^"\\]|\\.)*":?|[0-9]+`)

var commentaryID = regexp.MustCompile(`commentary-[0-9]+-[0-9a-f]{24}`)

// TestShapesAgree: after each event of a synthetic stream has been
// learned (seen three times), each variant of it decodes exactly as the
// validating scan decodes it, in every mode.
func TestShapesAgree(t *testing.T) {
	for _, g := range synthStreams {
		st := g.gen(40, 5)
		n := 0
		events := bytes.SplitAfter(st.Body, []byte("\n\n"))
		seen := map[string]bool{}
		for i, ev := range events {
			// One event of each shape.
			key := string(skeleton.ReplaceAllFunc(ev, func(m []byte) []byte {
				if m[len(m)-1] == ':' {
					return m // a member name
				}
				return []byte("0")
			}))
			if seen[key] {
				continue
			}
			seen[key] = true
			lines := bytes.Split(bytes.TrimSuffix(ev, []byte("\n\n")), []byte("\n"))
			data := string(bytes.TrimPrefix(lines[len(lines)-1], []byte("data: ")))
			prefix := string(bytes.Join(lines[:len(lines)-1], []byte("\n")))
			if prefix != "" {
				prefix += "\n"
			}
			if !strings.HasPrefix(data, "{") {
				continue
			}
			n++
			head := bytes.Join(events[:i], nil)
			tail := bytes.Join(events[max(i+1, len(events)-2):], nil) // the stream's end
			for _, v := range shapeVariants(data) {
				var body []byte
				body = append(body, head...)
				for range 3 {
					body = append(body, ev...)
				}
				body = append(body, prefix+"data: "+v+"\n\n"...)
				body = append(body, ev...)
				body = append(body, tail...)
				opts := []Options{{}, {OpenClaw: true}, {Reasoning: true, MaxArgBytes: 64}}
				if raceEnabled {
					opts = opts[:1] // seconds otherwise; the modes share the shape code
				}
				for _, o := range opts {
					decodeBoth(t, g.wire, body, o)
				}
			}
		}
		t.Logf("%v: %d shapes of %d events", g.wire, n, len(events))
	}
}

// TestShapesLearnFromSynth: the synthetic streams are decoded almost
// entirely through shapes (the benchmark measures that path).
func TestShapesLearnFromSynth(t *testing.T) {
	for _, s := range synthStreams {
		st := s.gen(2000, 1)
		d := NewDecoder(s.wire, bytes.NewReader(st.Body), Options{})
		decodeStream(d)
		if d.shapes.hits < st.Events*9/10 {
			t.Errorf("%s: %d of %d events matched a shape (%d misses)", s.name, d.shapes.hits, st.Events, d.shapes.misses)
		}
	}
}

// TestShapesAcrossStreams: one decoder reused over streams whose ids
// differ from one to the next (the gateway's pooled decoders) gives what a
// fresh one gives on each, and its kept shapes match: the holes that vary
// across streams are found, and the templates rebased on each stream.
func TestShapesAcrossStreams(t *testing.T) {
	for _, s := range synthStreams {
		d := NewDecoder(s.wire, nil, Options{})
		for i := range 8 {
			body := s.gen(30+7*i, uint64(1+i%3)).Body
			id := fmt.Sprintf("SY%0*d", 2+i%4, i) // ids of several lengths
			body = bytes.ReplaceAll(body, []byte("SYNTH"), []byte(id))
			d.Reset(s.wire, bytes.NewReader(body), Options{})
			fresh := decodeBytes(s.wire, body, Options{})
			sameDecode(t, fmt.Sprintf("%s stream %d with kept shapes", s.name, i), fresh, drain(d))
			if f := fresh.d.shapes.hits; i >= 2 && d.shapes.hits <= f {
				t.Errorf("%s stream %d: %d events matched kept shapes, %d learned afresh", s.name, i, d.shapes.hits, f)
			}
		}
	}
}

// TestReleaseKeepsShapes: a decoder released into its owner's pool (as
// the scripted provider pools its streams') matches its next stream of the
// wire with the shapes it learned, as a decoder from GetDecoder does.
func TestReleaseKeepsShapes(t *testing.T) {
	for _, s := range synthStreams {
		body := s.gen(40, 1).Body
		d := NewDecoder(s.wire, bytes.NewReader(body), Options{})
		drain(d)
		d.Release()
		if d.r != nil || d.ctx != nil || d.win != nil {
			t.Errorf("%s: Release kept a reference to the stream", s.name)
		}
		d.Reset(s.wire, bytes.NewReader(body), Options{})
		fresh := decodeBytes(s.wire, body, Options{})
		sameDecode(t, s.name+" after Release", fresh, drain(d))
		if d.shapes.hits <= fresh.d.shapes.hits {
			t.Errorf("%s: after Release %d events matched kept shapes, %d learned afresh", s.name, d.shapes.hits, fresh.d.shapes.hits)
		}
	}
}

// TestShapesOncePerStream: a pooled decoder meeting short chat streams
// with new ids learns, by the third, the chunks that come once in each
// (role, tool head, finish, usage) and matches every chunk, and decodes
// each stream as a fresh decoder does.
func TestShapesOncePerStream(t *testing.T) {
	d := NewDecoder(WireOpenAIChat, nil, Options{})
	for i := range 6 {
		body := proxiedChat(fmt.Sprintf("chatcmpl-%028d", 7919*i), 1770933892+i, 20, 10)
		d.Reset(WireOpenAIChat, bytes.NewReader(body), Options{})
		sameDecode(t, fmt.Sprintf("stream %d with kept shapes", i), decodeBytes(WireOpenAIChat, body, Options{}), drain(d))
		// 34 chunks, and [DONE], read as such.
		if i >= 2 && (d.shapes.hits != 34 || d.shapes.misses != 0) {
			t.Errorf("stream %d: %d of 34 chunks matched, %d misses", i, d.shapes.hits, d.shapes.misses)
		}
	}
}

// TestShapesGiveUp: a stream whose every event has a new shape stops
// trying shapes.
func TestShapesGiveUp(t *testing.T) {
	var evs []string
	for i := range 200 {
		evs = append(evs, fmt.Sprintf(`{"choices":[{"index":0,"delta":{"content":"x"}}],"k%d":1}`, i))
	}
	evs = append(evs, "[DONE]")
	d := NewDecoder(WireOpenAIChat, bytes.NewReader(sse(evs...)), Options{})
	decodeStream(d)
	if !d.shapes.off || d.shapes.misses > 40 {
		t.Fatalf("off %v after %d misses", d.shapes.off, d.shapes.misses)
	}
	if got := d.Message().TextContent(); got != strings.Repeat("x", 200) {
		t.Fatalf("text %q", got)
	}
}

// TestShapesTypeHoles: events of one structure whose type members differ
// (so a type is a hole, not literal, and no dispatch is kept) decode as
// the validating scan decodes them, in any order.
func TestShapesTypeHoles(t *testing.T) {
	anth := func(typ, dtype, field, v string) string {
		return `{"type":"` + typ + `","index":0,"delta":{"type":"` + dtype + `","` + field + `":"` + v + `"}}`
	}
	evs := []string{
		anth("content_block_delta", "text_delta", "text", "a"),
		anth("content_block_delta", "text_delta", "text", "b"),
		anth("content_block_delta", "thinking_delta", "text", "a"),
		anth("content_block_delta", "text_delta", "thinking", "a"),
		anth("content_block_stop", "text_delta", "text", "a"),
		anth("content_block_delta", "signature_delta", "text", "a"),
		anth("ping", "text_delta", "text", "a"),
		anth("", "text_delta", "text", "c"),
		anth("content_block_delta", "text_delta", "text", "d"),
	}
	start := `{"type":"message_start","message":{"id":"m","model":"x","usage":{"input_tokens":1}}}`
	block := `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`
	stop := `{"type":"message_stop"}`
	for i := range evs {
		for j := range evs {
			var pairs []string
			pairs = append(pairs, "message_start", start, "content_block_start", block)
			for _, e := range []string{evs[i], evs[i], evs[j], evs[i], evs[j], evs[j]} {
				pairs = append(pairs, "content_block_delta", e)
			}
			pairs = append(pairs, "message_stop", stop)
			for _, o := range []Options{{}, {OpenClaw: true}} {
				decodeBoth(t, WireAnthropic, named(pairs...), o)
			}
		}
	}
	resp := func(typ, v string, oi int) string {
		return fmt.Sprintf(`{"type":"%s","item_id":"i","output_index":%d,"content_index":0,"delta":"%s"}`, typ, oi, v)
	}
	revs := []string{
		resp("response.output_text.delta", "a", 0), resp("response.output_text.delta", "b", 0),
		resp("response.refusal.delta", "a", 0), resp("response.function_call_arguments.delta", "a", 1),
		resp("response.output_text.done", "a", 0), resp("", "a", 0), resp("response.output_text.delta", "a", 1),
	}
	added := `{"type":"response.output_item.added","output_index":1,"item":{"id":"i","type":"function_call","call_id":"c","name":"read","arguments":""}}`
	done := `{"type":"response.completed","response":{"id":"r","status":"completed","output":[]}}`
	for i := range revs {
		for j := range revs {
			pairs := []string{"response.output_item.added", added}
			for _, e := range []string{revs[i], revs[i], revs[j], revs[i], revs[j], revs[j]} {
				pairs = append(pairs, "response.output_text.delta", e)
			}
			pairs = append(pairs, "response.completed", done)
			for _, o := range []Options{{}, {OpenClaw: true}} {
				decodeBoth(t, WireOpenAIResponses, named(pairs...), o)
			}
		}
	}
}

// TestShapesFramedLineFeed: a raw line end inside a string hole of an
// event that a framed shape would match (its holes active: the stream's
// deltas vary) changes the event's framing, and the event decodes as the
// line framing and the validating scan decode it.
func TestShapesFramedLineFeed(t *testing.T) {
	for _, g := range synthStreams {
		events := bytes.SplitAfter(g.gen(60, 3).Body, []byte("\n\n"))
		keys := []string{`"content":"`, `"text":"`, `"delta":"`}
		k := len(events) / 3
		for k < len(events) && !slices.ContainsFunc(keys, func(key string) bool { return bytes.Contains(events[k], []byte(key)) }) {
			k++
		}
		if k == len(events) {
			t.Fatalf("%v: no text delta", g.wire)
		}
		tried := 0
		for _, key := range keys {
			i := bytes.Index(events[k], []byte(key))
			if i < 0 {
				continue
			}
			i += len(key)
			for _, v := range []string{"\n", "\n\n", "\r\n", "a\n\ndata: {}\n\n", "\n\nevent: x\ndata: {\"a\":\""} {
				ev := string(events[k][:i]) + v + string(events[k][i:])
				body := bytes.Join(events[:k], nil)
				body = append(body, ev...)
				body = append(body, bytes.Join(events[k+1:], nil)...)
				decodeBoth(t, g.wire, body, Options{})
				tried++
			}
		}
		if tried == 0 {
			t.Fatalf("%v: no delta in %q", g.wire, events[k])
		}
	}
}

// TestShapesKeptIdentity: a pooled decoder whose kept shape was learned
// from a chunk whose envelope the scan skipped (the model and id known
// by then) still reads the model and response id when the next stream
// starts with that shape's match (a stream without a role chunk).
func TestShapesKeptIdentity(t *testing.T) {
	head := func(id string) string {
		return `{"id":"` + id + `","object":"chat.completion.chunk","created":1,"model":"m1","choices":[{"index":0,"delta":`
	}
	text := func(id, s string) string { return head(id) + `{"content":"` + s + `"},"finish_reason":null}]}` }
	first := sse(head("chatcmpl-1")+`{"role":"assistant","content":""},"finish_reason":null}]}`,
		text("chatcmpl-1", "a"), text("chatcmpl-1", "b"), text("chatcmpl-1", "c"), "[DONE]")
	for _, id := range []string{"chatcmpl-1", "chatcmpl-2"} {
		next := sse(text(id, "x"), text(id, "y"), text(id, "z"), "[DONE]")
		d := NewDecoder(WireOpenAIChat, bytes.NewReader(first), Options{})
		decodeStream(d)
		d.Reset(WireOpenAIChat, bytes.NewReader(next), Options{})
		decodeStream(d)
		if m := d.Message(); m.Model != "m1" || m.ResponseID != id || m.TextContent() != "xyz" {
			t.Errorf("after a stream with a role chunk: model %q, id %q, text %q", m.Model, m.ResponseID, m.TextContent())
		}
		if d.shapes.hits == 0 {
			t.Errorf("%s: no kept shape matched", id)
		}
	}
}
