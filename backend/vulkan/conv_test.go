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
	"github.com/onnxvk/onnxvk/planner"
)

// convCase is a convolution: X and W shapes and the node's attributes.
type convCase struct {
	x, w  []int64
	attrs []*graph.Attribute
}

func (c convCase) String() string {
	s := fmt.Sprintf("X%v W%v", c.x, c.w)
	for _, a := range c.attrs {
		if a.Type == graph.AttrString {
			s += fmt.Sprintf(" %s=%s", a.Name, a.S)
		} else {
			s += fmt.Sprintf(" %s=%v", a.Name, append(a.Ints, a.I)[:max(1, len(a.Ints))])
		}
	}
	return s
}

func (c convCase) node(op string) *graph.Node {
	n := &graph.Node{OpType: op, Inputs: []string{"x", "w", "b"}, Outputs: []string{"y"}, Attrs: map[string]*graph.Attribute{}}
	for _, a := range c.attrs {
		n.Attrs[a.Name] = a
	}
	return n
}

// convCases cover 1-D, 2-D and 3-D; batches; groups with 1, 2, 4, 5 and
// 40 output channels each (the 1-, 4- and 8-channel blocks, partial
// blocks); depthwise; strides 1, 2 and 3; dilations; symmetric and
// asymmetric pads; every auto_pad (SAME_UPPER and SAME_LOWER also with an
// odd total padding, which they split differently); kernels 1, 3, 4, 5
// and 7.
var convCases = []convCase{
	{[]int64{1, 1, 1, 1}, []int64{1, 1, 1, 1}, nil},
	{[]int64{1, 3, 13, 13}, []int64{5, 3, 3, 3}, []*graph.Attribute{kerneltest.IntsAttr("pads", 1, 1, 1, 1)}},
	{[]int64{2, 4, 13, 11}, []int64{6, 2, 3, 3}, []*graph.Attribute{kerneltest.IntAttr("group", 2), kerneltest.IntsAttr("strides", 2, 2), kerneltest.IntsAttr("pads", 0, 1, 2, 0)}},
	{[]int64{1, 13, 27, 27}, []int64{13, 1, 3, 3}, []*graph.Attribute{kerneltest.IntAttr("group", 13), kerneltest.IntsAttr("strides", 2, 2), kerneltest.IntsAttr("pads", 1, 1, 1, 1)}},
	{[]int64{2, 13, 20, 23}, []int64{13, 1, 5, 5}, []*graph.Attribute{kerneltest.IntAttr("group", 13), kerneltest.IntsAttr("strides", 3, 3), kerneltest.IntsAttr("dilations", 2, 2), kerneltest.IntsAttr("pads", 4, 3, 2, 1)}},
	{[]int64{1, 3, 19, 17}, []int64{8, 3, 5, 5}, []*graph.Attribute{kerneltest.IntsAttr("dilations", 2, 1), kerneltest.IntsAttr("pads", 2, 2, 2, 2), kerneltest.IntsAttr("kernel_shape", 5, 5)}},
	{[]int64{1, 3, 37, 37}, []int64{16, 3, 7, 7}, []*graph.Attribute{kerneltest.IntsAttr("strides", 2, 2), kerneltest.IntsAttr("pads", 3, 3, 3, 3)}},
	{[]int64{2, 127, 7, 7}, []int64{13, 127, 1, 1}, nil},
	{[]int64{1, 16, 14, 14}, []int64{40, 16, 3, 3}, []*graph.Attribute{kerneltest.IntsAttr("pads", 1, 1, 1, 1)}},
	{[]int64{1, 6, 9, 9}, []int64{6, 2, 3, 3}, []*graph.Attribute{kerneltest.IntAttr("group", 3)}},
	{[]int64{3, 8, 9, 10}, []int64{8, 4, 3, 3}, []*graph.Attribute{kerneltest.IntAttr("group", 2), kerneltest.IntsAttr("strides", 1, 2)}},
	{[]int64{1, 5, 8, 8}, []int64{10, 1, 3, 3}, []*graph.Attribute{kerneltest.IntAttr("group", 5), kerneltest.IntsAttr("pads", 1, 1, 1, 1)}},
	{[]int64{1, 3, 13, 13}, []int64{4, 3, 3, 3}, []*graph.Attribute{kerneltest.StringAttr("auto_pad", "SAME_UPPER"), kerneltest.IntsAttr("strides", 2, 2)}},
	{[]int64{1, 3, 13, 12}, []int64{4, 3, 4, 4}, []*graph.Attribute{kerneltest.StringAttr("auto_pad", "SAME_LOWER")}},
	{[]int64{1, 3, 13, 12}, []int64{4, 3, 4, 4}, []*graph.Attribute{kerneltest.StringAttr("auto_pad", "SAME_UPPER")}},
	{[]int64{1, 3, 13, 12}, []int64{4, 3, 3, 2}, []*graph.Attribute{kerneltest.StringAttr("auto_pad", "VALID"), kerneltest.IntsAttr("pads", 1, 1, 1, 1), kerneltest.IntsAttr("strides", 3, 2)}},
	{[]int64{2, 3, 127}, []int64{4, 3, 5}, []*graph.Attribute{kerneltest.IntsAttr("strides", 3), kerneltest.IntsAttr("pads", 2, 1)}},
	{[]int64{1, 2, 5, 6, 7}, []int64{3, 2, 3, 3, 3}, []*graph.Attribute{kerneltest.IntsAttr("pads", 1, 1, 1, 1, 1, 1), kerneltest.IntsAttr("strides", 1, 2, 1)}},
	{[]int64{1, 32, 56, 56}, []int64{32, 1, 3, 3}, []*graph.Attribute{kerneltest.IntAttr("group", 32), kerneltest.IntsAttr("pads", 1, 1, 1, 1)}},
}

