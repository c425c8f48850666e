package onnxvk_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/example"
)

// mlpModel builds a two-layer perceptron with a symbolic batch dimension N:
// softmax(relu(reshape(x) @ w1 + b1) @ w2 + b2); the Reshape is a view.
func mlpModel() *graph.Model {
	rng := rand.New(rand.NewPCG(7, 7))
	weights := func(shape ...int64) *graph.Tensor {
		w := graph.NewTensor(graph.Float, shape)
		v := graph.View[float32](w)
		for i := range v {
			v[i] = rng.Float32()*2 - 1
		}
		return w
	}
	g := graph.NewGraph("mlp")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.Shape{graph.SymDim("N"), graph.DimOf(4), graph.DimOf(8)})}}
	g.Outputs = []*graph.ValueInfo{{Name: "probs", Type: graph.TensorType(graph.Float, graph.Shape{graph.SymDim("N"), graph.DimOf(10)})}}
	g.Initializers["w1"] = weights(32, 64)
	g.Initializers["b1"] = weights(64)
	g.Initializers["w2"] = weights(64, 10)
	g.Initializers["b2"] = weights(10)
	g.Initializers["flat"], _ = graph.FromSlice(graph.Int64, []int64{2}, []int64{0, -1})
	node := func(op string, in []string, out string) *graph.Node {
		return &graph.Node{Name: op + "_" + out, OpType: op, Inputs: in, Outputs: []string{out}, Index: len(g.Nodes)}
	}
	g.Nodes = []*graph.Node{
		node("Reshape", []string{"x", "flat"}, "x2"),
		node("MatMul", []string{"x2", "w1"}, "h"),
		node("Add", []string{"h", "b1"}, "hb"),
		node("Relu", []string{"hb"}, "a"),
		node("MatMul", []string{"a", "w2"}, "z"),
		node("Add", []string{"z", "b2"}, "zb"),
		node("Softmax", []string{"zb"}, "probs"),
	}
	for i, n := range g.Nodes {
		n.Index = i
	}
	g.Nodes[6].Attrs = map[string]*graph.Attribute{"axis": {Name: "axis", Type: graph.AttrInt, I: -1}}
	return &graph.Model{Name: "mlp", IRVersion: 8, Opsets: map[string]int64{"": 14}, Graph: g}
}

func randomInput(t testing.TB, seed uint64, n int64) *onnxvk.Tensor {
	rng := rand.New(rand.NewPCG(seed, 1))
	data := make([]float32, n*32)
	for i := range data {
		data[i] = rng.Float32()
	}
	x, err := onnxvk.NewTensor([]int64{n, 4, 8}, data)
	require.NoError(t, err)
	return x
}

// mlpReference computes mlpModel's probabilities for x [n, 4, 8] in
// float64, with plain loops over the model's weights.
func mlpReference(x []float32, n int) []float64 {
	weights := mlpModel().Graph.Initializers
	w1, b1 := graph.View[float32](weights["w1"]), graph.View[float32](weights["b1"])
	w2, b2 := graph.View[float32](weights["w2"]), graph.View[float32](weights["b2"])
	probs := make([]float64, n*10)
	for r := range n {
		hidden := make([]float64, 64)
		for j := range hidden {
			sum := float64(b1[j])
			for k := range 32 {
				sum += float64(x[r*32+k]) * float64(w1[k*64+j])
			}
			hidden[j] = max(sum, 0)
		}
		logits := probs[r*10 : r*10+10]
		for j := range logits {
			logits[j] = float64(b2[j])
			for k, h := range hidden {
				logits[j] += h * float64(w2[k*10+j])
			}
		}
		top, total := slices.Max(logits), 0.0
		for j := range logits {
			logits[j] = math.Exp(logits[j] - top)
			total += logits[j]
		}
		for j := range logits {
			logits[j] /= total
		}
	}
	return probs
}

