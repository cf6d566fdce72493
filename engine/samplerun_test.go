package engine

import (
	"path/filepath"
	"testing"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/prompt"
	"github.com/ocbench/ocbench/provider/scripted"
	"github.com/ocbench/ocbench/transcript"
)

// sampleRun returns the Params of a run as /v1/runs makes one: OpenClaw's
// prompt of the sample workspace (materialized in a new temporary
// directory), the built-in tools, one scripted model call that answers
// "hello", entries not synced. With store, the sessions live in a DirStore
// in the same directory, returned too and closed when the test ends.
func sampleRun(tb testing.TB, store bool) (Params, *transcript.DirStore) {
	dir := tb.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := prompt.MaterializeSample(ws); err != nil {
		tb.Fatal(err)
	}
	prov := scripted.MustNew(scripted.Options{Script: &scripted.Script{Turns: []scripted.Turn{{Steps: []scripted.Step{scripted.Text("hello")}}}}})
	p := Params{
		Prompt:         "hi",
		Model:          llm.Model{ID: "scripted-1", API: "anthropic-messages", Provider: "scripted"},
		StreamFunc:     prov.StreamFunc(),
		Workspace:      ws,
		OpenClawPrompt: true, BuiltinTools: true,
		PromptOptions: PromptOptions{Config: prompt.SampleConfig()},
		Session:       SessionOptions{Durability: transcript.SyncNone},
	}
	if !store {
		return p, nil
	}
	st, err := transcript.OpenDirStore(filepath.Join(dir, "sessions"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	p.SessionStore = st
	return p, st
}
