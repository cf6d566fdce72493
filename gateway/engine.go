package gateway

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/ocbench/ocbench/engine"
	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider"
	"github.com/ocbench/ocbench/transcript"
)

// EngineRuns serves /v1/runs with the engine: one session file per session
// id under SessionsDir, the provider StreamFunc shared by every run.
type EngineRuns struct {
	// SessionsDir holds <session id>.jsonl files.
	SessionsDir string
	// Workspace is the default workspace of runs. WorkspacesRoot, when set,
	// lets a request name a workspace: a plain directory name under it.
	Workspace      string
	WorkspacesRoot string
	// Model and StreamFunc are the provider every run calls. A request's
	// "model" replaces Model.ID when ModelFromRequest is set.
	Model            llm.Model
	ModelFromRequest bool
	StreamFunc       llm.StreamFunc
	// StreamBuffered says StreamFunc's streams never wait (an in-process
	// provider such as the scripted one): a run's events are then written
	// once per model call rather than one by one.
	StreamBuffered bool
	hooked         bool // StreamFunc is UseUpstreamClient's
	// Stream configures the decorator chain of each run.
	Stream engine.StreamOptions
	// MaxTurns bounds each run (engine default when zero).
	MaxTurns int
	// Secrets are redacted from everything a run produces (engine
	// Params.Secrets; the engine adds the environment's keys).
	Secrets []string
	// MaxSessionBytes bounds each session's stored size (engine
	// SessionOptions.MaxSessionBytes): a run that would pass it is 413 and
	// writes nothing. Zero: no limit.
	MaxSessionBytes int64

	// Durability is the sessions' flush policy (engine SessionOptions):
	// transcript.SyncEntry (the zero value) flushes every entry,
	// SyncTurn each turn, SyncNone never (a crash of the process loses
	// nothing, one of the machine may).
	Durability transcript.Durability

	// Store, when set, keeps the sessions instead of SessionsDir (OpenClaw's
	// SQLite store, PostgreSQL shared by several gateways, a JSONL
	// directory): each run opens its session under the store's writer lock.
	Store transcript.Store

	// dirStore keeps SessionsDir's sessions when Store is nil: it holds
	// the handles of live sessions open between their runs.
	dirOnce  sync.Once
	dirStore *transcript.DirStore
}

// CoalescesRuns says the runs' provider calls the gateway's flush hook
// before it waits: the in-process StreamFunc when StreamBuffered says its
// streams never wait, or the gateway's HTTP transport (UpstreamClient).
func (e *EngineRuns) CoalescesRuns() bool { return e.StreamBuffered || e.hooked }

// EndsWithoutWait says that after a run's last model call nothing waits
// before the run returns: the provider is in process and never waits
// (StreamBuffered; a compaction's model call does not wait either) and
// the session is a JSONL file written without fsync (SyncNone, no Store),
// so that call's last events can go out with the run's result.
func (e *EngineRuns) EndsWithoutWait() bool {
	return e.StreamBuffered && !e.hooked && e.Durability == transcript.SyncNone && e.Store == nil
}

// UseUpstreamClient makes the runs call their provider through a client
// of package provider whose transport calls the gateway's flush hook
// before every read of an upstream body (base: nil for a keep-alive
// transport of its own), so that a run's events are written one upstream read at a
// time.
func (e *EngineRuns) UseUpstreamClient(base http.RoundTripper, opts ...provider.ClientOption) error {
	if base == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 1024, 1024 // runs in parallel keep their connections
		base = tr
	}
	c, err := provider.NewClient(append([]provider.ClientOption{provider.WithHTTPClient(&http.Client{Transport: flushingTransport{base}})}, opts...)...)
	if err != nil {
		return err
	}
	e.StreamFunc, e.hooked, e.StreamBuffered = c.Stream, true, false
	return nil
}

// store returns the store runs open their sessions in.
func (e *EngineRuns) store() transcript.Store {
	if e.Store != nil {
		return e.Store
	}
	e.dirOnce.Do(func() {
		os.MkdirAll(e.SessionsDir, 0o755) // a failure is the runs' error
		e.dirStore = &transcript.DirStore{Dir: e.SessionsDir}
	})
	return e.dirStore
}