// TestRunMLP runs the MLP at three batch sizes and compares its
// probabilities with mlpReference's.
func TestRunMLP(t *testing.T) {
	sess, err := onnxvk.NewSession(mlpModel(), onnxvk.WithDevice("cpu"))
	require.NoError(t, err)
	defer sess.Close()
	require.Equal(t, "cpu", sess.Device())
	require.Equal(t, "x", sess.Inputs()[0].Name)
	require.Equal(t, []int64{-1, 4, 8}, sess.Inputs()[0].Shape)
	require.Equal(t, []string{"N", "", ""}, sess.Inputs()[0].Dims)
	require.Equal(t, "tensor", sess.Inputs()[0].Kind)
	require.Equal(t, "float32[N 4 8]", sess.Inputs()[0].Type)

	for _, n := range []int64{1, 3, 13} {
		x := randomInput(t, 1, n)
		out, err := sess.Run(context.Background(), map[string]*onnxvk.Tensor{"x": x})
		require.NoError(t, err)
		require.Equal(t, []int64{n, 10}, out["probs"].Shape())
		probs, err := onnxvk.Data[float32](out["probs"])
		require.NoError(t, err)
		in, err := onnxvk.Data[float32](x)
		require.NoError(t, err)
		for i, want := range mlpReference(in, int(n)) {
			require.InDelta(t, want, probs[i], 1e-6, "batch %d: probs[%d, %d]", n, i/10, i%10)
		}
	}
}

// TestRunConcurrent runs one session from 8 goroutines, 200 runs each, and
// requires every result to equal the single-threaded one bit for bit: for
// the MLP and for the convolutional example model.
func TestRunConcurrent(t *testing.T) {
	t.Run("mlp", func(t *testing.T) {
		sess, err := onnxvk.NewSession(mlpModel(), onnxvk.WithDevice("cpu"))
		require.NoError(t, err)
		defer sess.Close()
		runConcurrently(t, sess, "x", "probs", []*onnxvk.Tensor{randomInput(t, 1, 2), randomInput(t, 2, 5)})
	})
	t.Run("example", func(t *testing.T) {
		sess, err := onnxvk.LoadBytes(example.Model(), onnxvk.WithDevice("cpu"))
		require.NoError(t, err)
		defer sess.Close()
		var inputs []*onnxvk.Tensor
		for i, hw := range [][2]int64{{24, 32}, {17, 9}} {
			rng := rand.New(rand.NewPCG(uint64(i), 5))
			data := make([]float32, 3*hw[0]*hw[1])
			for k := range data {
				data[k] = rng.Float32()
			}
			x, err := onnxvk.NewTensor([]int64{1, 3, hw[0], hw[1]}, data)
			require.NoError(t, err)
			inputs = append(inputs, x)
		}
		runConcurrently(t, sess, "image", "edges", inputs)
	})
}

// runConcurrently runs sess on each input once, then from 8 goroutines
// 200 times each, and requires the concurrent results to equal the first.
func runConcurrently(t *testing.T, sess *onnxvk.Session, in, out string, inputs []*onnxvk.Tensor) {
	var want [][]byte
	for _, x := range inputs {
		res, err := sess.Run(context.Background(), map[string]*onnxvk.Tensor{in: x})
		require.NoError(t, err)
		want = append(want, append([]byte{}, res[out].Bytes()...))
	}
	compareConcurrently(t, sess, in, out, inputs, want, 8, 200)
}

