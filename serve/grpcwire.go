package serve

import (
	"fmt"

	"github.com/onnxvk/onnxvk/serve/kservepb"
)

// This file converts between the protocol's types and gRPC's messages of
// grpc_predict_v2.proto, both ways: the server decodes requests and encodes
// responses, the client the reverse.

// ParametersFromProto converts gRPC's parameters.
func ParametersFromProto(in map[string]*kservepb.InferParameter) Parameters {
	if len(in) == 0 {
		return nil
	}
	out := make(Parameters, len(in))
	for k, p := range in {
		switch v := p.GetParameterChoice().(type) {
		case *kservepb.InferParameter_BoolParam:
			out[k] = v.BoolParam
		case *kservepb.InferParameter_Int64Param:
			out[k] = v.Int64Param
		case *kservepb.InferParameter_StringParam:
			out[k] = v.StringParam
		}
	}
	return out
}

// ParametersToProto converts parameters for gRPC, which carries bools,
// int64s and strings: a uint64 goes as an int64 when it fits, a float64 that
// is a whole number as an int64, anything else as its text.
func ParametersToProto(in Parameters) map[string]*kservepb.InferParameter {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]*kservepb.InferParameter, len(in))
	for k, v := range in {
		p := &kservepb.InferParameter{}
		switch x := v.(type) {
		case bool:
			p.ParameterChoice = &kservepb.InferParameter_BoolParam{BoolParam: x}
		case int64:
			p.ParameterChoice = &kservepb.InferParameter_Int64Param{Int64Param: x}
		case string:
			p.ParameterChoice = &kservepb.InferParameter_StringParam{StringParam: x}
		default:
			if n, ok, err := (Parameters{k: v}).Int64(k); ok && err == nil {
				p.ParameterChoice = &kservepb.InferParameter_Int64Param{Int64Param: n}
			} else {
				p.ParameterChoice = &kservepb.InferParameter_StringParam{StringParam: fmt.Sprint(v)}
			}
		}
		out[k] = p
	}
	return out
}

// contentsField names the field of InferTensorContents that carries a
// datatype's elements; "" for FP16 and BF16, which travel only raw.
func contentsField(datatype string) string {
	switch datatype {
	case "BOOL":
		return "bool_contents"
	case "INT8", "INT16", "INT32":
		return "int_contents"
	case "INT64":
		return "int64_contents"
	case "UINT8", "UINT16", "UINT32":
		return "uint_contents"
	case "UINT64":
		return "uint64_contents"
	case "FP32":
		return "fp32_contents"
	case "FP64":
		return "fp64_contents"
	case "BYTES":
		return "bytes_contents"
	}
	return ""
}

// contentsData returns the elements of c for a tensor of datatype, as
// RequestTensor.Data takes them, and fails where they are in another field
// than the datatype's or where the datatype has no field (FP16, BF16).
func contentsData(what, datatype string, c *kservepb.InferTensorContents) (any, error) {
	used := map[string]int{
		"bool_contents": len(c.GetBoolContents()), "int_contents": len(c.GetIntContents()),
		"int64_contents": len(c.GetInt64Contents()), "uint_contents": len(c.GetUintContents()),
		"uint64_contents": len(c.GetUint64Contents()), "fp32_contents": len(c.GetFp32Contents()),
		"fp64_contents": len(c.GetFp64Contents()), "bytes_contents": len(c.GetBytesContents()),
	}
	field := contentsField(datatype)
	if field == "" {
		if _, known := DType(datatype); known {
			return nil, Errorf(CodeInvalidArgument, "%s: %s data must be sent in raw contents", what, datatype)
		}
		return nil, Errorf(CodeInvalidArgument, "%s: unknown datatype %q", what, datatype)
	}
	for f, n := range used {
		if f != field && n > 0 {
			return nil, Errorf(CodeInvalidArgument, "%s: %s data in %s, want %s", what, datatype, f, field)
		}
	}
	switch field {
	case "bool_contents":
		return nonNil(c.GetBoolContents()), nil
	case "int_contents":
		return nonNil(c.GetIntContents()), nil
	case "int64_contents":
		return nonNil(c.GetInt64Contents()), nil
	case "uint_contents":
		return nonNil(c.GetUintContents()), nil
	case "uint64_contents":
		return nonNil(c.GetUint64Contents()), nil
	case "fp32_contents":
		return nonNil(c.GetFp32Contents()), nil
	case "fp64_contents":
		return nonNil(c.GetFp64Contents()), nil
	}
	return nonNil(c.GetBytesContents()), nil
}

