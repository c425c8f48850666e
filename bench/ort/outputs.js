// outputs.js runs a model once on ONNX Runtime's CPU provider (default
// threads) and writes each output as PREFIX<name>.npy (float32, int32 or
// int64, C order).
//
// Usage: node outputs.js MODEL INPUT.npy PREFIX
//        node outputs.js MODEL - PREFIX NAME=FILE.npy...
//
// The first form feeds the model's first input from INPUT.npy; the second
// feeds each named input from its file.
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');
const { readNpy } = require('./ort_bench.js');

// writeNpy encodes an ort.Tensor as a version 1 .npy file.
function writeNpy(file, t) {
  const descr = { float32: '<f4', float16: '<f2', int32: '<i4', int64: '<i8', uint8: '|u1', int8: '|i1', bool: '|b1' }[t.type];
  if (!descr) throw new Error(`${file}: type ${t.type} not supported`);
  const shape = t.dims.length === 1 ? `${t.dims[0]},` : t.dims.join(', ');
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${shape}), }`;
  header += ' '.repeat(63 - ((header.length + 10) % 64)) + '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  const data = Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
  fs.writeFileSync(file, Buffer.concat([head, Buffer.from(header, 'latin1'), data]));
}

(async () => {
  const [model, input, prefix, ...named] = process.argv.slice(2);
  if (!prefix || (input === '-') !== (named.length > 0)) {
    throw new Error('usage: node outputs.js MODEL INPUT.npy PREFIX | node outputs.js MODEL - PREFIX NAME=FILE.npy...');
  }
  const sess = await ort.InferenceSession.create(model);
  const feeds = {};
  if (input !== '-') feeds[sess.inputNames[0]] = readNpy(input);
  for (const kv of named) {
    const eq = kv.indexOf('=');
    if (eq <= 0) throw new Error(`want NAME=FILE, got ${kv}`);
    feeds[kv.slice(0, eq)] = readNpy(kv.slice(eq + 1));
  }
  const out = await sess.run(feeds);
  for (const name of sess.outputNames) {
    writeNpy(`${prefix}${name}.npy`, out[name]);
  }
})().catch((e) => {
  console.error(`outputs: ${e.message}`);
  process.exit(1);
});
