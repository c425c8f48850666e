package onnxvk_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/sessionvalues"
	"github.com/onnxvk/onnxvk/loader"
)

// sizeModel is a small model built for the size tests: its nodes, inputs,
// initializers and outputs (every output a float tensor of unknown shape
// unless outputs says more).
type sizeModel struct {
	inputs  []*graph.ValueInfo
	inits   map[string]*graph.Tensor
	nodes   []*graph.Node
	outputs []string
}

func (sm sizeModel) model() *graph.Model {
	g := graph.NewGraph("sizes")
	g.Inputs = sm.inputs
	for name, t := range sm.inits {
		g.Initializers[name] = t
	}
	for _, o := range sm.outputs {
		g.Outputs = append(g.Outputs, &graph.ValueInfo{Name: o, Type: &graph.Type{Kind: graph.TensorKind}})
	}
	for i, n := range sm.nodes {
		n.Index = i
		if n.Name == "" {
			n.Name = n.OpType
		}
	}
	g.Nodes = sm.nodes
	return &graph.Model{Name: "sizes", IRVersion: 8, Opsets: map[string]int64{"": 18}, Graph: g}
}

func ints(v ...int64) *graph.Tensor {
	t, err := graph.FromSlice(graph.Int64, []int64{int64(len(v))}, v)
	if err != nil {
		panic(err)
	}
	return t
}

func floats(shape []int64, v ...float32) *graph.Tensor {
	t, err := graph.FromSlice(graph.Float, shape, v)
	if err != nil {
		panic(err)
	}
	return t
}

func attrs(a ...*graph.Attribute) map[string]*graph.Attribute {
	m := map[string]*graph.Attribute{}
	for _, x := range a {
		m[x.Name] = x
	}
	return m
}

func intsAttr(name string, v ...int64) *graph.Attribute {
	return &graph.Attribute{Name: name, Type: graph.AttrInts, Ints: v}
}

// runSized loads sm on the CPU under the host memory limit and runs it
// once on feeds; it returns the first error, from loading or running.
func runSized(t *testing.T, sm sizeModel, limit int64, feeds map[string]graph.Value, opts ...onnxvk.Option) error {
	t.Helper()
	sess, err := onnxvk.NewSession(sm.model(), append([]onnxvk.Option{onnxvk.WithDevice("cpu"), onnxvk.WithHostMemoryLimit(limit)}, opts...)...)
	if err != nil {
		return err
	}
	defer sess.Close()
	_, err = sessionvalues.Of(sess).RunValues(context.Background(), feeds)
	return err
}

func node(op string, in []string, out string, a map[string]*graph.Attribute) *graph.Node {
	return &graph.Node{OpType: op, Inputs: in, Outputs: []string{out}, Attrs: a}
}

var oneFloat = &graph.ValueInfo{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(1))}

