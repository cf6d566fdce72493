package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/streamwrap"
)

// Errors of the tool registry. A failed call never reaches the caller as a
// Go error from Run: it becomes a tool result with IsError set whose text
// says what went wrong, so the model can correct itself.
var (
	// ErrUnknownTool means the model called a tool that is not registered
	// for this run. Typically a hallucinated or trimmed-away name.
	ErrUnknownTool = errors.New("engine: unknown tool")
	// ErrInvalidArguments means the call's arguments failed the tool's JSON
	// schema, or were not JSON at all. The tool did not run.
	ErrInvalidArguments = errors.New("engine: invalid tool arguments")
	// ErrDuplicateTool is returned by Registry.Add for a name already taken.
	ErrDuplicateTool = errors.New("engine: duplicate tool name")
	// ErrBadSchema is returned by NewTool and NewSchemaTool when the
	// parameters are not a usable JSON schema.
	ErrBadSchema = errors.New("engine: bad tool schema")
	// ErrToolPanic means a tool handler panicked; the panic is recovered and
	// reported as an error result.
	ErrToolPanic = errors.New("engine: tool panicked")
)

// ArgumentError is the error of a call whose arguments failed validation.
// It wraps ErrInvalidArguments; Detail is the validator's explanation.
type ArgumentError struct {
	Tool   string
	Detail string
}

func (e *ArgumentError) Error() string {
	return fmt.Sprintf("invalid arguments for tool %q: %s", e.Tool, e.Detail)
}

// Unwrap makes errors.Is(err, ErrInvalidArguments) true.
func (e *ArgumentError) Unwrap() error { return ErrInvalidArguments }

// ToolOutput is what a handler returns: the text the model sees, and
// whether it reports a failure. Content, when set, adds blocks after Text
// in the tool result: text blocks and image blocks (Block.Text holds the
// base64 data, Block.MimeType its type), which every wire encodes in a
// tool result; other block types are dropped.
type ToolOutput struct {
	Text    string
	IsError bool
	Content []llm.Block
}

// ToolHandler runs one call. args is the call's JSON object, already
// validated against the tool's schema. A returned error becomes an error
// tool result carrying err.Error(); ctx is cancelled when the run is
// aborted or interrupted.
type ToolHandler func(ctx context.Context, args []byte) (ToolOutput, error)

// Tool is a tool with a compiled parameter schema. Build it with NewTool
// (typed: the schema is derived from a Go type) or NewSchemaTool (a
// hand-written schema and a handler of raw JSON); a Tool is immutable and
// may be shared by any number of concurrent runs.
type Tool struct {
	name        string
	description string
	params      []byte
	schema      *jsonschema.Schema
	fast        *fastSchema // nil when the schema is outside the fast subset
	handler     ToolHandler
	exclusive   bool // never overlaps other calls (see Exclusive)
	inline      bool // called on the run's goroutine (see Inline)
}

// NewSchemaTool compiles params (a JSON schema, draft 2020-12 unless it says
// otherwise) and returns the tool. Schemas may not reference other
// documents: nothing is loaded from files or the network. The options
// Exclusive and Inline apply as to NewTool.
func NewSchemaTool(name, description string, params []byte, h ToolHandler, opts ...ToolOption) (*Tool, error) {
	var cfg toolConfig
	for _, o := range opts {
		o(&cfg)
	}
	return newSchemaTool(name, description, params, h, &cfg)
}

func newSchemaTool(name, description string, params []byte, h ToolHandler, cfg *toolConfig) (*Tool, error) {
	if strings.TrimSpace(name) == "" || name != strings.TrimSpace(name) {
		return nil, fmt.Errorf("%w: tool name %q", ErrBadSchema, name)
	}
	if h == nil {
		return nil, fmt.Errorf("%w: tool %q has no handler", ErrBadSchema, name)
	}
	if len(bytes.TrimSpace(params)) == 0 {
		params = []byte(`{"type":"object"}`)
	}
	sch, err := compileSchema(name, params)
	if err != nil {
		return nil, err
	}
	return &Tool{name: name, description: description, params: bytes.Clone(params), schema: sch, fast: compileFast(params), handler: h,
		exclusive: cfg.exclusive, inline: cfg.inline}, nil
}

// MustNewSchemaTool is NewSchemaTool for schemas known to be valid; it panics otherwise.
func MustNewSchemaTool(name, description string, params []byte, h ToolHandler, opts ...ToolOption) *Tool {
	t, err := NewSchemaTool(name, description, params, h, opts...)
	if err != nil {
		panic("BUG: " + err.Error())
	}
	return t
}

type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%w: external schema reference %q is not allowed", ErrBadSchema, url)
}

