// Package serve is the core of `onnxvk serve`: a model repository of
// onnxvk sessions answering the Open Inference Protocol (the KServe v2
// protocol, also spoken by Triton, MLServer and OpenVINO Model Server),
// with dynamic batching, a bounded queue per model and Prometheus metrics.
// The frontends (HTTP/REST here, gRPC) translate their wire forms to the
// types of this file and call the Server's methods.
package serve

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net/http"

	"github.com/x448/float16"

	"github.com/onnxvk/onnxvk"
)

// Parameters are the protocol's free-form parameters of a request, a
// response, a tensor or a requested output. Values are bool, int64,
// uint64, float64 or string (the types gRPC's InferParameter carries);
// frontends decoding JSON store whole numbers as int64.
type Parameters map[string]any

// Bool returns the parameter key as a bool: false when absent, an error
// when of another type.
func (p Parameters) Bool(key string) (bool, error) {
	v, ok := p[key]
	if !ok {
		return false, nil
	}
	b, ok := v.(bool)
	if !ok {
		return false, Errorf(CodeInvalidArgument, "parameter %q must be a bool, got %v", key, v)
	}
	return b, nil
}

// Int64 returns the parameter key as an int64 and whether it is present;
// an error when it is not a whole number.
func (p Parameters) Int64(key string) (int64, bool, error) {
	v, ok := p[key]
	if !ok {
		return 0, false, nil
	}
	switch n := v.(type) {
	case int64:
		return n, true, nil
	case uint64:
		if n <= math.MaxInt64 {
			return int64(n), true, nil
		}
	case float64:
		if n == math.Trunc(n) && math.Abs(n) < 1<<63 {
			return int64(n), true, nil
		}
	}
	return 0, true, Errorf(CodeInvalidArgument, "parameter %q must be a whole number, got %v", key, v)
}

// InferRequest is an inference request ($inference_request on HTTP,
// ModelInferRequest on gRPC).
type InferRequest struct {
	ModelName    string
	ModelVersion string
	// ID is the client's request id, echoed in the response.
	ID         string
	Parameters Parameters
	Inputs     []RequestTensor
	// Outputs, when not empty, names the outputs to compute and return;
	// empty means all of the model's outputs.
	Outputs []RequestedOutput
}

// RequestTensor is an input tensor of a request ($request_input,
// ModelInferRequest.InferInputTensor).
type RequestTensor struct {
	Name       string
	Datatype   string
	Shape      []int64
	Parameters Parameters
	// The elements, in one of two forms. Raw is the binary form: little
	// endian, row major, BOOL one byte each, BYTES each element a 4-byte
	// little-endian length and its bytes (the HTTP binary tensor data
	// extension, gRPC's raw_input_contents). Otherwise Data is a slice of
	// the elements in row-major order: []bool, []int32, []int64, []uint32,
	// []uint64, []float32, []float64, [][]byte or []string, whichever
	// holds the datatype's values (FP16 and BF16 from []float32 or
	// []float64, rounded to nearest even; integers are range-checked).
	Raw  []byte
	Data any
}

// RequestedOutput names an output to return ($request_output,
// ModelInferRequest.InferRequestedOutputTensor).
type RequestedOutput struct {
	Name       string
	Parameters Parameters
}

// InferResponse is an inference response ($inference_response,
// ModelInferResponse).
type InferResponse struct {
	ModelName    string
	ModelVersion string
	ID           string
	Parameters   Parameters
	Outputs      []ResponseTensor
}

// ResponseTensor is an output tensor of a response. Tensor holds its
// elements; Raw and Values give them in the protocol's forms.
type ResponseTensor struct {
	Name     string
	Datatype string
	Shape    []int64
	// Parameters are the requested output's parameters (binary_data, ...),
	// for the frontend to act on.
	Parameters Parameters
	Tensor     *onnxvk.Tensor
}

// ServerMetadata is the server metadata response.
type ServerMetadata struct {
	Name       string
	Version    string
	Extensions []string
}

// ModelMetadata is the model metadata response.
type ModelMetadata struct {
	Name     string
	Versions []string
	Platform string
	Inputs   []TensorMetadata
	Outputs  []TensorMetadata
}

// TensorMetadata describes a model input or output: a dimension of -1 is
// of variable size.
type TensorMetadata struct {
	Name     string
	Datatype string
	Shape    []int64
}

