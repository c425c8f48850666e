package onnxvk_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/sessionvalues"
	"github.com/onnxvk/onnxvk/internal/testenv"
	"github.com/onnxvk/onnxvk/planner"
)

// tpBuilder builds small models whose nodes carry sharding specs of
// configuration "tp" over devices logical devices.
type tpBuilder struct {
	g       *graph.Graph
	rng     *rand.Rand
	devices int
}

func newTPBuilder(name string, devices int, x []int64) *tpBuilder {
	g := graph.NewGraph(name)
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(x...))}}
	return &tpBuilder{g: g, rng: rand.New(rand.NewPCG(11, uint64(devices))), devices: devices}
}

// weight adds a random constant.
func (b *tpBuilder) weight(name string, dims ...int64) string {
	w := graph.NewTensor(graph.Float, dims)
	for k, v := 0, graph.View[float32](w); k < len(v); k++ {
		v[k] = b.rng.Float32() - 0.5
	}
	b.g.Initializers[name] = w
	return name
}

// node adds a node with the given sharding specs (none: unannotated).
func (b *tpBuilder) node(op string, ins []string, out string, attrs map[string]*graph.Attribute, specs ...graph.ShardingSpec) string {
	n := &graph.Node{Name: out + "_node", OpType: op, Inputs: ins, Outputs: []string{out}, Attrs: attrs, Index: len(b.g.Nodes)}
	if len(specs) > 0 {
		n.DeviceConfigs = []graph.NodeDeviceConfiguration{{ConfigurationID: "tp", Sharding: specs}}
	}
	b.g.Nodes = append(b.g.Nodes, n)
	return out
}

// model finishes the model with output y of shape dims; annotate false
// drops every annotation, for the single-device reference.
func (b *tpBuilder) model(dims []int64, annotate bool) *graph.Model {
	b.g.Outputs = []*graph.ValueInfo{{Name: "y", Type: graph.TensorType(graph.Float, graph.ShapeOf(dims...))}}
	m := &graph.Model{Name: b.g.Name, IRVersion: 11, Opsets: map[string]int64{"": 17}, Graph: b.g}
	if annotate {
		m.Configurations = []graph.DeviceConfiguration{{Name: "tp", NumDevices: int32(b.devices)}}
	} else {
		for _, n := range b.g.Nodes {
			n.DeviceConfigs = nil
		}
	}
	return m
}

// split is a spec cutting tensor along axes (axis, shards pairs, first
// outermost) onto devices in order.
func split(tensor string, devices []int64, axisShards ...int64) graph.ShardingSpec {
	s := graph.ShardingSpec{TensorName: tensor, Devices: devices}
	for i := 0; i < len(axisShards); i += 2 {
		s.ShardedDims = append(s.ShardedDims, graph.ShardedDim{Axis: axisShards[i],
			SimpleSharding: []graph.SimpleSharding{{Dim: graph.UnknownDim(), NumShards: axisShards[i+1]}}})
	}
	return s
}

// seq returns 0..n-1.
func seq(n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(i)
	}
	return out
}

func intAttr(name string, v int64) map[string]*graph.Attribute {
	return map[string]*graph.Attribute{name: {Name: name, Type: graph.AttrInt, I: v}}
}

// tpCase is one hand-built sharded model: its builder for devices logical
// devices, the input shape, and the number of all-reduces its plan has.
type tpCase struct {
	name       string
	x          []int64
	build      func(b *tpBuilder) []int64
	allReduces int
}

