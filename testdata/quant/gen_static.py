#!/usr/bin/python3
"""Writes cnn_qlinear.onnx and cnn_qdq.onnx: gen.py's CNN (the same random
weights) quantized statically, in the two forms ONNX Runtime's
quantize_static writes, with activation ranges calibrated on input.npy.

Activations are uint8, asymmetric over their range widened to include 0;
weights int8, symmetric per output channel, with reduce_range (zero points
0, values in [-64, 64]: ONNX Runtime's uint8×int8 kernels on AVX2 without
VNNI sum pairs of products in int16 with saturation (VPMADDUBSW), which
255·64·2 stays below and 255·127·2 does not); biases int32 at scale
x_scale·w_scale; all rounding half to even (numpy's).

- cnn_qlinear.onnx (QOperator form): QuantizeLinear of the input,
  QLinearConv for every convolution (the ReLU after one folded into its
  output range, which starts at 0), DequantizeLinear and QuantizeLinear
  around the residual Add, ReLU and ReduceMean, QLinearMatMul for the
  classifier (int8 weight per tensor), DequantizeLinear and its bias Add.
- cnn_qdq.onnx (QDQ form): the float graph with QuantizeLinear and
  DequantizeLinear pairs on each convolution's and the MatMul's input, and
  DequantizeLinear of the quantized weights (per channel, axis 0) and
  biases.

ort_qlinear_output.npy and ort_qdq_output.npy are ONNX Runtime's outputs
for input.npy (onnxruntime-node 1.30.0, CPU provider):
  NODE_PATH=bench/ort/node_modules node bench/ort/outputs.js \\
      testdata/quant/cnn_qlinear.onnx testdata/quant/input.npy testdata/quant/ort_qlinear_
  (and cnn_qdq.onnx with the prefix testdata/quant/ort_qdq_)

Run from this directory after gen.py: /usr/bin/python3 gen_static.py
"""
import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

import gen  # seeds torch as gen.main does, so CNN() has the same weights


def activation_qparams(t):
    """uint8 scale and zero point of an activation tensor's range."""
    rmin, rmax = min(float(t.min()), 0.0), max(float(t.max()), 0.0)
    scale = np.float32((rmax - rmin) / 255)
    return scale, np.uint8(np.clip(np.round(-rmin / scale), 0, 255))


QMAX = 64  # reduce_range


def weight_per_channel(w):
    """int8 per-output-channel symmetric quantization."""
    w = w.reshape(w.shape[0], -1)
    scale = (np.abs(w).max(axis=1) / QMAX).astype(np.float32)
    q = np.clip(np.round(w / scale[:, None]), -QMAX, QMAX).astype(np.int8)
    return q, scale


def weight_per_tensor(w):
    """int8 per-tensor symmetric quantization."""
    scale = np.float32(np.abs(w).max() / QMAX)
    return np.clip(np.round(w / scale), -QMAX, QMAX).astype(np.int8), scale


class Builder:
    def __init__(self):
        self.nodes, self.inits = [], []

    def init(self, name, value):
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def node(self, op, ins, out, **attrs):
        self.nodes.append(helper.make_node(op, ins, [out], name=out, **attrs))
        return out

    def model(self, name):
        graph = helper.make_graph(self.nodes, name, [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 32, 32])],
                                  [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 10])], self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        onnx.checker.check_model(m)
        return m


def calibrate(net, x):
    """The float activations at the quantization points."""
    with torch.no_grad():
        a = {"input": x}
        a["stem"] = torch.relu(net.stem(x))
        a["a"] = torch.relu(net.block.a(a["stem"]))
        a["b"] = net.block.b(a["a"])
        a["block"] = torch.relu(a["stem"] + a["b"])
        a["down"] = torch.relu(net.down(a["block"]))
        a["dw"] = torch.relu(net.dw(a["down"]))
        a["pw"] = torch.relu(net.pw(a["dw"]))
        a["mean"] = a["pw"].mean(dim=(2, 3))
        a["fc"] = torch.matmul(a["mean"], net.fc)
    return {k: activation_qparams(v.numpy()) for k, v in a.items()}


CONVS = [("stem", "input", "stem"), ("block.a", "stem", "a"), ("block.b", "a", "b"),
         ("down", "block", "down"), ("dw", "down", "dw"), ("pw", "dw", "pw")]


def conv_attrs(conv):
    return dict(kernel_shape=list(conv.kernel_size), strides=list(conv.stride), pads=list(conv.padding) * 2,
                group=conv.groups)


def module(net, path):
    m = net
    for p in path.split("."):
        m = getattr(m, p)
    return m


