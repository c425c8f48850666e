package vulkan

import (
	"fmt"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/kerneltest"
	"github.com/onnxvk/onnxvk/planner"
)

// feed returns a runtime input of a seeded random tensor of dt and shape.
func feed(dt graph.DType, shape []int64, seed uint64) kerneltest.Arg {
	return kerneltest.Arg{T: kerneltest.RandomTensor(dt, shape, seed)}
}

// checkMove checks n on ins against the CPU with kerneltest.Check, naming the
// case by its op, attributes and inputs.
func checkMove(t *testing.T, d *Device, n *graph.Node, opset int64, ins ...kerneltest.Arg) {
	t.Helper()
	what := fmt.Sprintf("%s-%d", n.OpType, opset)
	for name, a := range n.Attrs {
		what += fmt.Sprintf(" %s=%v%v%s", name, a.I, a.Ints, a.S)
	}
	for _, in := range ins {
		if in.T == nil {
			continue
		}
		what += fmt.Sprintf(" %s%v", in.T.DType, in.T.Shape)
		if in.Const {
			v, _ := in.T.Int64s()
			what += fmt.Sprint("=", v)
		}
	}
	kerneltest.Check(t, d, what, kerneltest.Case{Node: n, Opset: opset, Args: ins})
}

// wordTypes are the element types the movement kernels handle.
var wordTypes = []graph.DType{graph.Float, graph.Int32, graph.Int64, graph.Double}

// TestReshapeFamilyMatchesCPU checks Identity, Reshape, Flatten, Squeeze
// and Unsqueeze on every word type.
func TestReshapeFamilyMatchesCPU(t *testing.T) {
	d := openTest(t)
	for i, dt := range wordTypes {
		x := func(shape ...int64) kerneltest.Arg { return feed(dt, shape, uint64(i)) }
		checkMove(t, d, kerneltest.Node("Identity", []string{"x"}), 16, x(2, 3, 4))
		checkMove(t, d, kerneltest.Node("Identity", []string{"x"}), 16, x())
		checkMove(t, d, kerneltest.Node("Reshape", []string{"x", "s"}), 13, x(2, 3, 4), kerneltest.ConstInts(4, -1))
		checkMove(t, d, kerneltest.Node("Reshape", []string{"x", "s"}), 13, x(2, 3, 4), kerneltest.ConstInts(0, 0, 2, 2))
		checkMove(t, d, kerneltest.Node("Reshape", []string{"x", "s"}), 14, x(70000), kerneltest.ConstInts(-1, 7, 2))
		checkMove(t, d, kerneltest.Node("Reshape", []string{"x"}, kerneltest.IntsAttr("shape", 0, 12)), 4, x(2, 3, 4))
		checkMove(t, d, kerneltest.Node("Flatten", []string{"x"}), 13, x(2, 3, 4))
		for _, axis := range []int64{-3, 0, 2, 3} {
			checkMove(t, d, kerneltest.Node("Flatten", []string{"x"}, kerneltest.IntAttr("axis", axis)), 13, x(2, 3, 4))
		}
		checkMove(t, d, kerneltest.Node("Squeeze", []string{"x"}), 13, x(1, 3, 1, 4))
		checkMove(t, d, kerneltest.Node("Squeeze", []string{"x", "a"}), 13, x(1, 3, 1, 4), kerneltest.ConstInts(-2))
		checkMove(t, d, kerneltest.Node("Unsqueeze", []string{"x", "a"}), 13, x(3, 4), kerneltest.ConstInts(0, -1))
		checkMove(t, d, kerneltest.Node("Unsqueeze", []string{"x", "a"}), 13, x(), kerneltest.ConstInts(0))
	}
}