var tpCases = []tpCase{
	{
		// Megatron MLP: W1 split by columns, W2 by rows (uneven for 4
		// devices: 10 = 3+3+2+2), one all-reduce.
		name: "mlp", x: []int64{6, 16}, allReduces: 1,
		build: func(b *tpBuilder) []int64 {
			n := int64(b.devices)
			h := b.node("MatMul", []string{"x", b.weight("w1", 16, 10)}, "h", nil, split("w1", seq(b.devices), 1, n))
			h = b.node("Add", []string{h, b.weight("b1", 10)}, "hb", nil)
			h = b.node("Relu", []string{h}, "hr", nil)
			h = b.node("MatMul", []string{h, b.weight("w2", 10, 12)}, "o", nil, split("w2", seq(b.devices), 0, n))
			b.node("Add", []string{h, b.weight("b2", 12)}, "y", nil)
			return []int64{6, 12}
		},
	},
	{
		// Rows of the input split unevenly (7 rows), elementwise ops keep
		// the split, a broadcast operand is cut to match.
		name: "rows", x: []int64{7, 12},
		build: func(b *tpBuilder) []int64 {
			r := b.node("Relu", []string{"x"}, "r", nil, split("x", seq(b.devices), 0, int64(b.devices)))
			m := b.node("Mul", []string{r, b.weight("s", 7, 1)}, "m", nil)
			b.node("Add", []string{m, b.weight("c", 12)}, "y", nil)
			return []int64{7, 12}
		},
	},
	{
		// Replication over a device group: every device runs the whole
		// Tanh, then a column split of the same value.
		name: "replicate", x: []int64{5, 8},
		build: func(b *tpBuilder) []int64 {
			rep := graph.ShardingSpec{TensorName: "x", Devices: []int64{100}, DeviceGroups: map[int64][]int64{100: seq(b.devices)}}
			t := b.node("Tanh", []string{"x"}, "t", nil, rep)
			b.node("Sigmoid", []string{t}, "y", nil, split(t, seq(b.devices), 1, int64(b.devices)))
			return []int64{5, 8}
		},
	},
	{
		// Nested two-axis split: rows outermost, then columns, four
		// shards over the devices; then a MatMul whose A is split by
		// rows and columns (K), so the planner reshards it.
		name: "nested", x: []int64{6, 8},
		build: func(b *tpBuilder) []int64 {
			devs := []int64{0, 1, 2, 3}
			if b.devices == 2 {
				devs = []int64{0, 1, 1, 0}
			}
			e := b.node("Exp", []string{"x"}, "e", nil, split("x", devs, 0, 2, 1, 2))
			a := b.node("Add", []string{e, b.weight("bias", 1, 8)}, "a", nil)
			b.node("MatMul", []string{a, b.weight("w", 8, 5)}, "y", nil)
			return []int64{6, 5}
		},
	},
	{
		// Sharded-K MatMul: A (the input) split on K, B on K alike, the
		// partial products summed by an all-reduce; then a Gemm with
		// transB and a bias, sharded on K through its B spec.
		name: "sharded-k", x: []int64{2, 3, 12},
		build: func(b *tpBuilder) []int64 {
			n := int64(b.devices)
			m := b.node("MatMul", []string{"x", b.weight("w", 12, 9)}, "m", nil,
				split("x", seq(b.devices), 2, n), split("w", seq(b.devices), 0, n))
			r := b.node("Reshape", []string{m, b.shape("shape", 6, 9)}, "r", nil)
			b.node("Gemm", []string{r, b.weight("g", 7, 9), b.weight("gc", 7)}, "y", intAttr("transB", 1), split("g", seq(b.devices), 1, n))
			return []int64{6, 7}
		},
		allReduces: 2,
	},
	{
		// Batched MatMul split on the batch axis; a Gemm split by
		// columns with its bias cut to match.
		name: "batch", x: []int64{4, 3, 8},
		build: func(b *tpBuilder) []int64 {
			m := b.node("MatMul", []string{"x", b.weight("w", 8, 8)}, "m", nil, split("x", seq(b.devices), 0, int64(b.devices)))
			r := b.node("Reshape", []string{m, b.shape("shape", 12, 8)}, "r", nil)
			b.node("Gemm", []string{r, b.weight("g", 8, 6), b.weight("gc", 1, 6)}, "y", nil, split("g", seq(b.devices), 1, int64(b.devices)))
			return []int64{12, 6}
		},
	},
	{
		// Rows split unevenly: Softmax, LayerNormalization and a ReduceMax
		// along the unsplit axis run on each piece; a ReduceSum over the
		// split rows makes partial sums and an all-reduce.
		name: "along-axes", x: []int64{7, 10}, allReduces: 1,
		build: func(b *tpBuilder) []int64 {
			r := b.node("Relu", []string{"x"}, "r", nil, split("x", seq(b.devices), 0, int64(b.devices)))
			sm := b.node("Softmax", []string{r}, "sm", intAttr("axis", -1))
			ln := b.node("LayerNormalization", []string{sm, b.weight("scale", 10), b.weight("bias", 10)}, "ln", nil)
			mx := b.node("ReduceMax", []string{ln}, "mx", map[string]*graph.Attribute{"axes": {Name: "axes", Type: graph.AttrInts, Ints: []int64{1}}})
			d := b.node("Sub", []string{ln, mx}, "d", nil)
			b.node("ReduceSum", []string{d, b.shape("axes", 0)}, "y", nil)
			return []int64{1, 10}
		},
	},
	{
		// A column split carried through Reshapes that keep the split
		// axis (merging and splitting the others) and a Transpose that
		// moves it.
		name: "reshape-transpose", x: []int64{6, 8},
		build: func(b *tpBuilder) []int64 {
			r := b.node("Reshape", []string{"x", b.shape("s1", 3, 2, 8)}, "r", nil, split("x", seq(b.devices), 1, int64(b.devices)))
			tr := b.node("Transpose", []string{r}, "t", map[string]*graph.Attribute{"perm": {Name: "perm", Type: graph.AttrInts, Ints: []int64{2, 0, 1}}})
			e := b.node("Relu", []string{tr}, "e", nil)
			b.node("Reshape", []string{e, b.shape("s2", 8, 6)}, "y", nil)
			return []int64{8, 6}
		},
	},
}

// shape adds an int64 constant.
func (b *tpBuilder) shape(name string, dims ...int64) string {
	t, _ := graph.FromSlice(graph.Int64, []int64{int64(len(dims))}, dims)
	b.g.Initializers[name] = t
	return name
}

func (c tpCase) model(devices int, annotate bool) *graph.Model {
	b := newTPBuilder(c.name, devices, c.x)
	return b.model(c.build(b), annotate)
}

func (c tpCase) input(t testing.TB) *onnxvk.Tensor {
	rng := rand.New(rand.NewPCG(5, 5))
	data := make([]float32, graph.NumElements(c.x))
	for i := range data {
		data[i] = rng.Float32()*2 - 1
	}
	x, err := onnxvk.NewTensor(c.x, data)
	require.NoError(t, err)
	return x
}

// checkTensorParallel runs each case sharded over devices logical devices
// of the session opts give and compares with the unannotated model on one
// device; the plan must run some node once per device and insert the
// expected all-reduces, and apply every spec.
func checkTensorParallel(t *testing.T, devices int, open func(t *testing.T, m *graph.Model) *onnxvk.Session) {
	for _, c := range tpCases {
		t.Run(c.name, func(t *testing.T) {
			x := c.input(t)
			want, err := onnxvk.Data[float32](runOut(t, open(t, c.model(devices, false)), x))
			require.NoError(t, err)
			sess := open(t, c.model(devices, true))
			p, err := sessionvalues.Of(sess).Plan(nil)
			require.NoError(t, err)
			for _, note := range p.Notes {
				require.NotContains(t, note, "sharding not applied")
			}
			logical := map[string]bool{}
			allReduces := 0
			for _, st := range p.Steps {
				if st.Kind != planner.Compute {
					continue
				}
				if _, ok := p.Shards[st.Node.Name]; ok {
					logical[st.Logical] = true
				}
				if p.Comms[st.Node.Name].Kind == planner.CommAllReduce {
					allReduces++
				}
			}
			require.Len(t, logical, devices, "shards run on every logical device")
			require.Equal(t, c.allReduces, allReduces)
			got, err := onnxvk.Data[float32](runOut(t, sess, x))
			require.NoError(t, err)
			require.InDeltaSlice(t, want, got, 1e-5)
		})
	}
}

func runOut(t *testing.T, sess *onnxvk.Session, x *onnxvk.Tensor) *onnxvk.Tensor {
	t.Helper()
	out, err := sess.Run(context.Background(), map[string]*onnxvk.Tensor{"x": x})
	require.NoError(t, err)
	return out["y"]
}

func TestTensorParallelCPU(t *testing.T) {
	for _, devices := range []int{2, 4} {
		t.Run(fmt.Sprint(devices), func(t *testing.T) {
			checkTensorParallel(t, devices, func(t *testing.T, m *graph.Model) *onnxvk.Session {
				sess, err := onnxvk.NewSession(m, onnxvk.WithDevice("cpu"))
				require.NoError(t, err)
				t.Cleanup(func() { sess.Close() })
				return sess
			})
		})
	}
}

// TestTensorParallelVulkan runs the cases with 2 and 4 logical devices
// sharing vulkan:0.
func TestTensorParallelVulkan(t *testing.T) {
	for _, devices := range []int{2, 4} {
		t.Run(fmt.Sprint(devices), func(t *testing.T) {
			checkTensorParallel(t, devices, func(t *testing.T, m *graph.Model) *onnxvk.Session {
				return vulkanSession(t, m)
			})
		})
	}
}

// TestTensorParallelTransferBytes checks that the bytes the plan's
// transfer steps report equal those a traced Run moved, for the MLP
// sharded over 4 logical devices.
func TestTensorParallelTransferBytes(t *testing.T) {
	sess := vulkanSession(t, tpCases[0].model(4, true))
	p, err := sessionvalues.Of(sess).Plan(nil)
	require.NoError(t, err)
	want := p.Report().TransferBytes
	tr := backend.NewTrace()
	_, err = sess.Run(backend.WithTrace(context.Background(), tr), map[string]*onnxvk.Tensor{"x": tpCases[0].input(t)})
	require.NoError(t, err)
	var moved int64
	transfers := 0
	for _, ev := range tr.Events() {
		if ev.Op == "transfer" {
			moved += ev.Bytes
			transfers++
		}
	}
	require.Equal(t, p.Report().TransferSteps, transfers)
	require.Equal(t, want, moved)
	t.Logf("one Run moved %d bytes in %d transfers; the plan reports %d", moved, transfers, want)
}

// TestShardingErrors checks the load errors about sharding specs that
// contradict their tensors (each names the model, node and field), and
// the note for a valid spec that cannot be applied.
func TestShardingErrors(t *testing.T) {
	load := func(spec graph.ShardingSpec) (*onnxvk.Session, error) {
		m := tpCases[1].model(2, true)
		m.Graph.Nodes[0].DeviceConfigs[0].Sharding = []graph.ShardingSpec{spec}
		return onnxvk.NewSession(m, onnxvk.WithDevice("cpu"))
	}
	for _, c := range []struct {
		spec graph.ShardingSpec
		want string
	}{
		{split("x", []int64{0, 1}, 2, 2), `sharding_spec[0].sharded_dim[0].axis 2: invalid device configuration: tensor "x" has rank 2`},
		{split("x", []int64{0, 1}, 0, 2, 0, 1), `sharded_dim[1].axis 0: invalid device configuration: the axis is sharded twice`},
		{split("x", []int64{0, 1, 0, 1, 0, 1, 0, 1}, 0, 8), `sharded_dim[0]: invalid device configuration: 8 shards of axis 0, which has 7 elements in tensor "x"`},
		{split("x", []int64{0, 1, 0}, 1, 2), `sharding_spec[0].device: invalid device configuration: 3 entries for 2 shards`},
		{split("x", []int64{0, 1}, 1, 0), `simple_sharding[0].num_shards 0: invalid device configuration: want at least 1`},
		{graph.ShardingSpec{TensorName: "x", Devices: []int64{0, 1}, ShardedDims: []graph.ShardedDim{{Axis: 1, SimpleSharding: []graph.SimpleSharding{
			{Dim: graph.DimOf(3), NumShards: 2}, {Dim: graph.DimOf(4), NumShards: 1}}}}},
			`simple_sharding[0].num_shards 2: invalid device configuration: does not divide the factor's dim_value 3`},
		{graph.ShardingSpec{TensorName: "x", Devices: []int64{0, 1}, ShardedDims: []graph.ShardedDim{{Axis: 1, SimpleSharding: []graph.SimpleSharding{
			{Dim: graph.DimOf(2), NumShards: 2}, {Dim: graph.DimOf(5), NumShards: 1}}}}},
			`the factors' dim_values multiply to 10, the axis has 12 elements`},
	} {
		sess, err := load(c.spec)
		if err == nil {
			sess.Close()
		}
		require.ErrorIs(t, err, onnxvk.ErrBadDeviceConfiguration)
		require.ErrorContains(t, err, `model "rows": node "r_node" (Relu, #0): device_configurations[0].`)
		require.ErrorContains(t, err, c.want)
	}

	// Axes fused by a reshape: the outer factor split is contiguous and
	// applies; an inner factor split after it is noted and left.
	fused := func(outer, inner int64) graph.ShardingSpec {
		return graph.ShardingSpec{TensorName: "x", Devices: seq(int(outer * inner)), ShardedDims: []graph.ShardedDim{{Axis: 1, SimpleSharding: []graph.SimpleSharding{
			{Dim: graph.DimOf(2), NumShards: outer}, {Dim: graph.DimOf(6), NumShards: inner}}}}}
	}
	for _, c := range []struct {
		spec graph.ShardingSpec
		note string
	}{
		{fused(2, 1), ""},
		{fused(2, 2), `node "r_node" (Relu, #0): sharding not applied: device_configurations[0].sharding_spec[0].sharded_dim[0]: simple_sharding[1].num_shards 2: not applied: an inner factor of fused axes split after an outer one`},
	} {
		m := tpCases[1].model(4, true)
		m.Graph.Nodes[0].DeviceConfigs[0].Sharding = []graph.ShardingSpec{c.spec}
		sess, err := onnxvk.NewSession(m, onnxvk.WithDevice("cpu"))
		require.NoError(t, err)
		p, err := sessionvalues.Of(sess).Plan(nil)
		require.NoError(t, err)
		var notes []string
		for _, n := range p.Notes {
			if !strings.Contains(n, "share cpu") {
				notes = append(notes, n)
			}
		}
		if c.note == "" {
			require.Empty(t, notes)
			require.Len(t, p.Shards, 2*3, "Relu, Mul and Add run on both halves")
		} else {
			require.Len(t, notes, 1)
			require.Contains(t, notes[0], c.note)
			require.Empty(t, p.Shards)
		}
		want, err := onnxvk.Data[float32](runOut(t, sess, tpCases[1].input(t)))
		require.NoError(t, err)
		require.Len(t, want, 7*12)
		sess.Close()
	}
}

// BenchmarkTensorParallelMLP runs a Megatron MLP (x [64, 512] through
// 512→2048→512) on one Vulkan device and sharded over 2 and 4 logical
// devices that share it:
// go test -run '^$' -bench TensorParallelMLP .
func BenchmarkTensorParallelMLP(b *testing.B) {
	build := func(devices int, annotate bool) *graph.Model {
		tb := newTPBuilder("mlp", devices, []int64{64, 512})
		n := int64(devices)
		h := tb.node("MatMul", []string{"x", tb.weight("w1", 512, 2048)}, "h", nil, split("w1", seq(devices), 1, n))
		h = tb.node("Relu", []string{h}, "hr", nil)
		tb.node("MatMul", []string{h, tb.weight("w2", 2048, 512)}, "y", nil, split("w2", seq(devices), 0, n))
		return tb.model([]int64{64, 512}, annotate)
	}
	x := tpCase{x: []int64{64, 512}}.input(b)
	for _, devices := range []int{1, 2, 4} {
		b.Run(fmt.Sprint(devices), func(b *testing.B) {
			sess, err := onnxvk.NewSession(build(max(devices, 1), devices > 1), onnxvk.WithDevice("vulkan"))
			if errors.Is(err, onnxvk.ErrDeviceUnavailable) {
				testenv.Skip(b, fmt.Sprint("no Vulkan device: ", err))
			}
			if err != nil {
				b.Fatal(err)
			}
			defer sess.Close()
			in := map[string]*onnxvk.Tensor{"x": x}
			for b.Loop() {
				if _, err := sess.Run(context.Background(), in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// randomSpec returns a spec for tensor of shape dims over devices logical
// devices: a split of one or two random axes into random shard counts, on
// random devices, some shards replicated over a group; or the whole
// tensor replicated.
func randomSpec(rng *rand.Rand, tensor string, dims []int64, devices int) graph.ShardingSpec {
	s := graph.ShardingSpec{TensorName: tensor, DeviceGroups: map[int64][]int64{}}
	pick := func() int64 {
		if rng.IntN(4) == 0 {
			key := int64(100 + len(s.DeviceGroups))
			s.DeviceGroups[key] = []int64{int64(rng.IntN(devices)), int64(rng.IntN(devices))}
			return key
		}
		return int64(rng.IntN(devices))
	}
	axes := rng.Perm(len(dims))[:rng.IntN(min(2, len(dims))+1)]
	shards := int64(1)
	for _, a := range axes {
		n := 1 + rng.Int64N(min(dims[a], 4))
		shards *= n
		s.ShardedDims = append(s.ShardedDims, graph.ShardedDim{Axis: int64(a),
			SimpleSharding: []graph.SimpleSharding{{Dim: graph.DimOf(dims[a]), NumShards: n}}})
	}
	if len(axes) == 0 {
		shards = 1 + rng.Int64N(int64(devices))
	}
	for range shards {
		s.Devices = append(s.Devices, pick())
	}
	return s
}

// TestTensorParallelRandom plans and runs random chains of ops with
// random sharding specs on their inputs and outputs (splits of one or two
// axes, uneven, nested, replicated, reshards between disagreeing specs)
// over 2 and 4 logical devices, 200 on the CPU and 30 on Vulkan (50 and
// 10 outside the long suites), and compares each with the unannotated
// chain on one device.
func TestTensorParallelRandom(t *testing.T) {
	cpu, gpu := 50, 10
	if testenv.Long() {
		cpu, gpu = 200, 30
	}
	t.Run("cpu", func(t *testing.T) { checkRandomSharding(t, "cpu", cpu) })
	t.Run("vulkan", func(t *testing.T) {
		vulkanSession(t, tpCases[0].model(2, false))
		checkRandomSharding(t, "vulkan", gpu)
	})
}

func checkRandomSharding(t *testing.T, device string, trials int) {
	rng := rand.New(rand.NewPCG(7, 7))
	shardedTrials, comms := 0, map[string]int{}
	for trial := range trials {
		devices := 2 + 2*rng.IntN(2)
		rows, cols := 2+rng.Int64N(7), 2+rng.Int64N(7)
		c := tpCase{name: fmt.Sprintf("random%d", trial), x: []int64{rows, cols}}
		specs := map[string][]graph.ShardingSpec{}
		var ops []string
		c.build = func(b *tpBuilder) []int64 {
			r := rand.New(rand.NewPCG(uint64(trial), 3))
			cur, dims := "x", []int64{rows, cols}
			for k := range 3 + r.IntN(4) {
				out := fmt.Sprintf("v%d", k)
				var ins []string
				var attrs map[string]*graph.Attribute
				next := dims
				op := []string{"Relu", "Add", "MatMul", "Softmax", "ReduceSum", "Transpose", "Mul", "Reshape"}[r.IntN(8)]
				switch op {
				case "Reshape":
					next = [][]int64{dims, {dims[1], dims[0]}, {1, dims[0] * dims[1]}, {dims[0] * dims[1], 1}}[r.IntN(4)]
					ins = []string{cur, b.shape(out+"s", next...)}
				case "Relu":
					ins = []string{cur}
				case "Add", "Mul":
					shape := [][]int64{{dims[1]}, {dims[0], 1}, dims}[r.IntN(3)]
					ins = []string{cur, b.weight(out+"c", shape...)}
				case "MatMul":
					next = []int64{dims[0], 2 + r.Int64N(7)}
					ins = []string{cur, b.weight(out+"w", dims[1], next[1])}
				case "Softmax":
					ins, attrs = []string{cur}, intAttr("axis", r.Int64N(2))
				case "ReduceSum":
					a := r.Int64N(2)
					next = slices.Clone(dims)
					next[a] = 1
					ins = []string{cur, b.shape(out+"a", a)}
				case "Transpose":
					next = []int64{dims[1], dims[0]}
					ins = []string{cur}
				}
				if k == 0 || r.IntN(2) == 0 {
					ops = append(ops, op)
				}
				var sp []graph.ShardingSpec
				for _, in := range ins {
					if r.IntN(3) == 0 {
						t := b.g.TypeOf(in)
						d := dims
						if t != nil {
							d = t.Shape.Ints()
						}
						sp = append(sp, randomSpec(r, in, d, devices))
					}
				}
				if r.IntN(3) == 0 {
					sp = append(sp, randomSpec(r, out, next, devices))
				}
				if k == 0 && len(sp) == 0 {
					sp = append(sp, randomSpec(r, cur, dims, devices))
				}
				specs[out] = sp
				b.node(op, ins, out, attrs, sp...)
				cur, dims = out, next
			}
			b.node("Identity", []string{cur}, "y", nil)
			return dims
		}
		x := c.input(t)
		ref, err := onnxvk.NewSession(c.model(devices, false), onnxvk.WithDevice(device))
		require.NoError(t, err)
		want, err := onnxvk.Data[float32](runOut(t, ref, x))
		require.NoError(t, err)
		ref.Close()
		sess, err := onnxvk.NewSession(c.model(devices, true), onnxvk.WithDevice(device))
		require.NoError(t, err, "trial %d: %v", trial, specs)
		got, err := onnxvk.Data[float32](runOut(t, sess, x))
		require.NoError(t, err, "trial %d", trial)
		require.InDeltaSlice(t, want, got, 1e-4, "trial %d: %v", trial, specs)
		p, err := sessionvalues.Of(sess).Plan(nil)
		require.NoError(t, err)
		sess.Close()
		if len(p.Shards) > 0 {
			shardedTrials++
		}
		for _, c := range p.Comms {
			comms[c.Kind]++
		}
	}
	t.Logf("%d of %d chains ran nodes sharded; communication steps: %v", shardedTrials, trials, comms)
	require.Greater(t, shardedTrials, trials*3/4)
	require.Len(t, comms, 3, "scatters, gathers and all-reduces")
}
