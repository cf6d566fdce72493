// The Node peer of `ocbench bench`: times OpenClaw 2026.9.6's own stream path in
// process, on the bytes of ocbench's decode+chain scenarios.
//
//   node chain.mjs JOB.json
//
// JOB.json: {"warmMs": W, "cases": [{"name", "wire", "tools": [...], "file"}]} where
// wire is openai-chat, anthropic or openai-responses and file holds the SSE body.
// For each case it builds the chain, runs it once and warms it up for W ms (at most
// 2 s, at least 3 repetitions), then prints {"name", "ready": true, "text", "calls":
// [{"name", "arguments"}], "stopReason"} (the decoded message, so the caller can
// check that OpenClaw read the same stream it times), or {"name", "error"}.
// Then it reads commands from stdin, one JSON line each: {"name", "ms"} times one
// batch of repetitions of that case (see below) and prints {"name", "times": [ns,
// ...]}. It exits at the end of stdin. The caller interleaves these batches with its
// own measurements of the same bytes.
//
// What one repetition runs, as OpenClaw's embedded agent does for a model call:
// @openclaw/ai's transport for the model's api (createBoundaryAwareStreamFnForModel:
// the SDK client, SSE parsing, event assembly), then OpenClaw's output-side wrappers in
// the order installEmbeddedAttemptStreamGuards applies them (sanitize, promote, trim
// names, repair where its gate allows, sensitive stop reason, idle timeout of 60 s,
// diagnostic model-call events), consumed as the agent loop does (iterate to done or
// error, then await result()). Loading OpenClaw's bundle installs its transport host
// (the guarded model fetch), as in the gateway; the body comes from a loopback server
// in this process, in one write, so that what is timed is the request, SSE parsing
// and the chain, with as little network as a socket allows.
//
// The wrappers are not exported by the openclaw bundle; a module hook (hooks.mjs)
// appends an export line to the one chunk that defines them when Node loads it.
// Nothing of OpenClaw is copied or changed.
//
// Environment: OCBENCH_NODE_DIR (default ${XDG_CACHE_HOME:-$HOME/.cache}/ocbench/node),
// prepared by setup.sh. Exit 3 when it is not installed.

import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { register } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const DIR = process.env.OCBENCH_NODE_DIR ||
  path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache"), "ocbench", "node");
const MODS = path.join(DIR, "oc", "node_modules");
const OC_DIST = path.join(MODS, "openclaw", "dist");
const WRAPPERS = path.join(OC_DIST, "builtin-openclaw-q1hiFm14.mjs");
const DIAGNOSTICS = path.join(OC_DIST, "attempt.model-diagnostic-events-B1vBuHmP.mjs");
const TRACE = path.join(OC_DIST, "diagnostic-events-CVabF32H.mjs");
const TRANSPORTS = path.join(MODS, "@openclaw", "ai", "dist", "transports.mjs");
const APIS = { "openai-chat": "openai-completions", anthropic: "anthropic-messages", "openai-responses": "openai-responses" };

function fail(msg, code) {
  process.stderr.write(`peers/node/chain.mjs: ${msg}\n`);
  process.exit(code);
}

if (process.argv.length !== 3) fail("usage: node chain.mjs JOB.json", 2);
let job;
try {
  job = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
} catch (e) {
  fail(`reading the job: ${e.message}`, 2);
}
for (const p of [WRAPPERS, DIAGNOSTICS, TRACE, TRANSPORTS]) {
  if (!fs.existsSync(p)) fail(`missing ${p}: run peers/node/setup.sh`, 3);
}

register(pathToFileURL(path.join(HERE, "hooks.mjs")).href, import.meta.url);
const oc = await import(pathToFileURL(WRAPPERS).href);
if (typeof oc.__ocbench_wrapStreamFnTrimToolCallNames !== "function") fail("the module hook did not expose OpenClaw's wrappers", 3);
const { t: wrapDiagnostics } = await import(pathToFileURL(DIAGNOSTICS).href);
const { w: createDiagnosticTraceContext } = await import(pathToFileURL(TRACE).href);
const { createBoundaryAwareStreamFnForModel } = await import(pathToFileURL(TRANSPORTS).href);