func compileSchema(name string, params []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(params))
	if err != nil {
		return nil, fmt.Errorf("%w: tool %q: %v", ErrBadSchema, name, err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	url := "mem:///tools/" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("%w: tool %q: %v", ErrBadSchema, name, err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("%w: tool %q: %v", ErrBadSchema, name, err)
	}
	return sch, nil
}

// Name returns the tool's name.
func (t *Tool) Name() string { return t.name }

// Definition returns the tool as offered to the model.
func (t *Tool) Definition() llm.Tool {
	return llm.Tool{Name: t.name, Description: t.description, Parameters: t.params}
}

// Validate checks args against the tool's schema without running it.
func (t *Tool) Validate(args []byte) error {
	trimmed := trimArgs(args)
	if len(trimmed) == 0 {
		return &ArgumentError{Tool: t.name, Detail: "the arguments are missing or were not valid JSON"}
	}
	// Valid arguments of a plain schema are checked in one pass over
	// their bytes, without building a generic tree; anything else goes to
	// the full validator, which also explains every failure.
	if t.fast != nil && t.fast.valid(trimmed) {
		return nil
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(trimmed))
	if err != nil {
		return &ArgumentError{Tool: t.name, Detail: "the arguments are not valid JSON: " + err.Error()}
	}
	if err := t.schema.Validate(v); err != nil {
		var ve *jsonschema.ValidationError
		detail := err.Error()
		if errors.As(err, &ve) {
			detail = flattenValidation(ve)
		}
		return &ArgumentError{Tool: t.name, Detail: detail}
	}
	return nil
}

// flattenValidation turns the validator's tree into one line per leaf
// cause, without the schema URL noise.
func flattenValidation(ve *jsonschema.ValidationError) string {
	var parts []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			loc := "/" + strings.Join(e.InstanceLocation, "/")
			parts = append(parts, fmt.Sprintf("at %s: %s", loc, e.ErrorKind.LocalizedString(englishPrinter)))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	if len(parts) == 0 {
		return ve.Error()
	}
	return strings.Join(parts, "; ")
}

var englishPrinter = message.NewPrinter(language.English)

// Registry is the set of tools offered in one run, by name. It is built
// before the run and read-only afterwards, so concurrent lookups are safe.
type Registry struct {
	byName map[string]*Tool
	order  []*Tool
}

// NewRegistry returns a registry holding tools, in that order.
func NewRegistry(tools ...*Tool) (*Registry, error) {
	r := &Registry{byName: make(map[string]*Tool, len(tools)), order: make([]*Tool, 0, len(tools))}
	for _, t := range tools {
		if err := r.Add(t); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Add registers t; a name already present is refused with ErrDuplicateTool.
func (r *Registry) Add(t *Tool) error {
	if t == nil {
		return fmt.Errorf("%w: nil tool", ErrBadSchema)
	}
	if r.byName == nil {
		r.byName = map[string]*Tool{}
	}
	if _, dup := r.byName[t.name]; dup {
		return fmt.Errorf("%w: %q", ErrDuplicateTool, t.name)
	}
	r.byName[t.name] = t
	r.order = append(r.order, t)
	return nil
}

// internName returns name as a string, the registered tool's own when
// there is one (no allocation for the usual case).
func (r *Registry) internName(name []byte) string {
	if t, ok := r.findBytes(name); ok {
		return t.name
	}
	return string(name)
}

// Lookup returns the tool called name.
func (r *Registry) Lookup(name string) (*Tool, bool) { return r.find(name) }

// findBytes is find of name's bytes, without a copy.
func (r *Registry) findBytes(name []byte) (*Tool, bool) {
	return r.find(unsafe.String(unsafe.SliceData(name), len(name)))
}

// find returns the tool called name (name is not kept): a few tools
// (a run's usual set) are compared in order, which costs less than
// hashing the name; more are looked up by name.
func (r *Registry) find(name string) (*Tool, bool) {
	if len(r.order) <= 8 {
		for _, t := range r.order {
			if t.name == name {
				return t, true
			}
		}
		return nil, false
	}
	t, ok := r.byName[name]
	return t, ok
}

// Len returns the number of tools.
func (r *Registry) Len() int { return len(r.order) }

// Names returns the tool names in registration order.
func (r *Registry) Names() []string {
	out := make([]string, len(r.order))
	for i, t := range r.order {
		out[i] = t.name
	}
	return out
}

// Definitions returns the tools as offered to the model, in registration
// order (appended to dst).
func (r *Registry) Definitions(dst []llm.Tool) []llm.Tool {
	for _, t := range r.order {
		dst = append(dst, t.Definition())
	}
	return dst
}

// toolSet is a run's registry with its tool names and definitions (not
// to be modified).
type toolSet struct {
	tools []*Tool
	reg   *Registry
	names []string
	defs  []llm.Tool
	// allow is the live allowlist of names (allowlist); chains holds the
	// decorator chains runs of these tools left, a *sync.Pool of
	// *runChain per chainKey (chainPool; few keys: a slice).
	allowOnce sync.Once
	allow     *streamwrap.Allowlist
	chainMu   sync.Mutex
	chains    []keyedPool
}

// allowlist returns the live tool allowlist of the set's names.
func (ts *toolSet) allowlist() *streamwrap.Allowlist {
	ts.allowOnce.Do(func() { ts.allow = streamwrap.NewAllowlist(ts.names...) })
	return ts.allow
}

func newToolSet(tools []*Tool) (*toolSet, error) {
	reg, err := NewRegistry(tools...)
	if err != nil {
		return nil, err
	}
	return &toolSet{tools: tools, reg: reg, names: reg.Names(), defs: reg.Definitions(nil)}, nil
}

// lastToolSet is the tool set of the last run: runs offering the same
// tools share it (a Tool does not change once made, and a registry is
// read-only once built). A run's built-in tools are those of runBuiltins,
// which work in the calling run's workspace, so runs in different
// workspaces share them too.
var lastToolSet atomic.Pointer[toolSet]

// sharedToolSet returns the tool set of the tools of first and then more,
// the last run's when it offered the very same tools.
func sharedToolSet(first, more []*Tool) (*toolSet, error) {
	if ts := lastToolSet.Load(); ts != nil && len(ts.tools) == len(first)+len(more) &&
		slices.Equal(ts.tools[:len(first)], first) && slices.Equal(ts.tools[len(first):], more) {
		return ts, nil
	}
	ts, err := newToolSet(append(slices.Clone(first), more...))
	if err != nil {
		return nil, err
	}
	lastToolSet.Store(ts)
	return ts, nil
}

// CallResult is the outcome of one tool call.
type CallResult struct {
	Text     string
	Content  []llm.Block // blocks after Text (ToolOutput.Content)
	IsError  bool
	Err      error // why it failed, when IsError; nil for handler-reported errors without one
	Duration time.Duration
}

// Call validates args against the named tool's schema and runs it. It
// never panics and never returns a Go error: unknown tools, invalid
// arguments, handler errors and handler panics all come back as a result
// with IsError set, as OpenClaw reports them to the model.
func (r *Registry) Call(ctx context.Context, name string, args []byte) CallResult {
	start := time.Now()
	var res CallResult
	if t := r.admit(ctx, name, args, &res); t != nil {
		t.runInto(ctx, args, &res)
	}
	res.Duration = time.Since(start)
	return res
}

// admit returns the tool a call of name with args runs, or (ok false) the
// error result of a call that must not run: an unknown tool, arguments
// that fail its schema, a context that has already ended.
func (r *Registry) admit(ctx context.Context, name string, args []byte, res *CallResult) *Tool {
	t, ok := r.find(name)
	if !ok {
		err := fmt.Errorf("%w: %q", ErrUnknownTool, name)
		*res = CallResult{Text: unknownToolText(name, r), IsError: true, Err: err}
		return nil
	}
	if err := t.Validate(args); err != nil {
		*res = CallResult{Text: err.Error(), IsError: true, Err: err}
		return nil
	}
	if err := ctx.Err(); err != nil {
		*res = CallResult{Text: "Tool " + name + " was not run: the run was aborted.", IsError: true, Err: err}
		return nil
	}
	return t
}

// trimArgs is bytes.TrimSpace(args), which is args itself when they start
// and end with printable ASCII (as a JSON object does): no rune decoding.
func trimArgs(args []byte) []byte {
	if n := len(args); n > 0 && args[0]-0x21 < 0x5f && args[n-1]-0x21 < 0x5f {
		return args
	}
	return bytes.TrimSpace(args)
}

// run runs t's handler on arguments admit accepted (Duration unset).
func (t *Tool) run(ctx context.Context, args []byte) CallResult {
	var res CallResult
	t.runInto(ctx, args, &res)
	return res
}

// runInto is run writing the whole result into *res.
func (t *Tool) runInto(ctx context.Context, args []byte, res *CallResult) {
	out, err := runHandler(ctx, t, trimArgs(args))
	if err != nil {
		*res = CallResult{Text: err.Error(), IsError: true, Err: err}
		return
	}
	*res = CallResult{Text: out.Text, Content: out.Content, IsError: out.IsError}
}

// DefaultToolTimeout bounds one tool call by default. OpenClaw has no
// per-call limit for its file tools; its longest tool budget is exec's
// 1800 s, so a call gets that plus the grace exec needs to kill its
// process group, and exec's own timeout fires first.
const DefaultToolTimeout = DefaultExecTimeout + 5*time.Second

// ToolAbandonGrace is how long a tool call may take to return after its
// context ended (timeout or abort) before the run leaves it behind.
const ToolAbandonGrace = 3 * time.Second

var toolAbandonGrace = ToolAbandonGrace // tests shorten it

// ErrToolTimeout is the error of a tool call that did not finish within
// Params.ToolTimeout.
var ErrToolTimeout = errors.New("engine: tool call timed out")

func runHandler(ctx context.Context, t *Tool, args []byte) (out ToolOutput, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: tool %q: %v", ErrToolPanic, t.name, p)
		}
	}()
	return t.handler(ctx, args)
}

func unknownToolText(name string, r *Registry) string {
	names := r.Names()
	sort.Strings(names)
	if len(names) == 0 {
		return fmt.Sprintf("Tool %q not found: no tools are available in this run.", name)
	}
	return fmt.Sprintf("Tool %q not found. Available tools: %s.", name, strings.Join(names, ", "))
}