// TestConvMatchesCPU checks Conv against the CPU kernel with W and B
// weights and runtime values, and B absent.
func TestConvMatchesCPU(t *testing.T) {
	d := openTest(t)
	tol := ops.Lookup("", "Conv", 11).Tolerance()
	for i, c := range convCases {
		for v := range 3 {
			weight, bias := v != 1, v != 2
			n := c.node("Conv")
			ins := []input{{shape: c.x}, {shape: c.w, weight: weight}}
			if bias {
				ins = append(ins, input{shape: []int64{c.w[0]}, weight: weight})
			} else {
				n.Inputs = n.Inputs[:2]
			}
			what := fmt.Sprintf("Conv %v weights=%v bias=%v", c, weight, bias)
			gpu, cpu, ok := runRandom(t, d, n, 11, ins, uniform(-1, 1), uint64(i))
			if !ok {
				t.Fatalf("%s unsupported", what)
			}
			kerneltest.CompareFloats(t, what, gpu, cpu, tol)
		}
	}
}

// TestConvTransposeMatchesCPU checks ConvTranspose against the CPU kernel
// over 1-D, 2-D and 3-D, groups, strides, dilations, pads, output_padding,
// output_shape and auto_pad, with W and B weights and runtime values, and
// B absent.
func TestConvTransposeMatchesCPU(t *testing.T) {
	d := openTest(t)
	tol := ops.Lookup("", "ConvTranspose", 11).Tolerance()
	cases := []convCase{
		{[]int64{1, 1, 1, 1}, []int64{1, 1, 1, 1}, nil},
		{[]int64{1, 3, 7, 6}, []int64{3, 5, 3, 3}, []*graph.Attribute{kerneltest.IntsAttr("pads", 1, 1, 1, 1)}},
		{[]int64{2, 4, 5, 7}, []int64{4, 3, 3, 3}, []*graph.Attribute{kerneltest.IntAttr("group", 2), kerneltest.IntsAttr("strides", 2, 3), kerneltest.IntsAttr("pads", 0, 1, 2, 0),
			kerneltest.IntsAttr("output_padding", 1, 2)}},
		{[]int64{1, 13, 9, 9}, []int64{13, 1, 3, 3}, []*graph.Attribute{kerneltest.IntAttr("group", 13), kerneltest.IntsAttr("strides", 2, 2), kerneltest.IntsAttr("dilations", 2, 1)}},
		{[]int64{1, 8, 6, 6}, []int64{8, 4, 4, 4}, []*graph.Attribute{kerneltest.IntsAttr("strides", 2, 2), kerneltest.StringAttr("auto_pad", "SAME_UPPER")}},
		{[]int64{1, 8, 6, 5}, []int64{8, 4, 3, 3}, []*graph.Attribute{kerneltest.IntsAttr("strides", 3, 2), kerneltest.IntsAttr("output_shape", 18, 11), kerneltest.StringAttr("auto_pad", "SAME_LOWER")}},
		{[]int64{2, 3, 127}, []int64{3, 4, 5}, []*graph.Attribute{kerneltest.IntsAttr("strides", 3), kerneltest.IntsAttr("pads", 2, 1)}},
		{[]int64{1, 2, 3, 4, 5}, []int64{2, 3, 3, 2, 3}, []*graph.Attribute{kerneltest.IntsAttr("strides", 1, 2, 2), kerneltest.IntsAttr("pads", 1, 0, 1, 1, 1, 0)}},
	}
	for i, c := range cases {
		for v := range 3 {
			weight, bias := v != 1, v != 2
			n := c.node("ConvTranspose")
			ins := []input{{shape: c.x}, {shape: c.w, weight: weight}}
			if bias {
				ins = append(ins, input{shape: []int64{c.w[1] * max(1, n.AttrInt("group", 1))}, weight: weight})
			} else {
				n.Inputs = n.Inputs[:2]
			}
			what := fmt.Sprintf("ConvTranspose %v weights=%v bias=%v", c, weight, bias)
			gpu, cpu, ok := runRandom(t, d, n, 11, ins, uniform(-1, 1), uint64(i))
			if !ok {
				t.Fatalf("%s unsupported", what)
			}
			kerneltest.CompareFloats(t, what, gpu, cpu, tol)
		}
	}
}

