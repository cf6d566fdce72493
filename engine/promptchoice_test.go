package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/llm"
)

// capture is a StreamFunc that records each request's system prompt and
// tool names, then answers.
type capture struct {
	fakeProvider
	systems []string
	tools   [][]string
}

func (c *capture) stream(ctx context.Context, req *llm.Request) (llm.Stream, error) {
	c.systems = append(c.systems, req.System)
	var names []string
	for _, t := range req.Tools {
		names = append(names, t.Name)
	}
	c.tools = append(c.tools, names)
	return c.fakeProvider.stream(ctx, req)
}

// The zero value sends no system prompt and no built-in tools, with or
// without a workspace: OpenClaw's prompt and tools are only ever chosen.
func TestPromptAndBuiltinsOnlyByChoice(t *testing.T) {
	_, dir := newTestWorkspace(t)
	echo := MustNewTool("echo", "Echo.", func(ctx context.Context, in struct{}) (string, error) { return "", nil })
	cases := []struct {
		name      string
		p         Params
		system    string // "" none, "openclaw" OpenClaw's, else exact
		wantTools string
	}{
		{"zero", Params{}, "", ""},
		{"zero with workspace", Params{Workspace: dir}, "", ""},
		{"own tools only", Params{Workspace: dir, Tools: []*Tool{echo}}, "", "echo"},
		{"plain prompt", Params{SystemPrompt: "You are terse."}, "You are terse.", ""},
		{"builtins chosen", Params{Workspace: dir, BuiltinTools: true, SystemPrompt: "x"}, "x", "read,write,edit,ls"},
		{"openclaw chosen", Params{OpenClawPrompt: true}, "openclaw", ""},
		{"openclaw with workspace and tools", Params{OpenClawPrompt: true, Workspace: dir, BuiltinTools: true}, "openclaw", "read,write,edit,ls"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &capture{}
			p := tc.p
			p.Prompt, p.StreamFunc, p.Model = "hi", c.stream, llm.Model{ID: "m", API: "fake-api"}
			if _, err := Run(context.Background(), p); err != nil {
				t.Fatal(err)
			}
			sys := c.systems[0]
			switch tc.system {
			case "":
				if sys != "" {
					t.Fatalf("system prompt sent without being chosen: %d bytes", len(sys))
				}
			case "openclaw":
				if len(sys) < 4000 || !strings.Contains(sys, "Tool") {
					t.Fatalf("OpenClaw prompt: %d bytes", len(sys))
				}
			default:
				if sys != tc.system {
					t.Fatalf("system %q", sys)
				}
			}
			if got := strings.Join(c.tools[0], ","); got != tc.wantTools {
				t.Fatalf("tools %q, want %q", got, tc.wantTools)
			}
		})
	}
}

func TestConflictingParams(t *testing.T) {
	for _, p := range []Params{
		{SystemPrompt: "x", OpenClawPrompt: true},
		{BuiltinTools: true},
	} {
		p.Prompt, p.StreamFunc = "hi", (&fakeProvider{}).stream
		if _, err := Run(context.Background(), p); !errors.Is(err, ErrParams) {
			t.Fatalf("%+v: %v", p, err)
		}
	}
}
