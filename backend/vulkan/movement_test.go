package vulkan

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/planner"
)

// feed returns a runtime input of a seeded random tensor of dt and shape.
func feed(dt graph.DType, shape []int64, seed uint64) arg {
	return arg{t: randomTensor(dt, shape, seed)}
}

// konst returns a constant int64 input.
func konst(v ...int64) arg {
	t, err := graph.FromSlice(graph.Int64, []int64{int64(len(v))}, v)
	if err != nil {
		panic(err)
	}
	return arg{t: t, konst: true}
}

// randomTensor returns a tensor of dt and shape with seeded random values.
func randomTensor(dt graph.DType, shape []int64, seed uint64) *graph.Tensor {
	r := rand.New(rand.NewPCG(seed, 11))
	t := graph.NewTensor(dt, shape)
	switch dt {
	case graph.Float:
		for i := range graph.View[float32](t) {
			graph.View[float32](t)[i] = r.Float32()*20 - 10
		}
	case graph.Double:
		for i := range graph.View[float64](t) {
			graph.View[float64](t)[i] = r.Float64()*20 - 10
		}
	default:
		for i := range t.Data {
			t.Data[i] = byte(r.Uint32())
		}
	}
	return t
}

// checkMove checks n on ins against the CPU with checkTyped, naming the
// case by its op, attributes and inputs.
func checkMove(t *testing.T, d *Device, n *graph.Node, opset int64, ins ...arg) {
	t.Helper()
	what := fmt.Sprintf("%s-%d", n.OpType, opset)
	for name, a := range n.Attrs {
		what += fmt.Sprintf(" %s=%v%v%s", name, a.I, a.Ints, a.S)
	}
	for _, in := range ins {
		if in.t == nil {
			continue
		}
		what += fmt.Sprintf(" %s%v", in.t.DType, in.t.Shape)
		if in.konst {
			v, _ := in.t.Int64s()
			what += fmt.Sprint("=", v)
		}
	}
	checkTyped(t, d, what, n, opset, ins...)
}

// opNode returns a node of op with output "y" and the attributes.
func opNode(op string, inputs []string, attrs ...*graph.Attribute) *graph.Node {
	n := &graph.Node{OpType: op, Inputs: inputs, Outputs: []string{"y"}, Attrs: map[string]*graph.Attribute{}}
	for _, a := range attrs {
		n.Attrs[a.Name] = a
	}
	return n
}

// wordTypes are the element types the movement kernels handle.
var wordTypes = []graph.DType{graph.Float, graph.Int32, graph.Int64, graph.Double}

// TestReshapeFamilyMatchesCPU checks Identity, Reshape, Flatten, Squeeze
// and Unsqueeze on every word type.
func TestReshapeFamilyMatchesCPU(t *testing.T) {
	d := openTest(t)
	for i, dt := range wordTypes {
		x := func(shape ...int64) arg { return feed(dt, shape, uint64(i)) }
		checkMove(t, d, opNode("Identity", []string{"x"}), 16, x(2, 3, 4))
		checkMove(t, d, opNode("Identity", []string{"x"}), 16, x())
		checkMove(t, d, opNode("Reshape", []string{"x", "s"}), 13, x(2, 3, 4), konst(4, -1))
		checkMove(t, d, opNode("Reshape", []string{"x", "s"}), 13, x(2, 3, 4), konst(0, 0, 2, 2))
		checkMove(t, d, opNode("Reshape", []string{"x", "s"}), 14, x(70000), konst(-1, 7, 2))
		checkMove(t, d, opNode("Reshape", []string{"x"}, intsAttr("shape", 0, 12)), 4, x(2, 3, 4))
		checkMove(t, d, opNode("Flatten", []string{"x"}), 13, x(2, 3, 4))
		for _, axis := range []int64{-3, 0, 2, 3} {
			checkMove(t, d, opNode("Flatten", []string{"x"}, intAttr("axis", axis)), 13, x(2, 3, 4))
		}
		checkMove(t, d, opNode("Squeeze", []string{"x"}), 13, x(1, 3, 1, 4))
		checkMove(t, d, opNode("Squeeze", []string{"x", "a"}), 13, x(1, 3, 1, 4), konst(-2))
		checkMove(t, d, opNode("Squeeze", []string{"x"}, intsAttr("axes", 0, 2)), 11, x(1, 3, 1, 4))
		checkMove(t, d, opNode("Unsqueeze", []string{"x", "a"}), 13, x(3, 4), konst(0, -1))
		checkMove(t, d, opNode("Unsqueeze", []string{"x", "a"}), 13, x(), konst(0))
		checkMove(t, d, opNode("Unsqueeze", []string{"x"}, intsAttr("axes", 1, 3)), 11, x(3, 4))
	}
}