// Code is a protocol status. Its values are gRPC's status codes, so that
// codes.Code(c) converts it; HTTPStatus gives the REST status.
type Code uint32

// The statuses the server returns.
const (
	CodeOK                 Code = 0
	CodeCanceled           Code = 1
	CodeUnknown            Code = 2
	CodeInvalidArgument    Code = 3
	CodeDeadlineExceeded   Code = 4
	CodeNotFound           Code = 5
	CodeResourceExhausted  Code = 8
	CodeFailedPrecondition Code = 9
	CodeUnimplemented      Code = 12
	CodeInternal           Code = 13
	CodeUnavailable        Code = 14
)

var codeNames = map[Code]string{
	CodeOK: "OK", CodeCanceled: "CANCELLED", CodeUnknown: "UNKNOWN",
	CodeInvalidArgument: "INVALID_ARGUMENT", CodeDeadlineExceeded: "DEADLINE_EXCEEDED",
	CodeNotFound: "NOT_FOUND", CodeResourceExhausted: "RESOURCE_EXHAUSTED",
	CodeFailedPrecondition: "FAILED_PRECONDITION", CodeUnimplemented: "UNIMPLEMENTED",
	CodeInternal: "INTERNAL", CodeUnavailable: "UNAVAILABLE",
}

// String returns gRPC's name of the code ("INVALID_ARGUMENT").
func (c Code) String() string {
	if n, ok := codeNames[c]; ok {
		return n
	}
	return fmt.Sprintf("CODE_%d", uint32(c))
}

// HTTPStatus returns the HTTP status of the code: 400 for a bad request,
// 404 for an unknown model, 429 when the queue is full, 503 when the
// server or model is not ready, 504 past the deadline, 499 when the client
// went away, 500 otherwise.
func (c Code) HTTPStatus() int {
	switch c {
	case CodeOK:
		return http.StatusOK
	case CodeInvalidArgument, CodeFailedPrecondition:
		return http.StatusBadRequest
	case CodeNotFound:
		return http.StatusNotFound
	case CodeResourceExhausted:
		return http.StatusTooManyRequests
	case CodeUnavailable:
		return http.StatusServiceUnavailable
	case CodeDeadlineExceeded:
		return http.StatusGatewayTimeout
	case CodeCanceled:
		return 499
	case CodeUnimplemented:
		return http.StatusNotImplemented
	}
	return http.StatusInternalServerError
}

// Error is an error with a protocol status.
type Error struct {
	Code Code
	Msg  string
	// Err is the cause, if any (errors.Is and As see it).
	Err error
}

func (e *Error) Error() string { return e.Msg }

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error of the code.
func Errorf(code Code, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	return &Error{Code: code, Msg: err.Error(), Err: errors.Unwrap(err)}
}

// CodeOf returns the status of err: an *Error's code, the code of a
// session error (bad input: INVALID_ARGUMENT; closed: UNAVAILABLE; out of
// memory: RESOURCE_EXHAUSTED; context ends: DEADLINE_EXCEEDED or
// CANCELLED), else INTERNAL.
func CodeOf(err error) Code {
	var e *Error
	switch {
	case err == nil:
		return CodeOK
	case errors.As(err, &e):
		return e.Code
	case errors.Is(err, onnxvk.ErrUnknownInput), errors.Is(err, onnxvk.ErrUnknownOutput),
		errors.Is(err, onnxvk.ErrMissingInput), errors.Is(err, onnxvk.ErrInputMismatch):
		return CodeInvalidArgument
	case errors.Is(err, onnxvk.ErrClosed):
		return CodeUnavailable
	case errors.Is(err, onnxvk.ErrOutOfMemory):
		return CodeResourceExhausted
	case errors.Is(err, context.DeadlineExceeded):
		return CodeDeadlineExceeded
	case errors.Is(err, context.Canceled):
		return CodeCanceled
	}
	return CodeInternal
}

// datatypes maps the protocol's datatype names to element types.
var datatypes = map[string]onnxvk.DType{
	"BOOL": onnxvk.Bool, "UINT8": onnxvk.Uint8, "UINT16": onnxvk.Uint16,
	"UINT32": onnxvk.Uint32, "UINT64": onnxvk.Uint64, "INT8": onnxvk.Int8,
	"INT16": onnxvk.Int16, "INT32": onnxvk.Int32, "INT64": onnxvk.Int64,
	"FP16": onnxvk.Float16, "FP32": onnxvk.Float32, "FP64": onnxvk.Float64,
	"BYTES": onnxvk.String, "BF16": onnxvk.BFloat16,
}

