#!/usr/bin/python3
"""Export the CPU comparison's models: the 14 models of the CPU table in
bench/ort/README.md (torchvision classifiers with seeded random weights at
batch 1, resnet18 at batch 8, a 4-layer nn.TransformerEncoder of width 256,
vit_b_16 and a 2-layer LSTM of width 128), each as OUT/<name>/model.onnx
(opset 14, constants folded) with its input as OUT/<name>/input.npy.

Usage: /usr/bin/python3 bench/ort/export_cpu.py OUT [names...]
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


def vision(name, batch=1):
    def build():
        model, _ = export.vision(name)()
        torch.manual_seed(1)
        return model, torch.rand(batch, 3, 224, 224)
    return build


class Encoder(torch.nn.Module):
    """nn.TransformerEncoder, 4 layers of width 256 (8 heads, feed-forward
    1024), over one sequence of 64 positions."""

    def __init__(self):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(
            d_model=256, nhead=8, dim_feedforward=1024, batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(
            layer, num_layers=4, enable_nested_tensor=False)

    def forward(self, x):
        return self.encoder(x)


def encoder():
    torch.manual_seed(0)
    model = Encoder()
    torch.manual_seed(1)
    return model, torch.randn(1, 64, 256)


class LSTM(torch.nn.Module):
    """A 2-layer LSTM of width 128 over 32 steps of 128 features."""

    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(128, 128, num_layers=2, batch_first=True)

    def forward(self, x):
        return self.lstm(x)[0]


def lstm():
    torch.manual_seed(0)
    model = LSTM()
    torch.manual_seed(1)
    return model, torch.randn(1, 32, 128)


MODELS = {
    "resnet18": vision("resnet18"),
    "resnet50": vision("resnet50"),
    "mobilenet_v2": vision("mobilenet_v2"),
    "mobilenet_v3_small": vision("mobilenet_v3_small"),
    "efficientnet_b0": vision("efficientnet_b0"),
    "squeezenet1_1": vision("squeezenet1_1"),
    "densenet121": vision("densenet121"),
    "googlenet": vision("googlenet"),
    "shufflenet_v2_x1_0": vision("shufflenet_v2_x1_0"),
    "convnext_tiny": vision("convnext_tiny"),
    "encoder_4x256": encoder,
    "vit_b_16": vision("vit_b_16"),
    "lstm_2x128": lstm,
    "resnet18_b8": vision("resnet18", batch=8),
}


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    names = sys.argv[2:] or list(MODELS)
    for name in names:
        model, x = MODELS[name]()
        model.eval()
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        # Exported with autograd on: under no_grad PyTorch takes its fused
        # Transformer path, which the exporter cannot write.
        torch.onnx.export(model, (x,), os.path.join(d, "model.onnx"),
                          opset_version=export.OPSET, do_constant_folding=True,
                          input_names=["input"], output_names=["output"],
                          **export.LEGACY)
        np.save(os.path.join(d, "input.npy"), x.numpy())
        print(name, file=sys.stderr)


if __name__ == "__main__":
    main()
