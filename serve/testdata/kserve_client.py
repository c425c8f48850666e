"""A client of the Open Inference Protocol written against the public
grpc_predict_v2.proto, whose stubs grpc_tools.protoc generated into the
folder given first. It asks a running server for a model's metadata, runs
ModelInfer on a .npy input twice (raw_input_contents, then typed
fp32_contents) and saves each output as OUT_DIR/<form>_<output name>.npy.

usage: kserve_client.py STUB_DIR ADDR MODEL INPUT_NAME INPUT.npy OUT_DIR
"""
import json
import os
import sys

stubs, addr, model, input_name, input_path, out_dir = sys.argv[1:]
sys.path.insert(0, stubs)

import grpc  # noqa: E402
import numpy as np  # noqa: E402

import grpc_predict_v2_pb2 as pb  # noqa: E402
import grpc_predict_v2_pb2_grpc as pb_grpc  # noqa: E402

x = np.load(input_path).astype("<f4")
with grpc.insecure_channel(addr) as channel:
    stub = pb_grpc.GRPCInferenceServiceStub(channel)
    assert stub.ServerLive(pb.ServerLiveRequest(), timeout=30).live
    assert stub.ServerReady(pb.ServerReadyRequest(), timeout=30).ready
    assert stub.ModelReady(pb.ModelReadyRequest(name=model), timeout=30).ready
    meta = stub.ModelMetadata(pb.ModelMetadataRequest(name=model), timeout=30)
    report = {"inputs": [i.name for i in meta.inputs], "outputs": {}}
    for form in ("raw", "typed"):
        req = pb.ModelInferRequest(model_name=model, id="python-" + form)
        tensor = req.inputs.add(name=input_name, datatype="FP32", shape=list(x.shape))
        if form == "raw":
            req.raw_input_contents.append(x.tobytes())
        else:
            tensor.contents.fp32_contents.extend(x.ravel().tolist())
        resp = stub.ModelInfer(req, timeout=60)
        assert resp.id == "python-" + form, resp.id
        for i, out in enumerate(resp.outputs):
            assert out.datatype == "FP32", out.datatype
            if resp.raw_output_contents:
                y = np.frombuffer(resp.raw_output_contents[i], dtype="<f4")
            else:
                y = np.array(out.contents.fp32_contents, dtype="<f4")
            y = y.reshape(list(out.shape))
            np.save(os.path.join(out_dir, form + "_" + out.name + ".npy"), y)
            report["outputs"][form + "_" + out.name] = list(y.shape)
    try:
        stub.ModelInfer(pb.ModelInferRequest(model_name="no-such-model"), timeout=30)
        report["unknown_model"] = "OK"
    except grpc.RpcError as e:
        report["unknown_model"] = e.code().name
print(json.dumps(report))
