package onnxvk

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk/graph"
)

// threadsModel is Conv 8→16 3x3 on x [4 8 32 32], Relu, a reshape to
// [64 1024], MatMul by [1024 128], LayerNormalization and Softmax over the
// last axis ("y"), and ReduceSum over the rows ("s"): kernels with
// parallel loops of every kind (packed GEMM, elementwise, rows).
func threadsModel() *graph.Model {
	rng := rand.New(rand.NewPCG(3, 5))
	weights := func(shape ...int64) *graph.Tensor {
		w := graph.NewTensor(graph.Float, shape)
		for i, v := 0, graph.View[float32](w); i < len(v); i++ {
			v[i] = rng.Float32()*2 - 1
		}
		return w
	}
	g := graph.NewGraph("threads")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.Shape{graph.DimOf(4), graph.DimOf(8), graph.DimOf(32), graph.DimOf(32)})}}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}, {Name: "s"}}
	g.Initializers["w"] = weights(16, 8, 3, 3)
	g.Initializers["b"] = weights(16)
	g.Initializers["m"] = weights(1024, 128)
	g.Initializers["scale"] = weights(128)
	g.Initializers["bias"] = weights(128)
	g.Initializers["rows"], _ = graph.FromSlice(graph.Int64, []int64{2}, []int64{64, 1024})
	g.Initializers["axis0"], _ = graph.FromSlice(graph.Int64, []int64{1}, []int64{0})
	ints := func(name string, v ...int64) *graph.Attribute {
		return &graph.Attribute{Name: name, Type: graph.AttrInts, Ints: v}
	}
	g.Nodes = []*graph.Node{
		{Name: "conv", OpType: "Conv", Inputs: []string{"x", "w", "b"}, Outputs: []string{"c"},
			Attrs: map[string]*graph.Attribute{"pads": ints("pads", 1, 1, 1, 1)}},
		{Name: "relu", OpType: "Relu", Inputs: []string{"c"}, Outputs: []string{"r"}},
		{Name: "flat", OpType: "Reshape", Inputs: []string{"r", "rows"}, Outputs: []string{"f"}},
		{Name: "matmul", OpType: "MatMul", Inputs: []string{"f", "m"}, Outputs: []string{"p"}},
		{Name: "norm", OpType: "LayerNormalization", Inputs: []string{"p", "scale", "bias"}, Outputs: []string{"n"}},
		{Name: "softmax", OpType: "Softmax", Inputs: []string{"n"}, Outputs: []string{"y"}},
		{Name: "sum", OpType: "ReduceSum", Inputs: []string{"p", "axis0"}, Outputs: []string{"s"}},
	}
	for i, n := range g.Nodes {
		n.Index = i
	}
	return &graph.Model{Name: "threads", IRVersion: 8, Opsets: map[string]int64{"": 17}, Graph: g}
}

// TestWithThreads runs threadsModel on the CPU with budgets of 1 to 4
// threads (GOMAXPROCS 4): the outputs are identical bit for bit, the pool
// lends a session with WithThreads(1) no worker, so that its kernels run
// on the Run's goroutine alone, and never more than n-1 to one with
// WithThreads(n), also with three Runs at once (the pool's own count).
func TestWithThreads(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	x := graph.NewTensor(graph.Float, []int64{4, 8, 32, 32})
	rng := rand.New(rand.NewPCG(9, 9))
	for i, v := 0, graph.View[float32](x); i < len(v); i++ {
		v[i] = rng.Float32()*2 - 1
	}
	in := map[string]*Tensor{"x": TensorFrom(x)}
	var want map[string][]byte
	for n := 1; n <= 4; n++ {
		t.Run(fmt.Sprint(n, "threads"), func(t *testing.T) {
			s, err := NewSession(threadsModel(), WithDevice("cpu"), WithThreads(n))
			require.NoError(t, err)
			defer s.Close()
			var wg sync.WaitGroup
			outs := make([]map[string]*Tensor, 3)
			errs := make([]error, 3)
			for i := range outs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					outs[i], errs[i] = s.Run(context.Background(), in)
				}()
			}
			wg.Wait()
			for i := range outs {
				require.NoError(t, errs[i])
				got := map[string][]byte{"y": outs[i]["y"].Graph().Data, "s": outs[i]["s"].Graph().Data}
				if want == nil {
					want = got
				}
				for name := range want {
					if !bytes.Equal(got[name], want[name]) {
						t.Errorf("output %s with %d threads differs from that with 1", name, n)
					}
				}
			}
			if p := s.threads.PeakLent(); p > n-1 {
				t.Errorf("WithThreads(%d): the pool lent %d workers at once", n, p)
			}
		})
	}
}

// TestWithThreadsNegative checks that a negative budget is an error naming
// the model.
func TestWithThreadsNegative(t *testing.T) {
	_, err := NewSession(threadsModel(), WithDevice("cpu"), WithThreads(-2))
	require.ErrorContains(t, err, `model "threads": WithThreads(-2)`)
}
