#!/usr/bin/python3
"""Writes the reference cases of the opset 23-24 transformer ops.

numpy implementations of Attention, RMSNormalization, RotaryEmbedding and
TensorScatter written from the ONNX spec text (docs/Changelog.md of ONNX
1.19 with the errata of the ONNX main branch that ONNX Runtime follows:
softcap before the mask, qk_matmul_output_mode 1 = softcapped, 2 = masked,
bottom-right causal alignment, fully masked rows giving zeros), computing in
float64. For each case, cases/NAME/in_I.npy and out_I.npy, and cases.json
listing the op, opset, attributes, inputs (null: absent) and outputs
(null: not asked for). Also two Llama-style decoder blocks,
decoder23.onnx (3-D Attention and RotaryEmbedding) and decoder24.onnx
(4-D, opset 24), with two steps each (a prompt after a short cache, then
one token) in decoderNN/.

Run from this directory: /usr/bin/python3 gen.py
"""
import json
import os
import shutil

import numpy as np

rng = np.random.default_rng(24)
F32 = np.float32


def rand(*shape):
    return rng.standard_normal(shape).astype(F32)


def round_to(x, precision):
    """Rounds float64 x to the ONNX element type precision (10 float16, 16 bfloat16)."""
    if precision == 10:
        return x.astype(np.float16).astype(np.float64)
    if precision == 16:
        b = x.astype(np.float32).view(np.uint32).astype(np.uint64)
        b = (b + 0x7FFF + ((b >> 16) & 1)) >> 16 << 16
        return b.astype(np.uint32).view(np.float32).astype(np.float64)
    return x


def attention(Q, K, V, mask=None, past_k=None, past_v=None, nonpad=None, is_causal=0, q_num_heads=None,
              kv_num_heads=None, qk_matmul_output_mode=0, scale=None, softcap=0.0, softmax_precision=None):
    three = Q.ndim == 3
    B = Q.shape[0]
    q, k, v = (t.astype(np.float64) for t in (Q, K, V))
    if three:
        q = q.reshape(B, q.shape[1], q_num_heads, -1).transpose(0, 2, 1, 3)
        k = k.reshape(B, k.shape[1], kv_num_heads, -1).transpose(0, 2, 1, 3)
        v = v.reshape(B, v.shape[1], kv_num_heads, -1).transpose(0, 2, 1, 3)
    hq, sq, d = q.shape[1], q.shape[2], q.shape[3]
    hkv = k.shape[1]
    past = 0
    if past_k is not None:
        past = past_k.shape[2]
        k = np.concatenate([past_k.astype(np.float64), k], axis=2)
        v = np.concatenate([past_v.astype(np.float64), v], axis=2)
    present_k, present_v = k, v
    t = k.shape[2]
    if scale is None:
        scale = 1 / np.sqrt(d)
    group = hq // hkv
    # Query head h reads key/value head h // group.
    k = np.repeat(k, group, axis=1)
    v = np.repeat(v, group, axis=1)
    s = np.einsum("bhid,bhjd->bhij", q, k) * scale
    raw = s.copy()
    if softcap > 0:
        s = softcap * np.tanh(s / softcap)
    capped = s.copy()
    bias = np.zeros((B, hq, sq, t))
    if mask is not None:
        keys = mask.shape[-1]
        if mask.dtype == np.bool_:
            mb = np.where(mask, 0.0, -np.inf)
        else:
            mb = mask.astype(np.float64)
        full = np.full(mb.shape[:-1] + (t,), -np.inf)
        full[..., :keys] = mb
        bias = bias + full
    i = np.arange(sq)[:, None]
    j = np.arange(t)[None, :]
    for b in range(B):
        offset = past
        if nonpad is not None:
            offset = nonpad[b] - sq
            bias[b, :, :, nonpad[b]:] = -np.inf
        if is_causal:
            bias[b] = bias[b] + np.where(j <= i + offset, 0.0, -np.inf)
    s = s + bias
    masked_out = s.copy()
    s = round_to(s, softmax_precision)
    dead = np.all(np.isneginf(bias), axis=-1, keepdims=True)
    m = np.max(np.where(dead, 0, s), axis=-1, keepdims=True)
    e = np.where(dead, 0, np.exp(s - m))
    p = e / np.where(dead, 1, e.sum(axis=-1, keepdims=True))
    p = round_to(p, softmax_precision)
    y = np.einsum("bhij,bhjd->bhid", p, v)
    if three:
        y = y.transpose(0, 2, 1, 3).reshape(B, sq, -1)
    qk = [raw, capped, masked_out, p][qk_matmul_output_mode]
    return [a.astype(F32) for a in (y, present_k, present_v, qk)]


