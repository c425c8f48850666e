package planner_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/hostfallback"
	"github.com/onnxvk/onnxvk/planner"
)

// convBN builds x[2, 3, 6, 5] -> Conv (3x3, pads 1, 4 channels, with a
// bias when bias is set) -> BatchNormalization (constant statistics,
// epsilon 0.01) -> Relu -> y at opset.
func convBN(opset int64, bias bool) *graph.Model {
	r := rand.New(rand.NewPCG(1, 2))
	random := func(shape []int64, lo float32) *graph.Tensor {
		t := graph.NewTensor(graph.Float, shape)
		v := graph.View[float32](t)
		for i := range v {
			v[i] = lo + 2*r.Float32()
		}
		return t
	}
	g := graph.NewGraph("convbn")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(2, 3, 6, 5))}}
	g.Initializers["w"] = random([]int64{4, 3, 3, 3}, -1)
	for _, name := range []string{"scale", "shift", "mean"} {
		g.Initializers[name] = random([]int64{4}, -1)
	}
	g.Initializers["var"] = random([]int64{4}, 0.1)
	conv := &graph.Node{Name: "conv", OpType: "Conv", Inputs: []string{"x", "w"}, Outputs: []string{"c"},
		Attrs: map[string]*graph.Attribute{"pads": {Name: "pads", Type: graph.AttrInts, Ints: []int64{1, 1, 1, 1}}}}
	if bias {
		g.Initializers["b"] = random([]int64{4}, -1)
		conv.Inputs = append(conv.Inputs, "b")
	}
	g.Nodes = []*graph.Node{
		conv,
		{Name: "bn", OpType: "BatchNormalization", Inputs: []string{"c", "scale", "shift", "mean", "var"}, Outputs: []string{"n"}, Index: 1,
			Attrs: map[string]*graph.Attribute{"epsilon": {Name: "epsilon", Type: graph.AttrFloat, F: 0.01}}},
		{Name: "relu", OpType: "Relu", Inputs: []string{"n"}, Outputs: []string{"y"}, Index: 2},
	}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}}
	return &graph.Model{Name: "convbn", IRVersion: 8, Opsets: map[string]int64{"": opset}, Graph: g}
}

var convBNDevice = fakeDevice{"cpu", map[string]bool{"Conv": true, "BatchNormalization": true, "Relu": true, "FusedConv": true}}

func TestPlanFoldsBatchNorm(t *testing.T) {
	for _, bias := range []bool{false, true} {
		m := convBN(15, bias)
		w := m.Graph.Initializers["w"].Clone()
		p, err := planner.New(m, planner.Options{Devices: []planner.Device{convBNDevice}})
		require.NoError(t, err)
		require.Equal(t, 2, p.Fused)
		require.Len(t, p.Steps, 1)
		f := p.Steps[0].Node
		require.Equal(t, "FusedConv", f.OpType)
		require.Equal(t, ops.FusedDomain, f.Domain)
		require.Equal(t, []string{"y"}, f.Outputs)
		require.Len(t, f.Inputs, 3)
		require.Equal(t, "x", f.Inputs[0])
		for _, name := range f.Inputs[1:] {
			require.NotContains(t, m.Graph.Initializers, name, "the folded constants have fresh names")
		}
		// The folded weights and bias, channel by channel.
		g := m.Graph.Initializers
		nw, nb := graph.View[float32](p.Graph.Initializers[f.Inputs[1]]), graph.View[float32](p.Graph.Initializers[f.Inputs[2]])
		require.Len(t, nb, 4)
		for c := range 4 {
			a := float64(g["scale"].Float64At(int64(c))) / math.Sqrt(g["var"].Float64At(int64(c))+float64(float32(0.01)))
			b := 0.0
			if bias {
				b = g["b"].Float64At(int64(c))
			}
			require.InDelta(t, (b-g["mean"].Float64At(int64(c)))*a+g["shift"].Float64At(int64(c)), float64(nb[c]), 1e-5)
			for k := 27 * c; k < 27*(c+1); k++ {
				require.InDelta(t, w.Float64At(int64(k))*a, float64(nw[k]), 1e-5)
			}
		}
		// The caller's model is untouched.
		require.Len(t, m.Graph.Nodes, 3)
		require.Equal(t, graph.View[float32](w), graph.View[float32](m.Graph.Initializers["w"]))
		require.NotContains(t, m.Opsets, ops.FusedDomain)
	}
}

