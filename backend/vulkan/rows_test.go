package vulkan

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/hostfallback"
	"github.com/onnxvk/onnxvk/internal/kerneltest"
	"github.com/onnxvk/onnxvk/internal/testenv"
	"github.com/onnxvk/onnxvk/planner"
	"github.com/stretchr/testify/require"
)

// rowShapes are inputs of the row-wise kernels: rank 1 to 6, odd sizes,
// rows longer than a workgroup and more rows than a dispatch has
// workgroups.
var rowShapes = [][]int64{{1}, {13}, {127}, {3, 5}, {2, 3, 7}, {1, 2, 3, 4}, {2, 1, 3, 1, 5}, {1, 2, 1, 3, 2, 3}, {3, 1000}, {70000, 2}}

// TestSoftmaxMatchesCPU checks Softmax and LogSoftmax on every axis, with
// the single-axis semantics of opset 13 and the 2-D coercion of opset 11.
func TestSoftmaxMatchesCPU(t *testing.T) {
	d := openTest(t)
	sample := testenv.NewSampler(4)
	for _, op := range slices.Sorted(maps.Keys(softmaxOps)) {
		t.Run(op, func(t *testing.T) {
			for i, shape := range rowShapes {
				for axis := -len(shape); axis < len(shape); axis++ {
					for _, opset := range []int64{11, 13} {
						if !sample.Take() {
							continue
						}
						n := &graph.Node{OpType: op, Inputs: []string{"x"}, Outputs: []string{"y"},
							Attrs: map[string]*graph.Attribute{"axis": kerneltest.IntAttr("axis", int64(axis))}}
						what := fmt.Sprintf("%s-%d %v axis %d", op, opset, shape, axis)
						gpu, cpu, ok := runRandom(t, d, n, opset, []input{{shape: shape}}, uniform(-8, 8), uint64(i))
						if !ok {
							t.Fatalf("%s unsupported", what)
						}
						kerneltest.CompareFloats(t, what, gpu, cpu, ops.Lookup("", op, opset).Tolerance())
					}
				}
			}
		})
	}
}

// TestReduceMatchesCPU checks the Reduce ops over runs of adjacent axes,
// all axes and rank 0, with and without keepdims, at an opset with axes as
// an attribute, at opset 18 with the same axes as a constant input, and
// without axes.
func TestReduceMatchesCPU(t *testing.T) {
	d := openTest(t)
	cases := []struct {
		shape []int64
		axes  []int64
	}{
		{[]int64{}, nil}, {[]int64{1}, []int64{0}}, {[]int64{13}, nil}, {[]int64{127}, []int64{-1}}, {[]int64{3, 5}, []int64{0}},
		{[]int64{2, 3, 7}, []int64{1}}, {[]int64{2, 3, 7}, []int64{2, 1}}, {[]int64{1, 2, 3, 4}, []int64{-1}},
		{[]int64{2, 1, 3, 1, 5}, []int64{0, 2}}, {[]int64{1, 2, 1, 3, 2, 3}, []int64{3, 4, 5}}, {[]int64{3, 1000}, []int64{1}},
		{[]int64{70000, 2}, []int64{1}}, {[]int64{5, 700}, nil},
	}
	sample := testenv.NewSampler(8)
	for _, op := range slices.Sorted(maps.Keys(reduceOps)) {
		t.Run(op, func(t *testing.T) {
			for i, c := range cases {
				for _, keep := range []int64{0, 1} {
					if !sample.Take() {
						continue
					}
					n := &graph.Node{OpType: op, Inputs: []string{"x"}, Outputs: []string{"y"},
						Attrs: map[string]*graph.Attribute{"keepdims": kerneltest.IntAttr("keepdims", keep)}}
					ins := []input{{shape: c.shape}}
					opset := int64(18)
					if c.axes != nil {
						opset = 11
						n.Attrs["axes"] = &graph.Attribute{Name: "axes", Type: graph.AttrInts, Ints: c.axes}
					}
					what := fmt.Sprintf("%s-%d %v axes %v keepdims %d", op, opset, c.shape, c.axes, keep)
					gpu, cpu, ok := runRandom(t, d, n, opset, ins, uniform(-4, 4), uint64(i))
					if !ok {
						t.Fatalf("%s unsupported", what)
					}
					kerneltest.CompareFloats(t, what, gpu, cpu, ops.Lookup("", op, opset).Tolerance())
					if c.axes == nil {
						continue
					}
					axes, _ := graph.FromSlice(graph.Int64, []int64{int64(len(c.axes))}, c.axes)
					n = &graph.Node{OpType: op, Inputs: []string{"x", "axes"}, Outputs: []string{"y"}, Attrs: map[string]*graph.Attribute{"keepdims": kerneltest.IntAttr("keepdims", keep)}}
					what = fmt.Sprintf("%s-18 %v constant axes %v keepdims %d", op, c.shape, c.axes, keep)
					if gpu, cpu, ok = runRandom(t, d, n, 18, append(ins, input{value: axes}), uniform(-4, 4), uint64(i)); !ok {
						t.Fatalf("%s unsupported", what)
					}
					kerneltest.CompareFloats(t, what, gpu, cpu, ops.Lookup("", op, 18).Tolerance())
				}
			}
		})
	}
}