// InferRequestFromProto converts a ModelInferRequest. Inputs take their
// elements from raw_input_contents, one entry per input in order, or from
// each input's typed contents; mixing the two is an error.
func InferRequestFromProto(m *kservepb.ModelInferRequest) (*InferRequest, error) {
	req := &InferRequest{
		ModelName:    m.GetModelName(),
		ModelVersion: m.GetModelVersion(),
		ID:           m.GetId(),
		Parameters:   ParametersFromProto(m.GetParameters()),
	}
	raw := m.GetRawInputContents()
	if len(raw) > 0 && len(raw) != len(m.GetInputs()) {
		return nil, Errorf(CodeInvalidArgument, "model %q: %d raw_input_contents for %d inputs, want one per input",
			m.GetModelName(), len(raw), len(m.GetInputs()))
	}
	for i, in := range m.GetInputs() {
		t := RequestTensor{
			Name:       in.GetName(),
			Datatype:   in.GetDatatype(),
			Shape:      nonNil(in.GetShape()),
			Parameters: ParametersFromProto(in.GetParameters()),
		}
		what := fmt.Sprintf("model %q: input %q", m.GetModelName(), in.GetName())
		switch {
		case len(raw) > 0 && in.GetContents() != nil:
			return nil, Errorf(CodeInvalidArgument, "%s: contents given beside raw_input_contents", what)
		case len(raw) > 0:
			t.Raw = nonNil(raw[i])
		case in.GetContents() == nil:
			return nil, Errorf(CodeInvalidArgument, "%s: no contents and no raw_input_contents", what)
		default:
			data, err := contentsData(what, t.Datatype, in.GetContents())
			if err != nil {
				return nil, err
			}
			t.Data = data
		}
		req.Inputs = append(req.Inputs, t)
	}
	for _, o := range m.GetOutputs() {
		req.Outputs = append(req.Outputs, RequestedOutput{Name: o.GetName(), Parameters: ParametersFromProto(o.GetParameters())})
	}
	return req, nil
}

// InferRequestToProto converts a request for gRPC. With raw set, or
// where an input is FP16 or BF16 (which have no typed contents), every
// input goes in raw_input_contents (its Raw, or its Data converted);
// otherwise as typed contents, from its Data or Raw.
func InferRequestToProto(req *InferRequest, raw bool) (*kservepb.ModelInferRequest, error) {
	m := &kservepb.ModelInferRequest{
		ModelName:    req.ModelName,
		ModelVersion: req.ModelVersion,
		Id:           req.ID,
		Parameters:   ParametersToProto(req.Parameters),
	}
	for _, in := range req.Inputs {
		if contentsField(in.Datatype) == "" {
			raw = true
		}
	}
	for i := range req.Inputs {
		in := &req.Inputs[i]
		p := &kservepb.ModelInferRequest_InferInputTensor{
			Name: in.Name, Datatype: in.Datatype, Shape: in.Shape, Parameters: ParametersToProto(in.Parameters),
		}
		m.Inputs = append(m.Inputs, p)
		if raw && in.Raw != nil {
			m.RawInputContents = append(m.RawInputContents, in.Raw)
			continue
		}
		t, err := in.Tensor()
		if err != nil {
			return nil, err
		}
		rt, err := NewResponseTensor(in.Name, t, nil)
		if err != nil {
			return nil, err
		}
		if raw {
			m.RawInputContents = append(m.RawInputContents, rt.Raw())
		} else if p.Contents, err = tensorContents(&rt); err != nil {
			return nil, err
		}
	}
	for _, o := range req.Outputs {
		m.Outputs = append(m.Outputs, &kservepb.ModelInferRequest_InferRequestedOutputTensor{
			Name: o.Name, Parameters: ParametersToProto(o.Parameters),
		})
	}
	return m, nil
}

