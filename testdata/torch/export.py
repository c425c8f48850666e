#!/usr/bin/python3
"""Export reference models from PyTorch to ONNX for onnxvk's model tests.

For each model named on the command line, write OUT/<name>/model.onnx (opset
14, constants folded, input "input", output "output"), OUT/<name>/input.npy (a
fixed, seeded input) and OUT/<name>/output.npy (PyTorch's output for it). A
model NAME_fp16 is NAME made float16 (see to_float16): its input.npy is
float16, its output.npy PyTorch's float32 output for that input's values, and
OUT/<name>/model_fp32.onnx the float32 model it was made from. The
mixed-precision models NAME_mixed (float16 weights cast to float32, see
cast_weights) and NAME_keepio (float16 inside float32 inputs and outputs,
see keep_io_types) have a float32 input.npy holding float16 values, and
model_fp32.onnx likewise. The
decoders (GPT-2-style models with a KV cache, see Decoder: decoder,
decoder_small, the same with 2 layers of width 256, for the tests outside
the long suites, and decoder_gqa, decoder_small with grouped-query
attention) have their own inputs and outputs; their reference is
PyTorch's greedy continuation of a prompt (prompt.npy, tokens.npy) and its
logits for the prompt (logits.npy).

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

import inspect

import numpy as np
import onnx
import torch
import torchvision
from onnx import numpy_helper

OPSET = 14

# torch.onnx.export gained a `dynamo` argument in torch 2.5, and newer releases
# default it to True; these exports are written for the TorchScript exporter
# (dynamic_axes, opset 14), so ask for it wherever the choice exists.
LEGACY = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}


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


def densenet_small():
    """A small DenseNet (torchvision's class: two dense blocks of four
    layers, growth 12) with seeded random weights over a 128×128 image: its
    pre-activation layers (BatchNorm, ReLU, 1×1 convolution of all the
    features before) are what the CPU's NormConv fuses."""
    torch.manual_seed(0)
    model = torchvision.models.DenseNet(growth_rate=12, block_config=(4, 4), num_init_features=24,
                                        bn_size=4, num_classes=100)
    calibrate_batchnorm(model, (3, 128, 128))
    torch.manual_seed(1)
    x = torch.rand(1, 3, 128, 128)
    return model, x


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