// DType returns the element type of a protocol datatype name.
func DType(datatype string) (onnxvk.DType, bool) {
	dt, ok := datatypes[datatype]
	return dt, ok
}

// Datatype returns the protocol's name of an element type, false for one
// the protocol cannot carry (complex numbers, 8-bit and 4-bit floats, ...).
func Datatype(dt onnxvk.DType) (string, bool) {
	for name, d := range datatypes {
		if d == dt {
			return name, true
		}
	}
	return "", false
}

// Tensor converts the request tensor to an onnxvk tensor, checking that
// its datatype is known, its shape valid and its elements as many as the
// shape holds.
func (t *RequestTensor) Tensor() (*onnxvk.Tensor, error) {
	dt, ok := DType(t.Datatype)
	if !ok {
		return nil, Errorf(CodeInvalidArgument, "input %q: unknown datatype %q", t.Name, t.Datatype)
	}
	n := int64(1)
	for _, d := range t.Shape {
		if d < 0 {
			return nil, Errorf(CodeInvalidArgument, "input %q: negative dimension in shape %v", t.Name, t.Shape)
		}
		if d > 0 && n > math.MaxInt32/d {
			return nil, Errorf(CodeInvalidArgument, "input %q: shape %v holds too many elements", t.Name, t.Shape)
		}
		n *= d
	}
	var (
		out *onnxvk.Tensor
		err error
	)
	switch {
	case t.Raw != nil && t.Data != nil:
		return nil, Errorf(CodeInvalidArgument, "input %q: both binary and listed data", t.Name)
	case t.Raw != nil && dt == onnxvk.String:
		var s []string
		if s, err = splitBytes(t.Raw, n); err == nil {
			out, err = onnxvk.NewStringTensor(t.Shape, s)
		}
	case t.Raw != nil:
		if want := dt.ByteSize(n); int64(len(t.Raw)) != want {
			return nil, Errorf(CodeInvalidArgument, "input %q: %d bytes of binary data for %s%v, want %d", t.Name, len(t.Raw), t.Datatype, t.Shape, want)
		}
		out, err = onnxvk.NewTensorBytes(dt, t.Shape, t.Raw)
	default:
		out, err = fromValues(dt, t.Shape, n, t.Data)
	}
	if err != nil {
		return nil, &Error{Code: CodeInvalidArgument, Msg: fmt.Sprintf("input %q: %v", t.Name, err), Err: err}
	}
	return out, nil
}

// splitBytes reads n length-prefixed BYTES elements.
func splitBytes(raw []byte, n int64) ([]string, error) {
	out := make([]string, 0, min(n, int64(len(raw)/4)))
	for len(raw) > 0 {
		if len(raw) < 4 {
			return nil, errors.New("BYTES data ends inside an element's length")
		}
		l := binary.LittleEndian.Uint32(raw)
		raw = raw[4:]
		if uint64(l) > uint64(len(raw)) {
			return nil, fmt.Errorf("BYTES element of %d bytes where %d remain", l, len(raw))
		}
		out = append(out, string(raw[:l]))
		raw = raw[l:]
	}
	if int64(len(out)) != n {
		return nil, fmt.Errorf("%d BYTES elements where the shape holds %d", len(out), n)
	}
	return out, nil
}

