package vulkan

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/onnxvk/onnxvk/shaders"

	"github.com/x448/float16"

	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/hostfallback"
	"github.com/onnxvk/onnxvk/internal/kerneltest"
	"github.com/onnxvk/onnxvk/internal/testenv"
	"github.com/onnxvk/onnxvk/planner"
)

// openHalf opens the default device in the fp16 weight mode and skips the
// test where the device has no 16-bit storage.
func openHalf(t *testing.T) *Device {
	t.Helper()
	d, err := Open("vulkan", WithFP16())
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
	if on, reason := d.FP16(); !on {
		testenv.Skip(t, "no fp16 weight mode: "+reason)
	}
	return d
}

// halfCase is a model of one matrix product or convolution (possibly
// followed by what the planner fuses into it) reading graph input x and
// weight w, with further weights of the given shapes, writing y; bound is
// the bare product of x and w, run on |x| and |w| to get Σ|x|·|w| per
// output element.
type halfCase struct {
	what   string
	tol    ops.Tolerance
	x, w   []int64
	extra  map[string][]int64
	nodes  []*graph.Node
	bound  *graph.Node
	opsets map[string]int64
}

// model returns c's model with these values of x, w and the extra
// weights.
func (c halfCase) model(w *graph.Tensor, extra map[string]*graph.Tensor, nodes ...*graph.Node) *graph.Model {
	g := graph.NewGraph("half")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(c.x...))}}
	g.Initializers["w"] = w
	for name, t := range extra {
		g.Initializers[name] = t
	}
	g.Nodes = nodes
	g.Outputs = []*graph.ValueInfo{{Name: "y"}}
	return &graph.Model{Name: c.what, IRVersion: 8, Opsets: c.opsets, Graph: g}
}

// runHalfModel plans m on devices followed by the CPU, checks that every compute
// step runs on the first device, and returns output y.
func runHalfModel(t *testing.T, m *graph.Model, x *graph.Tensor, devices ...backend.Device) (*graph.Tensor, *planner.Plan) {
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
	for _, st := range p.Steps {
		if st.Kind == planner.Compute && st.Device != devices[0].Name() {
			t.Fatalf("%s: %s planned on %s", m.Name, st.Node, st.Device)
		}
	}
	ex, err := backend.NewExecutor(p, devices)
	if err != nil {
		t.Fatal(err)
	}
	out, err := ex.Run(context.Background(), map[string]graph.Value{"x": x})
	if err != nil {
		t.Fatal(err)
	}
	return out["y"].(*graph.Tensor), p
}

// mapFloats returns a float32 tensor of t's shape holding f of each value.
func mapFloats(t *graph.Tensor, f func(float32) float32) *graph.Tensor {
	out := graph.NewTensor(graph.Float, t.Shape)
	o := graph.View[float32](out)
	for i, v := range graph.View[float32](t) {
		o[i] = f(v)
	}
	return out
}

// roundHalf is v rounded to fp16 the way weights are uploaded.
func roundHalf(v float32) float32 {
	return float16.Frombits(binary.LittleEndian.Uint16(halfBytes([]float32{v}))).Float32()
}

