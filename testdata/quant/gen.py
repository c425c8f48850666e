#!/usr/bin/python3
"""Writes cnn_dynquant.onnx, a small ResNet-style CNN quantized the way ONNX
Runtime's quantize_dynamic writes it, and input.npy, an input for it.

The float32 CNN (random weights, fixed seed) is exported by torch.onnx; then
every Conv and MatMul with a constant weight is rewritten as the dynamic
quantizer does (onnxruntime/python/tools/quantization/operators/conv.py and
matmul.py): the activation goes through DynamicQuantizeLinear (uint8, scale,
zero point), the weight becomes an initializer quantized per tensor
(weight_type QInt8: symmetric int8, zero point 0; or QUInt8: asymmetric
uint8, numpy's round half to even), ConvInteger or MatMulInteger sums in
int32, Cast to float, Mul by the product of the two scales, and the bias
is added after (Reshape to [1, M, 1, 1] and Add for a Conv). The first
Conv's weights are uint8, the others int8, so both kinds of ConvInteger
appear.

ort_output.npy is ONNX Runtime's output for input.npy (onnxruntime-node
1.30.0, CPU provider):
  NODE_PATH=bench/ort/node_modules node bench/ort/outputs.js \
      testdata/quant/cnn_dynquant.onnx testdata/quant/input.npy testdata/quant/ort_

Run from this directory: /usr/bin/python3 gen.py
"""
import io

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

torch.manual_seed(17)


class Block(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.a = torch.nn.Conv2d(c, c, 3, padding=1)
        self.b = torch.nn.Conv2d(c, c, 3, padding=1)

    def forward(self, x):
        return torch.relu(x + self.b(torch.relu(self.a(x))))


class CNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 16, 3, stride=2, padding=1)
        self.block = Block(16)
        self.down = torch.nn.Conv2d(16, 32, 3, stride=2, padding=1)
        self.dw = torch.nn.Conv2d(32, 32, 3, padding=1, groups=32)
        self.pw = torch.nn.Conv2d(32, 24, 1)
        self.fc = torch.nn.Parameter(torch.randn(24, 10) * 0.2)
        self.fcb = torch.nn.Parameter(torch.randn(10) * 0.1)

    def forward(self, x):
        x = torch.relu(self.stem(x))
        x = self.block(x)
        x = torch.relu(self.dw(torch.relu(self.down(x))))
        x = torch.relu(self.pw(x)).mean(dim=(2, 3))
        return torch.matmul(x, self.fc) + self.fcb


def quantize_weight(w, signed):
    """The dynamic quantizer's per-tensor weight quantization (reduce_range off)."""
    if signed:
        scale = np.float32(max(abs(w.min()), abs(w.max())) / 127)
        zp = np.int8(0)
        q = np.clip(np.round(w / scale), -127, 127).astype(np.int8)
        return q, scale, zp
    rmin, rmax = min(w.min(), 0.0), max(w.max(), 0.0)
    scale = np.float32((rmax - rmin) / 255)
    zp = np.uint8(np.clip(np.round(-rmin / scale), 0, 255))
    q = np.clip(np.round(w / scale) + zp, 0, 255).astype(np.uint8)
    return q, scale, zp


def rewrite(model):
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    nodes, first = [], True
    for n in g.node:
        if n.op_type not in ("Conv", "MatMul") or n.input[1] not in inits:
            nodes.append(n)
            continue
        name = n.name or n.output[0]
        x, wname = n.input[0], n.input[1]
        w = numpy_helper.to_array(inits[wname])
        signed = not (first and n.op_type == "Conv")
        first = False
        q, ws, wzp = quantize_weight(w, signed)
        g.initializer.extend([
            numpy_helper.from_array(q, wname + "_quantized"),
            numpy_helper.from_array(np.array(ws, np.float32), wname + "_scale"),
            numpy_helper.from_array(np.array(wzp), wname + "_zero_point"),
        ])
        xq, xs, xz = x + "_quantized", x + "_scale", x + "_zero_point"
        nodes.append(helper.make_node("DynamicQuantizeLinear", [x], [xq, xs, xz], name=name + "_QuantizeLinear"))
        op = "ConvInteger" if n.op_type == "Conv" else "MatMulInteger"
        attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
        nodes.append(helper.make_node(op, [xq, wname + "_quantized", xz, wname + "_zero_point"], [name + "_output_quantized"],
                                      name=name + "_quant", **attrs))
        nodes.append(helper.make_node("Cast", [name + "_output_quantized"], [name + "_output_quantized_cast_output"],
                                      to=TensorProto.FLOAT, name=name + "_output_quantized_cast"))
        nodes.append(helper.make_node("Mul", [xs, wname + "_scale"], [name + "_scales_mul:0"], name=name + "_scales_mul"))
        out = n.output[0]
        scaled = name + "_output_scale_mul:0" if len(n.input) > 2 else out
        nodes.append(helper.make_node("Mul", [name + "_output_quantized_cast_output", name + "_scales_mul:0"], [scaled],
                                      name=name + "_output_scale_mul"))
        if len(n.input) > 2:
            m = w.shape[0]
            g.initializer.append(numpy_helper.from_array(np.array([1, m, 1, 1], np.int64), n.input[2] + "_reshape_shape"))
            nodes.append(helper.make_node("Reshape", [n.input[2], n.input[2] + "_reshape_shape"], [n.input[2] + "_reshape_output"],
                                          name=n.input[2] + "_reshape"))
            nodes.append(helper.make_node("Add", [scaled, n.input[2] + "_reshape_output"], [out], name=name + "_bias_add"))
    del g.node[:]
    g.node.extend(nodes)
    used = {i for n in g.node for i in n.input}
    keep = [t for t in g.initializer if t.name in used]
    del g.initializer[:]
    g.initializer.extend(keep)
    return model


def main():
    net = CNN().eval()
    x = torch.randn(1, 3, 32, 32)
    buf = io.BytesIO()
    torch.onnx.export(net, x, buf, input_names=["input"], output_names=["output"], opset_version=13)
    model = rewrite(onnx.load_from_string(buf.getvalue()))
    onnx.checker.check_model(model)
    onnx.save(model, "cnn_dynquant.onnx")
    np.save("input.npy", x.numpy())


if __name__ == "__main__":
    main()