// The request goes, through OpenClaw's own model fetch, to this loopback server,
// which answers with the case's body in one write.
let body = Buffer.alloc(0);
const server = http.createServer((req, res) => {
  req.resume();
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  res.end(body);
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const port = server.address().port;

const provider = "openai-compatible";

function chainFor(c) {
  const api = APIS[c.wire];
  if (!api) throw new Error(`unknown wire ${c.wire}`);
  const model = {
    id: "synth", name: "synth", api, provider,
    baseUrl: c.wire === "anthropic" ? `http://127.0.0.1:${port}` : `http://127.0.0.1:${port}/v1`,
    reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 200000, maxTokens: 8192,
  };
  const context = {
    systemPrompt: "You are a benchmark.",
    messages: [{ role: "user", content: "go", timestamp: 1 }],
    tools: c.tools.map((name) => ({ name, description: name, parameters: { type: "object", properties: {} } })),
  };
  const transport = createBoundaryAwareStreamFnForModel(model);
  if (!transport) throw new Error(`no transport for api ${api}`);
  const runAbort = new AbortController();
  const allowed = new Set(c.tools);
  let fn = (m, ctx, o) => transport(m, ctx, { ...o, apiKey: "bench-key", maxRetries: 0, signal: runAbort.signal });
  fn = oc.__ocbench_wrapStreamFnSanitizeMalformedToolCalls(fn, allowed, {}, provider);
  fn = oc.__ocbench_wrapStreamFnPromoteStandaloneTextToolCalls(fn, allowed);
  fn = oc.__ocbench_wrapStreamFnTrimToolCallNames(fn, allowed, { unknownToolThreshold: 10 });
  if (oc.__ocbench_shouldRepairMalformedToolCallArguments({ provider, modelApi: api })) {
    fn = oc.__ocbench_wrapStreamFnRepairMalformedToolCallArguments(fn);
  }
  fn = oc.__ocbench_wrapStreamFnHandleSensitiveStopReason(fn);
  fn = oc.__ocbench_streamWithIdleTimeout(fn, 60000, () => {}, { runId: "bench" });
  let seq = 0;
  fn = wrapDiagnostics(fn, {
    config: {}, runId: "bench", sessionId: "bench", provider, model: model.id, api,
    transport: "sse", requestTimeoutMs: 60000, trace: createDiagnosticTraceContext(), nextCallId: () => `bench:model:${(seq += 1)}`,
  });
  return async () => {
    const stream = await Promise.resolve(fn(model, context, {}));
    for await (const ev of stream) {
      if (ev && (ev.type === "done" || ev.type === "error")) break;
    }
    return stream.result();
  };
}

function summary(msg) {
  let text = "";
  const calls = [];
  for (const part of msg.content ?? []) {
    if (part.type === "text") text += part.text;
    if (part.type === "toolCall") calls.push({ name: part.name, arguments: part.arguments });
  }
  return { text, calls, stopReason: msg.stopReason, ...(msg.errorMessage ? { errorMessage: msg.errorMessage } : {}) };
}

// Setup: each case's chain is built, run once (the decoded message is printed for
// the caller to check) and warmed up (the JIT compiles the hot paths and the lazily
// loaded SDK modules are in).
const cases = new Map();
const warmMs = Math.max(0, Math.min(job.warmMs ?? 1000, 2000));
for (const c of job.cases ?? []) {
  try {
    body = fs.readFileSync(c.file);
    const once = chainFor(c);
    const first = summary(await once());
    const warmUntil = performance.now() + warmMs;
    for (let i = 0; i < 3 || performance.now() < warmUntil; i++) await once();
    cases.set(c.name, { once, body });
    process.stdout.write(JSON.stringify({ name: c.name, ready: true, ...first }) + "\n");
  } catch (e) {
    process.stdout.write(JSON.stringify({ name: c.name, error: String(e?.stack ?? e) }) + "\n");
  }
}

// Batches: the caller interleaves them with its own measurements, so that both run
// in the same minutes of the machine. Each stdin line {"name", "ms"} runs one
// untimed repetition (caches refilled after the caller's turn), then timed ones
// until ms have passed (at least one), and prints {"name", "times": [ns, ...]}.
const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (!line.trim()) continue;
  let cmd;
  try {
    cmd = JSON.parse(line);
  } catch (e) {
    fail(`bad command ${JSON.stringify(line)}: ${e.message}`, 2);
  }
  const c = cases.get(cmd.name);
  if (!c) {
    process.stdout.write(JSON.stringify({ name: cmd.name, error: "no such case" }) + "\n");
    continue;
  }
  try {
    body = c.body;
    await c.once();
    const times = [];
    const until = performance.now() + Math.max(0, cmd.ms ?? 0);
    do {
      const t0 = performance.now();
      await c.once();
      times.push(Math.round((performance.now() - t0) * 1e6));
    } while (performance.now() < until);
    process.stdout.write(JSON.stringify({ name: cmd.name, times }) + "\n");
  } catch (e) {
    process.stdout.write(JSON.stringify({ name: cmd.name, error: String(e?.stack ?? e) }) + "\n");
  }
}
server.close();
process.exit(0);