// TestSliceMatchesCPU checks Slice with constant inputs: negative indices and steps, clamped bounds, default axes.
func TestSliceMatchesCPU(t *testing.T) {
	d := openTest(t)
	const big = int64(1) << 62
	cases := []struct {
		shape                     []int64
		starts, ends, axes, steps []int64
	}{
		{[]int64{20, 10, 5}, []int64{0, 0}, []int64{3, 10}, []int64{0, 1}, []int64{1, 1}},
		{[]int64{20, 10, 5}, []int64{1}, []int64{big}, []int64{1}, nil},
		{[]int64{20, 10, 5}, []int64{-1}, []int64{-big}, []int64{-2}, []int64{-1}},
		{[]int64{20, 10, 5}, []int64{20, 10, 4}, []int64{0, 0, 1}, []int64{0, 1, 2}, []int64{-1, -3, -1}},
		{[]int64{20, 10, 5}, []int64{0, 0, 3}, []int64{20, 10, 4}, nil, nil},
		{[]int64{20, 10, 5}, []int64{-3}, []int64{-1}, []int64{-1}, []int64{1}},
		{[]int64{7}, []int64{1}, []int64{7}, []int64{0}, []int64{3}},
		{[]int64{2, 3, 4, 5, 6, 7, 8, 3, 2}, []int64{1, 1}, []int64{2, 3}, []int64{0, -1}, nil},
	}
	for i, c := range cases {
		for _, dt := range []graph.DType{graph.Float, graph.Int64} {
			names, ins := []string{"x", "s", "e"}, []kerneltest.Arg{feed(dt, c.shape, uint64(i)), kerneltest.ConstInts(c.starts...), kerneltest.ConstInts(c.ends...)}
			if c.axes != nil {
				names, ins = append(names, "a"), append(ins, kerneltest.ConstInts(c.axes...))
			}
			if c.steps != nil {
				if c.axes == nil {
					names, ins = append(names, ""), append(ins, kerneltest.Arg{})
				}
				names, ins = append(names, "st"), append(ins, kerneltest.ConstInts(c.steps...))
			}
			checkMove(t, d, kerneltest.Node("Slice", names), 13, ins...)
		}
	}
}

// TestConcatSplitMatchesCPU checks Concat of one to five inputs on every
// axis and Split with explicit and equal sizes, unnamed outputs included.
func TestConcatSplitMatchesCPU(t *testing.T) {
	d := openTest(t)
	for i, dt := range wordTypes {
		for axis := int64(-3); axis < 3; axis++ {
			a := (axis + 3) % 3
			var names []string
			var ins []kerneltest.Arg
			for k := range 5 {
				shape := []int64{2, 3, 4}
				shape[a] = int64(k + 1)
				names, ins = append(names, fmt.Sprint("x", k)), append(ins, feed(dt, shape, uint64(10*i+k)))
				checkMove(t, d, kerneltest.Node("Concat", names, kerneltest.IntAttr("axis", axis)), 13, ins...)
			}
			s := kerneltest.Node("Split", []string{"x"}, kerneltest.IntAttr("axis", axis))
			s.Outputs = []string{"y0", "y1", "y2"}
			checkMove(t, d, s, 18, feed(dt, []int64{6, 7, 9}, uint64(i)))
			s = kerneltest.Node("Split", []string{"x", "sp"}, kerneltest.IntAttr("axis", axis))
			s.Outputs = []string{"y0", "", "y2"}
			checkMove(t, d, s, 13, feed(dt, []int64{6, 6, 6}, uint64(i)), kerneltest.ConstInts(1, 2, 3))
			s = kerneltest.Node("Split", []string{"x"}, kerneltest.IntAttr("axis", axis), kerneltest.IntsAttr("split", 4, 2))
			s.Outputs = []string{"y0", "y1"}
			checkMove(t, d, s, 11, feed(dt, []int64{6, 6, 6}, uint64(i)))
		}
	}
}

// TestExpandTileMatchesCPU checks Expand (broadcast both ways), Tile and
// DepthToSpace/SpaceToDepth.
func TestExpandTileMatchesCPU(t *testing.T) {
	d := openTest(t)
	for i, dt := range wordTypes {
		x := func(shape ...int64) kerneltest.Arg { return feed(dt, shape, uint64(i)) }
		checkMove(t, d, kerneltest.Node("Expand", []string{"x", "s"}), 13, x(3, 1), kerneltest.ConstInts(2, 1, 6))
		checkMove(t, d, kerneltest.Node("Expand", []string{"x", "s"}), 13, x(1, 4, 1), kerneltest.ConstInts(3, 1, 6))
		checkMove(t, d, kerneltest.Node("Expand", []string{"x", "s"}), 13, x(), kerneltest.ConstInts(3, 3))
		checkMove(t, d, kerneltest.Node("Tile", []string{"x", "r"}), 13, x(2, 3, 4), kerneltest.ConstInts(2, 1, 3))
		checkMove(t, d, kerneltest.Node("Tile", []string{"x", "r"}), 13, x(5), kerneltest.ConstInts(7))
		checkMove(t, d, kerneltest.Node("Tile", []string{"x", "r"}), 13, x(1, 2, 3, 2), kerneltest.ConstInts(3, 2, 1, 2))
		for _, mode := range []string{"DCR", "CRD"} {
			n := kerneltest.Node("DepthToSpace", []string{"x"}, kerneltest.IntAttr("blocksize", 2), kerneltest.StringAttr("mode", mode))
			checkMove(t, d, n, 13, x(2, 8, 3, 5))
		}
		checkMove(t, d, kerneltest.Node("SpaceToDepth", []string{"x"}, kerneltest.IntAttr("blocksize", 3)), 13, x(2, 2, 6, 9))
	}
}

