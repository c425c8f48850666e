#!/usr/bin/python3
"""Export reference models from PyTorch to ONNX for onnxvk's model tests.

For each model named on the command line, write OUT/<name>/model.onnx (opset
14, constants folded, input "input", output "output"), OUT/<name>/input.npy (a
fixed, seeded input) and OUT/<name>/output.npy (PyTorch's output for it).

Usage: /usr/bin/python3 testdata/torch/export.py --out DIR [--all] [names...]

Without names, the default models are exported; --all adds the large ones.
Each model is written to a temporary folder first and renamed into place, so
an interrupted export never leaves a half-written model folder behind.
"""

import argparse
import os
import shutil
import sys
import tempfile
import time

import numpy as np
import torch
import torchvision

OPSET = 14


def vision(name):
    """A torchvision classifier with seeded random weights and an image input."""

    def build():
        torch.manual_seed(0)
        model = getattr(torchvision.models, name)(weights=None)
        calibrate_batchnorm(model, (3, 224, 224))
        torch.manual_seed(1)
        x = torch.rand(1, 3, 224, 224)
        return model, x

    return build


def calibrate_batchnorm(model, sample_shape):
    """Set the BatchNorm running statistics from random inputs.

    With freshly initialised statistics (mean 0, variance 1) the activations
    of some networks vanish layer by layer (MobileNetV2's outputs are about
    1e-9), which would make an absolute comparison of outputs meaningless.
    Statistics measured on inputs like the test's keep activations near unit
    scale, as in a trained network.
    """
    norms = [m for m in model.modules()
             if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    for m in norms:
        m.reset_running_stats()
        m.momentum = None  # a cumulative average over the batches below
    model.train()
    torch.manual_seed(2)
    with torch.no_grad():
        for _ in range(2):
            model(torch.rand(8, *sample_shape))


class Encoder(torch.nn.Module):
    """A 4-layer Transformer encoder over [batch, seq, 64] inputs."""

    def __init__(self):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(
            d_model=64, nhead=4, dim_feedforward=128, batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(
            layer, num_layers=4, enable_nested_tensor=False)

    def forward(self, x):
        return self.encoder(x)


def transformer():
    torch.manual_seed(0)
    model = Encoder()
    torch.manual_seed(1)
    x = torch.randn(2, 16, 64)
    return model, x


DEFAULT = {
    "resnet18": vision("resnet18"),
    "mobilenet_v2": vision("mobilenet_v2"),
    "squeezenet1_1": vision("squeezenet1_1"),
    "transformer": transformer,
}
LARGE = {
    "efficientnet_b0": vision("efficientnet_b0"),
    "resnet50": vision("resnet50"),
}
MODELS = {**DEFAULT, **LARGE}


def export(name, out):
    model, x = MODELS[name]()
    model.eval()
    # The output is computed with autograd enabled, as during export: that
    # keeps PyTorch off its fused inference-only Transformer path, so the
    # reference is computed by the same operations the ONNX graph holds.
    y = model(x).detach()
    y2 = model(x).detach()
    if not torch.equal(y, y2):
        raise RuntimeError(f"{name}: evaluation is not deterministic")

    os.makedirs(out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=f".{name}.", dir=out)
    os.chmod(tmp, 0o755)
    try:
        torch.onnx.export(
            model, (x,), os.path.join(tmp, "model.onnx"),
            opset_version=OPSET, do_constant_folding=True,
            input_names=["input"], output_names=["output"])
        np.save(os.path.join(tmp, "input.npy"), x.numpy())
        np.save(os.path.join(tmp, "output.npy"), y.numpy())
        dest = os.path.join(out, name)
        if os.path.exists(dest):
            shutil.rmtree(dest)
        os.rename(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument("--all", action="store_true",
                   help="also export " + ", ".join(LARGE))
    p.add_argument("names", nargs="*",
                   help="models to export (default: " + ", ".join(DEFAULT) + ")")
    args = p.parse_args()

    names = args.names or list(DEFAULT)
    if args.all:
        names += [n for n in MODELS if n not in names]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        p.error("unknown model(s) %s; known: %s" % (", ".join(unknown), ", ".join(MODELS)))

    for name in names:
        start = time.monotonic()
        export(name, args.out)
        print(f"{name}: exported in {time.monotonic() - start:.1f}s", file=sys.stderr)


if __name__ == "__main__":
    main()