// TestModelSizesUnderHostLimit: each size a model chooses that used to take
// the process down with "fatal error: out of memory" (issue 13, item 2)
// fails with ErrOutOfMemory naming its node, under a 1 MiB limit, whether
// the size is known when planning (constants) or only at run time (the
// same value from an input, or with folding off).
func TestModelSizesUnderHostLimit(t *testing.T) {
	const limit = 1 << 20
	x1 := map[string]graph.Value{"x": floats([]int64{1}, 1)}
	image := &graph.ValueInfo{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(1, 1, 2, 2))}
	x4 := map[string]graph.Value{"x": floats([]int64{1, 1, 2, 2}, 1, 2, 3, 4)}
	body := graph.NewGraph("body")
	body.Inputs = []*graph.ValueInfo{
		{Name: "i", Type: graph.TensorType(graph.Int64, graph.ShapeOf())},
		{Name: "c", Type: graph.TensorType(graph.Bool, graph.ShapeOf())},
	}
	body.Outputs = []*graph.ValueInfo{{Name: "c_out", Type: graph.TensorType(graph.Bool, graph.ShapeOf())},
		{Name: "row", Type: graph.TensorType(graph.Float, graph.ShapeOf(1024))}}
	body.Initializers["row"] = graph.NewTensor(graph.Float, []int64{1024})
	body.Nodes = []*graph.Node{node("Identity", []string{"c"}, "c_out", nil)}
	cases := []struct {
		name  string
		model sizeModel
		feeds map[string]graph.Value
		node  string
		// data: the size comes from an input's value, so that fed at run
		// time it is known only when the kernel runs.
		data bool
	}{
		{"ConstantOfShape 2^33", sizeModel{inits: map[string]*graph.Tensor{"s": ints(1 << 33)},
			nodes: []*graph.Node{node("ConstantOfShape", []string{"s"}, "y", nil)}, outputs: []string{"y"}}, nil, "ConstantOfShape", true},
		{"Expand 2^19x2^19", sizeModel{inputs: []*graph.ValueInfo{oneFloat}, inits: map[string]*graph.Tensor{"s": ints(1<<19, 1<<19)},
			nodes: []*graph.Node{node("Expand", []string{"x", "s"}, "y", nil)}, outputs: []string{"y"}}, x1, "Expand", true},
		{"OneHot depth 2^40", sizeModel{inputs: []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Int64, graph.ShapeOf(1))}},
			inits: map[string]*graph.Tensor{"d": ints(1 << 40), "v": floats([]int64{2}, 0, 1)},
			nodes: []*graph.Node{node("OneHot", []string{"x", "d", "v"}, "y", nil)}, outputs: []string{"y"}},
			map[string]graph.Value{"x": ints(3)}, "OneHot", true},
		{"Resize x1e10", sizeModel{inputs: []*graph.ValueInfo{image},
			inits: map[string]*graph.Tensor{"scales": floats([]int64{4}, 1, 1, 1, 1e10)},
			nodes: []*graph.Node{node("Resize", []string{"x", "", "scales"}, "y", nil)}, outputs: []string{"y"}}, x4, "Resize", true},
		{"Conv pads 2^40", sizeModel{inputs: []*graph.ValueInfo{image}, inits: map[string]*graph.Tensor{"w": floats([]int64{1, 1, 1, 1}, 1)},
			nodes: []*graph.Node{node("Conv", []string{"x", "w"}, "y", attrs(intsAttr("pads", 0, 1<<40, 0, 0)))}, outputs: []string{"y"}}, x4, "Conv", false},
		{"ConvTranspose output_shape 2^20x2^20", sizeModel{inputs: []*graph.ValueInfo{image}, inits: map[string]*graph.Tensor{"w": floats([]int64{1, 1, 1, 1}, 1)},
			nodes: []*graph.Node{node("ConvTranspose", []string{"x", "w"}, "y", attrs(intsAttr("output_shape", 1<<20, 1<<20)))}, outputs: []string{"y"}}, x4, "ConvTranspose", false},
		{"HammingWindow 2^40", sizeModel{inits: map[string]*graph.Tensor{"n": graph.Scalar(graph.Int64, int64(1<<40))},
			nodes: []*graph.Node{node("HammingWindow", []string{"n"}, "y", nil)}, outputs: []string{"y"}}, nil, "HammingWindow", true},
		{"sparse Constant 2^33", sizeModel{nodes: []*graph.Node{node("Constant", nil, "y", attrs(&graph.Attribute{Name: "sparse_value", Type: graph.AttrSparseTensor,
			Sparse: &graph.SparseTensor{Values: floats([]int64{1}, 1), Indices: ints(5), Dims: []int64{1 << 33}}}))}, outputs: []string{"y"}}, nil, "Constant", false},
		{"Loop scan output without end", sizeModel{inits: map[string]*graph.Tensor{"m": graph.Scalar(graph.Int64, int64(1<<62)), "c": graph.Scalar(graph.Bool, true)},
			nodes: []*graph.Node{node("Loop", []string{"m", "c"}, "y", attrs(&graph.Attribute{Name: "body", Type: graph.AttrGraph, G: body}))}, outputs: []string{"y"}}, nil, "Loop", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			check := func(err error) {
				t.Helper()
				require.ErrorIs(t, err, onnxvk.ErrOutOfMemory)
				require.Contains(t, err.Error(), `"`+c.node+`"`)
				require.Contains(t, err.Error(), "host memory limit of 1048576 bytes")
			}
			err := runSized(t, c.model, limit, c.feeds)
			check(err)
			if c.node != "Loop" {
				require.Contains(t, err.Error(), "planner: ", "the plan is refused before it runs")
			}
			// The same sizes from inputs: known only when the kernel runs.
			if !c.data {
				return
			}
			rt := c.model
			rt.inits, rt.inputs = nil, nil
			feeds := maps.Clone(c.feeds)
			if feeds == nil {
				feeds = map[string]graph.Value{}
			}
			for name, v := range c.model.inits {
				feeds[name] = v
			}
			for _, name := range slices.Sorted(maps.Keys(feeds)) {
				dt := feeds[name].(*graph.Tensor).DType
				rt.inputs = append(rt.inputs, &graph.ValueInfo{Name: name, Type: &graph.Type{Kind: graph.TensorKind, Elem: dt}})
			}
			sess, err := onnxvk.NewSession(rt.model(), onnxvk.WithDevice("cpu"), onnxvk.WithHostMemoryLimit(limit))
			require.NoError(t, err, "nothing is known before the Run")
			defer sess.Close()
			_, err = sessionvalues.Of(sess).RunValues(context.Background(), feeds)
			check(err)
			require.Contains(t, err.Error(), "hostfallback: ")
		})
	}
}