// TestFusedConvMatchesCPU plans Conv followed by each activation the
// planner fuses, checks that the fused node runs on Vulkan and compares
// the result with the same plan on the CPU.
func TestFusedConvMatchesCPU(t *testing.T) {
	d := openTest(t)
	tol := ops.Lookup(ops.FusedDomain, "FusedConv", 1).Tolerance()
	acts := []struct {
		op    string
		attrs map[string]*graph.Attribute
		// bounds are Clip's constant inputs.
		bounds []float32
	}{
		{"Relu", nil, nil},
		{"Sigmoid", nil, nil},
		{"LeakyRelu", map[string]*graph.Attribute{"alpha": {Name: "alpha", Type: graph.AttrFloat, F: 0.2}}, nil},
		{"Clip", nil, []float32{-0.5, 0.75}},
	}
	for i, c := range []convCase{convCases[2], convCases[4], convCases[8]} {
		for _, a := range acts {
			g := graph.NewGraph("fused")
			r := rand.New(rand.NewPCG(uint64(i), 3))
			random := func(shape []int64) *graph.Tensor {
				x := graph.NewTensor(graph.Float, shape)
				xs := graph.View[float32](x)
				for j := range xs {
					xs[j] = 2*r.Float32() - 1
				}
				return x
			}
			x := random(c.x)
			g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(c.x...))}}
			g.Initializers["w"], g.Initializers["b"] = random(c.w), random([]int64{c.w[0]})
			actNode := &graph.Node{OpType: a.op, Inputs: []string{"c"}, Outputs: []string{"y"}, Attrs: a.attrs}
			for k, v := range a.bounds {
				name := fmt.Sprintf("bound%d", k)
				g.Initializers[name], _ = graph.FromSlice(graph.Float, nil, []float32{v})
				actNode.Inputs = append(actNode.Inputs, name)
			}
			conv := c.node("Conv")
			conv.Outputs = []string{"c"}
			g.Nodes = []*graph.Node{conv, actNode}
			g.Outputs = []*graph.ValueInfo{{Name: "y"}}
			m := &graph.Model{Name: "fused", IRVersion: 8, Opsets: map[string]int64{"": 13}, Graph: g}
			what := fmt.Sprintf("Conv %v + %s", c, a.op)
			gpu := runConvModel(t, m, map[string]graph.Value{"x": x}, true, d)
			cpu := runConvModel(t, m, map[string]graph.Value{"x": x}, true)
			kerneltest.CompareFloats(t, what, gpu, cpu, tol)
		}
	}
}

