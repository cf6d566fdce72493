package engine

import (
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ocbench/ocbench/internal/redact"
	"github.com/ocbench/ocbench/llm"
)

// redactors memoises the redactor of each distinct secret set, so that a
// run pays for building one only when its keys are new.
var (
	redactors    sync.Map // joined secrets -> *redact.Redactor
	redactorsLen atomic.Int32
)

const maxRedactors = 256

// runRedactor returns the redactor of a run: Params.APIKey,
// Params.Secrets and the values of the environment's secret variables
// (the provider takes its key from there when APIKey is empty).
func runRedactor(p *Params) *redact.Redactor {
	secrets := make([]string, 0, 8)
	secrets = append(secrets, p.APIKey)
	secrets = append(secrets, p.Secrets...)
	secrets = append(secrets, redact.FromEnviron(os.Environ())...)
	key := strings.Join(secrets, "\x00")
	if v, ok := redactors.Load(key); ok {
		return v.(*redact.Redactor)
	}
	r := redact.New(secrets...)
	if redactorsLen.Load() < maxRedactors {
		if _, loaded := redactors.LoadOrStore(key, r); !loaded {
			redactorsLen.Add(1)
		}
	}
	return r
}

// redactMessage redacts m in place: its text, thinking, tool-call
// arguments and error message. Blocks without a secret are left as they
// are (no allocation).
func redactMessage(rd *redact.Redactor, m *llm.Message) {
	m.ErrorMessage = rd.String(m.ErrorMessage)
	for i := range m.Content {
		b := &m.Content[i]
		b.Text = rd.Bytes(b.Text)
		b.Arguments = rd.Bytes(b.Arguments)
		b.RawArgs = rd.Bytes(b.RawArgs)
	}
}

// redactedStreamMessage returns the live message of a stream event as
// embedding code may see it: for the terminal error event, whose error
// message is the upstream's text (which may echo the key), a redacted
// copy; otherwise m itself. Deltas are forwarded as they are (see Event).
func (r *runner) redactedStreamMessage(e *llm.Event, m *llm.Message) *llm.Message {
	if e.Type != llm.EventError || m == nil || !r.red.Contains(m.ErrorMessage) {
		return m
	}
	c := m.Clone()
	redactMessage(r.red, c)
	return c
}
