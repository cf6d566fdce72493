package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider/scripted"
	"github.com/ocbench/ocbench/transcript"
)

// liveWorld is one side of the cached/uncached comparison: a session of a
// DirStore (or a plain session file) run again and again, with every
// model request recorded as JSON.
type liveWorld struct {
	e       *runEnv
	store   *transcript.DirStore
	file    bool
	cached  bool
	mu      sync.Mutex
	reqs    []string
	sysDesc []string
	descs   []string
}

func newLiveWorld(t *testing.T, cached, file bool) *liveWorld {
	t.Helper()
	e := newRunEnv(t, fakeTurn{msg: assistantCalls([3]string{"c1", "read", `{"path":"notes.txt"}`})},
		fakeTurn{msg: assistantText("first answer")})
	w := &liveWorld{e: e, cached: cached, file: file}
	if !file {
		st, err := transcript.OpenDirStore(filepath.Join(e.dir, "sessions"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		w.store = st
	}
	return w
}

func (w *liveWorld) path() string {
	if w.file {
		return w.e.session
	}
	return w.store.Path("s1")
}

func (w *liveWorld) run(t *testing.T, prompt string) {
	t.Helper()
	if !w.cached {
		liveSessions.take(w.path())
	}
	p := w.e.params(prompt)
	p.Now = func() time.Time { return time.Unix(1700000000, 0) }
	p.Session.Durability = transcript.SyncNone
	if !w.file {
		p.SessionFile, p.SessionStore, p.SessionID = "", w.store, "s1"
	}
	p.StreamFunc = func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		b, err := json.Marshal(req.Messages)
		if err != nil {
			t.Error(err)
		}
		// The worlds differ only by their directories.
		w.mu.Lock()
		w.reqs = append(w.reqs, strings.ReplaceAll(string(b), w.e.dir, "DIR"))
		w.sysDesc = append(w.sysDesc, strings.ReplaceAll(req.System, w.e.dir, "DIR"))
		w.descs = append(w.descs, describe(req.Messages))
		w.mu.Unlock()
		return w.e.fp.stream(ctx, req)
	}
	if _, err := Run(context.Background(), p); err != nil {
		t.Fatalf("%s: %v", prompt, err)
	}
}

// outsideChanges are what other writers do to a session file between two
// runs; each is applied to both worlds' files alike.
var outsideChanges = []struct {
	name string
	do   func(t *testing.T, path string)
}{
	{"none", func(t *testing.T, path string) {}},
	{"append by another writer", func(t *testing.T, path string) {
		w, err := transcript.OpenWriter(path, transcript.WriterOptions{Durability: transcript.SyncNone,
			Now: func() time.Time { return time.Unix(1700000000, 0) }})
		if err != nil {
			t.Fatal(err)
		}
		m := llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: []byte("OUTSIDE NOTE")}}, Timestamp: 1700000000000}
		if _, err := w.AppendMessage(&m); err != nil {
			t.Fatal(err)
		}
		w.Close()
	}},
	{"none", func(t *testing.T, path string) {}},
	{"rewritten shorter in place", func(t *testing.T, path string) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.SplitAfter(b, []byte("\n"))
		// drop the last run (prompt and answer) and the empty tail
		if err := os.WriteFile(path, bytes.Join(lines[:len(lines)-3], nil), 0o644); err != nil {
			t.Fatal(err)
		}
	}},
	{"replaced by a rename (rotation)", func(t *testing.T, path string) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		b = bytes.Replace(b, []byte("question 1 after"), []byte("QUESTION 1 AFTER"), 1)
		if err := os.WriteFile(path+".tmp", b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(path+".tmp", path); err != nil {
			t.Fatal(err)
		}
	}},
	{"same size rewritten in place", func(t *testing.T, path string) {
		// A later timestamp tick than the run's last write (see the
		// cache's doc for a rewrite within the same tick).
		time.Sleep(20 * time.Millisecond)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		nb := bytes.Replace(b, []byte("first answer"), []byte("FIRST ANSWER"), 1)
		if bytes.Equal(nb, b) {
			t.Fatal("nothing replaced")
		}
		if err := os.WriteFile(path, nb, 0o644); err != nil {
			t.Fatal(err)
		}
	}},
	{"none", func(t *testing.T, path string) {}},
}

