package prompt_test

import (
	"fmt"
	"io/fs"
	"strings"

	"github.com/ocbench/ocbench/prompt"
	"github.com/ocbench/ocbench/tokenize"
)

// Render a prompt from explicit inputs and split it at the cache boundary.
func ExampleAppendPrompt() {
	p := &prompt.Params{
		WorkspaceDir: "/w",
		Mode:         prompt.ModeMinimal,
		ToolNames:    []string{"read", "exec"},
		ContextFiles: []prompt.ContextFile{{Path: "/w/AGENTS.md", Content: "# AGENTS\nBe brief."}},
		Runtime:      prompt.RuntimeInfo{AgentID: "main", Channel: "telegram"},
	}
	out, lay, err := prompt.AppendPrompt(nil, p)
	if err != nil {
		panic(err)
	}
	stable, dynamic, _ := prompt.SplitBoundary(string(out))
	fmt.Println(len(stable) == lay.StableLen)
	fmt.Println(strings.HasSuffix(stable, "# AGENTS\nBe brief."))
	fmt.Println(dynamic)
	// Output:
	// true
	// true
	// ## Runtime
	// Runtime: agent=main | channel=telegram | capabilities=none | thinking=off
	// Reasoning: off (hidden unless on/stream). Toggle /reasoning; /status shows Reasoning when enabled.
}

// A cached renderer renders and tokenizes the stable prefix once; later
// calls copy it and render only the dynamic part into the reused buffer.
func ExampleRenderer() {
	r := prompt.NewCachedRenderer(64<<20, tokenize.MustGet(tokenize.O200kBase))
	p := &prompt.Params{WorkspaceDir: "/w", ToolNames: []string{"read"}}
	var buf []byte
	for turn := 0; turn < 3; turn++ {
		p.Runtime.Host = fmt.Sprintf("host-%d", turn) // a dynamic input
		buf, _, _ = r.AppendPrompt(buf[:0], p)
	}
	st := r.Stats()
	fmt.Println(st.StableRenders, st.Tokenizations, r.Cache.Stats().Hits)
	// Output: 1 1 2
}

// Resolve a workspace (here the built-in sample) into Params, then report.
func ExampleResolve() {
	dir, cleanup, err := prompt.SampleDir()
	if err != nil {
		panic(err)
	}
	defer cleanup()
	res, err := prompt.Resolve(prompt.SampleConfig(), dir)
	if err != nil {
		panic(err)
	}
	for _, f := range res.Files {
		fmt.Println(f.Name, f.Truncated)
	}
	fmt.Println(res.Skills.Included, "skills")
	rep, _, err := prompt.BuildReport(res, tokenize.MustGet(tokenize.O200kBase))
	if err != nil {
		panic(err)
	}
	fmt.Println(rep.Boundary.Present, rep.Boundary.StableTokens > 0)
	// Output:
	// AGENTS.md false
	// SOUL.md false
	// TOOLS.md false
	// IDENTITY.md false
	// USER.md false
	// HEARTBEAT.md false
	// MEMORY.md false
	// 3 skills
	// true true
}

// Budgets: a file over the per-file limit keeps 75% head and 25% tail
// around a marker.
func ExampleBuildContextFiles() {
	files := []prompt.BootstrapFile{
		{Name: "AGENTS.md", Path: "/w/AGENTS.md", Content: strings.Repeat("x", 400)},
		{Name: "TOOLS.md", Path: "/w/TOOLS.md", Missing: true},
	}
	out, warnings := prompt.BuildContextFiles(files, prompt.Budget{MaxChars: 200})
	fmt.Println(out[0].InjectedChars, out[0].Truncated)
	fmt.Println(out[1].Content)
	fmt.Println(warnings[0])
	// Output:
	// 199 true
	// [MISSING] Expected at: /w/TOOLS.md
	// workspace bootstrap file AGENTS.md is 400 chars (limit 200); truncating in injected context
}

func ExampleSampleWorkspace() {
	b, _ := fs.ReadFile(prompt.SampleWorkspace(), "IDENTITY.md")
	fmt.Println(strings.SplitN(string(b), "\n", 2)[0])
	// Output: # IDENTITY.md - Who Am I?
}
