package vulkan

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/hostfallback"
	"github.com/onnxvk/onnxvk/internal/kerneltest"
	"github.com/onnxvk/onnxvk/internal/testenv"
	"github.com/onnxvk/onnxvk/planner"
)

// openTest opens the default Vulkan device with opts, closed when the
// test ends, or skips (fails under ONNXVK_REQUIRE_TOOLS) when there is
// none.
func openTest(t testing.TB, opts ...OpenOption) *Device {
	t.Helper()
	d, err := Open("vulkan", opts...)
	if errors.Is(err, backend.ErrDeviceUnavailable) {
		testenv.Skip(t, fmt.Sprintf("no Vulkan device: %v", err))
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Error(err)
		}
	})
	return d
}

// input is one input of a test node: a random float32 runtime value or
// weight of the given shape, or the constant value.
type input struct {
	shape  []int64
	weight bool
	value  *graph.Tensor
}

// runRandom runs node n through kerneltest.Run on d and on the CPU, its
// float32 inputs drawn from gen seeded by seed: runtime values and
// weights (constants) of the given shapes, and the given constants. It
// returns output 0 of both; ok is false when d declines the node.
func runRandom(t *testing.T, d *Device, n *graph.Node, opset int64, ins []input, gen func(*rand.Rand) float32, seed uint64) (gpu, cpu *graph.Tensor, ok bool) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	c := kerneltest.Case{Node: n, Opset: opset, Args: make([]kerneltest.Arg, len(ins))}
	for i, in := range ins {
		if n.Inputs[i] == "" {
			continue
		}
		if in.value != nil {
			c.Args[i] = kerneltest.Arg{T: in.value, Const: true}
			continue
		}
		x := graph.NewTensor(graph.Float, in.shape)
		xs := graph.View[float32](x)
		for j := range xs {
			xs[j] = gen(r)
		}
		c.Args[i] = kerneltest.Arg{T: x, Const: in.weight}
	}
	got, want, ok := kerneltest.Run(t, d, c)
	if !ok {
		return nil, nil, false
	}
	return got[0], want[0], true
}

func uniform(lo, hi float32) func(*rand.Rand) float32 {
	return func(r *rand.Rand) float32 { return lo + (hi-lo)*r.Float32() }
}

var oddShapes = [][]int64{{}, {1}, {13}, {127}, {3, 5}, {2, 3, 7}, {1, 2, 3, 4}, {2, 1, 3, 1, 5}, {1, 2, 1, 3, 2, 3}, {70000}}

// TestUnaryMatchesCPU checks every op of unary.comp and Clip against the
// CPU kernels.
func TestUnaryMatchesCPU(t *testing.T) {
	d := openTest(t)
	// Tan's half near its poles, (k+1/2)pi ± up to 1e-2, where it is
	// ill-conditioned (NVIDIA's tan as sin/cos was off by over 1e-3 there).
	nearPoles := func(r *rand.Rand) float32 {
		if r.IntN(2) == 0 {
			return r.Float32()*8 - 4
		}
		d := math.Pow(10, -2-4*r.Float64())
		if r.IntN(2) == 0 {
			d = -d
		}
		return float32((float64(r.IntN(6)-3)+0.5)*math.Pi + d)
	}
	domain := map[string]func(*rand.Rand) float32{"Sqrt": uniform(0, 10), "Log": uniform(0.01, 10), "Reciprocal": uniform(0.5, 4),
		"Asin": uniform(-1, 1), "Acos": uniform(-1, 1), "Atanh": uniform(-0.99, 0.99), "Acosh": uniform(1, 10), "Tan": nearPoles}
	opsets := map[string]int64{"Gelu": 20, "Mish": 18, "Swish": 24}
	attrs := map[string]map[string]*graph.Attribute{
		"LeakyRelu":   {"alpha": {Name: "alpha", Type: graph.AttrFloat, F: 0.3}},
		"Elu":         {"alpha": {Name: "alpha", Type: graph.AttrFloat, F: 0.7}},
		"HardSigmoid": {"alpha": {Name: "alpha", Type: graph.AttrFloat, F: 0.3}, "beta": {Name: "beta", Type: graph.AttrFloat, F: 0.4}},
		"Swish":       {"alpha": {Name: "alpha", Type: graph.AttrFloat, F: 0.7}},
	}
	for op := range unaryOps {
		t.Run(op, func(t *testing.T) {
			if hostfallback.Lookup("", op) == nil {
				t.Fatalf("%s has no CPU kernel to compare with", op)
			}
			gen := domain[op]
			if gen == nil {
				gen = uniform(-4, 4)
			}
			opset := max(17, opsets[op])
			for i, shape := range oddShapes {
				n := &graph.Node{OpType: op, Inputs: []string{"x"}, Outputs: []string{"y"}, Attrs: attrs[op]}
				gpu, cpu, ok := runRandom(t, d, n, opset, []input{{shape: shape}}, gen, uint64(i))
				if !ok {
					t.Fatalf("%s %v unsupported", op, shape)
				}
				kerneltest.CompareFloats(t, fmt.Sprintf("%s %v", op, shape), gpu, cpu, ops.Lookup("", op, opset).Tolerance())
			}
		})
	}
}

