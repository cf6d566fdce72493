package engine

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

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
	envRed, env := environRedactor()
	if len(p.APIKey) < redact.MinSecretLen && len(p.Secrets) == 0 {
		return envRed // a shorter key is not redacted literally anyway
	}
	secrets := make([]string, 0, 8)
	secrets = append(secrets, p.APIKey)
	secrets = append(secrets, p.Secrets...)
	secrets = append(secrets, env...)
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

// envRedaction is the redactor of the environment's secret variables
// alone, and their values, for the environment it was made of.
var envRedaction struct {
	mu      sync.Mutex
	environ []string
	secrets []string
	red     *redact.Redactor
}

// environRedactor returns the redactor of the environment's secret
// variables and their values: the last ones while the environment has not
// changed (os.Environ gives the same strings then, compared by address
// first), instead of classifying every variable's name on every run.
func environRedactor() (*redact.Redactor, []string) {
	env := os.Environ()
	e := &envRedaction
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.red == nil || !sameStrings(env, e.environ) {
		e.environ, e.secrets = env, redact.FromEnviron(env)
		e.red = redact.New(e.secrets...)
	}
	return e.red, e.secrets
}

// sameStrings reports whether a and b hold the same strings, comparing
// the bytes only of strings that are not the same memory.
func sameStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) || unsafe.StringData(a[i]) != unsafe.StringData(b[i]) && a[i] != b[i] {
			return false
		}
	}
	return true
}

// redactMessage redacts m in place: its text, thinking, tool-call
// arguments and error message. Blocks without a secret are left as they
// are (no allocation).
func redactMessage(rd *redact.Redactor, m *llm.Message) {
	m.ErrorMessage = rd.String(m.ErrorMessage)
	for i := range m.Content {
		b := &m.Content[i]
		b.Text = rd.Bytes(b.Text)
		args := rd.Bytes(b.Arguments)
		switch {
		case !bytes.Equal(b.RawArgs, b.Arguments):
			b.RawArgs = rd.Bytes(b.RawArgs)
		case len(args) > 0 && len(b.Arguments) > 0 && &args[0] != &b.Arguments[0]:
			// The streamed text is the final arguments (no repair): the
			// same bytes redacted once, each field with its own copy.
			b.RawArgs = bytes.Clone(args)
		}
		b.Arguments = args
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
