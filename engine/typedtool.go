package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/invopop/jsonschema"
)

// ToolOption adjusts a tool built by NewTool or NewSchemaTool.
type ToolOption func(*toolConfig)

type toolConfig struct {
	schema    []byte
	exclusive bool
	inline    bool
}

// WithSchema replaces the schema derived from In by params (a JSON schema
// object). The arguments are still decoded into In once they pass it.
// NewSchemaTool, whose params are the schema, ignores it.
func WithSchema(params []byte) ToolOption {
	return func(c *toolConfig) { c.schema = params }
}

// Exclusive marks a tool whose calls must not overlap other calls of the
// same turn (it writes shared state). Under Params.ParallelTools such a
// call waits for the calls before it and runs alone; without
// ParallelTools every call runs alone anyway.
func Exclusive() ToolOption {
	return func(c *toolConfig) { c.exclusive = true }
}

// Inline marks a tool whose handler only computes: it returns promptly
// and never waits on I/O, a lock, a channel or another process. The run
// calls it on its own goroutine. Other tools' handlers run on a worker
// goroutine, so that one blocked where it cannot see its context cannot
// hold the run past Params.ToolTimeout; that hand-off is a goroutine
// switch each way, which on a multi-core machine also wakes an idle
// thread: several microseconds of CPU per call, more than the rest of the
// engine's work on a turn. An inline handler's context still ends when
// the run is aborted or interrupted, but Params.ToolTimeout does not
// bound it, and a handler that never returns holds the run.
func Inline() ToolOption {
	return func(c *toolConfig) { c.inline = true }
}

// schemaReflector derives tool schemas from Go types: inline (no $defs,
// which some providers refuse), no $id, fields required unless tagged
// omitempty, no properties beyond the declared ones. Field tags
// `jsonschema:"description=...,minLength=1,enum=a,enum=b"` add keywords,
// and `jsonschema_description:"..."` a description.
var schemaReflector = jsonschema.Reflector{DoNotReference: true, Anonymous: true, ExpandedStruct: true}

// SchemaFor returns the JSON schema NewTool derives for the Go type In:
// what the model is shown as the tool's parameters.
func SchemaFor[In any]() ([]byte, error) {
	t := reflect.TypeFor[In]()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct && t.Kind() != reflect.Map {
		return nil, fmt.Errorf("%w: tool input %s is not a struct or map (tool arguments are a JSON object)", ErrBadSchema, t)
	}
	s := schemaReflector.ReflectFromType(t)
	s.Version = "" // providers want a bare schema object
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("%w: tool input %s: %v", ErrBadSchema, t, err)
	}
	return b, nil
}

// NewTool returns a tool whose parameters are the JSON schema of In (see
// SchemaFor) and whose handler is fn.
//
// A call's arguments are validated against that schema first (on the
// already-parsed arguments; nothing is decoded twice), then decoded into
// In with encoding/json, and fn runs with the run's context, which ends
// when the run is aborted, interrupted or the call times out.
//
// What the model sees as the tool result:
//   - Out is string: that text.
//   - Out is ToolOutput: its Text, then its Content blocks (text and
//     image blocks), with its IsError flag.
//   - any other Out: its encoding/json encoding, as text.
//
// An error from fn becomes an error result (IsError) whose text is
// err.Error(), and a panic in fn an error result wrapping ErrToolPanic,
// as OpenClaw reports a throwing tool: the run goes on and the model can
// correct itself. Arguments that fail the schema never reach fn: the model
// gets an *ArgumentError saying what was wrong.
func NewTool[In, Out any](name, description string, fn func(ctx context.Context, in In) (Out, error), opts ...ToolOption) (*Tool, error) {
	if fn == nil {
		return nil, fmt.Errorf("%w: tool %q has no handler", ErrBadSchema, name)
	}
	var cfg toolConfig
	for _, o := range opts {
		o(&cfg)
	}
	params := cfg.schema
	if params == nil {
		var err error
		if params, err = SchemaFor[In](); err != nil {
			return nil, fmt.Errorf("tool %q: %w", name, err)
		}
	}
	h := func(ctx context.Context, args []byte) (ToolOutput, error) {
		var in In
		if err := json.Unmarshal(args, &in); err != nil {
			// The schema admitted what In cannot hold (a WithSchema
			// that disagrees with In): the model sees why.
			return ToolOutput{}, &ArgumentError{Tool: name, Detail: "the arguments do not fit the tool's input: " + err.Error()}
		}
		out, err := fn(ctx, in)
		if err != nil {
			return ToolOutput{}, err
		}
		return toolOutputOf(out)
	}
	return newSchemaTool(name, description, params, h, &cfg)
}

// MustNewTool is NewTool for inputs known to be valid; it panics otherwise.
func MustNewTool[In, Out any](name, description string, fn func(ctx context.Context, in In) (Out, error), opts ...ToolOption) *Tool {
	t, err := NewTool(name, description, fn, opts...)
	if err != nil {
		panic("BUG: " + err.Error())
	}
	return t
}

func toolOutputOf(out any) (ToolOutput, error) {
	switch v := out.(type) {
	case string:
		return ToolOutput{Text: v}, nil
	case ToolOutput:
		return v, nil
	case *ToolOutput:
		if v == nil {
			return ToolOutput{}, nil
		}
		return *v, nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return ToolOutput{}, fmt.Errorf("engine: encoding the tool result: %w", err)
	}
	return ToolOutput{Text: string(b)}, nil
}