// broadcastPairs are input shape pairs for binary ops: equal, scalar,
// numpy broadcasting both ways, rank 0 to 6.
var broadcastPairs = [][2][]int64{
	{{}, {}}, {{1}, {1}}, {{13}, {13}}, {{127}, {}}, {{}, {127}}, {{3, 1}, {1, 5}}, {{2, 3, 7}, {7}},
	{{2, 1, 7}, {3, 1}}, {{1, 2, 3, 4}, {2, 1, 4}}, {{2, 1, 3, 1, 5}, {3, 4, 1}}, {{1, 2, 1, 3, 2, 3}, {2, 2, 1, 1, 3}},
	{{70000}, {1}},
}

// TestBinaryMatchesCPU checks every op of binary.comp against the CPU
// kernels over broadcast shapes, with the second input a runtime value and
// a weight. Div must equal the CPU's quotients bit for bit: it rounds as
// an IEEE 754 division does (binary.glsl), where a GPU's OpFDiv may not
// (lavapipe's does, so there it cannot fail).
func TestBinaryMatchesCPU(t *testing.T) {
	d := openTest(t)
	for op := range binaryOps {
		t.Run(op, func(t *testing.T) {
			gen := uniform(-4, 4)
			tol := ops.Lookup("", op, 17).Tolerance()
			var attrs map[string]*graph.Attribute
			switch op {
			case "Div":
				gen = func(r *rand.Rand) float32 { return (0.5 + 3*r.Float32()) * float32(1-2*r.IntN(2)) }
				tol = ops.Tolerance{}
			case "Mod":
				attrs = map[string]*graph.Attribute{"fmod": {Name: "fmod", Type: graph.AttrInt, I: 1}}
			}
			for i, pair := range broadcastPairs {
				a, b := pair[0], pair[1]
				if op == "PRelu" {
					if out, _ := broadcast(a, b); len(out) != len(a) || fmt.Sprint(out) != fmt.Sprint(a) {
						continue
					}
				}
				for _, weight := range []bool{false, true} {
					n := &graph.Node{OpType: op, Inputs: []string{"a", "b"}, Outputs: []string{"y"}, Attrs: attrs}
					gpu, cpu, ok := runRandom(t, d, n, 17, []input{{shape: a}, {shape: b, weight: weight}}, gen, uint64(i))
					if !ok {
						t.Fatalf("%s %v %v unsupported", op, a, b)
					}
					kerneltest.CompareFloats(t, fmt.Sprintf("%s %v %v", op, a, b), gpu, cpu, tol)
				}
			}
		})
	}
}

// TestClipMatchesCPU checks Clip with attribute bounds (opset 6) and with
// optional input bounds (opset 13).
func TestClipMatchesCPU(t *testing.T) {
	d := openTest(t)
	tol := ops.Lookup("", "Clip", 13).Tolerance()
	for i, shape := range oddShapes {
		n := &graph.Node{OpType: "Clip", Inputs: []string{"x"}, Outputs: []string{"y"}, Attrs: map[string]*graph.Attribute{
			"min": {Name: "min", Type: graph.AttrFloat, F: -1}, "max": {Name: "max", Type: graph.AttrFloat, F: 2}}}
		gpu, cpu, ok := runRandom(t, d, n, 6, []input{{shape: shape}}, uniform(-4, 4), uint64(i))
		if !ok {
			t.Fatalf("Clip-6 %v unsupported", shape)
		}
		kerneltest.CompareFloats(t, fmt.Sprintf("Clip-6 %v", shape), gpu, cpu, tol)
		for _, names := range [][]string{{"x", "lo", "hi"}, {"x", "lo"}, {"x", "", "hi"}, {"x"}} {
			ins := []input{{shape: shape}, {shape: []int64{}, weight: true}, {shape: []int64{}}}[:len(names)]
			n := &graph.Node{OpType: "Clip", Inputs: names, Outputs: []string{"y"}}
			gpu, cpu, ok := runRandom(t, d, n, 13, ins, uniform(-4, 4), uint64(i))
			if !ok {
				t.Fatalf("Clip-13 %v %q unsupported", shape, names)
			}
			kerneltest.CompareFloats(t, fmt.Sprintf("Clip-13 %v %q", shape, names), gpu, cpu, tol)
		}
	}
}