// The cached path gives the model byte-identical requests to the path
// that reads the session in full on every run, whatever other writers do
// to the file between runs, and it does skip the read for runs after
// which nothing changed.
func TestLiveCacheRequestsMatchUncached(t *testing.T) {
	for _, file := range []bool{false, true} {
		t.Run(fmt.Sprintf("file=%v", file), func(t *testing.T) {
			a, b := newLiveWorld(t, true, file), newLiveWorld(t, false, file)
			hits0, ext0, rb0 := liveSessions.hits.Load(), liveSessions.extends.Load(), liveSessions.readBacks.Load()
			for _, w := range []*liveWorld{a, b} {
				w.run(t, "first question")
				for i, ch := range outsideChanges {
					ch.do(t, w.path())
					w.run(t, fmt.Sprintf("question %d after %s", i, ch.name))
				}
			}
			if hits := liveSessions.hits.Load() - hits0; hits < 3 {
				t.Fatalf("%d runs used the cache, want at least the 3 after no change", hits)
			}
			if ext := liveSessions.extends.Load() - ext0; ext < 3 {
				t.Fatalf("%d runs extended the cached context, want at least the 3 after no change", ext)
			}
			// Those runs took the lines the run before them wrote from
			// memory, not from the file, but for the run after the one
			// that began the session (it leaves its lines to the file).
			if rb := liveSessions.readBacks.Load() - rb0; rb < 2 {
				t.Fatalf("%d runs read the last run's lines back from memory, want at least the 2 after no change but the first", rb)
			}
			if len(a.reqs) != len(b.reqs) || len(a.reqs) != len(outsideChanges)+2 {
				t.Fatalf("%d and %d requests", len(a.reqs), len(b.reqs))
			}
			for i := range a.reqs {
				if a.reqs[i] != b.reqs[i] || a.sysDesc[i] != b.sysDesc[i] {
					t.Fatalf("request %d differs:\ncached   %s\nuncached %s", i, a.reqs[i], b.reqs[i])
				}
			}
			// The changes reached the model (not only equal: right).
			all := strings.Join(a.descs, "\n")
			for _, s := range []string{"OUTSIDE NOTE", "QUESTION 1 AFTER", "FIRST ANSWER"} {
				if !strings.Contains(all, s) {
					t.Fatalf("no request shows %q", s)
				}
			}
			last := a.descs[len(a.descs)-1]
			if strings.Contains(last, "after none\"") && strings.Count(last, "question 2 after none") != 1 {
				t.Fatalf("the last request repeats or lost a run: %s", last)
			}
			if strings.Contains(last, "question 2 after none") {
				t.Fatalf("the run dropped by the shorter rewrite is still in the context: %s", last)
			}
		})
	}
}

