package vulkan

import (
	"math/rand/v2"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/kerneltest"
)

// TestIntBinaryMatchesCPU checks the integer binary ops of intops.comp over
// broadcast shapes, with edge values (minimum over -1, carries between the
// words of int64).
func TestIntBinaryMatchesCPU(t *testing.T) {
	d := openTest(t)
	r := rand.New(rand.NewPCG(13, 14))
	type opCase struct {
		op    string
		attrs []*graph.Attribute
		types []graph.DType
	}
	all := []graph.DType{graph.Int32, graph.Int64, graph.Uint32, graph.Uint64}
	for _, c := range []opCase{
		{"Add", nil, all}, {"Sub", nil, all}, {"Mul", nil, all}, {"Div", nil, all},
		{"Mod", nil, all}, {"Mod", []*graph.Attribute{kerneltest.IntAttr("fmod", 1)}, all},
		{"Max", nil, all}, {"Min", nil, all},
		{"BitShift", []*graph.Attribute{kerneltest.StringAttr("direction", "LEFT")}, all[2:]},
		{"BitShift", []*graph.Attribute{kerneltest.StringAttr("direction", "RIGHT")}, all[2:]},
	} {
		for _, dt := range c.types {
			for _, s := range broadcastPairs {
				b := kerneltest.EdgeValues(r, dt, s[1])
				if c.op == "Div" || c.op == "Mod" {
					b = kerneltest.NonZero(b)
				}
				checkMove(t, d, kerneltest.Node(c.op, []string{"a", "b"}, c.attrs...), 13, kerneltest.Arg{T: kerneltest.EdgeValues(r, dt, s[0])}, kerneltest.Arg{T: b, Const: len(s[1]) == 1})
			}
		}
	}
}

// TestIntUnaryMatchesCPU checks Neg, Abs and Sign on int32 and int64, and
// Sign on float32 (-0, NaN, ±inf).
func TestIntUnaryMatchesCPU(t *testing.T) {
	d := openTest(t)
	r := rand.New(rand.NewPCG(15, 16))
	for _, s := range [][]int64{{}, {1}, {13}, {127}, {2, 3, 5, 7}, {1, 2, 1, 3, 1, 5}, {70001}} {
		for _, dt := range []graph.DType{graph.Int32, graph.Int64, graph.Float} {
			for _, op := range []string{"Neg", "Abs", "Sign"} {
				checkMove(t, d, kerneltest.Node(op, []string{"x"}), 13, kerneltest.Arg{T: kerneltest.EdgeValues(r, dt, s)})
			}
		}
	}
}

// TestIntDivByZero checks that integer division and modulo by zero run to
// completion on the device: the result is 0 where the CPU kernel fails.
func TestIntDivByZero(t *testing.T) {
	d := openTest(t)
	for _, dt := range []graph.DType{graph.Int32, graph.Int64} {
		for _, op := range []string{"Div", "Mod"} {
			a := kerneltest.EdgeValues(rand.New(rand.NewPCG(1, 2)), dt, []int64{13})
			zero := graph.NewTensor(dt, []int64{13})
			gpu := runGPU(t, d, kerneltest.Node(op, []string{"a", "b"}), 13, a, zero)
			for _, b := range gpu.Data {
				if b != 0 {
					t.Fatalf("%s %s by zero: %v, want zeros", op, dt, gpu.Data)
				}
			}
		}
	}
}

// runGPU runs n, which must be planned on d, on runtime inputs named as n's
// inputs and returns output y, without the CPU kernel.
func runGPU(t *testing.T, d *Device, n *graph.Node, opset int64, ins ...*graph.Tensor) *graph.Tensor {
	t.Helper()
	c := kerneltest.Case{Node: n, Opset: opset}
	for _, x := range ins {
		c.Args = append(c.Args, kerneltest.Arg{T: x})
	}
	out, ok := kerneltest.RunOn(t, d, c)
	if !ok {
		t.Fatalf("%s: %s declines it", n, d.Name())
	}
	return out[0]
}