// tensorContents gives a tensor's elements as typed contents; FP16 and
// BF16 have none.
func tensorContents(t *ResponseTensor) (*kservepb.InferTensorContents, error) {
	c := &kservepb.InferTensorContents{}
	switch v := t.Values().(type) {
	case []bool:
		c.BoolContents = v
	case []float32:
		c.Fp32Contents = v
	case []string:
		c.BytesContents = make([][]byte, len(v))
		for i, s := range v {
			c.BytesContents[i] = []byte(s)
		}
	case []float64:
		if t.Datatype != "FP64" {
			return nil, Errorf(CodeInvalidArgument, "tensor %q: %s data has no typed contents, only raw", t.Name, t.Datatype)
		}
		c.Fp64Contents = v
	case []int64:
		if t.Datatype == "INT64" {
			c.Int64Contents = v
			break
		}
		c.IntContents = make([]int32, len(v))
		for i, x := range v {
			c.IntContents[i] = int32(x)
		}
	case []uint64:
		if t.Datatype == "UINT64" {
			c.Uint64Contents = v
			break
		}
		c.UintContents = make([]uint32, len(v))
		for i, x := range v {
			c.UintContents[i] = uint32(x)
		}
	}
	return c, nil
}

// InferResponseToProto converts a response for gRPC: as raw_output_contents
// when raw is set or an output is FP16 or BF16 (which have no typed
// contents), else as typed contents.
func InferResponseToProto(resp *InferResponse, raw bool) (*kservepb.ModelInferResponse, error) {
	m := &kservepb.ModelInferResponse{
		ModelName:    resp.ModelName,
		ModelVersion: resp.ModelVersion,
		Id:           resp.ID,
		Parameters:   ParametersToProto(resp.Parameters),
	}
	for i := range resp.Outputs {
		if contentsField(resp.Outputs[i].Datatype) == "" {
			raw = true
		}
	}
	for i := range resp.Outputs {
		o := &resp.Outputs[i]
		p := &kservepb.ModelInferResponse_InferOutputTensor{Name: o.Name, Datatype: o.Datatype, Shape: o.Shape}
		if raw {
			m.RawOutputContents = append(m.RawOutputContents, o.Raw())
		} else {
			c, err := tensorContents(o)
			if err != nil {
				return nil, err
			}
			p.Contents = c
		}
		m.Outputs = append(m.Outputs, p)
	}
	return m, nil
}

// InferResponseFromProto converts a ModelInferResponse, the outputs'
// elements from raw_output_contents or typed contents, checked against
// their datatype and shape.
func InferResponseFromProto(m *kservepb.ModelInferResponse) (*InferResponse, error) {
	resp := &InferResponse{
		ModelName:    m.GetModelName(),
		ModelVersion: m.GetModelVersion(),
		ID:           m.GetId(),
		Parameters:   ParametersFromProto(m.GetParameters()),
	}
	raw := m.GetRawOutputContents()
	if len(raw) > 0 && len(raw) != len(m.GetOutputs()) {
		return nil, fmt.Errorf("model %q: %d raw_output_contents for %d outputs", m.GetModelName(), len(raw), len(m.GetOutputs()))
	}
	for i, o := range m.GetOutputs() {
		rt := RequestTensor{Name: o.GetName(), Datatype: o.GetDatatype(), Shape: nonNil(o.GetShape())}
		what := fmt.Sprintf("model %q: output %q", m.GetModelName(), o.GetName())
		if len(raw) > 0 {
			rt.Raw = nonNil(raw[i])
		} else {
			data, err := contentsData(what, rt.Datatype, o.GetContents())
			if err != nil {
				return nil, err
			}
			rt.Data = data
		}
		t, err := rt.Tensor()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out, err := NewResponseTensor(o.GetName(), t, ParametersFromProto(o.GetParameters()))
		if err != nil {
			return nil, err
		}
		resp.Outputs = append(resp.Outputs, out)
	}
	return resp, nil
}
