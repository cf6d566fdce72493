// Writes cases.jsonl: random byte strings rich in UTF-8 lead and
// continuation bytes, each with what Node's TextDecoder (the WHATWG UTF-8
// decoder OpenClaw reads SSE bodies with) makes of them, re-encoded as
// UTF-8. Run: node gen.mjs > cases.jsonl
let seed = 2026;
const rnd = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
const pool = [0x41, 0x0a, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xe1, 0xec, 0xed, 0xee, 0xef, 0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xff];
const dec = new TextDecoder('utf-8');
const enc = new TextEncoder();
const hex = (b) => Buffer.from(b).toString('hex');
for (let k = 0; k < 3000; k++) {
  const n = 1 + rnd(8);
  const b = [];
  for (let i = 0; i < n; i++) b.push(rnd(4) === 0 ? rnd(256) : pool[rnd(pool.length)]);
  console.log(JSON.stringify({ in: hex(b), out: hex(enc.encode(dec.decode(Uint8Array.from(b)))) }));
}
