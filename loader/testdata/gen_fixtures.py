#!/usr/bin/python3
"""Writes the loader's test fixtures with the reference onnx Python package.

numpy/<name>.pb: TensorProtos made by onnx.numpy_helper.from_array (raw_data)
and onnx.helper.make_tensor (typed fields); numpy/expected.json holds their
values. pymodel/: a model with a local function, an If subgraph, a sparse
initializer and its weights in external data written by onnx.save_model.

Run from this folder: /usr/bin/python3 gen_fixtures.py (onnx 1.12 was used).
"""
import json
import math
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

os.makedirs("numpy", exist_ok=True)
os.makedirs("pymodel", exist_ok=True)
expected = {}


def jsonable(v):
    if isinstance(v, (complex, np.complexfloating)):
        return [jsonable(v.real), jsonable(v.imag)]
    if isinstance(v, (bytes, np.bytes_)):
        return v.decode()
    if isinstance(v, str):
        return v
    f = float(v)
    if math.isnan(f):
        return "nan"
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    return f


def save(name, tensor, values):
    with open(f"numpy/{name}.pb", "wb") as f:
        f.write(tensor.SerializeToString())
    arr = np.asarray(values)
    expected[name] = {
        "data_type": tensor.data_type,
        "dims": list(tensor.dims),
        "values": [jsonable(v) for v in arr.reshape(-1).tolist()],
    }


rng = np.random.default_rng(7)
special = [0.0, -0.0, 1.5, -2.25, float("inf"), float("-inf"), float("nan"), 65504.0]
arrays = {
    "float32": np.array(special, dtype=np.float32).reshape(2, 4),
    "float64": np.array(special + [1e300], dtype=np.float64),
    "float16": np.array(special, dtype=np.float16),
    "int8": np.array([-128, -1, 0, 127], dtype=np.int8),
    "uint8": np.array([0, 1, 255], dtype=np.uint8),
    "int16": np.array([-32768, 7, 32767], dtype=np.int16),
    "uint16": np.array([0, 65535], dtype=np.uint16),
    "int32": rng.integers(-(2**31), 2**31, size=(3, 2), dtype=np.int32),
    "int64": np.array([-(2**63), 2**40, 5], dtype=np.int64),
    "uint32": np.array([0, 2**32 - 1], dtype=np.uint32),
    "uint64": np.array([0, 2**64 - 1], dtype=np.uint64),
    "bool": np.array([[True, False], [False, True]]),
    "complex64": np.array([1 + 2j, -3.5 - 0.5j], dtype=np.complex64),
    "complex128": np.array([1e100 - 1j], dtype=np.complex128),
    "scalar": np.array(3.25, dtype=np.float32),
    "empty": np.zeros((0, 3), dtype=np.float32),
}
for name, arr in arrays.items():
    save("raw_" + name, numpy_helper.from_array(arr, name), arr)
save("raw_string", numpy_helper.from_array(np.array(["a", "héllo", ""], dtype=object), "s"), ["a", "héllo", ""])

typed = {
    "float32": TensorProto.FLOAT,
    "float64": TensorProto.DOUBLE,
    "float16": TensorProto.FLOAT16,
    "int8": TensorProto.INT8,
    "uint8": TensorProto.UINT8,
    "int16": TensorProto.INT16,
    "uint16": TensorProto.UINT16,
    "int32": TensorProto.INT32,
    "int64": TensorProto.INT64,
    "uint32": TensorProto.UINT32,
    "uint64": TensorProto.UINT64,
    "bool": TensorProto.BOOL,
    "complex64": TensorProto.COMPLEX64,
    "complex128": TensorProto.COMPLEX128,
}
for name, dt in typed.items():
    arr = arrays[name]
    t = helper.make_tensor("t_" + name, dt, arr.shape, arr.reshape(-1).tolist(), raw=False)
    save("typed_" + name, t, arr)
bf = [1.0, -2.0, 0.15625, 3e38]
t = helper.make_tensor("t_bf16", TensorProto.BFLOAT16, [4], bf, raw=False)
save("typed_bfloat16", t, [float(np.float32(numpy_helper.to_array(t)[i])) for i in range(4)])
save("typed_string", helper.make_tensor("t_s", TensorProto.STRING, [2], [b"x", b"yz"]), ["x", "yz"])

with open("numpy/expected.json", "w") as f:
    json.dump(expected, f, indent=1, sort_keys=True)

# A whole model: y = ScaledRelu(x) + If(cond, then: w1, else: w2) + dense(sp)
fn = helper.make_function(
    "custom.fn", "ScaledRelu", ["X"], ["Y"],
    [helper.make_node("LeakyRelu", ["X"], ["T"], alpha=0.5),
     helper.make_node("Relu", ["T"], ["Y"])],
    [helper.make_opsetid("", 15)], [],
)
then_g = helper.make_graph([helper.make_node("Identity", ["w1"], ["r1"])], "then", [],
                           [helper.make_tensor_value_info("r1", TensorProto.FLOAT, [4])])
else_g = helper.make_graph([helper.make_node("Identity", ["w2"], ["r2"])], "else", [],
                           [helper.make_tensor_value_info("r2", TensorProto.FLOAT, [4])])
sp = helper.make_sparse_tensor(
    numpy_helper.from_array(np.array([5.0, 6.0], dtype=np.float32), "sp"),
    numpy_helper.from_array(np.array([1, 3], dtype=np.int64), "sp_idx"), [4])
nodes = [
    helper.make_node("ScaledRelu", ["x"], ["a"], domain="custom.fn"),
    helper.make_node("If", ["cond"], ["b"], then_branch=then_g, else_branch=else_g),
    helper.make_node("Add", ["a", "b"], ["y"]),
]
g = helper.make_graph(
    nodes, "main",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N"]),
     helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N"])],
    initializer=[numpy_helper.from_array(np.arange(4, dtype=np.float32), "w1"),
                 numpy_helper.from_array(np.arange(4, dtype=np.float32) * -1, "w2"),
                 numpy_helper.from_array(np.arange(1000, dtype=np.float32), "big")],
    sparse_initializer=[sp],
)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 15), helper.make_opsetid("custom.fn", 1)],
                      functions=[fn], producer_name="gen_fixtures.py")
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save_model(m, "pymodel/model.onnx", save_as_external_data=True, all_tensors_to_one_file=True,
                location="model.data", size_threshold=1024)