// TestUnsupported checks that nodes without a kernel for their types or
// attributes are refused.
func TestUnsupported(t *testing.T) {
	d := openTest(t)
	f32 := func(dims ...int64) *graph.Type { return graph.TensorType(graph.Float, graph.ShapeOf(dims...)) }
	cases := []struct {
		n     *graph.Node
		opset int64
		in    []*graph.Type
	}{
		{&graph.Node{OpType: "Relu"}, 17, []*graph.Type{graph.TensorType(graph.Int64, graph.ShapeOf(3))}},
		{&graph.Node{OpType: "Relu"}, 17, []*graph.Type{graph.TensorType(graph.Float, nil)}},
		{&graph.Node{OpType: "Add"}, 17, []*graph.Type{graph.TensorType(graph.Float, graph.Shape{graph.SymDim("N")}), f32(3)}},
		{&graph.Node{OpType: "Relu"}, 17, []*graph.Type{f32(0)}},
		{&graph.Node{OpType: "Add"}, 6, []*graph.Type{f32(3), f32(3)}},
		{&graph.Node{OpType: "Add"}, 17, []*graph.Type{f32(3), f32(4)}},
		{&graph.Node{OpType: "Add"}, 17, []*graph.Type{f32(1, 1, 1, 1, 1, 1, 1, 1, 2), f32(2)}},
		{&graph.Node{OpType: "Max"}, 17, []*graph.Type{f32(3), f32(3), f32(3)}},
		{&graph.Node{OpType: "PRelu"}, 17, []*graph.Type{f32(3), f32(2, 3)}},
		{&graph.Node{OpType: "Mod"}, 17, []*graph.Type{f32(3), f32(3)}},
		{&graph.Node{OpType: "Gelu", Attrs: map[string]*graph.Attribute{"approximate": {Name: "approximate", Type: graph.AttrString, S: []byte("erf")}}}, 20, []*graph.Type{f32(3)}},
		{&graph.Node{OpType: "Clip"}, 13, []*graph.Type{f32(3), f32(2)}},
		{&graph.Node{OpType: "MatMul"}, 17, []*graph.Type{f32(3, 4), f32(3, 4)}},
		{&graph.Node{OpType: "MatMul"}, 17, []*graph.Type{f32(2, 1, 1, 1, 1, 3, 4), f32(4, 3)}},
		{&graph.Node{OpType: "MatMul"}, 17, []*graph.Type{f32(), f32(3)}},
		{&graph.Node{OpType: "Gemm"}, 6, []*graph.Type{f32(3, 4), f32(4, 3)}},
		{&graph.Node{OpType: "Gemm"}, 13, []*graph.Type{f32(3, 4), f32(4, 5), f32(4, 5)}},
		{&graph.Node{OpType: "Relu", Domain: "com.example"}, 1, []*graph.Type{f32(3)}},
		{&graph.Node{OpType: "Softmax"}, 13, []*graph.Type{f32()}},
		{&graph.Node{OpType: "Softmax", Attrs: map[string]*graph.Attribute{"axis": {Name: "axis", Type: graph.AttrInt, I: 2}}}, 13, []*graph.Type{f32(3, 4)}},
		{&graph.Node{OpType: "ReduceSum"}, 13, []*graph.Type{f32(3, 4), graph.TensorType(graph.Int64, graph.ShapeOf(1))}},
		{&graph.Node{OpType: "ReduceMean", Attrs: map[string]*graph.Attribute{"noop_with_empty_axes": {Name: "noop_with_empty_axes", Type: graph.AttrInt, I: 1}}}, 18, []*graph.Type{f32(3)}},
		{&graph.Node{OpType: "LayerNormalization", Attrs: map[string]*graph.Attribute{"stash_type": {Name: "stash_type", Type: graph.AttrInt, I: int64(graph.Double)}}}, 17, []*graph.Type{f32(3, 4), f32(4)}},
		{&graph.Node{OpType: "LayerNormalization"}, 17, []*graph.Type{f32(3, 4), f32(2)}},
		{&graph.Node{OpType: "LayerNormalization"}, 17, []*graph.Type{f32(3, 4), f32(3, 4)}},
		{&graph.Node{OpType: "Transpose"}, 13, []*graph.Type{f32(1, 1, 1, 1, 1, 1, 2)}},
		{&graph.Node{OpType: "Transpose", Attrs: map[string]*graph.Attribute{"perm": {Name: "perm", Type: graph.AttrInts, Ints: []int64{0, 0}}}}, 13, []*graph.Type{f32(2, 2)}},
	}
	for _, c := range cases {
		if c.n.Outputs == nil {
			c.n.Outputs = []string{"y"}
		}
		if d.Supports(planner.Query{Node: c.n, Opset: c.opset, Inputs: c.in}) {
			t.Errorf("%s-%d on %v: supported, want unsupported", c.n.OpType, c.opset, c.in)
		}
	}
}