// TestFusedConvSumMatchesCPU checks the FusedConv forms whose tail
// conv.comp adds in the store: a residual Add of a runtime value (alone
// and followed by Relu), and SiLU written as Sigmoid and Mul (the Swish
// activation). runModel requires the fused node to run on Vulkan.
func TestFusedConvSumMatchesCPU(t *testing.T) {
	d := openTest(t)
	tol := ops.Lookup(ops.FusedDomain, "FusedConv", 1).Tolerance()
	tails := map[string][]*graph.Node{
		"Add": {{OpType: "Add", Inputs: []string{"s", "c"}, Outputs: []string{"y"}}},
		"Add+Relu": {{OpType: "Add", Inputs: []string{"c", "s"}, Outputs: []string{"a"}},
			{OpType: "Relu", Inputs: []string{"a"}, Outputs: []string{"y"}}},
		"Sigmoid*": {{OpType: "Sigmoid", Inputs: []string{"c"}, Outputs: []string{"g"}},
			{OpType: "Mul", Inputs: []string{"c", "g"}, Outputs: []string{"y"}}},
	}
	for i, c := range []convCase{convCases[1], convCases[2], convCases[7]} {
		for _, name := range slices.Sorted(maps.Keys(tails)) {
			r := rand.New(rand.NewPCG(uint64(i), 5))
			random := func(shape []int64) *graph.Tensor { return kerneltest.RandFloats(r, shape, -1, 1) }
			conv := c.node("Conv")
			conv.Outputs = []string{"c"}
			g := graph.NewGraph("fused")
			g.Initializers["w"], g.Initializers["b"] = random(c.w), random([]int64{c.w[0]})
			x := random(c.x)
			g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(c.x...))}}
			g.Nodes = append([]*graph.Node{conv}, tails[name]...)
			g.Outputs = []*graph.ValueInfo{{Name: "y"}}
			feeds := map[string]graph.Value{"x": x}
			if name != "Sigmoid*" {
				p, err := planner.New(&graph.Model{Name: "shape", IRVersion: 8, Opsets: map[string]int64{"": 13}, Graph: &graph.Graph{
					Inputs: g.Inputs, Initializers: g.Initializers, Nodes: []*graph.Node{conv}, Outputs: []*graph.ValueInfo{{Name: "c"}}}},
					planner.Options{Devices: []planner.Device{hostfallback.NewDevice(nil)}})
				if err != nil {
					t.Fatal(err)
				}
				out := p.Types[p.ValueIndex["c"]].Shape
				g.Inputs = append(g.Inputs, &graph.ValueInfo{Name: "s", Type: graph.TensorType(graph.Float, out)})
				feeds["s"] = random(out.Ints())
			}
			m := &graph.Model{Name: "fused", IRVersion: 8, Opsets: map[string]int64{"": 13}, Graph: g}
			what := fmt.Sprintf("Conv %v + %s", c, name)
			gpu := runConvModel(t, m, feeds, true, d)
			cpu := runConvModel(t, m, feeds, true)
			kerneltest.CompareFloats(t, what, gpu, cpu, tol)
		}
	}
}