// TestLayerNormMatchesCPU checks LayerNormalization on every axis, with
// and without B, with Scale and B as weights and as runtime values.
func TestLayerNormMatchesCPU(t *testing.T) {
	d := openTest(t)
	tol := ops.Lookup("", "LayerNormalization", 17).Tolerance()
	sample := testenv.NewSampler(3)
	for i, shape := range rowShapes {
		for axis := -len(shape); axis < len(shape); axis++ {
			a, _ := normAxis(int64(axis), len(shape))
			for _, bias := range []bool{false, true} {
				if !sample.Take() {
					continue
				}
				n := &graph.Node{OpType: "LayerNormalization", Inputs: []string{"x", "scale"}, Outputs: []string{"y"},
					Attrs: map[string]*graph.Attribute{"axis": kerneltest.IntAttr("axis", int64(axis)),
						"epsilon": {Name: "epsilon", Type: graph.AttrFloat, F: 1e-3}}}
				ins := []input{{shape: shape}, {shape: shape[a:], weight: bias}}
				if bias {
					n.Inputs = append(n.Inputs, "b")
					ins = append(ins, input{shape: shape[a:]})
				}
				what := fmt.Sprintf("LayerNormalization %v axis %d bias %v", shape, axis, bias)
				gpu, cpu, ok := runRandom(t, d, n, 17, ins, uniform(-3, 3), uint64(i))
				if !ok {
					t.Fatalf("%s unsupported", what)
				}
				kerneltest.CompareFloats(t, what, gpu, cpu, tol)
			}
		}
	}
}

// TestTransposeMatchesCPU checks Transpose with the default permutation
// and with rotations and swaps of every rank up to 6.
func TestTransposeMatchesCPU(t *testing.T) {
	d := openTest(t)
	for i, shape := range append(oddShapes, []int64{2, 3, 1, 4, 5, 3}) {
		r := len(shape)
		perms := [][]int64{nil}
		for s := 1; s < r; s++ {
			rot, swap := make([]int64, r), make([]int64, r)
			for k := range r {
				rot[k], swap[k] = int64((k+s)%r), int64(k)
			}
			swap[0], swap[s] = int64(s), 0
			perms = append(perms, rot, swap)
		}
		for _, perm := range perms {
			n := &graph.Node{OpType: "Transpose", Inputs: []string{"x"}, Outputs: []string{"y"}}
			if perm != nil {
				n.Attrs = map[string]*graph.Attribute{"perm": {Name: "perm", Type: graph.AttrInts, Ints: perm}}
			}
			what := fmt.Sprintf("Transpose %v perm %v", shape, perm)
			gpu, cpu, ok := runRandom(t, d, n, 13, []input{{shape: shape}}, uniform(-4, 4), uint64(i))
			if !ok {
				t.Fatalf("%s unsupported", what)
			}
			kerneltest.CompareFloats(t, what, gpu, cpu, ops.Lookup("", "Transpose", 13).Tolerance())
		}
	}
}