// TestCopyOnce checks the staging upload that weights take on devices
// whose device-local memory the host cannot map, reading the result back
// through a second copy into host-visible memory.
func TestCopyOnce(t *testing.T) {
	d := openTest(t)
	b, err := d.newBuffer(1000, false)
	if err != nil {
		t.Fatal(err)
	}
	defer b.free(d.dev)
	src, err := d.newBuffer(1000, true)
	if err != nil {
		t.Fatal(err)
	}
	defer src.free(d.dev)
	for i := range src.mapped {
		src.mapped[i] = byte(i * 7)
	}
	if err := d.copyOnce(src, b, 1000); err != nil {
		t.Fatal(err)
	}
	back, err := d.newBuffer(1000, true)
	if err != nil {
		t.Fatal(err)
	}
	defer back.free(d.dev)
	if err := d.copyOnce(b, back, 1000); err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		if back.mapped[i] != src.mapped[i] {
			t.Fatalf("byte %d = %d, want %d", i, back.mapped[i], src.mapped[i])
		}
	}
}

// TestInstanceOutlivesDevices opens and closes a device 40 times, with no
// other device open in between: the process's instance is created once and
// kept (the NVIDIA driver refuses new instances after about 30 in one
// process).
func TestInstanceOutlivesDevices(t *testing.T) {
	var first uintptr
	for i := range 40 {
		d := openTest(t)
		instance.Lock()
		h := instance.handle
		instance.Unlock()
		if i == 0 {
			first = h
		}
		if h != first {
			t.Fatalf("open %d: a new instance", i)
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOpenByNameOrUUID opens the default device by its index, its name in
// another case and its UUID with and without dashes: the same device.
func TestOpenByNameOrUUID(t *testing.T) {
	d := openTest(t)
	info := d.Info()
	if len(info.UUID) != 36 || strings.Count(info.UUID, "-") != 4 {
		t.Fatalf("UUID %q is not 8-4-4-4-12 hexadecimal digits", info.UUID)
	}
	for _, id := range []string{fmt.Sprint(info.Index), strings.ToUpper(info.Name), info.UUID, strings.ReplaceAll(strings.ToUpper(info.UUID), "-", "")} {
		other, err := Open("vulkan:" + id)
		if err != nil {
			t.Fatalf("vulkan:%s: %v", id, err)
		}
		if got := other.Info(); got.Index != info.Index || got.UUID != info.UUID {
			t.Errorf("vulkan:%s opened vulkan:%d", id, got.Index)
		}
		if err := other.Close(); err != nil {
			t.Fatal(err)
		}
	}
	_, err := Open("vulkan:no such GPU")
	if !errors.Is(err, backend.ErrDeviceUnavailable) || !strings.Contains(err.Error(), info.UUID) || strings.HasSuffix(err.Error(), "device unavailable") {
		t.Errorf("an unknown name: %v (want ErrDeviceUnavailable, listing the devices, without the sentinel's text)", err)
	}
}
