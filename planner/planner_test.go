package planner_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/planner"
)

// fakeDevice supports the ops in its set.
type fakeDevice struct {
	name string
	ops  map[string]bool
}

func (d fakeDevice) Name() string { return d.name }
func (d fakeDevice) Supports(q planner.Query) bool {
	return d.ops[q.Node.OpType]
}

var cpu = fakeDevice{"cpu", map[string]bool{"Relu": true, "Add": true, "Reshape": true, "Sigmoid": true, "Mul": true}}

// chain builds x -> Relu -> Sigmoid -> Relu ... (n nodes) on [1, size]
// floats, with a Reshape view in the middle and a skip Add at the end.
func chain(n int, size int64) *graph.Model {
	g := graph.NewGraph("chain")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(1, size))}}
	g.Initializers["shape"], _ = graph.FromSlice(graph.Int64, []int64{2}, []int64{1, -1})
	prev := "x"
	for i := range n {
		out := "v" + string(rune('a'+i))
		op := "Relu"
		in := []string{prev}
		if i == n/2 {
			op, in = "Reshape", []string{prev, "shape"}
		}
		g.Nodes = append(g.Nodes, &graph.Node{Name: out, OpType: op, Inputs: in, Outputs: []string{out}, Index: i})
		prev = out
	}
	g.Nodes = append(g.Nodes, &graph.Node{Name: "sum", OpType: "Add", Inputs: []string{prev, "va"}, Outputs: []string{"y"}, Index: n})
	g.Outputs = []*graph.ValueInfo{{Name: "y"}}
	return &graph.Model{Name: "chain", IRVersion: 8, Opsets: map[string]int64{"": 14}, Graph: g}
}

func TestPlanReusesMemory(t *testing.T) {
	const size = 1000
	p, err := planner.New(chain(8, size), planner.Options{Devices: []planner.Device{cpu}})
	require.NoError(t, err)
	require.Len(t, p.Steps, 9)
	for _, st := range p.Steps {
		require.Equal(t, planner.Compute, st.Kind)
		require.Equal(t, "cpu", st.Device)
	}
	bytes := int64(size * 4)
	// "va" lives to the end (skip connection); the rest of the chain needs
	// two more slots at a time, minus views.
	require.Equal(t, 3*alignUp(bytes), p.ArenaBytes["cpu"])
	require.Greater(t, p.UnsharedBytes, p.PeakBytes())
	checkNoOverlap(t, p)

	// The Reshape output is a view of its input.
	rs := p.Buffers[p.ValueIndex["ve"]]
	require.NotNil(t, rs)
	require.Equal(t, p.ValueIndex["vd"], rs.AliasOf)
	require.Equal(t, p.Buffers[p.ValueIndex["vd"]].Offset, rs.Offset)
	// The graph output is not in the arena.
	require.Nil(t, p.Buffers[p.ValueIndex["y"]])
}

func alignUp(n int64) int64 { return (n + 63) / 64 * 64 }