// TestLayerNormStatsMatchCPU checks the optional Mean and InvStdDev
// outputs of LayerNormalization, each alone and together, and Scale and B
// that broadcast from a suffix of the normalized shape.
func TestLayerNormStatsMatchCPU(t *testing.T) {
	d := openTest(t)
	tol := ops.Lookup("", "LayerNormalization", 17).Tolerance()
	x := []int64{3, 4, 5}
	for i, outs := range [][]string{{"y", "mean", "inv"}, {"y", "mean"}, {"y", "", "inv"}} {
		for axis := range int64(3) {
			g := graph.NewGraph("ln")
			r := rand.New(rand.NewPCG(uint64(i), uint64(axis)))
			vals := map[string]*graph.Tensor{}
			for name, shape := range map[string][]int64{"x": x, "scale": x[2:], "b": {1}} {
				v := graph.NewTensor(graph.Float, shape)
				for j, vs := 0, graph.View[float32](v); j < len(vs); j++ {
					vs[j] = 4*r.Float32() - 2
				}
				vals[name] = v
				if name != "x" {
					g.Initializers[name] = v
				}
			}
			g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(x...))}}
			n := &graph.Node{OpType: "LayerNormalization", Inputs: []string{"x", "scale", "b"}, Outputs: outs,
				Attrs: map[string]*graph.Attribute{"axis": kerneltest.IntAttr("axis", axis)}}
			g.Nodes = []*graph.Node{n}
			for _, o := range outs {
				if o != "" {
					g.Outputs = append(g.Outputs, &graph.ValueInfo{Name: o})
				}
			}
			m := &graph.Model{Name: "ln", IRVersion: 8, Opsets: map[string]int64{"": 17}, Graph: g}
			cpuDev := hostfallback.NewDevice(nil)
			p, err := planner.New(m, planner.Options{Devices: []planner.Device{d, cpuDev}})
			if err != nil {
				t.Fatal(err)
			}
			for _, st := range p.Steps {
				if st.Kind == planner.Compute && st.Device != d.Name() {
					t.Fatalf("%v axis %d placed on %s", outs, axis, st.Device)
				}
			}
			ex, err := backend.NewExecutor(p, []backend.Device{d, cpuDev})
			if err != nil {
				t.Fatal(err)
			}
			got, err := ex.Run(context.Background(), map[string]graph.Value{"x": vals["x"]})
			if err != nil {
				t.Fatal(err)
			}
			c := &hostfallback.Call{Node: n, Opset: 17, In: []graph.Value{vals["x"], vals["scale"], vals["b"]}, Out: make([]graph.Value, len(outs))}
			if err := hostfallback.Lookup("", n.OpType)(c); err != nil {
				t.Fatal(err)
			}
			for k, o := range outs {
				if o != "" {
					kerneltest.CompareFloats(t, fmt.Sprintf("LayerNormalization %v axis %d output %s", outs, axis, o), got[o].(*graph.Tensor), c.Out[k].(*graph.Tensor), tol)
				}
			}
		}
	}
}

// TestRowKernelsBothWays checks each row kernel on rows just short
// enough for an invocation each (serialRowLen) and just too long (one
// workgroup each), along the last axis and along an inner one, as the
// sampled sweeps above may miss either way.
func TestRowKernelsBothWays(t *testing.T) {
	d := openTest(t)
	for _, length := range []int64{serialRowLen, serialRowLen + 1} {
		for _, shape := range [][]int64{{300, length}, {7, length, 5}} {
			for _, op := range slices.Sorted(maps.Keys(argOps)) {
				n := &graph.Node{OpType: op, Inputs: []string{"x"}, Outputs: []string{"y"},
					Attrs: map[string]*graph.Attribute{"axis": kerneltest.IntAttr("axis", 1)}}
				checkRandom(t, d, n, 13, []input{{shape: shape}}, fmt.Sprintf("%s %v axis 1", op, shape))
			}
			for _, op := range slices.Sorted(maps.Keys(reduceOps)) {
				n := &graph.Node{OpType: op, Inputs: []string{"x"}, Outputs: []string{"y"},
					Attrs: map[string]*graph.Attribute{"axes": {Name: "axes", Type: graph.AttrInts, Ints: []int64{1}}}}
				checkRandom(t, d, n, 11, []input{{shape: shape}}, fmt.Sprintf("%s %v axes [1]", op, shape))
			}
			for _, op := range slices.Sorted(maps.Keys(softmaxOps)) {
				n := &graph.Node{OpType: op, Inputs: []string{"x"}, Outputs: []string{"y"},
					Attrs: map[string]*graph.Attribute{"axis": kerneltest.IntAttr("axis", 1)}}
				checkRandom(t, d, n, 13, []input{{shape: shape}}, fmt.Sprintf("%s %v axis 1", op, shape))
			}
			n := &graph.Node{OpType: "LayerNormalization", Inputs: []string{"x", "scale", "b"}, Outputs: []string{"y"},
				Attrs: map[string]*graph.Attribute{"axis": kerneltest.IntAttr("axis", 1)}}
			norm := shape[1:]
			checkRandom(t, d, n, 17, []input{{shape: shape}, {shape: norm, weight: true}, {shape: norm}}, fmt.Sprintf("LayerNormalization %v axis 1", shape))
		}
		n := &graph.Node{OpType: "GlobalAveragePool", Inputs: []string{"x"}, Outputs: []string{"y"}}
		checkRandom(t, d, n, 13, []input{{shape: []int64{3, 40, 1, length}}}, fmt.Sprintf("GlobalAveragePool [3 40 1 %d]", length))
	}
}

// checkRandom runs n as runRandom does and compares the outputs within
// the op's tolerance.
func checkRandom(t *testing.T, d *Device, n *graph.Node, opset int64, ins []input, what string) {
	t.Helper()
	gpu, cpu, ok := runRandom(t, d, n, opset, ins, uniform(-3, 3), 1)
	if !ok {
		t.Fatalf("%s unsupported", what)
	}
	if gpu.DType == graph.Int64 {
		require.Equal(t, graph.View[int64](cpu), graph.View[int64](gpu), what)
		return
	}
	kerneltest.CompareFloats(t, what, gpu, cpu, ops.Lookup("", n.OpType, opset).Tolerance())
}