def rms_norm(X, scale, axis=-1, epsilon=1e-5):
    x = X.astype(np.float64)
    axes = tuple(range(axis % x.ndim, x.ndim))
    r = np.sqrt(np.mean(x * x, axis=axes, keepdims=True) + epsilon)
    return (x / r * scale.astype(np.float64)).astype(F32)


def rotary(X, cos, sin, pos=None, interleaved=0, num_heads=0, rotary_embedding_dim=0):
    x = X.astype(np.float64)
    if x.ndim == 3:
        b, s, hidden = x.shape
        x = x.reshape(b, s, num_heads, hidden // num_heads)
    else:
        x = x.transpose(0, 2, 1, 3)  # [batch, seq, heads, head]
    rot = rotary_embedding_dim or x.shape[3]
    if pos is not None:
        c, sn = cos[pos], sin[pos]  # [batch, seq, rot/2]
    else:
        c, sn = cos, sin
    c = c.astype(np.float64)[:, :, None, :]
    sn = sn.astype(np.float64)[:, :, None, :]
    y = x.copy()
    if interleaved:
        idx1, idx2 = np.arange(0, rot, 2), np.arange(1, rot, 2)
    else:
        idx1, idx2 = np.arange(rot // 2), np.arange(rot // 2, rot)
    x1, x2 = x[..., idx1], x[..., idx2]
    y[..., idx1] = c * x1 - sn * x2
    y[..., idx2] = sn * x1 + c * x2
    if X.ndim == 3:
        return y.reshape(X.shape).astype(X.dtype)
    return y.transpose(0, 2, 1, 3).astype(X.dtype)


def tensor_scatter(past, update, write_indices=None, axis=-2, mode="linear"):
    axis %= past.ndim
    out = past.copy()
    n, length = update.shape[axis], past.shape[axis]
    w = np.zeros(past.shape[0], dtype=np.int64) if write_indices is None else write_indices
    for b in range(past.shape[0]):
        for s in range(n):
            at = w[b] + s
            if mode == "circular":
                at %= length
            dst = [b] + [slice(None)] * (past.ndim - 1)
            src = list(dst)
            dst[axis], src[axis] = at, s
            out[tuple(dst)] = update[tuple(src)]
    return out


cases = []


def case(name, op, opset, attrs, inputs, outputs, gpu=True):
    """Records one case: inputs and outputs are lists of arrays or None."""
    d = os.path.join("cases", name)
    os.makedirs(d)

    def save(arrays, prefix):
        files = []
        for i, a in enumerate(arrays):
            files.append(None if a is None else f"{prefix}_{i}.npy")
            if a is not None:
                np.save(os.path.join(d, files[-1]), a)
        return files

    ins, outs = save(inputs, "in"), save(outputs, "out")
    enc = {}
    for k, v in attrs.items():
        if isinstance(v, str):
            enc[k] = {"s": v}
        elif isinstance(v, float):
            enc[k] = {"f": v}
        else:
            enc[k] = {"i": int(v)}
    cases.append({"name": name, "op": op, "opset": opset, "attrs": enc, "inputs": ins, "outputs": outs, "gpu": gpu})


def attention_case(name, opset, inputs, attrs, want=(0,), gpu=True):
    full = list(inputs) + [None] * (7 - len(inputs))
    Q, K, V, mask, pk, pv, nonpad = full
    res = attention(Q, K, V, mask, pk, pv, nonpad, **attrs)
    outs = [res[i] if i in want else None for i in range(4)]
    while outs[-1] is None:
        outs.pop()
    case(name, "Attention", opset, attrs, inputs, outs, gpu)


def main():
    shutil.rmtree("cases", ignore_errors=True)
    # Attention.
    attention_case("attention_4d", 23, [rand(2, 2, 3, 4), rand(2, 2, 5, 4), rand(2, 2, 5, 4)], {})
    attention_case("attention_4d_gqa_causal_past", 23,
                   [rand(1, 4, 2, 4), rand(1, 2, 2, 4), rand(1, 2, 2, 6), None, rand(1, 2, 3, 4), rand(1, 2, 3, 6)],
                   {"is_causal": 1}, want=(0, 1, 2))
    bool_mask = rng.random((2, 1, 3, 3)) > 0.3
    bool_mask[1, 0, 2, :] = False  # a fully masked row gives zeros
    attention_case("attention_3d_mqa_bool_mask", 23, [rand(2, 3, 8), rand(2, 3, 2), rand(2, 3, 2), bool_mask],
                   {"q_num_heads": 4, "kv_num_heads": 1})
    for mode in range(4):
        attention_case(f"attention_3d_float_mask_softcap_mode{mode}", 23,
                       [rand(1, 3, 8), rand(1, 4, 8), rand(1, 4, 4), rand(3, 4)],
                       {"q_num_heads": 2, "kv_num_heads": 2, "softcap": 2.0, "scale": 0.3,
                        "qk_matmul_output_mode": mode}, want=(0, 3))
    attention_case("attention_3d_decode_causal_bool_mask_past", 23,
                   [rand(2, 1, 8), rand(2, 1, 4), rand(2, 1, 4), rng.random((2, 1, 1, 5)) > 0.2,
                    rand(2, 2, 4, 2), rand(2, 2, 4, 2)],
                   {"q_num_heads": 4, "kv_num_heads": 2, "is_causal": 1}, want=(0, 1, 2, 3))
    attention_case("attention_4d_short_mask", 23, [rand(1, 2, 2, 4), rand(1, 2, 5, 4), rand(1, 2, 5, 4), rand(1, 1, 2, 3)],
                   {"qk_matmul_output_mode": 3}, want=(0, 3))
    attention_case("attention_4d_softmax_fp16", 23, [rand(1, 2, 3, 4), rand(1, 2, 3, 4), rand(1, 2, 3, 4)],
                   {"softmax_precision": 10})
    attention_case("attention_4d_nonpad_causal", 24,
                   [rand(2, 2, 2, 4), rand(2, 2, 6, 4), rand(2, 2, 6, 4), None, None, None, np.array([4, 6], np.int64)],
                   {"is_causal": 1}, want=(0, 3))
    attention_case("attention_3d_nonpad_mode3", 24,
                   [rand(2, 2, 4), rand(2, 5, 4), rand(2, 5, 4), None, None, None, np.array([0, 3], np.int64)],
                   {"q_num_heads": 1, "kv_num_heads": 1, "qk_matmul_output_mode": 3}, want=(0, 3))
    # RMSNormalization.
    x = rand(2, 3, 8)
    w = rand(8)
    case("rms_norm_last", "RMSNormalization", 23, {}, [x, w], [rms_norm(x, w)])
    w2 = rand(3, 8)
    case("rms_norm_axis1", "RMSNormalization", 23, {"axis": 1, "epsilon": 0.1}, [x, w2], [rms_norm(x, w2, 1, 0.1)])
    w3 = rand(1, 8)
    case("rms_norm_broadcast_scale", "RMSNormalization", 23, {"axis": -2}, [x, w3], [rms_norm(x, w3, -2)])
    # RotaryEmbedding.
    angles = rng.random((2, 3, 4)) * 6
    cos3, sin3 = np.cos(angles).astype(F32), np.sin(angles).astype(F32)
    x4 = rand(2, 2, 3, 8)
    case("rotary_4d", "RotaryEmbedding", 23, {}, [x4, cos3, sin3], [rotary(x4, cos3, sin3)])
    case("rotary_4d_interleaved", "RotaryEmbedding", 23, {"interleaved": 1}, [x4, cos3, sin3],
         [rotary(x4, cos3, sin3, interleaved=1)])
    table = rng.random((10, 2)) * 6
    cos2, sin2 = np.cos(table).astype(F32), np.sin(table).astype(F32)
    pos = rng.integers(0, 10, (2, 3)).astype(np.int64)
    x3 = rand(2, 3, 12)
    for inter in (0, 1):
        attrs = {"num_heads": 2, "rotary_embedding_dim": 4, "interleaved": inter}
        case(f"rotary_3d_partial_positions_i{inter}", "RotaryEmbedding", 23, attrs, [x3, cos2, sin2, pos],
             [rotary(x3, cos2, sin2, pos, inter, 2, 4)])
    # TensorScatter.
    past, upd = rand(2, 2, 6, 3), rand(2, 2, 2, 3)
    wi = np.array([1, 4], np.int64)
    case("tensor_scatter_linear", "TensorScatter", 24, {}, [past, upd, wi], [tensor_scatter(past, upd, wi)])
    wc = np.array([5, 2], np.int64)
    case("tensor_scatter_circular", "TensorScatter", 24, {"mode": "circular"}, [past, upd, wc],
         [tensor_scatter(past, upd, wc, mode="circular")])
    p3, u3 = rand(2, 5, 4), rand(2, 3, 4)
    case("tensor_scatter_axis1", "TensorScatter", 24, {"axis": 1}, [p3, u3], [tensor_scatter(p3, u3, axis=1)])
    pi, ui = rng.integers(-9, 9, (1, 4, 2)).astype(np.int32), rng.integers(-9, 9, (1, 1, 2)).astype(np.int32)
    wi1 = np.array([3], np.int64)
    case("tensor_scatter_int32", "TensorScatter", 24, {"axis": 1}, [pi, ui, wi1], [tensor_scatter(pi, ui, wi1, 1)],
         gpu=False)
    with open("cases.json", "w") as f:
        json.dump(cases, f, indent=1)
        f.write("\n")
    decoders()


# The decoder blocks: hidden 32, 4 query heads and 2 key/value heads of 8.
E, HQ, HKV, D, FF, POS = 32, 4, 2, 8, 64, 16


def decoder_weights():
    w = {
        "norm1": (1 + 0.1 * rand(E)), "norm2": (1 + 0.1 * rand(E)),
        "wq": rand(E, HQ * D) * 0.2, "wk": rand(E, HKV * D) * 0.2, "wv": rand(E, HKV * D) * 0.2,
        "wo": rand(HQ * D, E) * 0.2, "wg": rand(E, FF) * 0.2, "wu": rand(E, FF) * 0.2, "wd": rand(FF, E) * 0.2,
    }
    inv = 1 / (10000 ** (np.arange(0, D, 2) / D))
    ang = np.arange(POS)[:, None] * inv[None, :]
    w["cos"], w["sin"] = np.cos(ang).astype(F32), np.sin(ang).astype(F32)
    return {k: v.astype(F32) for k, v in w.items()}


def decoder_reference(w, x, past_k, past_v, pos):
    """The decoder block in numpy; returns y, present_key, present_value."""
    h = rms_norm(x, w["norm1"], -1, 1e-6)
    q, k, v = h @ w["wq"], h @ w["wk"], h @ w["wv"]
    q = rotary(q, w["cos"], w["sin"], pos, num_heads=HQ)
    k = rotary(k, w["cos"], w["sin"], pos, num_heads=HKV)
    a, pk, pv, _ = attention(q, k, v, None, past_k, past_v, is_causal=1, q_num_heads=HQ, kv_num_heads=HKV)
    x2 = x + a @ w["wo"]
    h2 = rms_norm(x2, w["norm2"], -1, 1e-6)
    g, u = h2.astype(np.float64) @ w["wg"], h2.astype(np.float64) @ w["wu"]
    act = g / (1 + np.exp(-g)) * u
    return (x2 + act @ w["wd"]).astype(F32), pk, pv


def decoder_model(w, opset):
    """The block as an ONNX model: 3-D Attention and RotaryEmbedding at
    opset 23, the 4-D forms (heads split by Reshape and Transpose) at 24."""
    from onnx import TensorProto, helper, numpy_helper

    n = helper.make_node
    nodes = [
        n("RMSNormalization", ["x", "norm1"], ["h"], epsilon=1e-6),
        n("MatMul", ["h", "wq"], ["q"]), n("MatMul", ["h", "wk"], ["k"]), n("MatMul", ["h", "wv"], ["v"]),
    ]
    inits = dict(w)
    if opset == 23:
        nodes += [
            n("RotaryEmbedding", ["q", "cos", "sin", "position_ids"], ["qr"], num_heads=HQ),
            n("RotaryEmbedding", ["k", "cos", "sin", "position_ids"], ["kr"], num_heads=HKV),
            n("Attention", ["qr", "kr", "v", "", "past_key", "past_value"], ["a", "present_key", "present_value"],
              is_causal=1, q_num_heads=HQ, kv_num_heads=HKV),
        ]
    else:
        inits["qshape"] = np.array([0, 0, HQ, D], np.int64)
        inits["kvshape"] = np.array([0, 0, HKV, D], np.int64)
        inits["ashape"] = np.array([0, 0, HQ * D], np.int64)
        for t, shape in (("q", "qshape"), ("k", "kvshape"), ("v", "kvshape")):
            nodes += [n("Reshape", [t, shape], [t + "4"]), n("Transpose", [t + "4"], [t + "h"], perm=[0, 2, 1, 3])]
        nodes += [
            n("RotaryEmbedding", ["qh", "cos", "sin", "position_ids"], ["qr"]),
            n("RotaryEmbedding", ["kh", "cos", "sin", "position_ids"], ["kr"]),
            n("Attention", ["qr", "kr", "vh", "", "past_key", "past_value"], ["ah", "present_key", "present_value"],
              is_causal=1),
            n("Transpose", ["ah"], ["at"], perm=[0, 2, 1, 3]), n("Reshape", ["at", "ashape"], ["a"]),
        ]
    nodes += [
        n("MatMul", ["a", "wo"], ["o"]), n("Add", ["x", "o"], ["x2"]),
        n("RMSNormalization", ["x2", "norm2"], ["h2"], epsilon=1e-6),
        n("MatMul", ["h2", "wg"], ["g"]), n("MatMul", ["h2", "wu"], ["u"]),
        n("Sigmoid", ["g"], ["gs"]), n("Mul", ["g", "gs"], ["silu"]), n("Mul", ["silu", "u"], ["act"]),
        n("MatMul", ["act", "wd"], ["down"]), n("Add", ["x2", "down"], ["y"]),
    ]
    f = TensorProto.FLOAT
    inputs = [
        helper.make_tensor_value_info("x", f, ["batch", "seq", E]),
        helper.make_tensor_value_info("past_key", f, ["batch", HKV, "past", D]),
        helper.make_tensor_value_info("past_value", f, ["batch", HKV, "past", D]),
        helper.make_tensor_value_info("position_ids", TensorProto.INT64, ["batch", "seq"]),
    ]
    outputs = [
        helper.make_tensor_value_info("y", f, ["batch", "seq", E]),
        helper.make_tensor_value_info("present_key", f, ["batch", HKV, "total", D]),
        helper.make_tensor_value_info("present_value", f, ["batch", HKV, "total", D]),
    ]
    graph = helper.make_graph(nodes, f"llama_block_opset{opset}", inputs, outputs,
                              [numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="gen.py")
    model.ir_version = 10
    return model.SerializeToString()


def decoders():
    for opset in (23, 24):
        w = decoder_weights()
        d = f"decoder{opset}"
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        with open(f"decoder{opset}.onnx", "wb") as f:
            f.write(decoder_model(w, opset))
        # Step 0: a prompt of 4 tokens after 3 cached positions; step 1:
        # one token after the 7.
        pk, pv = rand(2, HKV, 3, D), rand(2, HKV, 3, D)
        for step, (seq, start) in enumerate(((4, 3), (1, 7))):
            x = rand(2, seq, E)
            pos = np.tile(np.arange(start, start + seq, dtype=np.int64), (2, 1))
            y, pk2, pv2 = decoder_reference(w, x, pk, pv, pos)
            for name, a in (("x", x), ("past_key", pk), ("past_value", pv), ("position_ids", pos), ("y", y),
                            ("present_key", pk2.astype(F32)), ("present_value", pv2.astype(F32))):
                np.save(os.path.join(d, f"step{step}_{name}.npy"), a)
            pk, pv = pk2.astype(F32), pv2.astype(F32)


if __name__ == "__main__":
    main()