// checkNoOverlap verifies that no two buffers live at the same time share
// arena bytes, with liveness worked out from the steps rather than taken
// from the planner's Buffer.First and Last: a value is live from the first
// step that writes it to the last step that reads it, as an input or as a
// capture of the node's subgraphs (graph.Captured, by name); a graph
// output is live to the end; a view shares its root's buffer (the view's
// step must read a value of the root's group), which is live while any
// of them is. The planner's lifetimes must cover these.
func checkNoOverlap(t *testing.T, p *planner.Plan) {
	t.Helper()
	first, last := map[int]int{}, map[int]int{}
	use := func(v, s int) {
		if v >= 0 {
			last[v] = max(last[v], s)
		}
	}
	def := map[int]planner.Step{}
	for s, st := range p.Steps {
		for _, v := range st.Out {
			if _, ok := first[v]; v >= 0 && !ok {
				first[v], def[v] = s, st
			}
			use(v, s)
		}
		for _, v := range st.In {
			use(v, s)
		}
		if st.Node != nil {
			for _, name := range graph.Captured(st.Node) {
				v, ok := p.ValueIndex[name]
				require.True(t, ok, "%s captures %q, which the plan does not name", st.Node.Name, name)
				use(v, s)
			}
		}
	}
	for _, v := range p.Outputs {
		use(v, len(p.Steps)-1)
	}
	// A part of a Concat's output (Buffer.Part) belongs to its group.
	root := func(v int) int {
		for b := p.Buffers[v]; b != nil && (b.AliasOf >= 0 || b.Part != nil); b = p.Buffers[v] {
			if v = b.AliasOf; b.Part != nil {
				v = b.Part.Of
			}
		}
		return v
	}
	type span struct{ first, last int }
	live := map[int]span{}
	for v, b := range p.Buffers {
		f, ok := first[v]
		require.True(t, ok, "%s has a buffer but no step writes it", p.Values[v])
		r := root(v)
		if b.Part != nil {
			of := p.Buffers[b.Part.Of]
			require.True(t, of != nil && b.Offset >= of.Offset && b.Offset+b.Size <= of.Offset+of.Size,
				"%s lies outside the buffer of %s, which it is a part of", p.Values[v], p.Values[b.Part.Of])
		}
		if b.AliasOf >= 0 {
			st := def[v]
			require.True(t, st.Kind == planner.Compute && len(st.In) > 0 && st.In[0] >= 0 && root(st.In[0]) == r,
				"%s shares the buffer of %s but its step does not read that buffer", p.Values[v], p.Values[r])
		} else {
			require.True(t, b.First <= f && b.Last >= last[v], "%s: the planner keeps it live over steps %d..%d, its steps need %d..%d",
				p.Values[v], b.First, b.Last, f, last[v])
		}
		sp, seen := live[r]
		if !seen {
			sp = span{f, last[v]}
		}
		live[r] = span{min(sp.first, f), max(sp.last, last[v])}
	}
	for ra, a := range live {
		for rb, b := range live {
			ba, bb := p.Buffers[ra], p.Buffers[rb]
			if ra >= rb || ba.Device != bb.Device {
				continue
			}
			liveTogether := a.first <= b.last && b.first <= a.last
			shareBytes := ba.Offset < bb.Offset+bb.Size && bb.Offset < ba.Offset+ba.Size
			require.False(t, liveTogether && shareBytes, "%s (steps %d..%d) and %s (steps %d..%d) share arena bytes",
				p.Values[ra], a.first, a.last, p.Values[rb], b.first, b.last)
		}
	}
}

// TestPlanCapturedLifetime plans a value that only an If's branches read,
// after two more values are computed: it stays live (and in its arena
// slot) until the If.
func TestPlanCapturedLifetime(t *testing.T) {
	g := graph.NewGraph("captured")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(1, 64))},
		{Name: "cond", Type: graph.TensorType(graph.Bool, graph.ShapeOf())}}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}}
	branch := func(op string) *graph.Graph {
		b := graph.NewGraph(op)
		b.Nodes = []*graph.Node{{Name: op, OpType: op, Inputs: []string{"va"}, Outputs: []string{"o"}}}
		b.Outputs = []*graph.ValueInfo{{Name: "o"}}
		return b
	}
	g.Nodes = []*graph.Node{
		{Name: "va", OpType: "Relu", Inputs: []string{"x"}, Outputs: []string{"va"}},
		{Name: "vb", OpType: "Sigmoid", Inputs: []string{"x"}, Outputs: []string{"vb"}, Index: 1},
		{Name: "vc", OpType: "Relu", Inputs: []string{"vb"}, Outputs: []string{"vc"}, Index: 2},
		{Name: "if", OpType: "If", Inputs: []string{"cond"}, Outputs: []string{"vd"}, Index: 3, Attrs: map[string]*graph.Attribute{
			"then_branch": {Name: "then_branch", Type: graph.AttrGraph, G: branch("Relu")},
			"else_branch": {Name: "else_branch", Type: graph.AttrGraph, G: branch("Sigmoid")}}},
		{Name: "sum", OpType: "Add", Inputs: []string{"vc", "vd"}, Outputs: []string{"y"}, Index: 4},
	}
	m := &graph.Model{Name: "captured", IRVersion: 8, Opsets: map[string]int64{"": 14}, Graph: g}
	withIf := fakeDevice{"cpu", map[string]bool{"Relu": true, "Sigmoid": true, "Add": true, "If": true}}
	p, err := planner.New(m, planner.Options{Devices: []planner.Device{withIf}})
	require.NoError(t, err)
	require.Len(t, p.Steps, 5)
	checkNoOverlap(t, p)
}

func TestPlanPlacementAndTransfers(t *testing.T) {
	gpu := fakeDevice{"vulkan:0", map[string]bool{"Relu": true, "Add": true}}
	p, err := planner.New(chain(4, 64), planner.Options{Devices: []planner.Device{gpu, cpu}})
	require.NoError(t, err)
	var transfers []planner.Step
	for _, st := range p.Steps {
		if st.Kind == planner.Transfer {
			transfers = append(transfers, st)
			continue
		}
		want := "vulkan:0"
		if st.Node.OpType == "Reshape" {
			want = "cpu"
		}
		require.Equal(t, want, st.Device, st.Node.Name)
	}
	// x up, reshape input down, reshape output up, y down.
	require.Len(t, transfers, 4)
	require.Equal(t, "cpu", transfers[0].From)
	require.Equal(t, int64(64*4), transfers[0].Bytes)
	require.Equal(t, "cpu", transfers[len(transfers)-1].To)
	r := p.Report()
	require.Equal(t, 4, r.TransferSteps)
	require.Equal(t, int64(4*64*4), r.TransferBytes)
	checkNoOverlap(t, p)
}

