package vulkan

import (
	"math/rand/v2"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

// nonZero returns x with its zeros replaced by 1: divisors, as the CPU
// kernels fail on a zero integer divisor.
func nonZero(x *graph.Tensor) *graph.Tensor {
	for i := range x.NumElements() {
		z := true
		for _, b := range x.Data[int64(x.DType.Size())*i : int64(x.DType.Size())*(i+1)] {
			z = z && b == 0
		}
		if z {
			x.Data[int64(x.DType.Size())*i] = 1
		}
	}
	return x
}

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
		{"Mod", nil, all}, {"Mod", []*graph.Attribute{intAttr("fmod", 1)}, all},
		{"Max", nil, all}, {"Min", nil, all},
		{"BitShift", []*graph.Attribute{stringAttr("direction", "LEFT")}, all[2:]},
		{"BitShift", []*graph.Attribute{stringAttr("direction", "RIGHT")}, all[2:]},
	} {
		for _, dt := range c.types {
			for _, s := range broadcastPairs {
				b := edgeValues(r, dt, s[1])
				if c.op == "Div" || c.op == "Mod" {
					b = nonZero(b)
				}
				checkMove(t, d, opNode(c.op, []string{"a", "b"}, c.attrs...), 13, arg{t: edgeValues(r, dt, s[0])}, arg{t: b, konst: len(s[1]) == 1})
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
				checkMove(t, d, opNode(op, []string{"x"}), 13, arg{t: edgeValues(r, dt, s)})
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
			a := edgeValues(rand.New(rand.NewPCG(1, 2)), dt, []int64{13})
			zero := graph.NewTensor(dt, []int64{13})
			gpu := runGPU(t, d, opNode(op, []string{"a", "b"}), 13, a, zero)
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
	g := graph.NewGraph("test")
	feeds := map[string]graph.Value{}
	for i, x := range ins {
		g.Inputs = append(g.Inputs, &graph.ValueInfo{Name: n.Inputs[i], Type: graph.TensorType(x.DType, graph.ShapeOf(x.Shape...))})
		feeds[n.Inputs[i]] = x
	}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}}
	out := runPlanned(t, d, g, n, opset, feeds)
	return out["y"].(*graph.Tensor)
}