// TestSliceMatchesCPU checks Slice with attributes (opset 1) and constant
// inputs: negative indices and steps, clamped bounds, default axes.
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
			names, ins := []string{"x", "s", "e"}, []arg{feed(dt, c.shape, uint64(i)), konst(c.starts...), konst(c.ends...)}
			if c.axes != nil {
				names, ins = append(names, "a"), append(ins, konst(c.axes...))
			}
			if c.steps != nil {
				if c.axes == nil {
					names, ins = append(names, ""), append(ins, arg{})
				}
				names, ins = append(names, "st"), append(ins, konst(c.steps...))
			}
			checkMove(t, d, opNode("Slice", names), 13, ins...)
		}
		if c.steps == nil && c.axes != nil {
			n := opNode("Slice", []string{"x"}, intsAttr("starts", c.starts...), intsAttr("ends", c.ends...), intsAttr("axes", c.axes...))
			checkMove(t, d, n, 1, feed(graph.Float, c.shape, uint64(i)))
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
			var ins []arg
			for k := range 5 {
				shape := []int64{2, 3, 4}
				shape[a] = int64(k + 1)
				names, ins = append(names, fmt.Sprint("x", k)), append(ins, feed(dt, shape, uint64(10*i+k)))
				checkMove(t, d, opNode("Concat", names, intAttr("axis", axis)), 13, ins...)
			}
			s := opNode("Split", []string{"x"}, intAttr("axis", axis))
			s.Outputs = []string{"y0", "y1", "y2"}
			checkMove(t, d, s, 18, feed(dt, []int64{6, 7, 9}, uint64(i)))
			s = opNode("Split", []string{"x", "sp"}, intAttr("axis", axis))
			s.Outputs = []string{"y0", "", "y2"}
			checkMove(t, d, s, 13, feed(dt, []int64{6, 6, 6}, uint64(i)), konst(1, 2, 3))
			s = opNode("Split", []string{"x"}, intAttr("axis", axis), intsAttr("split", 4, 2))
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
		x := func(shape ...int64) arg { return feed(dt, shape, uint64(i)) }
		checkMove(t, d, opNode("Expand", []string{"x", "s"}), 13, x(3, 1), konst(2, 1, 6))
		checkMove(t, d, opNode("Expand", []string{"x", "s"}), 13, x(1, 4, 1), konst(3, 1, 6))
		checkMove(t, d, opNode("Expand", []string{"x", "s"}), 13, x(), konst(3, 3))
		checkMove(t, d, opNode("Tile", []string{"x", "r"}), 13, x(2, 3, 4), konst(2, 1, 3))
		checkMove(t, d, opNode("Tile", []string{"x", "r"}), 13, x(5), konst(7))
		checkMove(t, d, opNode("Tile", []string{"x", "r"}), 13, x(1, 2, 3, 2), konst(3, 2, 1, 2))
		for _, mode := range []string{"DCR", "CRD"} {
			n := opNode("DepthToSpace", []string{"x"}, intAttr("blocksize", 2), stringAttr("mode", mode))
			checkMove(t, d, n, 13, x(2, 8, 3, 5))
		}
		checkMove(t, d, opNode("SpaceToDepth", []string{"x"}, intAttr("blocksize", 3)), 13, x(2, 2, 6, 9))
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
				n := opNode("Gather", []string{"x", "i"}, intAttr("axis", axis))
				for _, ind := range []arg{{t: i64}, {t: i64, konst: true}, {t: i32}} {
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
	i64 := func(v ...int64) *graph.Tensor { return konst(v...).t }
	cases := []struct {
		n      *graph.Node
		opset  int64
		in     []*graph.Type
		consts []*graph.Tensor
	}{
		{opNode("Identity", []string{"x"}), 16, []*graph.Type{ty(graph.Bool, 4)}, nil},
		{opNode("Identity", []string{"x"}), 16, []*graph.Type{ty(graph.Float16, 4)}, nil},
		{opNode("Reshape", []string{"x", "s"}), 13, []*graph.Type{ty(graph.Float, 4), ty(graph.Int64, 2)}, nil},
		{opNode("Reshape", []string{"x", "s"}), 13, []*graph.Type{ty(graph.Float, 4), ty(graph.Int64, 2)}, []*graph.Tensor{nil, i64(3, -1)}},
		{opNode("Slice", []string{"x", "s", "e"}), 13, []*graph.Type{ty(graph.Float, 4), ty(graph.Int64, 1), ty(graph.Int64, 1)}, []*graph.Tensor{nil, i64(2), i64(2)}},
		{opNode("Slice", []string{"x", "s", "e"}), 13, []*graph.Type{ty(graph.Float, 4), ty(graph.Int64, 1), ty(graph.Int64, 1)}, []*graph.Tensor{nil, i64(1), nil}},
		{opNode("Squeeze", []string{"x", "a"}), 13, []*graph.Type{ty(graph.Float, 2, 3), ty(graph.Int64, 1)}, []*graph.Tensor{nil, i64(0)}},
		{opNode("Concat", []string{"a", "b"}, intAttr("axis", 0)), 13, []*graph.Type{ty(graph.Float, 2, 3), ty(graph.Int32, 2, 3)}, nil},
		{opNode("Gather", []string{"x", "i"}), 13, []*graph.Type{ty(graph.Float, 2, 3), ty(graph.Int64, 1)}, []*graph.Tensor{nil, i64(2)}},
		{opNode("Tile", []string{"x", "r"}), 13, []*graph.Type{ty(graph.Float, 2, 3, 4, 5, 6), ty(graph.Int64, 5)}, []*graph.Tensor{nil, i64(2, 2, 2, 2, 2)}},
	}
	for _, c := range cases {
		if d.Supports(planner.Query{Node: c.n, Opset: c.opset, Inputs: c.in, Consts: c.consts}) {
			t.Errorf("%s-%d on %v: supported, want unsupported", c.n.OpType, c.opset, c.in)
		}
	}
}
