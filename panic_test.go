package onnxvk_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/hostfallback"
	"github.com/onnxvk/onnxvk/internal/sessionvalues"
	"github.com/onnxvk/onnxvk/internal/testenv"
)

// testDomain holds ops that exist for these tests: Panic, whose CPU kernel
// panics, and PanicInfer, whose inference rule does.
const testDomain = "onnxvk.test"

func init() {
	hostfallback.RegisterDomain(testDomain, "Panic", func(*hostfallback.Call) error { panic("test kernel panic") })
	ops.Register(&ops.Schema{Domain: testDomain, Name: "PanicInfer", Since: 1, MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		Infer: func(*ops.InferContext) error { panic("test rule panic") }})
}

// panicModel is y = op(relu(x)), with op of testDomain in node "boom", or,
// with inIf set, the same inside the then-branch of an If on cond.
func panicModel(op string, inIf bool) *graph.Model {
	f32 := graph.TensorType(graph.Float, graph.ShapeOf(2, 3))
	g := graph.NewGraph("panic")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: f32}}
	g.Outputs = []*graph.ValueInfo{{Name: "y", Type: graph.TensorType(graph.Float, nil)}}
	boom := &graph.Node{Name: "boom", Domain: testDomain, OpType: op, Inputs: []string{"r"}, Outputs: []string{"y"}}
	g.Nodes = []*graph.Node{{Name: "relu", OpType: "Relu", Inputs: []string{"x"}, Outputs: []string{"r"}}, boom}
	if inIf {
		branch := graph.NewGraph("then")
		branch.Outputs = []*graph.ValueInfo{{Name: "y", Type: graph.TensorType(graph.Float, nil)}}
		branch.Nodes = []*graph.Node{boom}
		other := graph.NewGraph("else")
		other.Outputs = []*graph.ValueInfo{{Name: "r", Type: f32}}
		g.Inputs = append(g.Inputs, &graph.ValueInfo{Name: "cond", Type: graph.TensorType(graph.Bool, graph.Shape{})})
		g.Nodes[1] = &graph.Node{Name: "if", OpType: "If", Inputs: []string{"cond"}, Outputs: []string{"y"}, Attrs: map[string]*graph.Attribute{
			"then_branch": {Name: "then_branch", Type: graph.AttrGraph, G: branch},
			"else_branch": {Name: "else_branch", Type: graph.AttrGraph, G: other}}}
	}
	for i, n := range g.Nodes {
		n.Index = i
	}
	return &graph.Model{Name: "panic", IRVersion: 8, Opsets: map[string]int64{"": 16, testDomain: 1}, Graph: g}
}

// TestRunKernelPanic runs models whose CPU kernel panics, on the CPU, on
// Vulkan (Relu on the GPU, the panicking node a host step of the plan) and
// inside an If's branch: each Run fails with an error naming the node, and
// the session stays usable. A panicking inference rule (which computes the
// folded constants at plan time) fails the session's creation the same
// way.
func TestRunKernelPanic(t *testing.T) {
	x, err := onnxvk.NewTensor([]int64{2, 3}, []float32{1, -2, 3, -4, 5, -6})
	require.NoError(t, err)
	cond, err := onnxvk.NewTensor([]int64{}, []bool{true})
	require.NoError(t, err)
	for _, tc := range []struct {
		device string
		inIf   bool
	}{{"cpu", false}, {"cpu", true}, {"vulkan", false}} {
		t.Run(fmt.Sprintf("%s/if=%v", tc.device, tc.inIf), func(t *testing.T) {
			sess, err := onnxvk.NewSession(panicModel("Panic", tc.inIf), onnxvk.WithDevice(tc.device))
			if errors.Is(err, onnxvk.ErrDeviceUnavailable) {
				testenv.Skip(t, fmt.Sprintf("no Vulkan device: %v", err))
			}
			require.NoError(t, err)
			defer sess.Close()
			if tc.device == "vulkan" {
				p, err := sessionvalues.Of(sess).Plan(nil)
				require.NoError(t, err)
				for _, st := range p.Steps {
					if st.Node != nil {
						require.Equal(t, st.Node.Name == "relu", st.Device != "cpu", "%s runs on %s", st.Node, st.Device)
					}
				}
			}
			in := map[string]*onnxvk.Tensor{"x": x}
			if tc.inIf {
				in["cond"] = cond
			}
			for range 2 {
				_, err = sess.Run(context.Background(), in)
				require.ErrorContains(t, err, `node "boom" (onnxvk.test.Panic, #`)
				require.ErrorContains(t, err, "kernel panic: test kernel panic")
			}
		})
	}
	_, err = onnxvk.NewSession(panicModel("PanicInfer", false), onnxvk.WithDevice("cpu"))
	require.ErrorContains(t, err, `node "boom" (onnxvk.test.PanicInfer, #1)`)
	require.ErrorContains(t, err, "test rule panic")
}
