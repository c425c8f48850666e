package hostfallback

import (
	"math"

	"github.com/x448/float16"

	"github.com/onnxvk/onnxvk/graph"
)

// Helpers shared by the kernels of this family's files: float conversions
// and output bookkeeping.

// f32Family reports whether the float32 kernels handle dt: float32 itself,
// and float64, float16 and bfloat16 converted to float32 and back.
func f32Family(dt graph.DType) bool { return floats.Has(dt) }

// floats is the f32Family.
var floats = Types{graph.Float, graph.Double, graph.Float16, graph.BFloat16}

// onFloats is the Support of a kernel whose tensor inputs are all of the
// f32Family.
var onFloats = Support{In: []Types{floats}}

// onFloatX is the Support of a kernel whose first input is of the
// f32Family and whose others it checks itself.
var onFloatX = Support{In: []Types{floats, nil}}

// f32Data returns the elements of a tensor of the f32Family as float32s:
// the tensor's own storage for float32 (which the caller must not modify),
// a converted copy for the other types.
func f32Data(t *graph.Tensor) []float32 {
	n := int(t.NumElements())
	switch t.DType {
	case graph.Float:
		return graph.View[float32](t)[:n:n]
	case graph.Double:
		out := make([]float32, n)
		for i, v := range graph.View[float64](t)[:n] {
			out[i] = float32(v)
		}
		return out
	case graph.Float16:
		out := make([]float32, n)
		for i, v := range graph.View[uint16](t)[:n] {
			out[i] = float16.Frombits(v).Float32()
		}
		return out
	case graph.BFloat16:
		out := make([]float32, n)
		for i, v := range graph.View[uint16](t)[:n] {
			out[i] = math.Float32frombits(uint32(v) << 16)
		}
		return out
	}
	panic("hostfallback: f32Data of a " + t.DType.String() + " tensor")
}

// f32Target returns where a kernel writes the elements of output t, a
// tensor of the f32Family: t's own storage for float32, a scratch slice
// otherwise, which f32Commit then converts into t.
func f32Target(t *graph.Tensor) []float32 {
	n := int(t.NumElements())
	if t.DType == graph.Float {
		return graph.View[float32](t)[:n:n]
	}
	return make([]float32, n)
}

// f32Commit stores v, the slice f32Target returned for t, into t.
func f32Commit(t *graph.Tensor, v []float32) {
	switch t.DType {
	case graph.Double:
		out := graph.View[float64](t)
		for i, x := range v {
			out[i] = float64(x)
		}
	case graph.Float16:
		out := graph.View[uint16](t)
		for i, x := range v {
			out[i] = float16.Fromfloat32(x).Bits()
		}
	case graph.BFloat16:
		out := graph.View[uint16](t)
		for i, x := range v {
			out[i] = graph.Float32ToBFloat16(x)
		}
	}
}

// outputWanted reports whether the node asks for output i.
func outputWanted(c *Call, i int) bool {
	return i < len(c.Out) && (i >= len(c.Node.Outputs) || c.Node.Outputs[i] != "")
}