// runConvModel plans m on devices followed by the CPU, checks that every
// compute step runs on the first device and, when fused is set, that the
// planner fused something, and returns output y.
func runConvModel(t *testing.T, m *graph.Model, feeds map[string]graph.Value, fused bool, devices ...backend.Device) *graph.Tensor {
	t.Helper()
	devices = append(devices, hostfallback.NewDevice(nil))
	pd := make([]planner.Device, len(devices))
	for i, dev := range devices {
		pd[i] = dev
	}
	p, err := planner.New(m, planner.Options{Devices: pd})
	if err != nil {
		t.Fatal(err)
	}
	if fused && p.Fused == 0 {
		t.Fatalf("%s: nothing fused", devices[0].Name())
	}
	for _, st := range p.Steps {
		if st.Kind == planner.Compute && st.Device != devices[0].Name() {
			t.Fatalf("%s planned on %s", st.Node, st.Device)
		}
	}
	ex, err := backend.NewExecutor(p, devices)
	if err != nil {
		t.Fatal(err)
	}
	out, err := ex.Run(context.Background(), feeds)
	if err != nil {
		t.Fatal(err)
	}
	return out["y"].(*graph.Tensor)
}

// TestConvUnsupported checks that convolutions the kernel does not handle
// are refused.
func TestConvUnsupported(t *testing.T) {
	d := openTest(t)
	f32 := func(dims ...int64) *graph.Type { return graph.TensorType(graph.Float, graph.ShapeOf(dims...)) }
	conv := func(attrs ...*graph.Attribute) *graph.Node {
		return convCase{attrs: attrs}.node("Conv")
	}
	fused := conv(kerneltest.StringAttr("activation", "Tanh"))
	fused.OpType, fused.Domain = "FusedConv", ops.FusedDomain
	cases := []struct {
		n  *graph.Node
		in []*graph.Type
	}{
		{conv(), []*graph.Type{f32(1, 2, 3, 4, 5, 6), f32(1, 2, 1, 1, 1, 1)}},
		{conv(), []*graph.Type{f32(1, 2, 3, 4), f32(1, 3, 1, 1)}},
		{conv(kerneltest.IntAttr("group", 2)), []*graph.Type{f32(1, 4, 3, 4), f32(3, 2, 1, 1)}},
		{conv(), []*graph.Type{f32(1, 2, 3, 4), f32(1, 2, 5, 1)}},
		{conv(kerneltest.IntsAttr("kernel_shape", 3, 3)), []*graph.Type{f32(1, 2, 3, 4), f32(1, 2, 1, 1)}},
		{conv(), []*graph.Type{f32(1, 2, 3, 4), f32(3, 2, 1, 1), f32(2)}},
		{conv(kerneltest.StringAttr("auto_pad", "SAME")), []*graph.Type{f32(1, 2, 3, 4), f32(3, 2, 1, 1)}},
		{fused, []*graph.Type{f32(1, 2, 3, 4), f32(3, 2, 1, 1)}},
		{&graph.Node{OpType: "MaxPool", Attrs: map[string]*graph.Attribute{"kernel_shape": kerneltest.IntsAttr("kernel_shape", 2, 2)}, Outputs: []string{"y", "i"}},
			[]*graph.Type{f32(1, 2, 3, 4)}},
		{&graph.Node{OpType: "BatchNormalization", Attrs: map[string]*graph.Attribute{"training_mode": kerneltest.IntAttr("training_mode", 1)}},
			[]*graph.Type{f32(1, 2, 3), f32(2), f32(2), f32(2), f32(2)}},
		{&graph.Node{OpType: "BatchNormalization"}, []*graph.Type{f32(1, 2, 3), f32(3), f32(2), f32(2), f32(2)}},
	}
	for _, c := range cases {
		if c.n.Outputs == nil {
			c.n.Outputs = []string{"y"}
		}
		c.n.Inputs = make([]string, len(c.in))
		if d.Supports(planner.Query{Node: c.n, Opset: 15, Inputs: c.in}) {
			t.Errorf("%s %v: supported, want unsupported", c.n.OpType, c.in)
		}
	}
}