def qlinear(net, q):
    b = Builder()
    qp = lambda name: (b.init(name + "_scale", q[name][0]), b.init(name + "_zero_point", q[name][1]))
    qp("input")
    cur = b.node("QuantizeLinear", ["input", "input_scale", "input_zero_point"], "input_quantized")
    for path, src, dst in CONVS:
        conv = module(net, path)
        w = conv.weight.detach().numpy()
        wq, ws = weight_per_channel(w)
        bias = np.round(conv.bias.detach().numpy() / (q[src][0] * ws)).astype(np.int32)
        ins = [cur, src + "_scale", src + "_zero_point",
               b.init(path + "_w", wq.reshape(w.shape)), b.init(path + "_w_scale", ws),
               b.init(path + "_w_zero_point", np.zeros(len(ws), np.int8))] + list(qp(dst)) + [b.init(path + "_b", bias)]
        cur = b.node("QLinearConv", ins, dst + "_quantized", **conv_attrs(conv))
        if dst == "b":
            # The residual: stem + b, ReLU, in float between DequantizeLinear and QuantizeLinear.
            sf = b.node("DequantizeLinear", ["stem_quantized", "stem_scale", "stem_zero_point"], "stem_dequantized")
            bf = b.node("DequantizeLinear", [cur, "b_scale", "b_zero_point"], "b_dequantized")
            r = b.node("Relu", [b.node("Add", [sf, bf], "residual")], "block")
            qp("block")
            cur = b.node("QuantizeLinear", [r, "block_scale", "block_zero_point"], "block_quantized")
    pf = b.node("DequantizeLinear", [cur, "pw_scale", "pw_zero_point"], "pw_dequantized")
    mean = b.node("ReduceMean", [pf], "mean", axes=[2, 3], keepdims=0)
    qp("mean")
    mq = b.node("QuantizeLinear", [mean, "mean_scale", "mean_zero_point"], "mean_quantized")
    fq, fs = weight_per_tensor(net.fc.detach().numpy())
    qp("fc")
    y = b.node("QLinearMatMul", [mq, "mean_scale", "mean_zero_point", b.init("fc_w", fq), b.init("fc_w_scale", fs),
                                 b.init("fc_w_zero_point", np.int8(0)), "fc_scale", "fc_zero_point"], "fc_quantized")
    yf = b.node("DequantizeLinear", [y, "fc_scale", "fc_zero_point"], "fc_dequantized")
    b.node("Add", [yf, b.init("fcb", net.fcb.detach().numpy())], "output")
    return b.model("cnn_qlinear")


def qdq(net, q):
    b = Builder()

    def qdq_act(x, name):
        s, z = b.init(name + "_scale", q[name][0]), b.init(name + "_zero_point", q[name][1])
        xq = b.node("QuantizeLinear", [x, s, z], x + "_quantized")
        return b.node("DequantizeLinear", [xq, s, z], x + "_dequantized")

    floats = {"input": "input"}
    for path, src, dst in CONVS:
        conv = module(net, path)
        w = conv.weight.detach().numpy()
        wq, ws = weight_per_channel(w)
        bias = np.round(conv.bias.detach().numpy() / (q[src][0] * ws)).astype(np.int32)
        wd = b.node("DequantizeLinear", [b.init(path + "_w", wq.reshape(w.shape)), b.init(path + "_w_scale", ws),
                                         b.init(path + "_w_zero_point", np.zeros(len(ws), np.int8))], path + "_w_dequantized", axis=0)
        bd = b.node("DequantizeLinear", [b.init(path + "_b", bias), b.init(path + "_b_scale", (q[src][0] * ws).astype(np.float32))],
                    path + "_b_dequantized", axis=0)
        y = b.node("Conv", [qdq_act(floats[src], src), wd, bd], dst + "_conv", **conv_attrs(conv))
        floats[dst] = y if dst == "b" else b.node("Relu", [y], dst)
        if dst == "b":
            floats["block"] = b.node("Relu", [b.node("Add", [floats["stem"], y], "residual")], "block")
    mean = b.node("ReduceMean", [floats["pw"]], "mean", axes=[2, 3], keepdims=0)
    fq, fs = weight_per_tensor(net.fc.detach().numpy())
    fd = b.node("DequantizeLinear", [b.init("fc_w", fq), b.init("fc_w_scale", fs), b.init("fc_w_zero_point", np.int8(0))], "fc_w_dequantized")
    y = b.node("MatMul", [qdq_act(mean, "mean"), fd], "fc")
    b.node("Add", [y, b.init("fcb", net.fcb.detach().numpy())], "output")
    return b.model("cnn_qdq")


def main():
    net = gen.CNN().eval()
    x = torch.from_numpy(np.load("input.npy"))
    q = calibrate(net, x)
    onnx.save(qlinear(net, q), "cnn_qlinear.onnx")
    onnx.save(qdq(net, q), "cnn_qdq.onnx")


if __name__ == "__main__":
    main()
