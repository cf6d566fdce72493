// Writes cases.jsonl: random JSON texts (objects with index-like and
// repeated keys, numbers in many spellings, strings with control
// characters and line separators), each with JSON.stringify(JSON.parse(it)).
// Run: node gen.mjs > cases.jsonl
let seed = 2028;
const rnd = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
const nums = ['0', '-0', '1.0', '1e2', '1E+2', '1e21', '1e20', '123456789012345678901', '0.000001', '0.0000001', '1.5e-7', '-2.50', '1e400', '-1e400', '4294967295', '0.1', '100', '5e-324', '1.7976931348623157e308', '12.34e5'];
const keys = ['"a"', '"b"', '"1"', '"0"', '"01"', '"10"', '"2"', '"4294967294"', '"4294967295"', '"-1"', '"1.5"', '"\\u0031"', '"message"', '""'];
const strs = ['"x"', '"\\b\\f\\n\\r\\t"', '"\\u0001\\u001f"', '"\\u2028\\u2029"', '"\\u007f"', '"é😀"', '"\\"\\\\/"', '"\\ud83d\\ude00"', '""'];
function val(d) {
  const t = d > 2 ? rnd(4) : rnd(6);
  if (t === 0) return nums[rnd(nums.length)];
  if (t === 1) return strs[rnd(strs.length)];
  if (t === 2) return ['true', 'false', 'null'][rnd(3)];
  if (t === 3) return '[]';
  if (t === 4) { const n = rnd(4); const a = []; for (let i = 0; i < n; i++) a.push(val(d + 1)); return '[' + a.join(',') + ']'; }
  const n = rnd(5); const m = []; for (let i = 0; i < n; i++) m.push(keys[rnd(keys.length)] + ':' + val(d + 1)); return '{' + m.join(',') + '}';
}
for (let k = 0; k < 2000; k++) {
  const text = val(0);
  console.log(JSON.stringify({ text, out: JSON.stringify(JSON.parse(text)) }));
}
