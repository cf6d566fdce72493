// Module hook for chain.mjs: when Node loads the openclaw@2026.9.6 chunk that
// defines the stream wrappers, one export line is appended to its source, so that
// chain.mjs can call those (unchanged) functions. Every other module loads as is.
const CHUNK = /\/openclaw\/dist\/builtin-openclaw-q1hiFm14\.mjs$/;
const EXPOSED = [
  "wrapStreamFnSanitizeMalformedToolCalls",
  "wrapStreamFnPromoteStandaloneTextToolCalls",
  "wrapStreamFnTrimToolCallNames",
  "shouldRepairMalformedToolCallArguments",
  "wrapStreamFnRepairMalformedToolCallArguments",
  "wrapStreamFnHandleSensitiveStopReason",
  "streamWithIdleTimeout",
];

export async function load(url, context, nextLoad) {
  const loaded = await nextLoad(url, context);
  if (!CHUNK.test(url)) return loaded;
  const src = typeof loaded.source === "string" ? loaded.source : Buffer.from(loaded.source).toString("utf8");
  const line = `\nexport { ${EXPOSED.map((n) => `${n} as __ocbench_${n}`).join(", ")} };\n`;
  return { ...loaded, source: src + line, shortCircuit: true };
}
