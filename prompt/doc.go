// Package prompt assembles OpenClaw's system prompt (as of OpenClaw
// 2026.5.7): every section in OpenClaw's order with its inclusion rules, the
// prompt modes full, minimal and none, the cache boundary marker with the
// stable sections above it and the dynamic ones below, provider
// contributions, the runtime line, skills and <available_skills>, and the
// workspace bootstrap files under their character budgets with head/tail
// truncation and truncation warnings.
//
// It is split as OpenClaw splits it:
//
//   - a pure renderer (Renderer.AppendPrompt) from explicit inputs (Params):
//     it reads no configuration, environment or clock, and appends into a
//     buffer the caller owns. With a prefixcache.Cache, the stable part is
//     rendered (and tokenized) once per distinct set of stable inputs: a warm
//     call hashes the stable inputs, copies the cached prefix and renders
//     only the dynamic tail, without allocating. AppendSplit returns the
//     cached stable prefix without copying it, for payloads that send the
//     two parts as separate blocks (Anthropic's cached system block);
//   - a resolver (Resolve) from configuration (Config) and a workspace
//     directory to those inputs: it reads the bootstrap files through a
//     workspace-boundary guard (no escape through symlinks, bounded reads,
//     non-UTF-8 repaired as a decoder would), applies a bootstrap hook and
//     extra-file globs, discovers skills, and applies the budgets.
//     Resolver.PromptIn keeps the prompt of an unchanged workspace: a warm
//     call stats what the prompt depends on (on Linux, inotify watches of
//     their directories stand in for most of those stats; see
//     watch_linux.go) and renders nothing.
//
// Report gives OpenClaw's /context list: per section and per injected file
// its characters and tokens, truncation, the cache boundary and the
// stable-prefix hash. SampleWorkspace is a built-in workspace for commands
// and benchmarks.
//
// This package does not own history preparation, transcripts or the request
// payload (transcript, engine), token counting itself (tokenize) or the
// cache structure (prefixcache).
package prompt
