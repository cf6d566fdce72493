// Answers the partitioner cases with @openclaw/ai 2026.9.6's own
// reasoning-tag text partitioner and Markdown ownership parse:
//
//   python3 gen-inputs.py SEED N part|own|prosepart|proseown \
//     | node answers.mjs > more-cases.jsonl
//
// Each input line is {"chunks":[...],"strict":bool} (pushVisible per chunk,
// markStrict first when strict, then flush: the text each call settles) or
// {"own":TEXT} (code spans and the last block's start, UTF-16 offsets).
// OCPEER_DIR (default $TMPDIR/ocpeer) holds node_modules with
// openclaw@2026.9.6, as for the replay goldens. The module is private to
// @openclaw/ai: a copy beside it exports the two functions.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { pathToFileURL } from "node:url";

const dist = path.join(process.env.OCPEER_DIR ?? path.join(os.tmpdir(), "ocpeer"), "node_modules/@openclaw/ai/dist");
const name = fs.readdirSync(dist).find((f) => /^reasoning-tag-text-partitioner-.*\.mjs$/.test(f));
const src = fs.readFileSync(path.join(dist, name), "utf8").replace(
  /export \{ createReasoningTagTextPartitioner as t \};\s*$/,
  "export { createReasoningTagTextPartitioner as t, parseMarkdownOwnership as pmo };\n");
const copy = path.join(dist, `ocbench-answers-${process.pid}.mjs`);
fs.writeFileSync(copy, src);
let mod;
try {
  mod = await import(pathToFileURL(copy).href);
} finally {
  fs.rmSync(copy);
}
const text = (ds) => ds.filter((d) => d.kind === "text").map((d) => d.text).join("");
for await (const line of readline.createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const c = JSON.parse(line);
  let want;
  if (c.own !== undefined) {
    const o = mod.pmo(c.own);
    want = { spans: o.codeSpans, retain: o.retainStart };
  } else {
    const p = mod.t();
    if (c.strict) p.markStrict();
    const steps = c.chunks.map((ch) => text(p.pushVisible(ch)));
    want = { steps, flush: text(p.flush()) };
  }
  console.log(JSON.stringify({ in: c, want }));
}