// fromValues builds a tensor of dt from a slice of listed values.
func fromValues(dt onnxvk.DType, shape []int64, n int64, data any) (*onnxvk.Tensor, error) {
	if l := valuesLen(data); l != n {
		if l < 0 {
			return nil, fmt.Errorf("no data")
		}
		return nil, fmt.Errorf("%d values where the shape %v holds %d", l, shape, n)
	}
	if dt == onnxvk.String {
		switch v := data.(type) {
		case []string:
			return onnxvk.NewStringTensor(shape, v)
		case [][]byte:
			s := make([]string, len(v))
			for i, b := range v {
				s[i] = string(b)
			}
			return onnxvk.NewStringTensor(shape, s)
		}
		return nil, fmt.Errorf("BYTES data must be strings, got %T", data)
	}
	if dt == onnxvk.Bool {
		v, ok := data.([]bool)
		if !ok {
			return nil, fmt.Errorf("BOOL data must be true or false, got %T", data)
		}
		return onnxvk.NewTensor(shape, v)
	}
	raw := make([]byte, dt.ByteSize(n))
	size := dt.Size()
	put := func(i int, f float64, s int64, u uint64, kind byte) error {
		b := raw[i*size:]
		if dt.IsFloat() {
			switch kind {
			case 'i':
				f = float64(s)
			case 'u':
				f = float64(u)
			}
			switch dt {
			case onnxvk.Float16:
				binary.LittleEndian.PutUint16(b, float16.Fromfloat32(float32(f)).Bits())
			case onnxvk.BFloat16:
				binary.LittleEndian.PutUint16(b, bf16(float32(f)))
			case onnxvk.Float32:
				binary.LittleEndian.PutUint32(b, math.Float32bits(float32(f)))
			default:
				binary.LittleEndian.PutUint64(b, math.Float64bits(f))
			}
			return nil
		}
		switch kind {
		case 'f':
			if f != math.Trunc(f) || math.Abs(f) > 1<<64 {
				return fmt.Errorf("element %d: %v is not an integer", i, f)
			}
			if f < 0 {
				kind, s = 'i', int64(f)
			} else {
				kind, u = 'u', uint64(f)
			}
		case 'i':
			if s >= 0 {
				kind, u = 'u', uint64(s)
			}
		}
		lo, hi := intRange(dt)
		if (kind == 'i' && (!dt.IsSigned() || s < lo)) || (kind == 'u' && u > hi) {
			v := fmt.Sprint(u)
			if kind == 'i' {
				v = fmt.Sprint(s)
			}
			return fmt.Errorf("element %d: %s is out of the range of %s", i, v, dt)
		}
		if kind == 'i' {
			u = uint64(s)
		}
		switch size {
		case 1:
			b[0] = byte(u)
		case 2:
			binary.LittleEndian.PutUint16(b, uint16(u))
		case 4:
			binary.LittleEndian.PutUint32(b, uint32(u))
		default:
			binary.LittleEndian.PutUint64(b, u)
		}
		return nil
	}
	var err error
	switch v := data.(type) {
	case []float64:
		for i, x := range v {
			if err = put(i, x, 0, 0, 'f'); err != nil {
				break
			}
		}
	case []float32:
		for i, x := range v {
			if err = put(i, float64(x), 0, 0, 'f'); err != nil {
				break
			}
		}
	case []int64:
		for i, x := range v {
			if err = put(i, 0, x, 0, 'i'); err != nil {
				break
			}
		}
	case []int32:
		for i, x := range v {
			if err = put(i, 0, int64(x), 0, 'i'); err != nil {
				break
			}
		}
	case []uint64:
		for i, x := range v {
			if err = put(i, 0, 0, x, 'u'); err != nil {
				break
			}
		}
	case []uint32:
		for i, x := range v {
			if err = put(i, 0, 0, uint64(x), 'u'); err != nil {
				break
			}
		}
	default:
		return nil, fmt.Errorf("%s data must be numbers, got %T", dt, data)
	}
	if err != nil {
		return nil, err
	}
	return onnxvk.NewTensorBytes(dt, shape, raw)
}

// valuesLen returns the length of a slice of listed values, -1 for nil or
// a type Data does not take.
func valuesLen(data any) int64 {
	switch v := data.(type) {
	case []bool:
		return int64(len(v))
	case []int32:
		return int64(len(v))
	case []int64:
		return int64(len(v))
	case []uint32:
		return int64(len(v))
	case []uint64:
		return int64(len(v))
	case []float32:
		return int64(len(v))
	case []float64:
		return int64(len(v))
	case [][]byte:
		return int64(len(v))
	case []string:
		return int64(len(v))
	}
	return -1
}

// intRange returns the smallest and largest value of an integer type.
func intRange(dt onnxvk.DType) (int64, uint64) {
	bits := dt.Bits()
	if dt.IsSigned() {
		return -1 << (bits - 1), 1<<(bits-1) - 1
	}
	return 0, math.MaxUint64 >> (64 - bits)
}