func TestPlanKeepsBatchNorm(t *testing.T) {
	cases := map[string]func(m *graph.Model){
		"conv output read elsewhere": func(m *graph.Model) {
			m.Graph.Outputs = append(m.Graph.Outputs, &graph.ValueInfo{Name: "c"}, &graph.ValueInfo{Name: "n"})
		},
		"statistics overridable": func(m *graph.Model) {
			m.Graph.Inputs = append(m.Graph.Inputs, &graph.ValueInfo{Name: "mean", Type: graph.TensorType(graph.Float, graph.ShapeOf(4))})
		},
		"weights overridable": func(m *graph.Model) {
			m.Graph.Inputs = append(m.Graph.Inputs, &graph.ValueInfo{Name: "w", Type: graph.TensorType(graph.Float, graph.ShapeOf(4, 3, 3, 3))})
		},
		"training": func(m *graph.Model) {
			m.Graph.Nodes[1].Attrs["training_mode"] = &graph.Attribute{Name: "training_mode", Type: graph.AttrInt, I: 1}
		},
		"running mean output": func(m *graph.Model) {
			m.Graph.Nodes[1].Outputs = []string{"n", "rm"}
		},
	}
	for name, change := range cases {
		m := convBN(15, true)
		change(m)
		p, err := planner.New(m, planner.Options{Devices: []planner.Device{convBNDevice}})
		require.NoError(t, err, name)
		found := false
		for _, st := range p.Steps {
			found = found || st.Node.OpType == "BatchNormalization"
		}
		require.True(t, found, "%s: BatchNormalization folded", name)
	}
	// The non-spatial mode of opsets before 9 is not per channel.
	m := convBN(7, true)
	m.Graph.Nodes[1].Attrs["spatial"] = &graph.Attribute{Name: "spatial", Type: graph.AttrInt, I: 0}
	p, err := planner.New(m, planner.Options{Devices: []planner.Device{convBNDevice}})
	require.NoError(t, err)
	require.Len(t, p.Steps, 3)
}

// TestFoldedBatchNormMatches runs the folded plan and the unfolded one
// (the Conv's and the normalization's outputs also graph outputs, so that
// nothing fuses) on the CPU, at an old opset
// and a recent one: the results agree within the ops' tolerance.
func TestFoldedBatchNormMatches(t *testing.T) {
	run := func(m *graph.Model, x *graph.Tensor) (*graph.Tensor, int) {
		cpu := hostfallback.NewDevice(nil)
		p, err := planner.New(m, planner.Options{Devices: []planner.Device{cpu}})
		require.NoError(t, err)
		ex, err := backend.NewExecutor(p, []backend.Device{cpu})
		require.NoError(t, err)
		out, err := ex.Run(context.Background(), map[string]graph.Value{"x": x})
		require.NoError(t, err)
		return out["y"].(*graph.Tensor), len(p.Steps)
	}
	x := graph.NewTensor(graph.Float, []int64{2, 3, 6, 5})
	for i, v := 0, graph.View[float32](x); i < len(v); i++ {
		v[i] = float32(math.Sin(float64(i)))
	}
	tol := ops.Lookup("", "Conv", 11).Tolerance()
	for _, opset := range []int64{7, 15} {
		for _, bias := range []bool{false, true} {
			folded, steps := run(convBN(opset, bias), x)
			require.Equal(t, 1, steps)
			m := convBN(opset, bias)
			m.Graph.Outputs = append(m.Graph.Outputs, &graph.ValueInfo{Name: "c"}, &graph.ValueInfo{Name: "n"})
			plain, steps := run(m, x)
			require.Equal(t, 3, steps)
			want, got := graph.View[float32](plain), graph.View[float32](folded)
			require.Len(t, got, len(want))
			for i := range want {
				require.InDelta(t, want[i], got[i], tol.Abs+tol.Rel*math.Abs(float64(want[i])), "opset %d bias %v element %d", opset, bias, i)
			}
		}
	}
}