// Concurrent runs on distinct sessions and on one session of one store:
// every successful run is in the next run's context, exactly once.
func TestLiveCacheConcurrentRuns(t *testing.T) {
	e := newRunEnv(t)
	st, err := transcript.OpenDirStore(filepath.Join(e.dir, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const sessions, workers, runs = 3, 6, 8
	var mu sync.Mutex
	done := map[string]int{}
	var wg sync.WaitGroup
	for g := 0; g < workers; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < runs; i++ {
				sid := fmt.Sprintf("c%d", (g+i)%sessions)
				p := e.params(fmt.Sprintf("w%d r%d", g, i))
				p.SessionFile, p.SessionStore, p.SessionID = "", st, sid
				p.Session.Durability = transcript.SyncNone
				p.StreamFunc = (&fakeProvider{}).stream
				_, err := Run(context.Background(), p)
				if errors.Is(err, transcript.ErrLocked) {
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				done[sid]++
				mu.Unlock()
			}
		}(g)
	}
	wg.Wait()
	for s := 0; s < sessions; s++ {
		sid := fmt.Sprintf("c%d", s)
		var n int
		p := e.params("final")
		p.SessionFile, p.SessionStore, p.SessionID = "", st, sid
		p.StreamFunc = func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
			n = len(req.Messages)
			return (&fakeProvider{}).stream(ctx, req)
		}
		if _, err := Run(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		ctx, err := transcript.ReadStoreContext(context.Background(), st, sid)
		if err != nil {
			t.Fatal(err)
		}
		if want := 2*done[sid] + 1; n != want || len(ctx.Messages) != want+1 {
			t.Fatalf("%s: %d runs done, request had %d messages (want %d), file %d", sid, done[sid], n, want, len(ctx.Messages))
		}
	}
}

// The cache is bounded: by sessions and by bytes; a large session is not
// kept.
func TestLiveCacheBounded(t *testing.T) {
	st := func(w *transcript.Writer) transcript.WriterState { s, _ := w.State(); return s }
	dir := t.TempDir()
	var states []transcript.WriterState
	for i := 0; i < 3; i++ {
		w, err := transcript.OpenWriter(filepath.Join(dir, fmt.Sprintf("%d.jsonl", i)), transcript.WriterOptions{Durability: transcript.SyncNone})
		if err != nil {
			t.Fatal(err)
		}
		states = append(states, st(w))
		w.Close()
	}
	c := &liveCache{max: 2, limit: states[0].Size() + states[1].Size() - 1}
	for i, s := range states {
		c.put(&liveEntry{key: fmt.Sprint(i), state: s})
	}
	if c.len() != 1 || c.take("2") == nil {
		// the byte bound keeps one
		t.Fatalf("%d cached, bytes %d", c.len(), c.bytes)
	}
	c = &liveCache{max: 2, limit: 1 << 20}
	for i, s := range states {
		c.put(&liveEntry{key: fmt.Sprint(i), state: s})
	}
	if c.len() != 2 || c.take("0") != nil || c.take("1") == nil || c.take("2") == nil || c.bytes != 0 {
		t.Fatalf("LRU bound: %d cached", c.len())
	}
}

// The cache counts what an entry keeps in memory (its file's bytes and
// liveEntryOverhead per entry), a service can resize it, and its
// statistics count runs that read their session and runs that did not.
func TestLiveCacheLimitsAndStats(t *testing.T) {
	defer SetLiveSessionCacheLimits(liveCacheMax, liveCacheBytes)
	dir := t.TempDir()
	prov := scripted.MustNew(scripted.Options{Script: &scripted.Script{Turns: []scripted.Turn{{Steps: []scripted.Step{scripted.Text("hello")}}}}})
	p := Params{Prompt: "hi", Model: llm.Model{ID: "scripted-1", API: "openai-completions", Provider: "scripted"},
		StreamFunc: prov.StreamFunc(), SystemPrompt: "s", Session: SessionOptions{Durability: transcript.SyncNone}}
	run := func(name string) {
		t.Helper()
		p.SessionFile = filepath.Join(dir, name+".jsonl")
		if _, err := Run(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []string{"a", "b", "a", "b"} {
		run(s)
	}
	st := LiveSessionCache()
	var a *liveEntry
	for _, e := range liveSessions.m {
		if filepath.Base(e.key) == "a.jsonl" {
			a = e
		}
	}
	if a == nil || a.cost != a.state.Size()+int64(len(a.entries))*liveEntryOverhead+a.prep.cost() || len(a.entries) == 0 {
		t.Fatalf("entry of a: %+v", a)
	}
	// Room for one of the two (each grows by 2 entries a run): a round of
	// both would read each of them.
	SetLiveSessionCacheLimits(10, 2*a.cost-1)
	if n := LiveSessionCache().Sessions; n > 1 {
		t.Fatalf("%d sessions cached after shrinking", n)
	}
	h0 := LiveSessionCache().Hits
	run("a")
	run("a")
	if got := LiveSessionCache(); got.Hits-h0 < 1 || got.Misses <= st.Misses || got.Evictions <= st.Evictions {
		t.Fatalf("before %+v, after %+v", st, got)
	}
	SetLiveSessionCacheLimits(0, 0)
	if n := LiveSessionCache().Sessions; n != 0 {
		t.Fatalf("%d sessions cached with the cache off", n)
	}
	m0 := LiveSessionCache().Misses
	run("b")
	if got := LiveSessionCache(); got.Sessions != 0 || got.Misses != m0+1 {
		t.Fatalf("cache off: %+v", got)
	}
}

// TestLivePrepRequestsMatchUncached: runs of a live session whose
// prepared history the next run extends (livePrep) send the model the
// messages that runs preparing the whole history send, on each wire's
// replay policy (strict ids rewritten, turn validation, Responses
// pairing), run after run of tool calls and answers.
func TestLivePrepRequestsMatchUncached(t *testing.T) {
	for _, api := range []llm.API{"openai-completions", "openai-responses", "anthropic-messages"} {
		t.Run(string(api), func(t *testing.T) {
			var reqs [2][]string
			ext0 := liveSessions.prepExtends.Load()
			for w, cached := range []bool{true, false} {
				p, st := sampleRun(t, true)
				p.Model.API = api
				p.Now = func() time.Time { return time.Unix(1700000000, 0) }
				prov := scripted.MustNew(scripted.Options{Script: &scripted.Script{Turns: []scripted.Turn{
					{Steps: []scripted.Step{scripted.Text("let me look"), scripted.ToolCall("", "read", `{"path":"AGENTS.md"}`)}},
					{Steps: []scripted.Step{scripted.Text("the answer")}},
				}}})
				p.StreamFunc = func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
					// Timestamps (the decoder's clock) are not sent.
					msgs := append([]llm.Message(nil), req.Messages...)
					for i := range msgs {
						msgs[i].Timestamp = 0
					}
					b, err := json.Marshal(msgs)
					if err != nil {
						t.Error(err)
					}
					reqs[w] = append(reqs[w], string(b))
					return prov.Stream(ctx, req)
				}
				p.SessionID = "s1"
				for i := range 6 {
					if !cached {
						liveSessions.take(st.Path("s1"))
					}
					p.Prompt = fmt.Sprintf("question %d", i)
					if _, err := Run(context.Background(), p); err != nil {
						t.Fatal(err)
					}
				}
			}
			// The scripted provider numbers its calls per stream: every run
			// repeats the first run's call id. On the Responses wire the
			// pairing repair (before the id rewrite) then drops each later
			// result as a duplicate, first in the third run, whose history
			// before was unchanged: that run prepares the whole again.
			if n := liveSessions.prepExtends.Load() - ext0; n < 4 {
				t.Fatalf("%d runs extended the prepared history, want 4 or 5 of the 5 after the first", n)
			}
			if len(reqs[0]) != 12 || len(reqs[1]) != 12 {
				t.Fatalf("%d and %d requests", len(reqs[0]), len(reqs[1]))
			}
			for i := range reqs[0] {
				if reqs[0][i] != reqs[1][i] {
					t.Fatalf("request %d differs:\nextended %s\nprepared %s", i, reqs[0][i], reqs[1][i])
				}
			}
		})
	}
}