// TestGatherMatchesCPU checks Gather on every axis with runtime and
// constant int32 and int64 indices of rank 0 to 2, negative ones
// included.
func TestGatherMatchesCPU(t *testing.T) {
	d := openTest(t)
	for i, dt := range wordTypes {
		shape := []int64{5, 6, 7}
		for axis := int64(-3); axis < 3; axis++ {
			dim := shape[(axis+3)%3]
			idx := []int64{0, dim - 1, -1, -dim, 2, 1}
			for _, ishape := range [][]int64{{}, {6}, {2, 3}} {
				k := graph.NumElements(ishape)
				i64, _ := graph.FromSlice(graph.Int64, ishape, idx[:k])
				i32 := graph.NewTensor(graph.Int32, ishape)
				for j, v := range idx[:k] {
					graph.View[int32](i32)[j] = int32(v)
				}
				n := kerneltest.Node("Gather", []string{"x", "i"}, kerneltest.IntAttr("axis", axis))
				for _, ind := range []kerneltest.Arg{{T: i64}, {T: i64, Const: true}, {T: i32}} {
					checkMove(t, d, n, 13, feed(dt, shape, uint64(i)), ind)
				}
			}
		}
	}
}

// TestMovementUnsupported checks that the movement kernels refuse what
// they do not handle.
func TestMovementUnsupported(t *testing.T) {
	d := openTest(t)
	ty := func(dt graph.DType, dims ...int64) *graph.Type { return graph.TensorType(dt, graph.ShapeOf(dims...)) }
	i64 := func(v ...int64) *graph.Tensor { return kerneltest.ConstInts(v...).T }
	cases := []struct {
		n      *graph.Node
		opset  int64
		in     []*graph.Type
		consts []*graph.Tensor
	}{
		{kerneltest.Node("Identity", []string{"x"}), 16, []*graph.Type{ty(graph.Bool, 4)}, nil},
		{kerneltest.Node("Identity", []string{"x"}), 16, []*graph.Type{ty(graph.Complex128, 4)}, nil},
		{kerneltest.Node("Reshape", []string{"x", "s"}), 13, []*graph.Type{ty(graph.Float, 4), ty(graph.Int64, 2)}, nil},
		{kerneltest.Node("Reshape", []string{"x", "s"}), 13, []*graph.Type{ty(graph.Float, 4), ty(graph.Int64, 2)}, []*graph.Tensor{nil, i64(3, -1)}},
		{kerneltest.Node("Slice", []string{"x", "s", "e"}), 13, []*graph.Type{ty(graph.Float, 4), ty(graph.Int64, 1), ty(graph.Int64, 1)}, []*graph.Tensor{nil, i64(2), i64(2)}},
		{kerneltest.Node("Slice", []string{"x", "s", "e"}), 13, []*graph.Type{ty(graph.Float, 4), ty(graph.Int64, 1), ty(graph.Int64, 1)}, []*graph.Tensor{nil, i64(1), nil}},
		{kerneltest.Node("Squeeze", []string{"x", "a"}), 13, []*graph.Type{ty(graph.Float, 2, 3), ty(graph.Int64, 1)}, []*graph.Tensor{nil, i64(0)}},
		{kerneltest.Node("Concat", []string{"a", "b"}, kerneltest.IntAttr("axis", 0)), 13, []*graph.Type{ty(graph.Float, 2, 3), ty(graph.Int32, 2, 3)}, nil},
		{kerneltest.Node("Gather", []string{"x", "i"}), 13, []*graph.Type{ty(graph.Float, 2, 3), ty(graph.Int64, 1)}, []*graph.Tensor{nil, i64(2)}},
		{kerneltest.Node("Tile", []string{"x", "r"}), 13, []*graph.Type{ty(graph.Float, 2, 3, 4, 5, 6), ty(graph.Int64, 5)}, []*graph.Tensor{nil, i64(2, 2, 2, 2, 2)}},
	}
	for _, c := range cases {
		if d.Supports(planner.Query{Node: c.n, Opset: c.opset, Inputs: c.in, Consts: c.consts}) {
			t.Errorf("%s-%d on %v: supported, want unsupported", c.n.OpType, c.opset, c.in)
		}
	}
}
