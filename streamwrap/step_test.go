package streamwrap

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"
	"unicode/utf8"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/streamwrap/repair"
)

// TestHasCloser checks hasCloser and repair.ScanDelta against bytes.IndexAny(b,
// "}]") (and its ASCII against the UTF-16 length) on short
// and long fragments, with multi-byte and invalid UTF-8 around the closers.
func TestHasCloser(t *testing.T) {
	alphabet := []byte("ab{}[]\"\\ \xe2\x80\x9c\xff\xc2\xa0")
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 2000; n++ {
		b := make([]byte, r.IntN(80))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		want := bytes.IndexAny(b, "}]") >= 0
		if got := hasCloser(b); got != want {
			t.Fatalf("hasCloser(%q) = %v, want %v", b, got, want)
		}
		ascii, closer := repair.ScanDelta(b)
		if closer != want || ascii != (utf8.Valid(b) && utf16Len(b) == len(b)) {
			t.Fatalf("ScanDelta(%q) = %v, %v", b, ascii, closer)
		}
	}
}

// TestStepMatchesNext checks that a decorator's Step reports what its Next,
// Event and Message report, through the whole chain over the scripted
// stream, event by event.
func TestStepMatchesNext(t *testing.T) {
	script := newScript()
	f, req := fullChain(func(_ context.Context, _ *llm.Request) (llm.Stream, error) {
		script.reset()
		return script, nil
	})
	a, err := f(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	st, ok := a.(llm.Stepper)
	if !ok {
		t.Fatalf("%T does not implement llm.Stepper", a)
	}
	var evs []llm.Event
	for {
		ev, msg, ok := st.Step()
		if msg != a.Message() {
			t.Fatalf("step's message %p, Message() %p", msg, a.Message())
		}
		if !ok {
			break
		}
		if ev != a.Event() {
			t.Fatalf("step's event %p, Event() %p", ev, a.Event())
		}
		evs = append(evs, *ev)
	}
	if len(evs) == 0 || !evs[len(evs)-1].Type.IsTerminal() {
		t.Fatalf("stream of %d events without a terminal event", len(evs))
	}
}

// layerOf answers what init's interface assertions would for every
// decorator type, and nothing for other streams.
func TestLayerOfAgreesWithAssertions(t *testing.T) {
	streams := []llm.Stream{new(stageStream), new(promoteStream), new(trimStream), new(repairStream),
		new(entityStream), new(transformStream), new(stopStream), new(dropStream), new(idleStream), new(diagStream)}
	for _, s := range streams {
		l := layerOf(s)
		_, isPasser := s.(passer)
		st, _ := s.(llm.Stepper)
		v, _ := s.(eventViews)
		raw, _ := s.(RawStopReasoner)
		_, reporter := s.(llm.ActivityReporter)
		if l.b == nil || (l.p != nil) != isPasser || l.st != st || l.views != v || l.raw != raw || !reporter {
			t.Errorf("%T: layerOf disagrees with the assertions", s)
		}
	}
	if l := layerOf(newScript()); l.b != nil {
		t.Error("layerOf took a test stream for a decorator")
	}
}
