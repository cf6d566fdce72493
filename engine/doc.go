// Package engine runs agent turns: it is ocbench's counterpart of
// OpenClaw's embedded run attempt. Run resolves the model and provider,
// opens the session transcript (holding its lock), builds the system prompt,
// registers the tools, wraps the provider's StreamFunc in the decorator
// chain, prepares the history, and then loops: call the model, run the
// final message's tool calls one after another in order (or, with
// Params.ParallelTools, independent calls concurrently), append each
// result to the transcript in the model's order, and repeat until the stop reason is not toolUse
// or a turn limit is reached. Messages queued while a run is active are
// delivered between turns (steering), and the whole run can be aborted
// through its context with the transcript left consistent.
//
// The package also owns the tool registry (typed tools whose JSON schema
// is derived from a Go type by NewTool, or hand-written schemas with
// NewSchemaTool; arguments validated before execution; built-in read, write, edit and ls confined
// to a workspace, and exec when enabled), the preemptive compaction
// decision and compaction through the model, and harness selection
// (embedded or plugin harnesses registered by embedding code).
//
// It does not decode wire formats (package provider), repair or guard
// streams (package streamwrap), assemble prompt text (package prompt),
// count tokens (package tokenize), or read and write session files and
// prepare history (package transcript): it calls them.
//
// Events of a run reach embedding code through Params.OnEvent, in order,
// on the run's goroutine. They carry borrowed views (the stream event and
// the live message) valid only during the callback; forwarding them
// allocates nothing per stream event.
//
// # What a run sends, and where the conversation lives
//
// Nothing is implied: the zero Params sends no system prompt (SystemPrompt
// as given, or OpenClawPrompt for OpenClaw's assembled one) and offers no
// built-in tools (BuiltinTools). The conversation is kept in memory
// (Params.History in, Result.Conversation out), in a session file
// (SessionFile) or in a store (SessionStore); history preparation and
// compaction are the same on all three. Params.RequestOptions go with
// every model call.
//
// # Concurrency
//
// Runs of different sessions are independent and may run concurrently
// (nothing global is locked on the turn path). A session file admits one
// run at a time: the transcript lock makes a second run, in this process
// or another, fail with transcript.ErrLocked before anything is written. A
// Queue may be pushed to from any goroutine while its run is active.
//
// # Failures
//
// Setup failures (a foreign or corrupt session file, a locked session, an
// unregistered harness, a missing workspace) are returned before anything
// is written. Failures during the loop (a refused request, an in-stream
// error, an idle timeout, an endless stream, an abort) end the run with
// the failed assistant message in the transcript, every tool call paired
// with a result, and the error returned (the Result still holds what was
// done). Tool
// failures never end a run: they are error results the model sees, and a
// tool that does not return within Params.ToolTimeout is left behind with
// an ErrToolTimeout result. To keep that promise a handler runs on a tool
// worker goroutine; a tool marked Inline (a handler that only computes)
// runs on the run's goroutine instead, which saves the hand-off.
//
// # Live sessions
//
// A run of a session file or DirStore session leaves what it parsed of
// the file in a process-wide cache, so that the next run of that session
// reads only the lines written since (SetLiveSessionCacheLimits sizes it,
// LiveSessionCache reports it). Runs with the same built-in tool options
// share their tools, and a workspace's resolution, like its prompt
// (package prompt's memo), is kept while the files say it holds.
//
// # Secrets
//
// Params.APIKey, Params.Secrets and the values of the environment's secret
// variables are replaced by [REDACTED] in everything a run produces:
// returned errors, the Result, events, and every transcript entry (also
// when an upstream echoes a key in an error, and in tool output before the
// model sees it). The exec tool runs without the environment's secret
// variables unless BuiltinOptions.ExecEnvAllow names them. Streamed text
// deltas reach OnEvent as the provider sent them.
package engine
