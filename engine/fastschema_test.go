package engine

import (
	"context"
	"testing"
)

var fastSchemas = []string{
	readSchema, writeSchema, editSchema, lsSchema, execSchema,
	`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`,
	`{"type":"object","properties":{"n":{"type":"integer","maximum":10,"exclusiveMaximum":10},"x":{"type":["number","null"],"minimum":-1.5},"b":{"type":"boolean"},"o":{"type":"object"},"a":{"type":"array"},"s":{"type":"string","maxLength":3}}}`,
}

func TestFastSchemaCoversBuiltins(t *testing.T) {
	for _, s := range fastSchemas {
		if compileFast([]byte(s)) == nil {
			t.Errorf("not in the fast subset: %s", s)
		}
	}
	for _, s := range []string{`{"type":"object","properties":{"a":{"pattern":"x"}}}`, `{"type":"object","oneOf":[]}`, `{"properties":{}}`, `{"type":"object","additionalProperties":{"type":"string"}}`} {
		if compileFast([]byte(s)) != nil {
			t.Errorf("compiled outside the subset: %s", s)
		}
	}
}

func TestValidateValidArgumentsWithoutAllocating(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	tool := MustNewSchemaTool("read", "", []byte(readSchema), func(context.Context, []byte) (ToolOutput, error) { return ToolOutput{}, nil })
	args := []byte(`{"path":"notes/é.txt","offset":3,"limit":20}`)
	if err := tool.Validate(args); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(200, func() { _ = tool.Validate(args) }); n != 0 {
		t.Fatalf("%v allocations per validation", n)
	}
}

// FuzzFastSchemaAgrees: whenever the fast path accepts arguments, the full
// validator accepts them too (it never decides a rejection itself).
func FuzzFastSchemaAgrees(f *testing.F) {
	for _, a := range []string{`{"path":"a"}`, `{"path":""}`, `{"path":"a","offset":0}`, `{"path":"a","offset":1.0}`, `{"path":"a","path":"b"}`,
		`{"command":"ls","timeout":0}`, `{"n":9,"x":null,"s":"abcd"}`, `{"n":10}`, `{"x":-1.5}`, `{"text":"\u00e9"}`, `{"oldText":"a","newText":"","path":"p"}`,
		`{"n":1e1}`, `{"n":-0}`, `{"s":"\ud800"}`, "{\"s\":\"\xff\"}", `{"n":12345678901234567890}`} {
		for i := range fastSchemas {
			f.Add(i, a)
		}
	}
	tools := make([]*Tool, len(fastSchemas))
	for i, s := range fastSchemas {
		tools[i] = MustNewSchemaTool("t", "", []byte(s), func(context.Context, []byte) (ToolOutput, error) { return ToolOutput{}, nil })
	}
	f.Fuzz(func(t *testing.T, i int, args string) {
		if i < 0 {
			i = -i
		}
		tool := tools[i%len(tools)]
		if tool.fast == nil || !tool.fast.valid([]byte(args)) {
			return
		}
		slow := *tool
		slow.fast = nil
		if err := slow.Validate([]byte(args)); err != nil {
			t.Fatalf("fast path accepted %q, the validator says %v", args, err)
		}
	})
}