class Bert(torch.nn.Module):
    """A BERT-base-sized encoder over [1, 128] token ids: token and position
    embeddings, LayerNorm, then 12 post-norm layers (d_model 768, 12 heads,
    a GELU feed-forward of 3072)."""

    VOCAB, D, HEADS, LAYERS, FF, SEQ = 30522, 768, 12, 12, 3072, 128

    def __init__(self):
        super().__init__()
        self.tok = torch.nn.Embedding(self.VOCAB, self.D)
        self.pos = torch.nn.Embedding(512, self.D)
        self.ln = torch.nn.LayerNorm(self.D)
        layer = torch.nn.TransformerEncoderLayer(
            d_model=self.D, nhead=self.HEADS, dim_feedforward=self.FF,
            activation="gelu", batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(
            layer, num_layers=self.LAYERS, enable_nested_tensor=False)
        # TransformerEncoder deep-copies one layer: draw each layer's own
        # matrices, or the exporter would store one set for all twelve.
        for block in self.encoder.layers:
            for p in block.parameters():
                if p.dim() > 1:
                    torch.nn.init.xavier_uniform_(p)

    def forward(self, ids):
        pos = torch.arange(ids.shape[1]).unsqueeze(0)
        return self.encoder(self.ln(self.tok(ids) + self.pos(pos)))


def bert():
    torch.manual_seed(0)
    model = Bert()
    torch.manual_seed(1)
    x = torch.randint(0, Bert.VOCAB, (1, Bert.SEQ))
    return model, x


def repeat_kv(x, rep):
    """Each head of x [b, heads, s, hd] repeated rep times in a row, as
    Hugging Face's Llama repeats its key and value heads."""
    b, h, s, hd = x.shape
    return x[:, :, None, :, :].expand(b, h, rep, s, hd).reshape(b, h * rep, s, hd)


class Block(torch.nn.Module):
    """A GPT-2 decoder block that appends its keys and values to a cache.
    With fewer key and value heads than query heads (kv_heads), it is a
    grouped-query attention: the cache holds the kv_heads, repeated for the
    product (repeat_kv)."""

    def __init__(self, d, heads, kv_heads):
        super().__init__()
        self.heads, self.kv_heads = heads, kv_heads
        self.ln1 = torch.nn.LayerNorm(d)
        if kv_heads == heads:
            self.qkv = torch.nn.Linear(d, 3 * d)
        else:
            self.q = torch.nn.Linear(d, d)
            self.kv = torch.nn.Linear(d, 2 * kv_heads * (d // heads))
        self.proj = torch.nn.Linear(d, d)
        self.ln2 = torch.nn.LayerNorm(d)
        self.fc = torch.nn.Linear(d, 4 * d)
        self.out = torch.nn.Linear(4 * d, d)

    def forward(self, x, past_k, past_v):
        b, t, c = x.shape
        h, hkv, hd = self.heads, self.kv_heads, c // self.heads
        if h == hkv:
            q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        else:
            y = self.ln1(x)
            q, (k, v) = self.q(y), self.kv(y).split(hkv * hd, dim=2)
        q = q.view(b, t, h, hd).transpose(1, 2)
        k = torch.cat([past_k, k.view(b, t, hkv, hd).transpose(1, 2)], dim=2)
        v = torch.cat([past_v, v.view(b, t, hkv, hd).transpose(1, 2)], dim=2)
        ks, vs = k, v
        if h != hkv:
            ks, vs = repeat_kv(k, h // hkv), repeat_kv(v, h // hkv)
        att = (q @ ks.transpose(-2, -1)) * (1.0 / hd ** 0.5)
        p = past_k.shape[2]
        # Query i sits at position p + i and sees the keys up to it.
        rows = torch.arange(t).unsqueeze(1) + p
        cols = torch.arange(k.shape[2]).unsqueeze(0)
        att = att.masked_fill(cols > rows, float("-inf")).softmax(dim=-1)
        y = (att @ vs).transpose(1, 2).reshape(b, t, c)
        x = x + self.proj(y)
        x = x + self.out(torch.nn.functional.gelu(self.fc(self.ln2(x))))
        return x, k, v


class Decoder(torch.nn.Module):
    """A GPT-2-style language model with a KV cache: ids [1, T] and, per
    layer, past keys and values [1, kv_heads, P, d/heads] in; logits
    [1, T, vocab] and the present keys and values [1, kv_heads, P+T, ...]
    out. kv_heads is heads unless given (grouped-query attention)."""

    VOCAB, POSITIONS = 1024, 512

    def __init__(self, layers, d, heads, kv_heads=None):
        super().__init__()
        self.LAYERS, self.D, self.HEADS = layers, d, heads
        self.KV_HEADS = kv_heads or heads
        self.wte = torch.nn.Embedding(self.VOCAB, self.D)
        self.wpe = torch.nn.Embedding(self.POSITIONS, self.D)
        self.blocks = torch.nn.ModuleList(Block(self.D, self.HEADS, self.KV_HEADS) for _ in range(self.LAYERS))
        self.ln = torch.nn.LayerNorm(self.D)
        self.head = torch.nn.Linear(self.D, self.VOCAB, bias=False)

    def forward(self, ids, *past):
        p = past[0].shape[2]
        pos = torch.arange(ids.shape[1]).unsqueeze(0) + p
        x = self.wte(ids) + self.wpe(pos)
        present = []
        for i, blk in enumerate(self.blocks):
            x, k, v = blk(x, past[2 * i], past[2 * i + 1])
            present += [k, v]
        return (self.head(self.ln(x)), *present)

    def empty_cache(self, p=0):
        shape = (1, self.KV_HEADS, p, self.D // self.HEADS)
        return [torch.zeros(shape) for _ in range(2 * self.LAYERS)]


def decoder_names(layers):
    names = []
    for i in range(layers):
        names += [f"{i}.key", f"{i}.value"]
    return names


PROMPT = [7, 300, 12, 999]
GENERATE = 200


# DECODERS gives the layers, width, heads and key and value heads of each
# decoder.
DECODERS = {"decoder": (6, 512, 8, 8), "decoder_small": (2, 256, 4, 4), "decoder_gqa": (2, 256, 4, 2)}


def export_decoder(tmp, name):
    """Export the decoder name, and PyTorch's greedy continuation of PROMPT
    (prompt.npy, tokens.npy: GENERATE tokens) as the reference."""
    torch.manual_seed(0)
    model = Decoder(*DECODERS[name]).eval()
    cache = decoder_names(model.LAYERS)
    names = ["ids"] + ["past." + n for n in cache]
    outputs = ["logits"] + ["present." + n for n in cache]
    axes = {"ids": {1: "T"}, "logits": {1: "T"}}
    for n in cache:
        axes["past." + n] = {2: "P"}
        axes["present." + n] = {2: "S"}
    example = (torch.tensor([[1, 2]]), *model.empty_cache(3))
    torch.onnx.export(model, example, os.path.join(tmp, "model.onnx"), opset_version=OPSET,
                      do_constant_folding=True, input_names=names, output_names=outputs,
                      dynamic_axes=axes, **LEGACY)
    with torch.no_grad():
        ids, past, tokens = torch.tensor([PROMPT]), model.empty_cache(), []
        for i in range(GENERATE):
            logits, *past = model(ids, *past)
            if i == 0:
                np.save(os.path.join(tmp, "logits.npy"), logits.numpy())
            ids = logits[:, -1:].argmax(dim=-1)
            tokens.append(int(ids))
    np.save(os.path.join(tmp, "prompt.npy"), np.array([PROMPT], dtype=np.int64))
    np.save(os.path.join(tmp, "tokens.npy"), np.array(tokens, dtype=np.int64))


DEFAULT = {
    "resnet18": vision("resnet18"),
    "mobilenet_v2": vision("mobilenet_v2"),
    "squeezenet1_1": vision("squeezenet1_1"),
    "densenet_small": densenet_small,
    "transformer": transformer,
}
LARGE = {
    "efficientnet_b0": vision("efficientnet_b0"),
    "resnet50": vision("resnet50"),
    "decoder": export_decoder,
    "decoder_small": export_decoder,
    "decoder_gqa": export_decoder,
    "bert": bert,
}
# HALF maps each float16 or mixed-precision model to the model it is made
# from and the function that makes it from the float32 ONNX model.
HALF = {
    "resnet18_fp16": ("resnet18", lambda m: to_float16(m)),
    "transformer_fp16": ("transformer", lambda m: to_float16(m)),
    "squeezenet1_1_mixed": ("squeezenet1_1", lambda m: cast_weights(m)),
    "squeezenet1_1_keepio": ("squeezenet1_1", lambda m: keep_io_types(m)),
    "resnet18_mixed": ("resnet18", lambda m: cast_weights(m)),
    "resnet18_keepio": ("resnet18", lambda m: keep_io_types(m)),
    "transformer_mixed": ("transformer", lambda m: cast_weights(m)),
    "transformer_keepio": ("transformer", lambda m: keep_io_types(m)),
}
MODELS = {**DEFAULT, **LARGE, **{h: (DEFAULT | LARGE)[f] for h, (f, _) in HALF.items()}}

# FP32_INPUTS lists, by op, the inputs that ONNX types float32 whatever the
# type of the op's data: they stay float32 in a float16 model.
FP32_INPUTS = {"Resize": (1, 2)}


def to_float16(model):
    """Make the float32 ONNX model float16 in place, as onnxconverter-common's
    convert_float_to_float16 does without keep_io_types: every float32
    initializer, Constant, ConstantOfShape value, Cast to float32, graph
    input, output and value_info becomes float16 (values rounded to nearest
    even), and no node is inserted."""
    F, H = onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16
    keep = set()
    for node in model.graph.node:
        for i in FP32_INPUTS.get(node.op_type, ()):
            if i < len(node.input):
                keep.add(node.input[i])

    def half_tensor(t):
        if t.data_type == F and t.name not in keep:
            t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float16), t.name))

    for t in model.graph.initializer:
        half_tensor(t)
    for node in model.graph.node:
        for a in node.attribute:
            if a.name == "to" and node.op_type == "Cast" and a.i == F:
                a.i = H
            if a.type == onnx.AttributeProto.TENSOR and not any(o in keep for o in node.output):
                half_tensor(a.t)
    for v in list(model.graph.input) + list(model.graph.output) + list(model.graph.value_info):
        if v.type.tensor_type.elem_type == F and v.name not in keep:
            v.type.tensor_type.elem_type = H


def cast_weights(model):
    """Make the float32 ONNX model a mixed-precision one in place: every
    float32 initializer W is stored as float16 under the name W_fp16 and
    read through a Cast to float32 named W_cast, which writes W; the
    activations, inputs and outputs stay float32."""
    F = onnx.TensorProto.FLOAT
    g = model.graph
    casts, inits = [], []
    for t in g.initializer:
        if t.data_type != F:
            inits.append(t)
            continue
        inits.append(numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float16), t.name + "_fp16"))
        casts.append(onnx.helper.make_node("Cast", [t.name + "_fp16"], [t.name], name=t.name + "_cast", to=F))
    del g.initializer[:]
    g.initializer.extend(inits)
    nodes = casts + list(g.node)
    del g.node[:]
    g.node.extend(nodes)


