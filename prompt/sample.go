package prompt

import (
	"embed"
	"io/fs"
	"os"
	"path/filepath"
)

//go:embed sample
var sampleFS embed.FS

// SampleWorkspace returns the built-in sample workspace: the eight
// bootstrap files but BOOTSTRAP.md (AGENTS, SOUL, TOOLS, IDENTITY, USER,
// HEARTBEAT, MEMORY) and three skills under skills/.
func SampleWorkspace() fs.FS {
	sub, err := fs.Sub(sampleFS, "sample")
	if err != nil {
		panic("BUG: embedded sample workspace missing: " + err.Error())
	}
	return sub
}

// MaterializeSample writes the sample workspace into dir (created if
// needed), so that it can be resolved like any workspace.
func MaterializeSample(dir string) error {
	return os.CopyFS(dir, SampleWorkspace())
}

// SampleDir materialises the sample workspace in a new temporary directory
// and returns it with a function that removes it.
func SampleDir() (string, func(), error) {
	dir, err := os.MkdirTemp("", "ocbench-workspace-")
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { _ = os.RemoveAll(dir) }
	if err := MaterializeSample(filepath.Join(dir)); err != nil {
		cleanup()
		return "", nil, err
	}
	return dir, cleanup, nil
}

// SampleTools is a typical tool set of an embedded OpenClaw agent.
var SampleTools = []string{
	"read", "write", "edit", "apply_patch", "exec", "process", "web_search", "web_fetch",
	"message", "sessions_list", "sessions_history", "sessions_send", "sessions_spawn",
	"subagents", "session_status", "memory_search", "memory_get", "image",
}

// SampleConfig returns a configuration for the sample workspace (or any
// workspace) that resembles a real main-agent run: the sample tools, a time
// zone, a runtime line, memory enabled. Callers adjust it as they need.
func SampleConfig() *Config {
	return &Config{
		Base: Params{
			ToolNames:       slicesClone(SampleTools),
			UserTimezone:    "UTC",
			MemoryEnabled:   true,
			MemoryCitations: true,
			ModelAliasLines: []string{"- sonnet: anthropic/claude-sonnet-4-5", "- gpt: openai/gpt-5.4"},
			Runtime: RuntimeInfo{
				AgentID: "main", Host: "ocbench", OS: "Linux 6.8.0", Arch: "x64", Node: "v22.14.0",
				Model: "anthropic/claude-sonnet-4-5", DefaultModel: "anthropic/claude-sonnet-4-5", Shell: "bash",
			},
			DefaultThinkLevel: "low",
		},
		AgentID:      "main",
		DefaultAgent: true,
		SessionKey:   "agent:main:main",
	}
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }
