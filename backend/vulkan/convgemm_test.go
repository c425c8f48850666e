package vulkan

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/internal/kerneltest"
	"github.com/onnxvk/onnxvk/internal/testenv"
	"github.com/onnxvk/onnxvk/planner"
)

// forceConvGemm makes d lower Conv and FusedConv to convgemm.comp, as on
// a GPU, with splits K splits (0: convSchedule's choice), and the rest,
// depthwise convolutions included, to conv.comp (the "gemm" schedule),
// until the test ends.
func forceConvGemm(t *testing.T, d *Device, splits int) {
	t.Helper()
	tiled, old, dw := d.tiledConv, d.convSplits, d.depthwiseConv
	t.Cleanup(func() { d.tiledConv, d.convSplits, d.depthwiseConv = tiled, old, dw })
	d.tiledConv, d.convSplits, d.depthwiseConv = true, splits, false
}

// convGemmCases are convolutions convgemm.comp takes (at least
// convGemmMinRows channels per group) at shapes that hit its edges:
// channels and positions that are not multiples of the 64 x 64 tile, one
// and several tiles each way, depths K that are not multiples of the
// 16-deep step (K = 20 to 216), 1x1 (with stride 2 and pads: the one-tap
// path reading padding), 3x3, 5x5 and 7x7 kernels, strides 1 to 3,
// dilation 2, asymmetric pads (and SAME_LOWER's odd split, the extra pad
// first), groups with 20 channels each, batches of 2, 1-D and 3-D.
var convGemmCases = []convCase{
	{[]int64{2, 37, 9, 7}, []int64{70, 37, 1, 1}, nil},
	{[]int64{1, 20, 11, 11}, []int64{24, 20, 1, 1}, []*graph.Attribute{kerneltest.IntsAttr("strides", 2, 2), kerneltest.IntsAttr("pads", 1, 0, 0, 1)}},
	{[]int64{1, 16, 14, 14}, []int64{40, 16, 3, 3}, []*graph.Attribute{kerneltest.IntsAttr("pads", 1, 1, 1, 1)}},
	{[]int64{2, 12, 13, 11}, []int64{40, 6, 3, 3}, []*graph.Attribute{kerneltest.IntAttr("group", 2), kerneltest.IntsAttr("strides", 2, 2), kerneltest.IntsAttr("pads", 0, 1, 2, 0)}},
	{[]int64{1, 3, 19, 17}, []int64{16, 3, 5, 5}, []*graph.Attribute{kerneltest.IntsAttr("dilations", 2, 2), kerneltest.IntsAttr("pads", 4, 3, 2, 1)}},
	{[]int64{1, 3, 37, 37}, []int64{16, 3, 7, 7}, []*graph.Attribute{kerneltest.IntsAttr("strides", 2, 2), kerneltest.IntsAttr("pads", 3, 3, 3, 3)}},
	{[]int64{2, 5, 127}, []int64{17, 5, 5}, []*graph.Attribute{kerneltest.IntsAttr("strides", 3), kerneltest.IntsAttr("pads", 2, 1)}},
	{[]int64{1, 4, 5, 6, 7}, []int64{18, 4, 3, 3, 3}, []*graph.Attribute{kerneltest.IntsAttr("pads", 1, 1, 1, 1, 0, 1), kerneltest.IntsAttr("strides", 1, 2, 1)}},
	{[]int64{1, 24, 10, 10}, []int64{130, 24, 3, 3}, []*graph.Attribute{kerneltest.IntsAttr("pads", 1, 1, 1, 1)}},
	{[]int64{1, 200, 6, 6}, []int64{32, 200, 1, 1}, nil},
	{[]int64{1, 16, 9, 8}, []int64{16, 16, 4, 2}, []*graph.Attribute{kerneltest.IntsAttr("strides", 2, 1), kerneltest.StringAttr("auto_pad", "SAME_LOWER")}},
}

// convTail is what follows a test's Conv and the planner fuses into it:
// nodes reading c and writing y, with runtime input s (of the output's
// shape) when sum is set and the constant inputs bounds.
type convTail struct {
	name   string
	nodes  []*graph.Node
	sum    bool
	bounds map[string]float32
}

var convTails = []convTail{
	{name: "none"},
	{name: "Relu", nodes: []*graph.Node{{OpType: "Relu", Inputs: []string{"c"}, Outputs: []string{"y"}}}},
	{name: "Clip", nodes: []*graph.Node{{OpType: "Clip", Inputs: []string{"c", "lo", "hi"}, Outputs: []string{"y"}}},
		bounds: map[string]float32{"lo": -0.5, "hi": 0.75}},
	{name: "LeakyRelu", nodes: []*graph.Node{{OpType: "LeakyRelu", Inputs: []string{"c"}, Outputs: []string{"y"},
		Attrs: map[string]*graph.Attribute{"alpha": kerneltest.FloatAttr("alpha", 0.2)}}}},
	{name: "Sigmoid", nodes: []*graph.Node{{OpType: "Sigmoid", Inputs: []string{"c"}, Outputs: []string{"y"}}}},
	{name: "Swish", nodes: []*graph.Node{{OpType: "Sigmoid", Inputs: []string{"c"}, Outputs: []string{"g"}},
		{OpType: "Mul", Inputs: []string{"c", "g"}, Outputs: []string{"y"}}}},
	{name: "Add", nodes: []*graph.Node{{OpType: "Add", Inputs: []string{"s", "c"}, Outputs: []string{"y"}}}, sum: true},
	{name: "Add+Relu", nodes: []*graph.Node{{OpType: "Add", Inputs: []string{"c", "s"}, Outputs: []string{"a"}},
		{OpType: "Relu", Inputs: []string{"a"}, Outputs: []string{"y"}}}, sum: true},
}

// convModel returns the model of Conv c (with bias when bias is set, W a
// graph input when wIn is set) followed by tail, and its feeds drawn
// from r.
func convModel(c convCase, tail convTail, bias, wIn bool, r *rand.Rand) (*graph.Model, map[string]graph.Value) {
	g := graph.NewGraph("convgemm")
	conv := c.node("Conv")
	if !bias {
		conv.Inputs = conv.Inputs[:2]
	}
	f32 := func(s []int64) *graph.Type { return graph.TensorType(graph.Float, graph.ShapeOf(s...)) }
	feeds := map[string]graph.Value{"x": kerneltest.RandFloats(r, c.x, -1, 1)}
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: f32(c.x)}}
	w := kerneltest.RandFloats(r, c.w, -1, 1)
	if wIn {
		g.Inputs = append(g.Inputs, &graph.ValueInfo{Name: "w", Type: f32(c.w)})
		feeds["w"] = w
	} else {
		g.Initializers["w"] = w
	}
	g.Initializers["b"] = kerneltest.RandFloats(r, []int64{c.w[0]}, -1, 1)
	for name, v := range tail.bounds {
		g.Initializers[name], _ = graph.FromSlice(graph.Float, nil, []float32{v})
	}
	if tail.nodes == nil {
		g.Nodes = []*graph.Node{conv}
	} else {
		conv.Outputs = []string{"c"}
		g.Nodes = append([]*graph.Node{conv}, tail.nodes...)
	}
	if tail.sum {
		out := convOutShape(c)
		g.Inputs = append(g.Inputs, &graph.ValueInfo{Name: "s", Type: f32(out)})
		feeds["s"] = kerneltest.RandFloats(r, out, -1, 1)
	}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}}
	return &graph.Model{Name: "convgemm", IRVersion: 8, Opsets: map[string]int64{"": 13}, Graph: g}, feeds
}

// convOutShape returns the output shape of Conv c.
func convOutShape(c convCase) []int64 {
	w, ok := newWindow(ops.WindowOf(c.node("Conv"), 13), c.x[2:], c.w[2:], false)
	if !ok {
		panic(fmt.Sprintf("%v: bad window", c))
	}
	return w.outShape([]int64{c.x[0], c.w[0]}, len(c.x)-2)
}

// checkGemmLowering checks that d lowers Conv c to convgemm.comp, split
// (a second, reducing dispatch) exactly when split is set.
func checkGemmLowering(t *testing.T, d *Device, c convCase, split bool) {
	t.Helper()
	types := []*graph.Type{graph.TensorType(graph.Float, graph.ShapeOf(c.x...)), graph.TensorType(graph.Float, graph.ShapeOf(c.w...)),
		graph.TensorType(graph.Float, graph.ShapeOf(c.w[0]))}
	l, ok := lower(planner.Query{Node: c.node("Conv"), Opset: 13, Inputs: types}, d.caps())
	if !ok {
		t.Fatalf("Conv %v unsupported", c)
	}
	if l.shader != "convgemm" || (len(l.then) == 1) != split {
		t.Fatalf("Conv %v: shader %s with %d more dispatches, want convgemm split=%v", c, l.shader, len(l.then), split)
	}
}

// TestConvGemmMatchesCPU forces the GPU schedule (convgemm.comp) on the
// test device and checks Conv and FusedConv against the CPU kernels over
// convGemmCases, one split (the epilogue in the GEMM's store), split-K as
// convSchedule chooses it, and split-K forced to 3 splits; each case and
// split runs two of the tails (every activation, the residual Sum
// alone and with Relu, none; each split sees every tail over the cases;
// the long suites run every tail on every case), bias on or off, W a
// weight or a runtime value.
func TestConvGemmMatchesCPU(t *testing.T) {
	d := openTest(t)
	convTol := ops.Lookup("", "Conv", 13).Tolerance()
	fusedTol := ops.Lookup(ops.FusedDomain, "FusedConv", 1).Tolerance()
	variants := 2
	if testenv.Long() {
		variants = len(convTails)
	}
	for si, splits := range []int{1, 0, 3} {
		forceConvGemm(t, d, splits)
		for i, c := range convGemmCases {
			depth := graph.NumElements(c.w[1:])
			if splits == 3 || splits == 1 {
				checkGemmLowering(t, d, c, splits == 3 && depth > convKSlice)
			}
			for v := range variants {
				combo := i*3 + si + v*len(convTails)/variants
				tail := convTails[combo%len(convTails)]
				bias, wIn := combo%2 == 0, combo%3 == 1
				r := rand.New(rand.NewPCG(uint64(combo), 13))
				m, feeds := convModel(c, tail, bias, wIn, r)
				what := fmt.Sprintf("splits=%d Conv %v bias=%v runtimeW=%v + %s", splits, c, bias, wIn, tail.name)
				gpu := runConvModel(t, m, feeds, tail.nodes != nil, d)
				cpu := runConvModel(t, m, feeds, false)
				tol := fusedTol
				if tail.nodes == nil {
					tol = convTol
				}
				kerneltest.CompareFloats(t, what, gpu, cpu, tol)
			}
		}
	}
}

// TestConvGemmEveryTail runs each tail of convTails on one case with
// split-K forced, so that every epilogue goes through the reducing
// dispatch, and without.
func TestConvGemmEveryTail(t *testing.T) {
	d := openTest(t)
	fusedTol := ops.Lookup(ops.FusedDomain, "FusedConv", 1).Tolerance()
	c := convGemmCases[3]
	for _, splits := range []int{1, 2} {
		forceConvGemm(t, d, splits)
		for k, tail := range convTails {
			r := rand.New(rand.NewPCG(uint64(k), 17))
			m, feeds := convModel(c, tail, k%2 == 0, false, r)
			gpu := runConvModel(t, m, feeds, tail.nodes != nil, d)
			cpu := runConvModel(t, m, feeds, false)
			kerneltest.CompareFloats(t, fmt.Sprintf("splits=%d Conv %v + %s", splits, c, tail.name), gpu, cpu, fusedTol)
		}
	}
}

// TestHalfConvGemmMatchesCPU checks convgemm_f16w.spv, the fp16-weight
// GPU schedule, with and without split-K, bias and a fused Relu.
func TestHalfConvGemmMatchesCPU(t *testing.T) {
	d := openHalf(t)
	opsets := map[string]int64{"": 13}
	for _, splits := range []int{1, 3} {
		forceConvGemm(t, d, splits)
		for i, c := range []convCase{convGemmCases[0], convGemmCases[3], convGemmCases[5], convGemmCases[7]} {
			conv := c.node("Conv")
			bound := c.node("Conv")
			bound.Inputs = bound.Inputs[:2]
			hc := halfCase{what: fmt.Sprintf("splits=%d Conv %v", splits, c), tol: ops.Lookup("", "Conv", 13).Tolerance(), x: c.x, w: c.w,
				extra: map[string][]int64{"b": {c.w[0]}}, nodes: []*graph.Node{conv}, bound: bound, opsets: opsets}
			switch i % 3 {
			case 1:
				hc.what += " no bias"
				hc.extra, conv.Inputs = nil, conv.Inputs[:2]
			case 2:
				conv.Outputs = []string{"c"}
				hc.what, hc.tol = "splits="+fmt.Sprint(splits)+" FusedConv "+c.String()+" + Relu", ops.Lookup(ops.FusedDomain, "FusedConv", 1).Tolerance()
				hc.nodes = append(hc.nodes, &graph.Node{OpType: "Relu", Inputs: []string{"c"}, Outputs: []string{"y"}})
			}
			t.Logf("%s: max |fp16 - fp32| %.3g", hc.what, hc.check(t, d, uint64(i)))
		}
	}
}

// TestConvTransposeGemm runs the kernel table's ConvTranspose cases that
// convgemm.comp takes (a GEMM per phase of the strides) with the GPU
// schedule forced, unsplit and split-K in 3, in fp32 and float16, every
// one outside the long suites too (TestKernels samples them).
func TestConvTransposeGemm(t *testing.T) {
	d := openTest(t)
	modes := []kerneltest.Mode{kerneltest.FP32}
	if d.half.storage {
		modes = append(modes, kerneltest.Float16)
	}
	for _, splits := range []int{1, 3} {
		forceConvGemm(t, d, splits)
		for _, mode := range modes {
			t.Run(fmt.Sprintf("splits=%d/%s", splits, mode), func(t *testing.T) {
				gemm := 0
				only := func(c kerneltest.Case) bool {
					if c.Node.OpType != "ConvTranspose" {
						return false
					}
					l, ok := lower(c.Query(), d.caps())
					if ok && strings.HasPrefix(l.shader, "convgemm") {
						gemm++
						return true
					}
					return false
				}
				kerneltest.Suite{Device: d, Mode: mode, Declines: modeDeclines(t, d, mode), Only: only}.Run(t)
				if gemm < 7 {
					t.Errorf("%d ConvTranspose cases on convgemm.comp, want the table's 7 wide ones", gemm)
				}
			})
		}
	}
}

// TestConvGemmSelection checks which convolutions the GPU schedule takes:
// none on a CPU implementation unless forced; forced, groups of at least
// convGemmMinRows channels, ConvTranspose's too, not depthwise or
// narrower groups.
func TestConvGemmSelection(t *testing.T) {
	d := openTest(t)
	if d.info.Type == "cpu" && d.tiledConv {
		t.Errorf("%s is a CPU implementation and selects convgemm.comp", d.info.Name)
	}
	forceConvGemm(t, d, 0)
	f32 := func(dims ...int64) *graph.Type { return graph.TensorType(graph.Float, graph.ShapeOf(dims...)) }
	for _, c := range []struct {
		op     string
		group  int64
		in     []*graph.Type
		shader string
	}{
		{"Conv", 1, []*graph.Type{f32(1, 8, 9, 9), f32(16, 8, 3, 3)}, "convgemm"},
		{"Conv", 1, []*graph.Type{f32(1, 8, 9, 9), f32(15, 8, 3, 3)}, "conv"},
		{"Conv", 2, []*graph.Type{f32(1, 8, 9, 9), f32(32, 4, 3, 3)}, "convgemm"},
		{"Conv", 32, []*graph.Type{f32(1, 32, 9, 9), f32(32, 1, 3, 3)}, "conv"},
		{"Conv", 32, []*graph.Type{f32(1, 32, 9, 9), f32(64, 1, 3, 3)}, "conv"},
		{"ConvTranspose", 1, []*graph.Type{f32(1, 32, 9, 9), f32(32, 32, 3, 3)}, "convgemm"},
		{"ConvTranspose", 2, []*graph.Type{f32(1, 32, 9, 9), f32(32, 15, 3, 3)}, "conv"},
	} {
		n := convCase{attrs: []*graph.Attribute{kerneltest.IntAttr("group", c.group)}}.node(c.op)
		n.Inputs = n.Inputs[:2]
		l, ok := lower(planner.Query{Node: n, Opset: 13, Inputs: c.in}, d.caps())
		if !ok || l.shader != c.shader {
			t.Errorf("%s group %d %v: lowered %v to %v, want %s", c.op, c.group, c.in, ok, l, c.shader)
		}
	}
}

// TestConvSchedule checks convSchedule's splits and workgroups on
// ResNet-50's convolution shapes at batch 1, and its limits.
func TestConvSchedule(t *testing.T) {
	c := caps{maxElems: 1 << 30}
	for _, s := range []struct {
		what                       string
		mg, cols, depth            int64
		tiles, splits, per, groups int64
	}{
		{"conv1 7x7/2 3→64 at 224²", 64, 112 * 112, 3 * 49, 196, 2, 5, 392},
		{"3x3 64→64 at 56²", 64, 56 * 56, 64 * 9, 49, 6, 6, 294},
		{"1x1 64→256 at 56²", 256, 56 * 56, 64, 196, 1, 4, 196},
		{"1x1 1024→256 at 14²", 256, 14 * 14, 1024, 16, 16, 4, 256},
		{"3x3 256→256 at 14²", 256, 14 * 14, 256 * 9, 16, 16, 9, 256},
		{"3x3 512→512 at 7²", 512, 7 * 7, 512 * 9, 8, 32, 9, 256},
		{"1x1 2048→512 at 7²", 512, 7 * 7, 2048, 8, 32, 4, 256},
	} {
		tiles := (s.mg + convTileM - 1) / convTileM * ((s.cols + convTileN - 1) / convTileN)
		splits, per := convSchedule(c, tiles, s.depth, s.mg*s.cols)
		if tiles != s.tiles || splits != s.splits || per != s.per || tiles*splits != s.groups {
			t.Errorf("%s: %d tiles, %d splits of %d steps, %d workgroups; want %d, %d of %d, %d", s.what, tiles, splits, per, tiles*splits,
				s.tiles, s.splits, s.per, s.groups)
		}
	}
	// Every step in a split, none empty; forced splits stop at the steps;
	// the partial sums fit a binding.
	for _, k := range []int64{1, 16, 17, 37, 100, 4608} {
		for _, force := range []int{0, 1, 3, 7, 1000} {
			c := caps{maxElems: 1 << 30, convSplits: force}
			splits, per := convSchedule(c, 1, k, 100)
			steps := (k + convKSlice - 1) / convKSlice
			if splits < 1 || per < 1 || (splits-1)*per >= steps || splits*per < steps || force > 0 && splits > int64(force) {
				t.Errorf("K %d, force %d: %d splits of %d steps (%d steps)", k, force, splits, per, steps)
			}
		}
	}
	if splits, _ := convSchedule(caps{maxElems: 250}, 1, 4608, 100); splits != 2 {
		t.Errorf("partials of 2.5 outputs allowed: %d splits, want 2", splits)
	}
}

// convDeviceTime returns the median device time of 20 runs of Conv c
// with a bias on d, after 3 runs that warm it up.
func convDeviceTime(t *testing.T, d *Device, c convCase) time.Duration {
	t.Helper()
	m, feeds := convModel(c, convTails[0], true, false, rand.New(rand.NewPCG(1, 2)))
	prog, steps, f := CompileOn(t, d, m)
	var times []time.Duration
	for r := range 23 {
		// A Run releases its input from the frame.
		f.Values[d.Name()][steps[0].In[0]] = feeds["x"]
		if err := prog.Run(context.Background(), f); err != nil {
			t.Fatal(err)
		}
		if r >= 3 {
			times = append(times, prog.(interface{ DeviceTime() time.Duration }).DeviceTime())
		}
	}
	slices.Sort(times)
	return times[len(times)/2]
}

// TestConvTiming times ResNet-50's convolutions at batch 1 (ONNXVK_CONV_TIMING=1
// runs it; it is meant for GPUs) on the direct kernel, on convgemm.comp
// without split-K and on convgemm.comp as convSchedule splits it: the
// median device time of 20 runs of each shape, and their sum weighted by
// how often ResNet-50 has each shape (53 convolutions).
func TestConvTiming(t *testing.T) {
	testenv.SkipUnlessEnv(t, "ONNXVK_CONV_TIMING", "times convolutions")
	d := openTest(t)
	if !d.Info().Timestamps {
		testenv.Skip(t, d.Info().Name+" has no timestamp queries")
	}
	type shape struct {
		cin, cout, k, stride, in, count int64
	}
	shapes := []shape{
		{3, 64, 7, 2, 224, 1},
		{64, 64, 1, 1, 56, 1}, {256, 64, 1, 1, 56, 2}, {64, 64, 3, 1, 56, 3}, {64, 256, 1, 1, 56, 4},
		{256, 128, 1, 1, 56, 1}, {128, 128, 3, 2, 56, 1}, {128, 512, 1, 1, 28, 4}, {256, 512, 1, 2, 56, 1}, {512, 128, 1, 1, 28, 3}, {128, 128, 3, 1, 28, 3},
		{512, 256, 1, 1, 28, 1}, {256, 256, 3, 2, 28, 1}, {256, 1024, 1, 1, 14, 6}, {512, 1024, 1, 2, 28, 1}, {1024, 256, 1, 1, 14, 5}, {256, 256, 3, 1, 14, 5},
		{1024, 512, 1, 1, 14, 1}, {512, 512, 3, 2, 14, 1}, {512, 2048, 1, 1, 7, 3}, {1024, 2048, 1, 2, 14, 1}, {2048, 512, 1, 1, 7, 2}, {512, 512, 3, 1, 7, 2},
	}
	schedules := []struct {
		name   string
		tiled  bool
		splits int
	}{{"direct", false, 0}, {"gemm", true, 1}, {"gemm+splitK", true, 0}}
	tiled, splits := d.tiledConv, d.convSplits
	defer func() { d.tiledConv, d.convSplits = tiled, splits }()
	totals := make([]time.Duration, len(schedules))
	var flops float64
	for _, s := range shapes {
		pad := s.k / 2
		c := convCase{[]int64{1, s.cin, s.in, s.in}, []int64{s.cout, s.cin, s.k, s.k},
			[]*graph.Attribute{kerneltest.IntsAttr("strides", s.stride, s.stride), kerneltest.IntsAttr("pads", pad, pad, pad, pad)}}
		out := convOutShape(c)
		flop := 2 * float64(graph.NumElements(out)) * float64(graph.NumElements(c.w[1:]))
		flops += flop * float64(s.count)
		line := fmt.Sprintf("%4d→%-4d %dx%d/%d at %3d² ×%d:", s.cin, s.cout, s.k, s.k, s.stride, s.in, s.count)
		for i, sc := range schedules {
			d.tiledConv, d.convSplits = sc.tiled, sc.splits
			med := convDeviceTime(t, d, c)
			totals[i] += med * time.Duration(s.count)
			line += fmt.Sprintf("  %s %7.1f µs %6.2f TFLOP/s", sc.name, float64(med)/1e3, flop/float64(med)/1e3)
		}
		t.Log(line)
	}
	for i, sc := range schedules {
		t.Logf("ResNet-50's 53 convolutions, %s: %.2f ms, %.2f TFLOP/s", sc.name, float64(totals[i])/1e6, flops/float64(totals[i])/1e3)
	}
}