// Close releases the sessions' idle handles.
func (e *EngineRuns) Close() error {
	e.dirOnce.Do(func() {})
	if e.dirStore != nil {
		return e.dirStore.Close()
	}
	return nil
}

var _ RunService = (*EngineRuns)(nil)

// Run runs one turn loop and emits its stream events.
func (e *EngineRuns) Run(ctx context.Context, req RunRequest, emit func(*llm.Event, *llm.Message) error) (RunResult, error) {
	ws := e.Workspace
	if req.Workspace != "" {
		if e.WorkspacesRoot == "" || !validSessionID(req.Workspace) {
			return RunResult{}, &RequestError{Status: http.StatusForbidden, Type: "permission_error",
				Message: "workspace not allowed: name a directory under the configured workspaces root"}
		}
		ws = filepath.Join(e.WorkspacesRoot, req.Workspace)
	}
	model := e.Model
	if req.Model != "" && e.ModelFromRequest {
		model.ID = req.Model
	}
	var emitErr error
	p := engine.Params{
		Prompt: req.Message, Model: model, StreamFunc: e.StreamFunc, Workspace: ws,
		OpenClawPrompt: true, BuiltinTools: true, // OpenClaw's agent: its prompt and tools
		SessionStore: e.store(), SessionID: req.SessionID,
		Stream: e.Stream, MaxTurns: e.MaxTurns, Secrets: e.Secrets,
		Session: engine.SessionOptions{MaxSessionBytes: e.MaxSessionBytes, Durability: e.Durability},
		OnEvent: func(ev *engine.Event) {
			if ev.Kind == engine.EventStream && emitErr == nil {
				emitErr = emit(ev.Stream, ev.Message)
			}
		},
	}
	res, err := engine.Run(ctx, p)
	if errors.Is(err, transcript.ErrSessionTooLarge) {
		// A session at its size limit takes no more: 413 when the run had
		// not started streaming, else the run's error.
		return RunResult{Turns: res.Turns, ToolCalls: len(res.ToolCalls), StopReason: "error", Error: "the session reached its size limit"},
			&RequestError{Status: http.StatusRequestEntityTooLarge, Type: "request_too_large", Message: "the session reached its size limit; start a new session"}
	}
	if errors.Is(err, transcript.ErrLocked) || errors.Is(err, transcript.ErrLeaseLost) {
		// Another run (in this gateway or, with a shared store, another
		// node) holds the session: the client may retry when it ends.
		return RunResult{StopReason: "error", Error: "the session is in use by another run"},
			&RequestError{Status: http.StatusConflict, Type: "conflict_error", Message: "the session is in use by another run; retry when it ends"}
	}
	out := RunResult{Turns: res.Turns, ToolCalls: len(res.ToolCalls), StopReason: res.StopReason.String()}
	if err != nil {
		out.Error = e.hidePaths(err.Error())
		err = errors.New(out.Error)
	}
	return out, err
}

// OpenSession opens the session's JSONL file without following a link
// and without blocking on a FIFO, and serves it only when it is a regular
// file directly in SessionsDir.
func (e *EngineRuns) OpenSession(id string) (io.ReadCloser, int64, error) {
	if !validSessionID(id) {
		return nil, 0, ErrNoSession
	}
	if e.Store != nil {
		return openStoreSession(e.Store, id)
	}
	f, err := openRegular(filepath.Join(e.SessionsDir, id+".jsonl"))
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, fi.Size(), nil
}

// hidePaths replaces the server's directories in a message meant for a
// client, so that errors do not reveal the sessions or workspaces paths.
func (e *EngineRuns) hidePaths(msg string) string {
	for _, d := range [...]struct{ dir, name string }{{e.SessionsDir, "<sessions>"}, {e.WorkspacesRoot, "<workspaces>"}, {e.Workspace, "<workspace>"}} {
		if d.dir != "" {
			msg = strings.ReplaceAll(msg, d.dir, d.name)
		}
	}
	return msg
}
