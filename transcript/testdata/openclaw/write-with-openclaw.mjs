// Writes a session into a fresh OpenClaw agent database with OpenClaw
// 2026.9.6's own transcript writer (from the npm package). Not part of the
// test command: run by hand, see transcript/testdata/openclaw/README.md.
//
//   node write-with-openclaw.mjs OCPEER_DIR STATE_DIR AGENT_ID SESSION_ID
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [ocpeer, stateDir, agentId, sessionId] = process.argv.slice(2);
if (!sessionId) {
  console.error("usage: node write-with-openclaw.mjs OCPEER_DIR STATE_DIR AGENT_ID SESSION_ID");
  process.exit(2);
}
const dist = path.join(ocpeer, "node_modules", "openclaw", "dist");
async function chunk(prefix, exportName) {
  for (const f of fs.readdirSync(dist)) {
    if (!f.startsWith(prefix) || !f.endsWith(".mjs")) continue;
    const src = fs.readFileSync(path.join(dist, f), "utf8");
    const m = src.match(new RegExp("export \\{[^}]*\\b" + exportName + " as (\\w+)"));
    if (m) return (await import(pathToFileURL(path.join(dist, f)).href))[m[1]];
  }
  throw new Error(`no chunk ${prefix}* exports ${exportName}`);
}
const persistSessionTranscriptTurn = await chunk("session-accessor-", "persistSessionTranscriptTurn");
const env = { ...process.env, OPENCLAW_STATE_DIR: stateDir };
process.env.OPENCLAW_STATE_DIR = stateDir;
const scope = { agentId, sessionId, sessionKey: `agent:${agentId}:main`, env };
const now = Date.parse("2026-09-10T10:00:00.000Z");
const long = "The quick brown fox jumps over the lazy dog. ".repeat(60);
const out = await persistSessionTranscriptTurn(scope, {
  cwd: "/workspace",
  expectedSessionId: sessionId,
  initialSessionEntry: { sessionId, updatedAt: now, sessionStartedAt: now },
  messages: [
    { message: { role: "user", content: "What is in the notes file?", timestamp: now }, now },
    { message: { role: "assistant", content: [{ type: "text", text: "The notes say: " + long }], api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5",
      usage: { input: 10, output: 200, cacheRead: 0, cacheWrite: 4000, totalTokens: 4210, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "stop", timestamp: now + 2000 }, now: now + 2000 },
  ],
});
console.log(JSON.stringify({ appended: out.appendedCount ?? out.messages?.length, rejected: out.rejectedReason ?? null }));