// compareConcurrently runs sess from goroutines goroutines, runs times
// each, on the inputs in turn (input in), and requires output out to
// equal want for each input, byte for byte.
func compareConcurrently(t *testing.T, sess *onnxvk.Session, in, out string, inputs []*onnxvk.Tensor, want [][]byte, goroutines, runs int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Go(func() {
			for r := range runs {
				k := (g + r) % len(inputs)
				res, err := sess.Run(context.Background(), map[string]*onnxvk.Tensor{in: inputs[k]})
				if err != nil {
					errs <- err
					return
				}
				if !bytes.Equal(res[out].Bytes(), want[k]) {
					errs <- fmt.Errorf("goroutine %d, run %d: result differs from the reference run", g, r)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestOutputsOwned checks that a later Run does not overwrite the outputs
// of an earlier one (outputs never share the arena).
func TestOutputsOwned(t *testing.T) {
	sess, err := onnxvk.NewSession(mlpModel(), onnxvk.WithDevice("cpu"))
	require.NoError(t, err)
	defer sess.Close()
	first, err := sess.Run(context.Background(), map[string]*onnxvk.Tensor{"x": randomInput(t, 1, 3)})
	require.NoError(t, err)
	kept := append([]byte{}, first["probs"].Bytes()...)
	_, err = sess.Run(context.Background(), map[string]*onnxvk.Tensor{"x": randomInput(t, 9, 3)})
	require.NoError(t, err)
	require.Equal(t, kept, first["probs"].Bytes())
}

func TestRunInputErrors(t *testing.T) {
	sess, err := onnxvk.NewSession(mlpModel(), onnxvk.WithDevice("cpu"))
	require.NoError(t, err)
	ctx := context.Background()
	wrongType, _ := onnxvk.NewTensor([]int64{1, 4, 8}, make([]float64, 32))
	wrongDim, _ := onnxvk.NewTensor([]int64{1, 4, 9}, make([]float32, 36))
	wrongRank, _ := onnxvk.NewTensor([]int64{32}, make([]float32, 32))
	cases := []struct {
		name   string
		inputs map[string]*onnxvk.Tensor
		is     error
		says   string
	}{
		{"unknown", map[string]*onnxvk.Tensor{"x": randomInput(t, 1, 1), "y": randomInput(t, 1, 1)}, onnxvk.ErrUnknownInput, `"y"`},
		{"missing", map[string]*onnxvk.Tensor{}, onnxvk.ErrMissingInput, `"x"`},
		{"dtype", map[string]*onnxvk.Tensor{"x": wrongType}, onnxvk.ErrInputMismatch, "float64"},
		{"dim", map[string]*onnxvk.Tensor{"x": wrongDim}, onnxvk.ErrInputMismatch, "dimension 2 is 9"},
		{"rank", map[string]*onnxvk.Tensor{"x": wrongRank}, onnxvk.ErrInputMismatch, "rank 1"},
		{"nil", map[string]*onnxvk.Tensor{"x": nil}, onnxvk.ErrInputMismatch, "nil"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := sess.Run(ctx, c.inputs)
			require.ErrorIs(t, err, c.is)
			require.Contains(t, err.Error(), c.says)
			require.Contains(t, err.Error(), `model "mlp"`)
		})
	}
	require.NoError(t, sess.Close())
	_, err = sess.Run(ctx, map[string]*onnxvk.Tensor{"x": randomInput(t, 1, 1)})
	require.ErrorIs(t, err, onnxvk.ErrClosed)
}

func TestRunCancelled(t *testing.T) {
	sess, err := onnxvk.NewSession(mlpModel(), onnxvk.WithDevice("cpu"))
	require.NoError(t, err)
	defer sess.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = sess.Run(ctx, map[string]*onnxvk.Tensor{"x": randomInput(t, 1, 1)})
	require.ErrorIs(t, err, context.Canceled)
}

func TestUnknownDevice(t *testing.T) {
	_, err := onnxvk.NewSession(mlpModel(), onnxvk.WithDevice("tpu"))
	require.ErrorIs(t, err, onnxvk.ErrDeviceUnavailable)
	require.Equal(t, `onnxvk: model "mlp": device "tpu": unknown device (want auto, cpu, vulkan or vulkan:N)`, err.Error())
}

func TestUnsupportedOpsListedTogether(t *testing.T) {
	m := mlpModel()
	m.Opsets["com.example"] = 1
	for _, i := range []int{1, 4} {
		m.Graph.Nodes[i].Domain = "com.example"
	}
	_, err := onnxvk.NewSession(m, onnxvk.WithDevice("cpu"))
	require.ErrorIs(t, err, onnxvk.ErrUnsupported)
	require.Contains(t, err.Error(), `"MatMul_h"`)
	require.Contains(t, err.Error(), `"MatMul_z"`)
}

func TestTensorAccessors(t *testing.T) {
	x, err := onnxvk.NewTensor([]int64{2, 2}, []int64{1, 2, 3, 4})
	require.NoError(t, err)
	require.Equal(t, onnxvk.Int64, x.DType())
	_, err = onnxvk.Data[float32](x)
	require.Error(t, err)
	f, err := x.Float32s()
	require.NoError(t, err)
	require.Equal(t, []float32{1, 2, 3, 4}, f)
	_, err = onnxvk.NewTensor([]int64{3}, []int64{1, 2})
	require.Error(t, err)
	_, err = onnxvk.NewTensor([]int64{-1}, []int64{})
	require.Error(t, err)
}
