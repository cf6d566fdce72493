// Reads a session from an OpenClaw agent database with OpenClaw
// 2026.9.6's own transcript reader (from the npm package), and prints what
// its model context builder makes of it. Not part of the test command: run
// by hand, see transcript/testdata/openclaw/README.md.
//
//   node read-with-openclaw.mjs OCPEER_DIR STATE_DIR AGENT_ID SESSION_ID
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [ocpeer, stateDir, agentId, sessionId] = process.argv.slice(2);
if (!sessionId) {
  console.error("usage: node read-with-openclaw.mjs OCPEER_DIR STATE_DIR AGENT_ID SESSION_ID");
  process.exit(2);
}
const dist = path.join(ocpeer, "node_modules", "openclaw", "dist");
// Chunk names carry a content hash: find them by the functions they export.
async function chunk(prefix, exportName) {
  for (const f of fs.readdirSync(dist)) {
    if (!f.startsWith(prefix) || !f.endsWith(".mjs")) continue;
    const src = fs.readFileSync(path.join(dist, f), "utf8");
    const m = src.match(new RegExp("export \\{[^}]*\\b" + exportName + " as (\\w+)"));
    if (m) return (await import(pathToFileURL(path.join(dist, f)).href))[m[1]];
  }
  throw new Error(`no chunk ${prefix}* exports ${exportName}`);
}
const loadTranscriptEventsSync = await chunk("session-accessor.sqlite-read-", "loadTranscriptEventsSync");
const selectVisible = await chunk("session-accessor.sqlite-read-", "selectVisibleTranscriptEvents");
const buildSessionContext = await chunk("session-", "buildSessionContext");
const env = { ...process.env, OPENCLAW_STATE_DIR: stateDir };
const events = loadTranscriptEventsSync({ agentId, sessionId, env });
const header = events.find((e) => e.type === "session");
const branch = selectVisible(events).filter((e) => e.type !== "session");
const ctx = buildSessionContext(branch);
console.log(JSON.stringify({
  header,
  events: events.length,
  branch: branch.map((e) => e.type + (e.message ? ":" + e.message.role : "")),
  context: ctx.messages.map((m) => m.role + ":" + (typeof m.content === "string" ? m.content : m.content.map((b) => b.text ?? b.type).join(" ")).slice(0, 60)),
}, null, 1));