// TestElementCountsThatOverflow: shapes whose element count wraps int64
// (issue 13, item 1) are refused with ErrTooLarge naming the node, input or
// tensor, where they used to count as 0 elements (or panic).
func TestElementCountsThatOverflow(t *testing.T) {
	huge := []int64{1 << 32, 1 << 32}
	symbolic := &graph.ValueInfo{Name: "x", Type: graph.TensorType(graph.Float, graph.Shape{graph.SymDim("A"), graph.SymDim("B")})}
	hugeX := map[string]graph.Value{"x": &graph.Tensor{DType: graph.Float, Shape: huge}}
	cases := []struct {
		name  string
		model sizeModel
		feeds map[string]graph.Value
		says  string
	}{
		{"ConstantOfShape folding", sizeModel{inits: map[string]*graph.Tensor{"s": ints(huge...)},
			nodes: []*graph.Node{node("ConstantOfShape", []string{"s"}, "y", nil)}, outputs: []string{"y"}}, nil, `"ConstantOfShape"`},
		{"Expand folding", sizeModel{inputs: []*graph.ValueInfo{oneFloat}, inits: map[string]*graph.Tensor{"s": ints(1<<32, 1<<32, 4)},
			nodes: []*graph.Node{node("Expand", []string{"x", "s"}, "y", nil)}, outputs: []string{"y"}},
			map[string]graph.Value{"x": floats([]int64{1}, 1)}, `"Expand"`},
		{"Flatten and Shape", sizeModel{inits: map[string]*graph.Tensor{"s": ints(1<<32, 1<<32, 1<<32)},
			nodes: []*graph.Node{node("ConstantOfShape", []string{"s"}, "c", nil), node("Flatten", []string{"c"}, "f", nil),
				node("Shape", []string{"f"}, "y", nil)}, outputs: []string{"y"}}, nil, `"ConstantOfShape"`},
		{"declared input", sizeModel{inputs: []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(1<<62, 4))}},
			nodes: []*graph.Node{node("Relu", []string{"x"}, "y", nil)}, outputs: []string{"y"}}, nil, `input "x"`},
		{"Slice of a given input", sizeModel{inputs: []*graph.ValueInfo{symbolic}, inits: map[string]*graph.Tensor{"a": ints(0), "b": ints(1)},
			nodes: []*graph.Node{node("Slice", []string{"x", "a", "b"}, "y", nil)}, outputs: []string{"y"}}, hugeX, `input "x"`},
		{"ReduceSum of a given input", sizeModel{inputs: []*graph.ValueInfo{symbolic},
			nodes: []*graph.Node{node("ReduceSum", []string{"x"}, "y", nil)}, outputs: []string{"y"}}, hugeX, `input "x"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := runSized(t, c.model, 0, c.feeds)
			require.ErrorIs(t, err, graph.ErrTooLarge)
			require.Contains(t, err.Error(), c.says)
		})
	}
	_, err := onnxvk.NewTensor([]int64{1 << 62, 4}, []float32(nil))
	require.ErrorIs(t, err, graph.ErrTooLarge)
	_, err = onnxvk.NewTensorBytes(graph.Float, []int64{1 << 62, 1 << 62}, nil)
	require.ErrorIs(t, err, graph.ErrTooLarge)
}

// TestHostMemoryLimitDefault: a session without WithHostMemoryLimit takes
// DefaultHostMemoryLimit, a fraction of the machine's memory; 0 removes
// the limit.
func TestHostMemoryLimitDefault(t *testing.T) {
	sess, err := onnxvk.NewSession(mlpModel(), onnxvk.WithDevice("cpu"))
	require.NoError(t, err)
	defer sess.Close()
	require.Equal(t, onnxvk.DefaultHostMemoryLimit(), sess.HostMemoryLimit())
	require.Positive(t, sess.HostMemoryLimit(), "this machine's memory is known")
	unlimited, err := onnxvk.NewSession(mlpModel(), onnxvk.WithDevice("cpu"), onnxvk.WithHostMemoryLimit(0))
	require.NoError(t, err)
	defer unlimited.Close()
	require.Zero(t, unlimited.HostMemoryLimit())
	// The MLP's plan fits in 1 MiB; in 1 KiB its batch of 64 does not.
	small, err := onnxvk.NewSession(mlpModel(), onnxvk.WithDevice("cpu"), onnxvk.WithHostMemoryLimit(1<<10))
	require.NoError(t, err)
	defer small.Close()
	_, err = small.Run(context.Background(), map[string]*onnxvk.Tensor{"x": randomInput(t, 1, 64)})
	require.True(t, errors.Is(err, onnxvk.ErrOutOfMemory), "%v", err)
	_, err = sess.Run(context.Background(), map[string]*onnxvk.Tensor{"x": randomInput(t, 1, 64)})
	require.NoError(t, err)
}

// passThroughLoop is a Loop of M iterations whose body has no nodes: it
// passes its condition through and, with scan, outputs it each iteration
// (a bool scalar).
func passThroughLoop(m int64, scan bool) sizeModel {
	body := graph.NewGraph("body")
	body.Inputs = []*graph.ValueInfo{
		{Name: "i", Type: graph.TensorType(graph.Int64, graph.ShapeOf())},
		{Name: "c", Type: graph.TensorType(graph.Bool, graph.ShapeOf())},
		{Name: "v", Type: graph.TensorType(graph.Float, graph.ShapeOf(1))},
	}
	body.Outputs = []*graph.ValueInfo{{Name: "c"}, {Name: "v"}}
	outputs := []string{"y"}
	if scan {
		body.Outputs = append(body.Outputs, &graph.ValueInfo{Name: "c"})
		outputs = append(outputs, "s")
	}
	loop := &graph.Node{OpType: "Loop", Inputs: []string{"m", "c", "v"}, Outputs: outputs,
		Attrs: attrs(&graph.Attribute{Name: "body", Type: graph.AttrGraph, G: body})}
	return sizeModel{inits: map[string]*graph.Tensor{"m": graph.Scalar(graph.Int64, m), "c": graph.Scalar(graph.Bool, true),
		"v": floats([]int64{1}, 1)}, nodes: []*graph.Node{loop}, outputs: outputs}
}

// TestLoopScanCountsTensorHeaders runs a Loop whose scan output is a bool
// scalar per iteration under a 1 MiB host memory limit: each iteration
// counts its tensor's header, not only its byte of data, so the Run fails
// after at most 1 MiB / 64 iterations (the count of data alone let one
// take 288 MB of heap under a 16 MiB limit; found by FuzzPipeline).
func TestLoopScanCountsTensorHeaders(t *testing.T) {
	const limit = 1 << 20
	err := runSized(t, passThroughLoop(1<<62, true), limit, nil)
	require.ErrorIs(t, err, onnxvk.ErrOutOfMemory)
	var iterations int64
	_, after, _ := strings.Cut(err.Error(), "after ")
	_, scanErr := fmt.Sscanf(after, "%d iterations", &iterations)
	require.NoError(t, scanErr, "the error names the iterations: %v", err)
	require.LessOrEqual(t, iterations, int64(limit/64), "%v", err)
}

// TestLoopWithoutNodesIsCancelled runs a Loop of 2^62 iterations whose body
// has no nodes under a deadline: the Run returns the deadline's error (the
// body's nodes were the only places that checked it, so such a Loop ran
// on after the deadline; found by FuzzPipeline).
func TestLoopWithoutNodesIsCancelled(t *testing.T) {
	sess, err := onnxvk.NewSession(passThroughLoop(1<<62, false).model(), onnxvk.WithDevice("cpu"))
	require.NoError(t, err)
	defer sess.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := sessionvalues.Of(sess).RunValues(ctx, nil)
		done <- err
	}()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.DeadlineExceeded)
	case <-time.After(10 * time.Second):
		t.Fatal("the Run did not return 10 s after its deadline")
	}
}

// TestDeclaredNegativeDimension declares an input [-5, 2]: a model built
// in Go is refused, naming the input; the same model serialized loads
// with the dimension unknown, as the loader reads every negative
// dim_value (exporters write -1 for unknown dimensions), and runs with
// the size given (issue 13, item 12).
func TestDeclaredNegativeDimension(t *testing.T) {
	model := func() *graph.Model {
		return sizeModel{inputs: []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.Shape{{Value: -5}, graph.DimOf(2)})}},
			nodes: []*graph.Node{node("Abs", []string{"x"}, "y", nil)}, outputs: []string{"y"}}.model()
	}
	_, err := onnxvk.NewSession(model(), onnxvk.WithDevice("cpu"))
	require.ErrorIs(t, err, graph.ErrTooLarge)
	require.Contains(t, err.Error(), `input "x"`)
	data, err := loader.Marshal(model())
	require.NoError(t, err)
	sess, err := onnxvk.LoadBytes(data, onnxvk.WithDevice("cpu"))
	require.NoError(t, err)
	defer sess.Close()
	require.Equal(t, []int64{-1, 2}, sess.Inputs()[0].Shape)
	x, err := onnxvk.NewTensor([]int64{3, 2}, []float32{1, -2, 3, -4, 5, -6})
	require.NoError(t, err)
	out, err := sess.Run(context.Background(), map[string]*onnxvk.Tensor{"x": x})
	require.NoError(t, err)
	got, err := onnxvk.Data[float32](out["y"])
	require.NoError(t, err)
	require.Equal(t, []float32{1, 2, 3, 4, 5, 6}, got)
}

// doublingLoop is a Loop of M iterations whose body doubles its carried
// float tensor (Concat of it with itself), starting from 1 element.
func doublingLoop(m int64) sizeModel {
	body := graph.NewGraph("body")
	body.Inputs = []*graph.ValueInfo{
		{Name: "i", Type: graph.TensorType(graph.Int64, graph.ShapeOf())},
		{Name: "c", Type: graph.TensorType(graph.Bool, graph.ShapeOf())},
		{Name: "v", Type: graph.TensorType(graph.Float, nil)},
	}
	body.Nodes = []*graph.Node{node("Concat", []string{"v", "v"}, "v2", attrs(&graph.Attribute{Name: "axis", Type: graph.AttrInt}))}
	body.Outputs = []*graph.ValueInfo{{Name: "c"}, {Name: "v2"}}
	loop := node("Loop", []string{"m", "c", "v"}, "y", attrs(&graph.Attribute{Name: "body", Type: graph.AttrGraph, G: body}))
	return sizeModel{inits: map[string]*graph.Tensor{"m": graph.Scalar(graph.Int64, m), "c": graph.Scalar(graph.Bool, true),
		"v": floats([]int64{1}, 1)}, nodes: []*graph.Node{loop}, outputs: []string{"y"}}
}

// TestLoopBodyOutputsCountAgainstLimit runs a Loop whose body doubles a
// tensor 24 times (to 64 MiB) under a 1 MiB host memory limit: the body's
// Concat, whose output no plan sized, is refused with ErrOutOfMemory
// naming it once the output and what the body holds pass the limit (the
// body's outputs were not counted: with 2^62 iterations the process died
// of out of memory; found by the hostile sweep).
func TestLoopBodyOutputsCountAgainstLimit(t *testing.T) {
	err := runSized(t, doublingLoop(24), 1<<20, nil)
	require.ErrorIs(t, err, onnxvk.ErrOutOfMemory)
	require.ErrorContains(t, err, `(Concat, #0)`)
	require.NoError(t, runSized(t, doublingLoop(10), 1<<20, nil), "4 KiB fits")
}