func TestPlanUnsupportedListsAll(t *testing.T) {
	none := fakeDevice{"cpu", map[string]bool{"Add": true}}
	_, err := planner.New(chain(4, 8), planner.Options{Devices: []planner.Device{none}})
	require.ErrorIs(t, err, planner.ErrUnsupported)
	require.Contains(t, err.Error(), `"va"`)
	require.Contains(t, err.Error(), `"vd"`)
}

// decliner declines every op but Add, saying so.
type decliner struct{ fakeDevice }

func (d decliner) Decline(q planner.Query) string {
	if q.Node.OpType == "Add" {
		return ""
	}
	return "no " + q.Node.OpType + " here"
}

func (d decliner) Supports(q planner.Query) bool { return d.Decline(q) == "" }

// TestPlanSaysWhyDevicesDecline checks that a node no device runs fails
// planning with its op, input types and each device's reason, and that a
// placed node's plan lists the devices that declined it before.
func TestPlanSaysWhyDevicesDecline(t *testing.T) {
	gpu := fakeDevice{"vulkan:0", map[string]bool{"Add": true}}
	host := decliner{fakeDevice{"cpu", nil}}
	_, err := planner.New(chain(4, 8), planner.Options{Devices: []planner.Device{gpu, host}})
	require.ErrorIs(t, err, planner.ErrUnsupported)
	require.ErrorContains(t, err, `node "vc" (Reshape, #2) with inputs (float32[1 8], int64[2]): `+
		`vulkan:0: no kernel for these input types, attributes and shapes; cpu: no Reshape here`)

	gpu2 := decliner{fakeDevice{"vulkan:1", nil}}
	p, err := planner.New(chain(4, 8), planner.Options{Devices: []planner.Device{gpu2, cpu}})
	require.NoError(t, err)
	r := p.Report()
	var declined int
	for i, st := range p.Steps {
		if st.Kind != planner.Compute {
			continue
		}
		if st.Node.OpType == "Add" {
			require.Empty(t, st.Declined)
			continue
		}
		want := []planner.Declined{{Device: "vulkan:1", Reason: "no " + st.Node.OpType + " here"}}
		require.Equal(t, want, st.Declined, st.Node.Name)
		require.Equal(t, want, r.Steps[i].Declined)
		declined++
	}
	require.Equal(t, 4, declined)
	var text strings.Builder
	require.NoError(t, r.WriteText(&text))
	require.Contains(t, text.String(), "declined by")
	require.Contains(t, text.String(), "vulkan:1: no Reshape here")
}

// TestPlanFoldsConstantNodes checks that an Identity of a large constant
// becomes another name for the same tensor, and a large Constant node's
// value an initializer (paddle2onnx writes every weight so), while an
// Identity of an overridable initializer or into a graph output, and a
// Constant that is a graph output, stay nodes.
func TestPlanFoldsConstantNodes(t *testing.T) {
	g := graph.NewGraph("ids")
	w := graph.NewTensor(graph.Float, []int64{128, 64})
	k := graph.NewTensor(graph.Float, []int64{128, 64})
	g.Initializers["w"] = w
	g.Initializers["b"] = graph.NewTensor(graph.Float, []int64{64})
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(2, 128))},
		{Name: "b", Type: graph.TensorType(graph.Float, graph.ShapeOf(64))}}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}, {Name: "w3"}, {Name: "z"}, {Name: "k2"}}
	value := func(t *graph.Tensor) map[string]*graph.Attribute {
		return map[string]*graph.Attribute{"value": {Name: "value", Type: graph.AttrTensor, T: t}}
	}
	g.Nodes = []*graph.Node{
		{Name: "id1", OpType: "Identity", Inputs: []string{"w"}, Outputs: []string{"w1"}},
		{Name: "id2", OpType: "Identity", Inputs: []string{"w1"}, Outputs: []string{"w2"}, Index: 1},
		{Name: "idb", OpType: "Identity", Inputs: []string{"b"}, Outputs: []string{"b1"}, Index: 2},
		{Name: "id3", OpType: "Identity", Inputs: []string{"w"}, Outputs: []string{"w3"}, Index: 3},
		{Name: "mm", OpType: "MatMul", Inputs: []string{"x", "w2"}, Outputs: []string{"m"}, Index: 4},
		{Name: "add", OpType: "Add", Inputs: []string{"m", "b1"}, Outputs: []string{"y"}, Index: 5},
		{Name: "k", OpType: "Constant", Outputs: []string{"k"}, Attrs: value(k), Index: 6},
		{Name: "mmk", OpType: "MatMul", Inputs: []string{"x", "k"}, Outputs: []string{"z"}, Index: 7},
		{Name: "k2", OpType: "Constant", Outputs: []string{"k2"}, Attrs: value(k), Index: 8},
	}
	m := &graph.Model{Name: "ids", IRVersion: 8, Opsets: map[string]int64{"": 14}, Graph: g}
	p, err := planner.New(m, planner.Options{Devices: []planner.Device{fakeDevice{"cpu", map[string]bool{"Identity": true, "MatMul": true, "Add": true, "Constant": true}}}})
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, st := range p.Steps {
		if st.Kind == planner.Compute {
			ops = append(ops, st.Node.Name)
		}
	}
	if want := []string{"idb", "id3", "mm", "add", "mmk", "k2"}; !slices.Equal(ops, want) {
		t.Errorf("compute steps %v, want %v", ops, want)
	}
	if p.Constants[p.ValueIndex["w2"]] != w {
		t.Error("w2 is not the constant w itself")
	}
	if p.Constants[p.ValueIndex["k"]] != k {
		t.Error("k is not the Constant node's tensor itself")
	}
	if len(m.Graph.Nodes) != 9 || m.Graph.Initializers["w2"] != nil || m.Graph.Initializers["k"] != nil {
		t.Error("planning changed the model")
	}
}

// panicDevice panics when asked about a node, as a buggy device might.
type panicDevice struct{}

func (panicDevice) Name() string                { return "panic" }
func (panicDevice) Supports(planner.Query) bool { panic("device bug") }

// TestPanicWhilePlanning plans on a device that panics: New fails with an
// error naming the model instead.
func TestPanicWhilePlanning(t *testing.T) {
	_, err := planner.New(chain(2, 4), planner.Options{Devices: []planner.Device{panicDevice{}, cpu}})
	require.ErrorContains(t, err, "panic while planning: device bug")
}

// TestTransposedOperandOutlivesProduct plans Relu → Transpose → MatMul →
// Neg on a device other than the host: the Transpose's input stays alive
// until the product (a device may fold the Transpose into the product's
// strides, reading the input there), so the product's output never takes
// its memory, though the input is dead after the Transpose unfused.
func TestTransposedOperandOutlivesProduct(t *testing.T) {
	f32 := func(s ...int64) *graph.Type { return graph.TensorType(graph.Float, graph.ShapeOf(s...)) }
	g := graph.NewGraph("attention")
	g.Inputs = []*graph.ValueInfo{{Name: "q", Type: f32(2, 3, 5, 8)}, {Name: "k", Type: f32(2, 3, 7, 8)}}
	perm := map[string]*graph.Attribute{"perm": {Name: "perm", Type: graph.AttrInts, Ints: []int64{0, 1, 3, 2}}}
	g.Nodes = []*graph.Node{
		{Name: "relu", OpType: "Relu", Inputs: []string{"k"}, Outputs: []string{"kr"}, Index: 0},
		{Name: "transpose", OpType: "Transpose", Inputs: []string{"kr"}, Outputs: []string{"kt"}, Attrs: perm, Index: 1},
		{Name: "product", OpType: "MatMul", Inputs: []string{"q", "kt"}, Outputs: []string{"p"}, Index: 2},
		{Name: "neg", OpType: "Neg", Inputs: []string{"p"}, Outputs: []string{"y"}, Index: 3},
	}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}}
	m := &graph.Model{Name: "attention", IRVersion: 8, Opsets: map[string]int64{"": 14}, Graph: g}
	ops := map[string]bool{"Relu": true, "Transpose": true, "MatMul": true, "Neg": true}
	for _, dev := range []string{"gpu", "cpu"} {
		p, err := planner.New(m, planner.Options{Devices: []planner.Device{fakeDevice{dev, ops}}})
		require.NoError(t, err)
		checkNoOverlap(t, p)
		kr, prod := p.Buffers[p.ValueIndex["kr"]], p.Buffers[p.ValueIndex["p"]]
		require.NotNil(t, kr)
		require.NotNil(t, prod)
		overlap := kr.Offset < prod.Offset+prod.Size && prod.Offset < kr.Offset+kr.Size
		// On the host the input's memory is reused as before.
		require.Equal(t, dev == "cpu", overlap, "%s: the product's output at [%d, +%d), the Transpose's input at [%d, +%d)", dev, prod.Offset, prod.Size, kr.Offset, kr.Size)
	}
}
