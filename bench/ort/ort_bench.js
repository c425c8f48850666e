// ort_bench.js times a model on ONNX Runtime's CPU provider (default
// threads) and prints the JSON fields of `onnxvk bench --json`.
//
// Usage: node ort_bench.js MODEL [--runs N] [--warmup N] [--input FILE.npy] [-i NAME=FILE.npy ...]
//
// Each input named with -i is fed from its .npy file (float32, float64,
// int32 or int64, C order); without -i, the first input is fed from
// FILE.npy, by default input.npy beside the model, and other inputs are not
// supported.
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

function parseArgs(argv) {
  const a = { runs: 20, warmup: 3, named: {} };
  for (let i = 0; i < argv.length; i++) {
    const v = argv[i];
    if (v === '--runs') a.runs = Number(argv[++i]);
    else if (v === '--warmup') a.warmup = Number(argv[++i]);
    else if (v === '--input') a.input = argv[++i];
    else if (v === '-i') {
      const kv = argv[++i];
      const eq = kv.indexOf('=');
      if (eq <= 0) throw new Error(`-i wants NAME=FILE, got ${kv}`);
      a.named[kv.slice(0, eq)] = kv.slice(eq + 1);
    }
    else if (!a.model) a.model = v;
    else throw new Error(`unexpected argument ${v}`);
  }
  if (!a.model) throw new Error('usage: node ort_bench.js MODEL [--runs N] [--warmup N] [--input FILE.npy] [-i NAME=FILE.npy ...]');
  a.input = a.input || path.join(path.dirname(a.model), 'input.npy');
  return a;
}

// readNpy decodes a little-endian, C-order .npy file into an ort.Tensor.
function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(`${file}: not a .npy file`);
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = (major === 1 ? 10 : 12) + hlen;
  const header = buf.toString('latin1', major === 1 ? 10 : 12, start);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  if (/'fortran_order':\s*True/.test(header)) throw new Error(`${file}: Fortran order`);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map((s) => s.trim()).filter((s) => s).map(Number);
  const types = { '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array], '<i4': ['int32', Int32Array], '<i8': ['int64', BigInt64Array] };
  const t = types[descr];
  if (!t) throw new Error(`${file}: dtype ${descr} not supported`);
  const bytes = buf.subarray(start);
  const data = new t[1](bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
  return new ort.Tensor(t[0], data, shape);
}

function percentile(sorted, q) {
  const pos = q * (sorted.length - 1);
  const lo = Math.floor(pos);
  if (lo + 1 >= sorted.length) return sorted[lo];
  const frac = pos - lo;
  return sorted[lo] * (1 - frac) + sorted[lo + 1] * frac;
}

module.exports = { readNpy };

if (require.main === module) {
  (async () => {
    const a = parseArgs(process.argv.slice(2));
    let t0 = performance.now();
    const sess = await ort.InferenceSession.create(a.model, { executionProviders: ['cpu'] });
    const res = { model: path.basename(a.model), device: 'ort-cpu', load_ms: performance.now() - t0 };
    const feeds = {};
    if (Object.keys(a.named).length === 0) feeds[sess.inputNames[0]] = readNpy(a.input);
    for (const [name, file] of Object.entries(a.named)) feeds[name] = readNpy(file);
    const run = async () => {
      const t = performance.now();
      await sess.run(feeds);
      return performance.now() - t;
    };
    res.first_run_ms = await run();
    for (let i = 0; i < a.warmup; i++) await run();
    const times = [];
    for (let i = 0; i < a.runs; i++) times.push(await run());
    times.sort((x, y) => x - y);
    Object.assign(res, {
      median_ms: percentile(times, 0.5),
      p90_ms: percentile(times, 0.9),
      min_ms: times[0],
      max_ms: times[times.length - 1],
      mean_ms: times.reduce((s, x) => s + x, 0) / times.length,
      runs: a.runs,
      warmup: a.warmup,
    });
    console.log(JSON.stringify(res, null, 2));
  })().catch((e) => {
    console.error(`ort_bench: ${e.message}`);
    process.exit(1);
  });
}