// bf16 rounds f to bfloat16, to nearest even (NaN stays NaN).
func bf16(f float32) uint16 {
	b := math.Float32bits(f)
	if f != f {
		return uint16(b>>16) | 0x40
	}
	return uint16((b + 0x7fff + (b>>16)&1) >> 16)
}

// NewResponseTensor describes an output tensor for a response; it fails
// for an element type the protocol cannot carry.
func NewResponseTensor(name string, t *onnxvk.Tensor, params Parameters) (ResponseTensor, error) {
	dt, ok := Datatype(t.DType())
	if !ok {
		return ResponseTensor{}, Errorf(CodeInternal, "output %q: element type %s has no datatype in the protocol", name, t.DType())
	}
	return ResponseTensor{Name: name, Datatype: dt, Shape: t.Shape(), Parameters: params, Tensor: t}, nil
}

// Raw returns the output's elements in the binary form (see
// RequestTensor.Raw); shared with the tensor, not copied, except for
// BYTES.
func (t *ResponseTensor) Raw() []byte {
	if t.Tensor.DType() != onnxvk.String {
		return t.Tensor.Bytes()
	}
	s := t.Tensor.Strings()
	n := 4 * len(s)
	for _, e := range s {
		n += len(e)
	}
	out := make([]byte, 0, n)
	for _, e := range s {
		out = binary.LittleEndian.AppendUint32(out, uint32(len(e)))
		out = append(out, e...)
	}
	return out
}

// Values returns the output's elements as a slice for listed forms:
// []bool for BOOL, []int64 for signed integers, []uint64 for unsigned
// ones, []float64 for FP16 and BF16, []float32 for FP32, []float64 for
// FP64, []string for BYTES (those of BOOL, FP32, FP64 and BYTES shared
// with the tensor, not copied); nil when the tensor's data cannot be read
// (a device tensor released).
func (t *ResponseTensor) Values() any {
	dt := t.Tensor.DType()
	switch {
	case dt == onnxvk.String:
		return t.Tensor.Strings()
	case dt == onnxvk.Bool:
		return data[bool](t.Tensor)
	case dt == onnxvk.Float32:
		return data[float32](t.Tensor)
	case dt == onnxvk.Float64:
		return data[float64](t.Tensor)
	case dt == onnxvk.Float16:
		h := data[float16.Float16](t.Tensor)
		out := make([]float64, len(h))
		for i, v := range h {
			out[i] = float64(v.Float32())
		}
		return out
	case dt == onnxvk.BFloat16:
		b := t.Tensor.Bytes()
		out := make([]float64, len(b)/2)
		for i := range out {
			out[i] = float64(math.Float32frombits(uint32(binary.LittleEndian.Uint16(b[2*i:])) << 16))
		}
		return out
	case dt.IsSigned():
		return signedValues(t.Tensor.Bytes(), dt.Size())
	}
	return unsignedValues(t.Tensor.Bytes(), dt.Size())
}

// data returns a tensor's elements as a []T (onnxvk.Data), nil when they
// cannot be read; the caller has checked that T is the element type.
func data[T onnxvk.Elem](t *onnxvk.Tensor) []T {
	v, _ := onnxvk.Data[T](t)
	return v
}

// signedValues returns the elements of a signed integer tensor of size
// bytes each from their bytes b, exactly.
func signedValues(b []byte, size int) []int64 {
	out := make([]int64, len(b)/size)
	for i := range out {
		e := b[i*size:]
		switch size {
		case 1:
			out[i] = int64(int8(e[0]))
		case 2:
			out[i] = int64(int16(binary.LittleEndian.Uint16(e)))
		case 4:
			out[i] = int64(int32(binary.LittleEndian.Uint32(e)))
		default:
			out[i] = int64(binary.LittleEndian.Uint64(e))
		}
	}
	return out
}

// unsignedValues returns the elements of an unsigned integer tensor of
// size bytes each from their bytes b.
func unsignedValues(b []byte, size int) []uint64 {
	out := make([]uint64, len(b)/size)
	for i := range out {
		e := b[i*size:]
		switch size {
		case 1:
			out[i] = uint64(e[0])
		case 2:
			out[i] = uint64(binary.LittleEndian.Uint16(e))
		case 4:
			out[i] = uint64(binary.LittleEndian.Uint32(e))
		default:
			out[i] = binary.LittleEndian.Uint64(e)
		}
	}
	return out
}
