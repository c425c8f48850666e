package onnxvk

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/hostfallback"
	"github.com/onnxvk/onnxvk/planner"
)

// sigmoidGPU is a fake accelerator that runs Sigmoid, off by skew on every
// element, so that Verify has something to find.
type sigmoidGPU struct{ skew float32 }

func (*sigmoidGPU) Name() string                                { return "fake:0" }
func (*sigmoidGPU) Supports(q planner.Query) bool               { return q.Node.OpType == "Sigmoid" }
func (*sigmoidGPU) Close() error                                { return nil }
func (*sigmoidGPU) Upload(v graph.Value) (graph.Value, error)   { return v, nil }
func (*sigmoidGPU) Download(v graph.Value) (graph.Value, error) { return v, nil }
func (g *sigmoidGPU) Compile(p *planner.Plan, steps []planner.Step) (backend.Program, error) {
	return sigmoidProgram{g, steps}, nil
}

type sigmoidProgram struct {
	g     *sigmoidGPU
	steps []planner.Step
}

func (pr sigmoidProgram) Run(_ context.Context, f *backend.Frame) error {
	vals := f.Values[pr.g.Name()]
	for _, st := range pr.steps {
		x := vals[st.In[0]].(*graph.Tensor)
		y := graph.NewTensor(graph.Float, x.Shape)
		for i, v := range graph.View[float32](x) {
			graph.View[float32](y)[i] = float32(1/(1+math.Exp(-float64(v)))) + pr.g.skew
		}
		vals[st.Out[0]] = y
	}
	return nil
}

// TestVerify checks that Verify compares each accelerator node with the
// CPU on the CPU's inputs: a tiny skew passes, a large one is reported at
// the first Sigmoid, and CPU nodes are not checked.
func TestVerify(t *testing.T) {
	g := graph.NewGraph("verify")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(2, 3))}}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}}
	g.Nodes = []*graph.Node{
		{Name: "s1", OpType: "Sigmoid", Inputs: []string{"x"}, Outputs: []string{"a"}},
		{Name: "neg", OpType: "Neg", Inputs: []string{"a"}, Outputs: []string{"b"}, Index: 1},
		{Name: "s2", OpType: "Sigmoid", Inputs: []string{"b"}, Outputs: []string{"y"}, Index: 2},
	}
	m := &graph.Model{Name: "verify", IRVersion: 8, Opsets: map[string]int64{"": 14}, Graph: g}
	x, err := graph.FromSlice(graph.Float, []int64{2, 3}, []float32{-2, -1, 0, 0.5, 1, 3})
	require.NoError(t, err)
	for _, c := range []struct {
		skew float32
		ok   bool
	}{{1e-7, true}, {1e-2, false}} {
		s, err := NewSession(m, WithDevice("cpu"))
		require.NoError(t, err)
		s.devices = []backend.Device{&sigmoidGPU{skew: c.skew}, hostfallback.NewDevice(nil)}
		checks, err := s.Verify(context.Background(), map[string]*Tensor{"x": TensorFrom(x)})
		require.NoError(t, err)
		require.Len(t, checks, 2, "the two Sigmoid nodes are checked, Neg on the CPU is not")
		for i, ck := range checks {
			require.Equal(t, "fake:0", ck.Device)
			require.True(t, strings.HasPrefix(ck.Node, "s"), ck.Node)
			require.Equal(t, "Sigmoid", ck.Op)
			require.Equal(t, c.ok, ck.OK, "skew %g, check %d: max abs %g", c.skew, i, ck.MaxAbs)
			require.InDelta(t, float64(c.skew), ck.MaxAbs, float64(c.skew)*1e-3+1e-7)
		}
		require.NoError(t, s.Close())
	}
}

// TestDifferUnits checks that integer outputs agree when equal or, under
// a tolerance's Units, within that many units, and that float tolerances
// do not loosen them.
func TestDifferUnits(t *testing.T) {
	want := graph.NewTensor(graph.Uint8, []int64{3})
	copy(want.Data, []byte{0, 128, 255})
	near := graph.NewTensor(graph.Uint8, []int64{3})
	copy(near.Data, []byte{1, 128, 254})
	far := graph.NewTensor(graph.Uint8, []int64{3})
	copy(far.Data, []byte{0, 130, 255})
	for _, tc := range []struct {
		got  *graph.Tensor
		tol  ops.Tolerance
		ok   bool
		diff float64
	}{
		{want, ops.Tolerance{}, true, 0},
		{near, ops.Tolerance{Abs: 1e-4, Rel: 1e-2}, false, math.Inf(1)},
		{near, ops.Tolerance{Units: 1}, true, 1},
		{far, ops.Tolerance{Units: 1}, false, math.Inf(1)},
	} {
		abs, _, ok := differ(tc.got, want, tc.tol)
		if ok != tc.ok || abs != tc.diff {
			t.Errorf("%v within %+v: %v (largest difference %v), want %v (%v)", tc.got.Data, tc.tol, ok, abs, tc.ok, tc.diff)
		}
	}
}