// check runs c on d and checks y against the CPU kernels: within the op's
// fp32 tolerance of the CPU result with w rounded to fp16 (so the kernel
// computes in fp32 on fp16 weights), and within the op's fp16 tolerance,
// the fp32 tolerance plus ops.HalfWeightError·Σ|x|·|w|, of the fp32 result.
// It fails when the kernel did not read w as fp16. It returns the largest
// difference from the fp32 result.
func (c halfCase) check(t *testing.T, d *Device, seed uint64) float64 {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 11))
	random := func(shape []int64) *graph.Tensor {
		x := graph.NewTensor(graph.Float, shape)
		for i := range graph.View[float32](x) {
			graph.View[float32](x)[i] = 2*r.Float32() - 1
		}
		return x
	}
	x, w := random(c.x), random(c.w)
	extra := map[string]*graph.Tensor{}
	for name, shape := range c.extra {
		extra[name] = random(shape)
	}
	halves := len(d.half.weights)
	gpu, p := runHalfModel(t, c.model(w, extra, c.nodes...), x, d)
	if len(c.nodes) > 1 && p.Fused == 0 {
		t.Fatalf("%s: nothing fused", c.what)
	}
	if len(d.half.weights) == halves {
		t.Fatalf("%s: the kernel did not read w as fp16", c.what)
	}
	cpu, _ := runHalfModel(t, c.model(w, extra, c.nodes...), x)
	rounded, _ := runHalfModel(t, c.model(mapFloats(w, roundHalf), extra, c.nodes...), x)
	abs := func(v float32) float32 { return float32(math.Abs(float64(v))) }
	sums, _ := runHalfModel(t, c.model(mapFloats(w, abs), nil, c.bound), mapFloats(x, abs))
	kerneltest.CompareFloats(t, c.what+" (fp16-rounded weights on the CPU)", gpu, rounded, c.tol)
	if fmt.Sprint(gpu.Shape) != fmt.Sprint(cpu.Shape) || fmt.Sprint(sums.Shape) != fmt.Sprint(cpu.Shape) {
		t.Fatalf("%s: shapes %v (GPU), %v (CPU), %v (bound)", c.what, gpu.Shape, cpu.Shape, sums.Shape)
	}
	g, want, s := graph.View[float32](gpu), graph.View[float32](cpu), graph.View[float32](sums)
	worst, bad := 0.0, 0
	for i := range want {
		diff := math.Abs(float64(g[i]) - float64(want[i]))
		worst = max(worst, diff)
		if !c.tol.HalfWeights(float64(s[i])).Within(float64(g[i]), float64(want[i])) {
			if bad < 3 {
				t.Errorf("%s: element %d = %v, want %v within the fp16 tolerance (Σ|x|·|w| = %v)", c.what, i, g[i], want[i], s[i])
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d elements out of the fp16 tolerance", c.what, bad, len(want))
	}
	return worst
}

func attrs(as ...*graph.Attribute) map[string]*graph.Attribute {
	m := map[string]*graph.Attribute{}
	for _, a := range as {
		m[a.Name] = a
	}
	return m
}

// TestHalfMatMulMatchesCPU checks MatMul, Gemm and FusedMatMul with fp16
// weights on every schedule of matmul.comp, over odd shapes, few rows,
// 1-D promotion and batch broadcasting.
func TestHalfMatMulMatchesCPU(t *testing.T) {
	d := openHalf(t)
	opsets := map[string]int64{"": 13}
	var cases []halfCase
	for _, pair := range [][2][]int64{{{13, 127}, {127, 3}}, {{13}, {13, 5}}, {{7, 13}, {13}}, {{2, 3, 70, 65}, {65, 129}},
		{{5, 33}, {33, 600}}, {{1, 1}, {1, 1}}, {{2, 1, 3, 5}, {4, 5, 6}}, {{1, 257}, {257, 129}}, {{3, 2, 65}, {65, 33}}} {
		mm := &graph.Node{OpType: "MatMul", Inputs: []string{"x", "w"}, Outputs: []string{"y"}}
		cases = append(cases, halfCase{what: fmt.Sprintf("MatMul %v %v", pair[0], pair[1]), tol: ops.Lookup("", "MatMul", 13).Tolerance(),
			x: pair[0], w: pair[1], nodes: []*graph.Node{mm}, bound: mm, opsets: opsets})
	}
	alpha := &graph.Attribute{Name: "alpha", Type: graph.AttrFloat, F: 0.75}
	beta := &graph.Attribute{Name: "beta", Type: graph.AttrFloat, F: -1.5}
	transA := &graph.Attribute{Name: "transA", Type: graph.AttrInt, I: 1}
	transB := &graph.Attribute{Name: "transB", Type: graph.AttrInt, I: 1}
	gemmTB := attrs(alpha, beta, transB)
	gemmTA := attrs(transA)
	cases = append(cases,
		halfCase{what: "Gemm transB alpha beta C[127]", tol: ops.Lookup("", "Gemm", 13).Tolerance(), x: []int64{13, 66}, w: []int64{127, 66},
			extra: map[string][]int64{"c": {127}}, opsets: opsets,
			nodes: []*graph.Node{{OpType: "Gemm", Inputs: []string{"x", "w", "c"}, Outputs: []string{"y"}, Attrs: gemmTB}},
			bound: &graph.Node{OpType: "Gemm", Inputs: []string{"x", "w"}, Outputs: []string{"y"}, Attrs: attrs(alpha, transB)}},
		halfCase{what: "Gemm transB alpha beta C[127] one row", tol: ops.Lookup("", "Gemm", 13).Tolerance(), x: []int64{1, 66}, w: []int64{127, 66},
			extra: map[string][]int64{"c": {127}}, opsets: opsets,
			nodes: []*graph.Node{{OpType: "Gemm", Inputs: []string{"x", "w", "c"}, Outputs: []string{"y"}, Attrs: gemmTB}},
			bound: &graph.Node{OpType: "Gemm", Inputs: []string{"x", "w"}, Outputs: []string{"y"}, Attrs: attrs(alpha, transB)}},
		halfCase{what: "Gemm transA", tol: ops.Lookup("", "Gemm", 13).Tolerance(), x: []int64{66, 13}, w: []int64{66, 7}, opsets: opsets,
			nodes: []*graph.Node{{OpType: "Gemm", Inputs: []string{"x", "w"}, Outputs: []string{"y"}, Attrs: gemmTA}},
			bound: &graph.Node{OpType: "Gemm", Inputs: []string{"x", "w"}, Outputs: []string{"y"}, Attrs: gemmTA}},
	)
	for _, pair := range [][2][]int64{{{3, 70, 65}, {65, 129}}, {{13}, {13, 5}}, {{2, 1, 129}, {129, 65}}} {
		mm := &graph.Node{OpType: "MatMul", Inputs: []string{"x", "w"}, Outputs: []string{"p"}}
		add := &graph.Node{OpType: "Add", Inputs: []string{"p", "b"}, Outputs: []string{"y"}}
		cases = append(cases, halfCase{what: fmt.Sprintf("FusedMatMul %v %v", pair[0], pair[1]),
			tol: ops.Lookup(ops.FusedDomain, "FusedMatMul", 1).Tolerance(), x: pair[0], w: pair[1],
			extra: map[string][]int64{"b": {pair[1][1]}}, nodes: []*graph.Node{mm, add}, opsets: opsets,
			bound: &graph.Node{OpType: "MatMul", Inputs: []string{"x", "w"}, Outputs: []string{"y"}}})
	}
	forEachSchedule(t, d, func(t *testing.T) {
		for i, c := range cases {
			t.Logf("%s: max |fp16 - fp32| %.3g", c.what, c.check(t, d, uint64(i)))
		}
	})
}

// TestHalfConvMatchesCPU checks Conv, FusedConv and ConvTranspose with
// fp16 weights over 1-D, 2-D and 3-D, groups, depthwise, strides,
// dilations and pads, with and without bias.
func TestHalfConvMatchesCPU(t *testing.T) {
	d := openHalf(t)
	opsets := map[string]int64{"": 13}
	var cases []halfCase
	for i, c := range []convCase{convCases[1], convCases[2], convCases[4], convCases[7], convCases[16], convCases[17], convCases[0]} {
		conv := c.node("Conv")
		bound := c.node("Conv")
		bound.Inputs = bound.Inputs[:2]
		hc := halfCase{what: "Conv " + c.String(), tol: ops.Lookup("", "Conv", 13).Tolerance(), x: c.x, w: c.w,
			extra: map[string][]int64{"b": {c.w[0]}}, nodes: []*graph.Node{conv}, bound: bound, opsets: opsets}
		if i%2 == 1 {
			hc.what += " no bias"
			hc.extra, conv.Inputs = nil, conv.Inputs[:2]
		}
		cases = append(cases, hc)
	}
	for _, c := range []convCase{convCases[8], convCases[3]} {
		conv := c.node("Conv")
		conv.Outputs = []string{"c"}
		bound := c.node("Conv")
		bound.Inputs = bound.Inputs[:2]
		cases = append(cases, halfCase{what: "FusedConv " + c.String() + " + Relu", tol: ops.Lookup(ops.FusedDomain, "FusedConv", 1).Tolerance(),
			x: c.x, w: c.w, extra: map[string][]int64{"b": {c.w[0]}}, opsets: opsets, bound: bound,
			nodes: []*graph.Node{conv, {OpType: "Relu", Inputs: []string{"c"}, Outputs: []string{"y"}}}})
	}
	for _, c := range []convCase{
		{[]int64{1, 3, 7, 6}, []int64{3, 5, 3, 3}, []*graph.Attribute{kerneltest.IntsAttr("pads", 1, 1, 1, 1)}},
		{[]int64{2, 4, 5, 7}, []int64{4, 3, 3, 3}, []*graph.Attribute{kerneltest.IntAttr("group", 2), kerneltest.IntsAttr("strides", 2, 3), kerneltest.IntsAttr("pads", 0, 1, 2, 0),
			kerneltest.IntsAttr("output_padding", 1, 2)}},
		{[]int64{2, 3, 127}, []int64{3, 4, 5}, []*graph.Attribute{kerneltest.IntsAttr("strides", 3), kerneltest.IntsAttr("pads", 2, 1)}},
	} {
		ct := c.node("ConvTranspose")
		bound := c.node("ConvTranspose")
		bound.Inputs = bound.Inputs[:2]
		cases = append(cases, halfCase{what: "ConvTranspose " + c.String(), tol: ops.Lookup("", "ConvTranspose", 13).Tolerance(),
			x: c.x, w: c.w, extra: map[string][]int64{"b": {c.w[1] * max(1, ct.AttrInt("group", 1))}}, nodes: []*graph.Node{ct},
			bound: bound, opsets: opsets})
	}
	for i, c := range cases {
		t.Logf("%s: max |fp16 - fp32| %.3g", c.what, c.check(t, d, uint64(i)))
	}
}

// TestHalfWeightsHalveMemory compiles the same Conv and MatMul on a device
// in fp32 and one in the fp16 weight mode and checks that the weights take
// half the device memory.
func TestHalfWeightsHalveMemory(t *testing.T) {
	half := openHalf(t)
	full := openTest(t)
	g := graph.NewGraph("memory")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(1, 64, 8, 8))}}
	// 64·64·3·3 + 4096·256 floats: 4.1 MiB in fp32, biases aside.
	g.Initializers["w"] = graph.NewTensor(graph.Float, []int64{64, 64, 3, 3})
	g.Initializers["b"] = graph.NewTensor(graph.Float, []int64{64})
	g.Initializers["shape"], _ = graph.FromSlice(graph.Int64, []int64{2}, []int64{1, 4096})
	g.Initializers["m"] = graph.NewTensor(graph.Float, []int64{4096, 256})
	g.Nodes = []*graph.Node{
		{OpType: "Conv", Inputs: []string{"x", "w", "b"}, Outputs: []string{"c"}, Attrs: attrs(kerneltest.IntsAttr("pads", 1, 1, 1, 1))},
		{OpType: "Reshape", Inputs: []string{"c", "shape"}, Outputs: []string{"r"}},
		{OpType: "MatMul", Inputs: []string{"r", "m"}, Outputs: []string{"y"}},
	}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}}
	m := &graph.Model{Name: "memory", IRVersion: 8, Opsets: map[string]int64{"": 13}, Graph: g}
	used := map[*Device]int64{}
	for _, d := range []*Device{full, half} {
		before := d.MemoryInUse()
		p, err := planner.New(m, planner.Options{Devices: []planner.Device{d, hostfallback.NewDevice(nil)}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := backend.NewExecutor(p, []backend.Device{d, hostfallback.NewDevice(nil)}); err != nil {
			t.Fatal(err)
		}
		used[d] = d.MemoryInUse() - before
	}
	t.Logf("weights: %d bytes in fp32, %d in the fp16 mode", used[full], used[half])
	const biases = 64 * 4
	fp32 := int64(4 * (64*64*3*3 + 4096*256))
	if used[full] < fp32 {
		t.Fatalf("fp32 weights take %d bytes, want at least %d", used[full], fp32)
	}
	if want := (used[full]-biases)/2 + biases; used[half] > want+4096 || used[half] < want-4096 {
		t.Errorf("fp16 weights take %d bytes, fp32 ones %d: want about %d", used[half], used[full], want)
	}
}

// TestHalfFallback opens a device as if it had no 16-bit storage: the
// fp16 mode must be off with the reason given, and kernels must read
// fp32 weights.
func TestHalfFallback(t *testing.T) {
	old := storage16
	storage16 = func(Info) bool { return false }
	t.Cleanup(func() { storage16 = old })
	d, err := Open("vulkan", WithFP16())
	if errors.Is(err, backend.ErrDeviceUnavailable) {
		testenv.Skip(t, fmt.Sprintf("no Vulkan device: %v", err))
	}
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	on, reason := d.FP16()
	if on || !strings.Contains(reason, "16-bit storage") || !strings.Contains(reason, "fp32") {
		t.Fatalf("FP16() = %v, %q; want off, saying it lacks 16-bit storage and runs fp32", on, reason)
	}
	n := &graph.Node{OpType: "MatMul", Inputs: []string{"a", "b"}, Outputs: []string{"y"}}
	gpu, cpu, ok := runRandom(t, d, n, 13, []input{{shape: []int64{13, 127}}, {shape: []int64{127, 5}, weight: true}}, uniform(-1, 1), 1)
	if !ok {
		t.Fatal("MatMul unsupported")
	}
	kerneltest.CompareFloats(t, "MatMul on fp32 fallback", gpu, cpu, ops.Lookup("", "MatMul", 13).Tolerance())
	if len(d.half.weights) != 0 || len(d.weights) == 0 {
		t.Errorf("%d fp16 and %d fp32 weights uploaded; want only fp32 ones", len(d.half.weights), len(d.weights))
	}
	if plain, err := Open("vulkan"); err == nil {
		defer plain.Close()
		if on, reason := plain.FP16(); on || reason != "" {
			t.Errorf("without WithFP16: FP16() = %v, %q; want off and no reason", on, reason)
		}
	}
}

// TestHalfBytes checks the rounding of weights to fp16.
func TestHalfBytes(t *testing.T) {
	for _, c := range []struct {
		in   float32
		want uint16
	}{
		{0, 0x0000}, {1, 0x3c00}, {-2, 0xc000}, {65504, 0x7bff}, {1e6, 0x7bff}, {-1e6, 0xfbff},
		{float32(math.Inf(1)), 0x7c00}, {1 + 1.0/2048, 0x3c00}, {1 + 3.0/2048, 0x3c02}, {5.960464477539063e-08, 0x0001},
	} {
		if got := binary.LittleEndian.Uint16(halfBytes([]float32{c.in})); got != c.want {
			t.Errorf("halfBytes(%v) = %#04x, want %#04x", c.in, got, c.want)
		}
	}
	if got := float16.Frombits(binary.LittleEndian.Uint16(halfBytes([]float32{float32(math.NaN())}))); !got.IsNaN() {
		t.Errorf("halfBytes(NaN) = %v, want NaN", got)
	}
}

// TestFloat16Declined opens a device as if it had no 16-bit storage: it
// must decline a float16 Add, saying why, and still take a float32 one;
// with 16-bit storage it takes both.
func TestFloat16Declined(t *testing.T) {
	add := &graph.Node{OpType: "Add", Inputs: []string{"a", "b"}, Outputs: []string{"y"}}
	query := func(dt graph.DType) planner.Query {
		x := graph.TensorType(dt, graph.ShapeOf(3, 5))
		return planner.Query{Node: add, Opset: 17, Inputs: []*graph.Type{x, x}, Consts: make([]*graph.Tensor, 2)}
	}
	d := openTest(t)
	if !d.half.storage {
		testenv.Skip(t, "the device lacks 16-bit storage")
	}
	if !d.Supports(query(graph.Float16)) || d.Decline(query(graph.Float16)) != "" {
		t.Fatalf("a device with 16-bit storage declines a float16 Add: %q", d.Decline(query(graph.Float16)))
	}
	old := storage16
	storage16 = func(Info) bool { return false }
	t.Cleanup(func() { storage16 = old })
	without := openTest(t)
	if without.Supports(query(graph.Float16)) {
		t.Fatal("a device without 16-bit storage takes a float16 Add")
	}
	if why := planner.Decline(without, query(graph.Float16)); !strings.Contains(why, "16-bit storage") || !strings.Contains(why, "float16") {
		t.Errorf("Decline = %q, want it to say the device lacks 16-bit storage for float16", why)
	}
	if !without.Supports(query(graph.Float)) || without.Decline(query(graph.Float)) != "" {
		t.Error("a device without 16-bit storage declines a float32 Add")
	}
}

// TestHalfInt16Capabilities: the shaders whose HALF variant declares the
// Int16 capability (OpCapability Int16 in its SPIR-V) are exactly those of
// halfInt16, which a device without shaderInt16 declines.
func TestHalfInt16Capabilities(t *testing.T) {
	const opCapability, capInt16 = 17, 22
	for name := range halfShaders {
		code, err := shaders.SPIRV(name + halfSuffix)
		if err != nil {
			t.Fatal(err)
		}
		int16 := false
		for i := 5; i < len(code); {
			words, op := int(code[i]>>16), code[i]&0xffff
			if words == 0 {
				t.Fatalf("%s%s: malformed instruction at word %d", name, halfSuffix, i)
			}
			if op == opCapability && code[i+1] == capInt16 {
				int16 = true
			}
			i += words
		}
		if int16 != halfInt16[name] {
			t.Errorf("%s%s declares Int16: %v; listed in halfInt16: %v", name, halfSuffix, int16, halfInt16[name])
		}
	}
}
