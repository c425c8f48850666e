#!/usr/bin/python3
"""Export the models of decode.sh: the GPT-2-style decoder and the
BERT-base-sized encoder of testdata/torch/export.py, sized for timing.

Usage: /usr/bin/python3 bench/ort/export_bench.py OUT

Writes OUT/decoder/model.onnx (export.py's Decoder with 2048 positions, so
that a step can follow a past of 1000 and more; its seeded random weights
otherwise as there), OUT/bert1/model.onnx and OUT/bert8/model.onnx (export.py's
Bert over [1, 128] and [8, 128] token ids), and the inputs decode.sh feeds:
ids1.npy, ids32.npy, past0.npy, past40.npy and past1000.npy (decoder: one
token, a 32-token prompt, and a past of 0, 40 and 1000 positions fed to
every layer's keys and values) and input.npy (encoders).
"""

import importlib.util
import os
import sys

import numpy as np
import torch

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "export", os.path.join(here, "..", "..", "testdata", "torch", "export.py"))
export = importlib.util.module_from_spec(spec)
spec.loader.exec_module(export)


def decoder(out):
    # A step can follow a past of 1000 and more; the weights are otherwise
    # export.py's, drawn in the same order.
    export.Decoder.POSITIONS = 2048
    os.makedirs(out, exist_ok=True)
    export.export_decoder(out)
    np.save(os.path.join(out, "ids1.npy"), np.array([[7]], dtype=np.int64))
    np.save(os.path.join(out, "ids32.npy"),
            np.arange(32, dtype=np.int64).reshape(1, 32) * 31 % export.Decoder.VOCAB)
    rng = np.random.default_rng(0)
    hd = export.Decoder.D // export.Decoder.HEADS
    for p in (0, 40, 1000):
        past = rng.standard_normal((1, export.Decoder.HEADS, p, hd)).astype(np.float32)
        np.save(os.path.join(out, f"past{p}.npy"), past)


def bert(out, batch):
    torch.manual_seed(0)
    model = export.Bert().eval()
    torch.manual_seed(1)
    x = torch.randint(0, export.Bert.VOCAB, (batch, export.Bert.SEQ))
    os.makedirs(out, exist_ok=True)
    torch.onnx.export(model, (x,), os.path.join(out, "model.onnx"),
                      opset_version=export.OPSET, do_constant_folding=True,
                      input_names=["input"], output_names=["output"], **export.LEGACY)
    np.save(os.path.join(out, "input.npy"), x.numpy())


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    decoder(os.path.join(out, "decoder"))
    bert(os.path.join(out, "bert1"), 1)
    bert(os.path.join(out, "bert8"), 8)


if __name__ == "__main__":
    main()
