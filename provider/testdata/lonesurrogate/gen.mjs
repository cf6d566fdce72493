// Writes cases.jsonl: random JSON string bodies rich in \u escapes of
// surrogates (paired, lone, reversed), escaped backslashes and raw
// characters, each with the string JSON.parse makes of it, encoded as
// WTF-8 (UTF-8, with a lone surrogate in its three-byte form): what the
// provider decoder holds with the OpenClaw rules. Run: node gen.mjs > cases.jsonl
let seed = 2027;
const rnd = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
const parts = ['\\ud83d', '\\ude00', '\\uD83D', '\\uDE00', '\\udbff', '\\udfff', '\\ud800', '\\udc00', '\\u0041', '\\u00e9', '\\\\', '\\\\u', '\\\\ud800', '\\"', '\\n', 'a', 'é', '😀', ' ', 'u', 'd800'];
const wtf8 = (s) => {
  const out = [];
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        out.push(...Buffer.from(String.fromCharCode(c, d), 'utf8'));
        i++;
        continue;
      }
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f));
      continue;
    }
    out.push(...Buffer.from(String.fromCharCode(c), 'utf8'));
  }
  return Buffer.from(out).toString('hex');
};
for (let k = 0; k < 2000; k++) {
  let body = '';
  const n = 1 + rnd(7);
  for (let i = 0; i < n; i++) body += parts[rnd(parts.length)];
  console.log(JSON.stringify({ body, wtf8: wtf8(JSON.parse('"' + body + '"')) }));
}
