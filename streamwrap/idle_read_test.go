package streamwrap

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider"
)

// The idle timer over a provider that reports its reads (provider.Decoder
// under the transport's context) stamps the clock per read, not per event.
// These tests run a real decoder over a pipe whose writer stands for the
// provider, and check that the timeout still fires on a stalled stream, no
// sooner than Timeout after the last activity and well before the
// one-Timeout slack of the fallback, and never while a slow consumer still
// receives events.

const (
	anthStart = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
	anthDelta = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi \"}}\n\n"
	anthPing  = "event: ping\ndata: {\"type\": \"ping\"}\n\n"
	anthEnd   = "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
)

// pipeProvider returns a StreamFunc decoding what the returned writer
// writes, as the transport does: the decoder gets the call's context, and
// its cancellation aborts the blocked read (as net/http aborts a body
// read). The test must call the returned close after closing the stream:
// it waits for that abort, whose goroutine would otherwise allocate during
// a later test's allocation count.
func pipeProvider(t *testing.T) (llm.StreamFunc, *io.PipeWriter, func()) {
	pr, pw := io.Pipe()
	d := provider.NewDecoder(provider.WireAnthropic, pr, provider.Options{})
	aborted := make(chan struct{})
	return func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
			d.Reset(provider.WireAnthropic, pr, provider.Options{})
			d.SetContext(ctx)
			context.AfterFunc(ctx, func() {
				pr.CloseWithError(context.Cause(ctx))
				close(aborted)
			})
			return d, nil
		}, pw, func() {
			select {
			case <-aborted:
			case <-time.After(10 * time.Second):
				t.Error("the stream's context was not cancelled at Close")
			}
		}
}

// idleOverPipe opens an idle-timed stream over pipeProvider, wrapped by
// wrap when it is set; the stream is closed, and its abort awaited, when
// the test ends.
func idleOverPipe(t *testing.T, timeout time.Duration, wrap func(llm.StreamFunc) llm.StreamFunc) (llm.Stream, *io.PipeWriter) {
	base, pw, closed := pipeProvider(t)
	f := IdleTimeout(base, IdleConfig{Timeout: timeout})
	if wrap != nil {
		f = wrap(f)
	}
	s, err := f(context.Background(), &llm.Request{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		closed()
	})
	return s, pw
}

// drainTimed reads s to its end, sleeping each after every non-terminal
// event. It returns when the consumer last asked for an event (the call
// that waited for the end), when the stream ended, and how many events
// came before the end.
func drainTimed(s llm.Stream, each time.Duration) (asked, end time.Time, n int) {
	for {
		asked = time.Now()
		if !s.Next() || s.Event().Type.IsTerminal() {
			break
		}
		n++
		time.Sleep(each)
	}
	for s.Next() {
	}
	return asked, time.Now(), n
}

func checkIdleEnd(t *testing.T, s llm.Stream, idle, timeout time.Duration) {
	t.Helper()
	if !errors.Is(s.Err(), ErrIdleTimeout) {
		t.Fatalf("Err = %v, want the idle timeout", s.Err())
	}
	if m := s.Message(); m.StopReason != llm.StopError || !strings.Contains(m.ErrorMessage, "LLM idle timeout") {
		t.Fatalf("final message %v %q", m.StopReason, m.ErrorMessage)
	}
	if idle < timeout {
		t.Fatalf("timed out %v after the last activity, before the timeout %v", idle, timeout)
	}
	if idle > timeout*17/10 {
		t.Fatalf("timed out %v after the last activity: more than 7/10 of the timeout %v late", idle, timeout)
	}
}

// A stream that stalls after its events times out Timeout after the read
// it waits in; pings (frames without events) keep it alive meanwhile, as
// OpenClaw's per-chunk activity does.
func TestIdleReportingStreamStalls(t *testing.T) {
	t.Run("alone", func(t *testing.T) { testIdleStall(t, false) })
	// Diagnostics fuse the idle decorator below them (diagStream.fuse).
	t.Run("under diagnostics", func(t *testing.T) { testIdleStall(t, true) })
}

func testIdleStall(t *testing.T, diag bool) {
	const timeout = 300 * time.Millisecond
	var phase ModelCallPhase
	var wrap func(llm.StreamFunc) llm.StreamFunc
	if diag {
		wrap = func(f llm.StreamFunc) llm.StreamFunc {
			return DiagnosticModelCallEvents(f, DiagnosticsConfig{Sink: DiagnosticSinkFunc(func(e *ModelCallEvent) { phase = e.Phase })})
		}
	}
	s, pw := idleOverPipe(t, timeout, wrap)
	if r, ok := s.(llm.ActivityReporter); !ok || !r.ReportsActivity() {
		t.Fatal("the idle stream over a decoder with the call's context does not report activity")
	}
	lastPing := make(chan time.Time, 1)
	go func() {
		io.WriteString(pw, anthStart+anthDelta+anthDelta)
		// Pings for 2.5 timeouts: no event, but activity.
		var at time.Time
		for range 5 {
			time.Sleep(timeout / 2)
			at = time.Now()
			if _, err := io.WriteString(pw, anthPing); err != nil {
				break
			}
		}
		lastPing <- at
		// Then nothing: the stall.
	}()
	_, end, n := drainTimed(s, 0)
	if n != 4 {
		t.Fatalf("%d events before the end, want start, text_start and two deltas", n)
	}
	checkIdleEnd(t, s, end.Sub(<-lastPing), timeout)
	if diag && phase != ModelCallError {
		t.Fatalf("last diagnostic phase %v, want %v", phase, ModelCallError)
	}
}

// A consumer that takes a third of the timeout per event works through
// buffered events for longer than the timeout without a read: events keep
// the stream alive; when they run out and the provider stalls, the timeout
// fires Timeout after the read.
func TestIdleReportingSlowConsumer(t *testing.T) {
	const timeout = 300 * time.Millisecond
	s, pw := idleOverPipe(t, timeout, nil)
	go io.WriteString(pw, anthStart+strings.Repeat(anthDelta, 8))
	asked, end, n := drainTimed(s, timeout/3)
	if n != 10 {
		t.Fatalf("%d events before the end, want 10 (the idle timer fired while the consumer was still receiving events?)", n)
	}
	// The read the consumer waits in once it asks for more is the last
	// activity.
	checkIdleEnd(t, s, end.Sub(asked), timeout)
}

// The same slow consumer over a body that ends normally: no timeout.
func TestIdleReportingSlowConsumerCompletes(t *testing.T) {
	const timeout = 150 * time.Millisecond
	s, pw := idleOverPipe(t, timeout, nil)
	go func() {
		io.WriteString(pw, anthStart+strings.Repeat(anthDelta, 8)+anthEnd)
		pw.Close()
	}()
	_, _, n := drainTimed(s, timeout/3)
	if s.Err() != nil || s.Message().StopReason != llm.StopStop {
		t.Fatalf("after %d events: Err %v, stop reason %v", n, s.Err(), s.Message().StopReason)
	}
}
