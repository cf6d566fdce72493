package engine

import (
	"context"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

var fastSchemas = []string{
	readSchema, writeSchema, editSchema, lsSchema, execSchema,
	`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`,
	`{"type":"object","properties":{"n":{"type":"integer","maximum":10,"exclusiveMaximum":10},"x":{"type":["number","null"],"minimum":-1.5},"b":{"type":"boolean"},"o":{"type":"object"},"a":{"type":"array"},"s":{"type":"string","maxLength":3}}}`,
	// Nested objects and arrays, as NewTool derives them from Go types.
	`{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string","minLength":1}},"o":{"type":"object","properties":{"n":{"type":"integer","minimum":0},"s":{"type":"string"}},"required":["n"],"additionalProperties":false},"rows":{"type":"array","items":{"type":"object","properties":{"k":{"type":"string"}},"required":["k"],"additionalProperties":false}}},"required":["o"],"additionalProperties":false}`,
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
		`{"n":1e1}`, `{"n":-0}`, `{"s":"\ud800"}`, "{\"s\":\"\xff\"}", `{"n":12345678901234567890}`,
		`{"o":{"n":1},"tags":["a","b"]}`, `{"o":{"n":-1}}`, `{"o":{"s":"x"}}`, `{"o":{"n":1,"z":1}}`, `{"o":{"n":1,"n":2}}`, `{"o":{"n":1},"tags":[""]}`,
		`{"o":{"n":1},"rows":[{"k":"a"},{"k":1}]}`, `{"o":{"n":1},"rows":[{}]}`, `{"o":{"n":1},"rows":[{"k":"a","x":0}]}`, `{"o":{"n":1.5}}`,
		`{"path":"a\"b\\c\/d\u00e9\n"}`, `{"path":"a\x"}`, `{"path":"a\u00g0"}`, "{\"path\":\"a\x01\"}", `{"pa\u0074h":"a"}`, `{"path":"a"}x`, ` {"path":"a"} `,
		`{"path":"a","z":[1,-2.5e+3,0.1,true,false,null,{"q":[]},""]}`, `{"path":"a","z":01}`, `{"path":"a","z":1.}`, `{"path":"a","z":-}`, `{"path":"a","z":1e}`,
		`{"path":"a","z":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`, `{"path":"a",}`, `{"path":"a" "b":1}`, `{"path":"a","z":tru}`, `{"path":"a","z":nul}`,
		`{"s":"\u00e9\u00e9"}`, `{"n":-0,"x":0.5}`, `{"n":100000000000000}`, `{"tags":["a",]}`, `{"o":{"n":1},"rows":[{"k":"a"}],}`} {
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
		// The full validator decodes leniently (invalid UTF-8 becomes
		// U+FFFD): the fast path must be as strict as encoding/json.Valid.
		if !json.Valid([]byte(args)) || !utf8.ValidString(args) {
			t.Fatalf("fast path accepted %q, which is not valid JSON", args)
		}
		slow := *tool
		slow.fast = nil
		if err := slow.Validate([]byte(args)); err != nil {
			t.Fatalf("fast path accepted %q, the validator says %v", args, err)
		}
	})
}

// Nested objects and arrays are judged on the parsed arguments too, and
// every violation inside them goes to the full validator.
func TestFastSchemaNested(t *testing.T) {
	fs := compileFast([]byte(fastSchemas[len(fastSchemas)-1]))
	if fs == nil {
		t.Fatal("nested schema outside the fast subset")
	}
	for _, ok := range []string{`{"o":{"n":1}}`, `{"o":{"n":0,"s":"x"},"tags":["a","b"],"rows":[{"k":"a"},{"k":"b"}]}`, `{"o":{"n":1},"tags":[],"rows":[]}`} {
		if !fs.valid([]byte(ok)) {
			t.Errorf("fast path refused valid %s", ok)
		}
	}
	for _, bad := range []string{`{}`, `{"o":{}}`, `{"o":{"n":-1}}`, `{"o":{"n":1,"z":1}}`, `{"o":{"n":1},"tags":[""]}`, `{"o":{"n":1},"tags":[1]}`,
		`{"o":{"n":1},"rows":[{"k":"a"},{}]}`, `{"o":{"n":1},"rows":[{"k":"a","x":0}]}`, `{"o":"x"}`, `{"o":{"n":1},"extra":true}`} {
		if fs.valid([]byte(bad)) {
			t.Errorf("fast path accepted invalid %s", bad)
		}
	}
}

type nestedIn struct {
	Tags  []string `json:"tags,omitempty"`
	Inner struct {
		N int    `json:"n" jsonschema:"minimum=0"`
		S string `json:"s,omitempty"`
	} `json:"inner"`
}

// A typed tool with nested struct and slice fields validates valid
// arguments without allocating.
func TestTypedNestedValidationWithoutAllocating(t *testing.T) {
	tool := MustNewTool("nested", "", func(context.Context, nestedIn) (string, error) { return "", nil })
	if tool.fast == nil {
		t.Fatalf("schema outside the fast subset: %s", tool.Definition().Parameters)
	}
	args := []byte(`{"tags":["a","b"],"inner":{"n":3,"s":"x"}}`)
	if err := tool.Validate(args); err != nil {
		t.Fatal(err)
	}
	if err := tool.Validate([]byte(`{"inner":{"n":-3}}`)); err == nil {
		t.Fatal("minimum not enforced")
	}
	if raceEnabled {
		return
	}
	if n := testing.AllocsPerRun(200, func() { _ = tool.Validate(args) }); n != 0 {
		t.Fatalf("%v allocations per validation", n)
	}
}

// The one-pass check accepts every JSON form a valid argument object may
// take (escapes, white space, numbers, nesting under a member the schema
// does not name), so such arguments never fall to the full validator.
func TestFastSchemaAcceptsJSONForms(t *testing.T) {
	fs := compileFast([]byte(`{"type":"object","properties":{"text":{"type":"string"},"n":{"type":"integer","minimum":-5}},"required":["text"]}`))
	for _, ok := range []string{
		`{"text":"a\"b\\c\/d\u00e9\n\t\r\b\f"}`, " {\n\t\"text\" : \"é€😀\" ,\r\"n\":-5 } ",
		`{"text":"","z":[1,-2.5e+3,0.1,1E-2,true,false,null,{"q":[],"r":{}},""]}`, `{"n":123456789012345,"text":"x"}`, `{"text":"x","n":-0}`,
	} {
		if !fs.valid([]byte(ok)) {
			t.Errorf("fast path refused valid %s", ok)
		}
		if err := json.Unmarshal([]byte(ok), new(any)); err != nil {
			t.Errorf("test case %s: %v", ok, err)
		}
	}
	for _, bad := range []string{`{"n":1}`, `{"text":"x","n":-6}`, `{"text":"x","n":1.0}`, `{"text":1}`, `{"text":"x","n":1234567890123456}`, `[]`, `{"text":"x"`, ``} {
		if fs.valid([]byte(bad)) {
			t.Errorf("fast path accepted %s", bad)
		}
	}
}