def keep_io_types(model):
    """Make the float32 ONNX model float16 in place as onnxconverter-common's
    convert_float_to_float16 does with keep_io_types: to_float16, then the
    float32 input is cast to float16 by a node graph_input_cast and the
    float16 result cast back to the float32 output by graph_output_cast,
    both appended at the end of the node list, out of topological order,
    as that converter writes them."""
    F, H = onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16
    to_float16(model)
    g = model.graph
    for n in g.node:
        n.input[:] = ["graph_input_cast_0" if x == "input" else x for x in n.input]
        n.output[:] = ["graph_output_cast_0" if x == "output" else x for x in n.output]
    for v in list(g.input) + list(g.output):
        v.type.tensor_type.elem_type = F
    g.node.append(onnx.helper.make_node("Cast", ["input"], ["graph_input_cast_0"], name="graph_input_cast", to=H))
    g.node.append(onnx.helper.make_node("Cast", ["graph_output_cast_0"], ["output"], name="graph_output_cast", to=F))


def export(name, out):
    os.makedirs(out, exist_ok=True)
    if MODELS[name] is export_decoder:
        tmp = tempfile.mkdtemp(prefix=f".{name}.", dir=out)
        os.chmod(tmp, 0o755)
        try:
            export_decoder(tmp, name)
            move_into_place(tmp, os.path.join(out, name))
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return
    model, x = MODELS[name]()
    model.eval()
    half = name in HALF
    if half:
        x = x.half().float()
    # The output is computed with autograd enabled, as during export: that
    # keeps PyTorch off its fused inference-only Transformer path, so the
    # reference is computed by the same operations the ONNX graph holds.
    y = model(x).detach()
    y2 = model(x).detach()
    if not torch.equal(y, y2):
        raise RuntimeError(f"{name}: evaluation is not deterministic")

    tmp = tempfile.mkdtemp(prefix=f".{name}.", dir=out)
    os.chmod(tmp, 0o755)
    try:
        torch.onnx.export(
            model, (x,), os.path.join(tmp, "model.onnx"),
            opset_version=OPSET, do_constant_folding=True,
            input_names=["input"], output_names=["output"], **LEGACY)
        if half:
            path = os.path.join(tmp, "model.onnx")
            os.rename(path, os.path.join(tmp, "model_fp32.onnx"))
            m = onnx.load(os.path.join(tmp, "model_fp32.onnx"))
            HALF[name][1](m)
            if not name.endswith("_keepio"):  # the checker wants topological order
                onnx.checker.check_model(m)
            onnx.save(m, path)
        np.save(os.path.join(tmp, "input.npy"), x.numpy().astype(np.float16) if name.endswith("_fp16") else x.numpy())
        np.save(os.path.join(tmp, "output.npy"), y.numpy())
        move_into_place(tmp, os.path.join(out, name))
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def move_into_place(tmp, dest):
    if os.path.exists(dest):
        shutil.rmtree(dest)
    os.rename(tmp, dest)


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
