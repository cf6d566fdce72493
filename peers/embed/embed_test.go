package embed_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ocbench/ocbench/engine"
	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider/scripted"
	"github.com/ocbench/ocbench/transcript"
)

type lookupIn struct {
	Key string `json:"key" jsonschema:"minLength=1"`
}

type lookupOut struct {
	Key   string `json:"key"`
	Value int    `json:"value"`
}

func model() llm.Model {
	return llm.Model{ID: "scripted-1", API: llm.APIOpenAICompletions, Provider: "scripted"}
}

func turns(ts ...scripted.Turn) *scripted.Provider {
	return scripted.MustNew(scripted.Options{Script: &scripted.Script{Turns: ts}})
}

// A handler runs a session per request with a typed tool; concurrent
// requests share the tool and the provider.
func TestServiceHandlerWithTypedTool(t *testing.T) {
	var calls atomic.Int32
	lookup := engine.MustNewTool("lookup", "Look a key up.", func(ctx context.Context, in lookupIn) (lookupOut, error) {
		calls.Add(1)
		if in.Key == "missing" {
			return lookupOut{}, errors.New("no such key")
		}
		return lookupOut{Key: in.Key, Value: len(in.Key)}, nil
	})
	prov := turns(
		scripted.Turn{Steps: []scripted.Step{scripted.ToolCall("", "lookup", `{"key":"alpha"}`)}},
		scripted.Turn{Steps: []scripted.Step{scripted.Text("alpha is 5")}},
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, _ := io.ReadAll(r.Body)
		res, err := engine.Run(r.Context(), engine.Params{
			Prompt: string(q), Model: model(), StreamFunc: prov.StreamFunc(),
			SystemPrompt: "Answer with the lookup tool.", Tools: []*engine.Tool{lookup},
		})
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"answer": res.FinalText(), "new": len(res.NewMessages)})
	}))
	defer srv.Close()
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Post(srv.URL, "text/plain", strings.NewReader(fmt.Sprintf("what is alpha? (%d)", i)))
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			var out struct {
				Answer string
				New    int
			}
			if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Answer != "alpha is 5" || out.New != 4 {
				errs <- fmt.Errorf("%s %+v %v", resp.Status, out, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if calls.Load() != n {
		t.Fatalf("%d tool calls, want %d", calls.Load(), n)
	}
}

// The schema is derived from the type and enforced before the handler.
func TestTypedToolValidation(t *testing.T) {
	lookup := engine.MustNewTool("lookup", "", func(ctx context.Context, in lookupIn) (lookupOut, error) {
		return lookupOut{Key: in.Key}, nil
	})
	reg, err := engine.NewRegistry(lookup)
	if err != nil {
		t.Fatal(err)
	}
	if r := reg.Call(context.Background(), "lookup", []byte(`{"key":""}`)); !r.IsError || !errors.Is(r.Err, engine.ErrInvalidArguments) {
		t.Fatalf("%+v", r)
	}
	if !strings.Contains(string(lookup.Definition().Parameters), `"required":["key"]`) {
		t.Fatalf("%s", lookup.Definition().Parameters)
	}
}

// A conversation kept in memory over several requests.
func TestInMemoryConversation(t *testing.T) {
	prov := turns(scripted.Turn{Steps: []scripted.Step{scripted.Text("ok")}})
	var hist []llm.Message
	for i := range 4 {
		res, err := engine.Run(context.Background(), engine.Params{
			Prompt: fmt.Sprintf("message %d", i), Model: model(), StreamFunc: prov.StreamFunc(), History: hist,
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.NewMessages) != 2 || len(res.Conversation) != 2*(i+1) {
			t.Fatalf("run %d: %d new, %d kept", i, len(res.NewMessages), len(res.Conversation))
		}
		hist = res.Conversation
	}
	if hist[0].TextContent() != "message 0" || hist[6].TextContent() != "message 3" {
		t.Fatalf("%q %q", hist[0].TextContent(), hist[6].TextContent())
	}
}

// Independent calls of one turn run at once under ParallelTools.
func TestParallelTools(t *testing.T) {
	const n = 4
	var started sync.WaitGroup
	started.Add(n)
	wait := engine.MustNewTool("wait", "", func(ctx context.Context, in lookupIn) (string, error) {
		started.Done()
		done := make(chan struct{})
		go func() { started.Wait(); close(done) }()
		select {
		case <-done:
			return "done " + in.Key, nil
		case <-time.After(10 * time.Second):
			return "", errors.New("not run concurrently")
		}
	})
	var steps []scripted.Step
	for i := range n {
		steps = append(steps, scripted.ToolCall("", "wait", fmt.Sprintf(`{"key":"k%d"}`, i)))
	}
	prov := turns(scripted.Turn{Steps: steps}, scripted.Turn{Steps: []scripted.Step{scripted.Text("all done")}})
	res, err := engine.Run(context.Background(), engine.Params{
		Prompt: "go", Model: model(), StreamFunc: prov.StreamFunc(), Tools: []*engine.Tool{wait}, ParallelTools: n,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ToolCalls) != n {
		t.Fatalf("%+v", res.ToolCalls)
	}
	k := 0
	for _, m := range res.NewMessages {
		if m.Role == llm.RoleToolResult {
			if m.IsError || m.TextContent() != fmt.Sprintf("done k%d", k) {
				t.Fatalf("result %d: %q", k, m.TextContent())
			}
			k++
		}
	}
}

// A session kept in a store (OpenClaw's SQLite layout) continues across
// runs.
func TestStoreSession(t *testing.T) {
	st, err := transcript.OpenSQLiteStore(filepath.Join(t.TempDir(), "agent.sqlite"), transcript.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	prov := turns(scripted.Turn{Steps: []scripted.Step{scripted.Text("stored")}})
	for i := range 2 {
		res, err := engine.Run(context.Background(), engine.Params{
			Prompt: fmt.Sprintf("q%d", i), Model: model(), StreamFunc: prov.StreamFunc(),
			SessionStore: st, SessionID: "embed-1",
		})
		if err != nil || res.FinalText() != "stored" {
			t.Fatalf("run %d: %v %q", i, err, res.FinalText())
		}
	}
	sc, err := transcript.ReadStoreContext(context.Background(), st, "embed-1")
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Messages) != 4 {
		t.Fatalf("%d messages in the store", len(sc.Messages))
	}
}
