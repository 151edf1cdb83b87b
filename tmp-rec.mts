const names = Array.from({ length: 26 }, (_, i) => `col${String.fromCharCode(97 + i)}Name`);
const N = 200_000;
function a() { const out = []; for (let i = 0; i < N; i++) { const r: Record<string, unknown> = {}; for (let c = 0; c < names.length; c++) r[names[c]!] = i + c; out.push(r); } return out; }
const template: Record<string, unknown> = {}; for (const n of names) template[n] = null;
function b() { const out = []; for (let i = 0; i < N; i++) { const r: Record<string, unknown> = { ...template }; for (let c = 0; c < names.length; c++) r[names[c]!] = i + c; out.push(r); } return out; }
const ctor = new Function('v', 'return {' + names.map((n, i) => `${JSON.stringify(n)}: v[${i}]`).join(',') + '}') as (v: unknown[]) => Record<string, unknown>;
function c() { const out = []; const v = new Array(names.length); for (let i = 0; i < N; i++) { for (let c = 0; c < names.length; c++) v[c] = i + c; out.push(ctor(v)); } return out; }
for (const [n, f] of [['assign', a], ['spread', b], ['ctor', c], ['assign', a], ['spread', b], ['ctor', c]] as const) { const t = performance.now(); const o = f(); const t1 = performance.now(); const s = JSON.stringify(o, null, 2).length; console.log(n, (t1 - t).toFixed(0), (performance.now() - t1).toFixed(0)); }
