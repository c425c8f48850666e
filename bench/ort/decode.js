// decode.js runs greedy generation with the GPT-2-style decoder of
// testdata/torch/export.py on ONNX Runtime's CPU provider (default threads)
// and prints its tokens and timings as JSON: tokens, prefill_ms (the
// prompt's step) and decode_ms_per_token (the median of the later steps).
//
// Usage: node decode.js MODEL --prompt 7,300,12,999 [--steps N]
//
// The model takes ids [1, T] and past.K.key / past.K.value [1, heads, P,
// head size] and returns logits [1, T, vocab] and present.K.*: each step
// feeds the presents back as the pasts and the argmax of the last row of
// logits as the next ids, as decoder_test.go's generate does.
'use strict';
const ort = require('onnxruntime-node');

function parseArgs(argv) {
  const a = { steps: 20 };
  for (let i = 0; i < argv.length; i++) {
    const v = argv[i];
    if (v === '--steps') a.steps = Number(argv[++i]);
    else if (v === '--prompt') a.prompt = argv[++i].split(',').map(Number);
    else if (!a.model) a.model = v;
    else throw new Error(`unexpected argument ${v}`);
  }
  if (!a.model || !a.prompt) throw new Error('usage: node decode.js MODEL --prompt IDS [--steps N]');
  return a;
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const sess = await ort.InferenceSession.create(a.model);
  const meta = sess.inputMetadata || [];
  const cache = sess.inputNames.filter((n) => n.startsWith('past.'));
  const dims = (name) => {
    const m = Array.isArray(meta) ? meta.find((x) => x.name === name) : undefined;
    return m && m.shape ? m.shape : [1, 8, 'P', 64];
  };
  const feeds = {};
  for (const name of cache) {
    const d = dims(name);
    feeds[name] = new ort.Tensor('float32', new Float32Array(0), [d[0], d[1], 0, d[3]]);
  }
  let ids = new ort.Tensor('int64', BigInt64Array.from(a.prompt.map(BigInt)), [1, a.prompt.length]);
  const tokens = [];
  const times = [];
  for (let step = 0; step < a.steps; step++) {
    feeds.ids = ids;
    const start = process.hrtime.bigint();
    const out = await sess.run(feeds);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
    const logits = out.logits;
    const vocab = logits.dims[logits.dims.length - 1];
    const last = logits.data.subarray(logits.data.length - vocab);
    let best = 0;
    for (let i = 1; i < vocab; i++) if (last[i] > last[best]) best = i;
    tokens.push(best);
    for (const name of cache) feeds[name] = out['present.' + name.slice('past.'.length)];
    ids = new ort.Tensor('int64', BigInt64Array.from([BigInt(best)]), [1, 1]);
  }
  const decode = times.slice(1).sort((x, y) => x - y);
  const median = decode.length ? decode[Math.floor(decode.length / 2)] : 0;
  console.log(JSON.stringify({ tokens, prefill_ms: times[0], decode_ms_per_token: median }));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
