package serve

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/loader"
)

// allDatatypes are the protocol's datatypes; the echo model has an input
// and an output of each.
var allDatatypes = []string{"BOOL", "UINT8", "UINT16", "UINT32", "UINT64", "INT8", "INT16", "INT32", "INT64", "FP16", "FP32", "FP64", "BYTES", "BF16"}

// saveModel writes m into dir as NAME.onnx and returns its path.
func saveModel(t testing.TB, dir string, m *graph.Model) string {
	t.Helper()
	path := filepath.Join(dir, m.Name+".onnx")
	if err := loader.Save(m, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// affineModel is y = x * w + 1 and s = x + x on x float[batch, 4], with w
// = [1 2 3 4]: each row's result depends on that row only, so that merged
// and separate runs must agree.
func affineModel() *graph.Model {
	g := graph.NewGraph("affine")
	shape := graph.Shape{graph.SymDim("batch"), graph.DimOf(4)}
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, shape)}}
	g.Outputs = []*graph.ValueInfo{
		{Name: "y", Type: graph.TensorType(graph.Float, shape)},
		{Name: "s", Type: graph.TensorType(graph.Float, shape)},
	}
	w, _ := graph.FromSlice(graph.Float, []int64{4}, []float32{1, 2, 3, 4})
	g.Initializers["w"] = w
	g.Initializers["one"] = graph.Scalar(graph.Float, float32(1))
	g.Nodes = []*graph.Node{
		{Name: "mul", OpType: "Mul", Inputs: []string{"x", "w"}, Outputs: []string{"xw"}, Index: 0},
		{Name: "add", OpType: "Add", Inputs: []string{"xw", "one"}, Outputs: []string{"y"}, Index: 1},
		{Name: "sum", OpType: "Add", Inputs: []string{"x", "x"}, Outputs: []string{"s"}, Index: 2},
	}
	return &graph.Model{Name: "affine", IRVersion: 8, Opsets: map[string]int64{"": 17}, Graph: g}
}

// echoModel returns each input in_T as out_T (Identity) for every
// datatype T, of shape [n, 2].
func echoModel() *graph.Model {
	g := graph.NewGraph("echo")
	shape := graph.Shape{graph.SymDim("n"), graph.DimOf(2)}
	for i, name := range allDatatypes {
		dt, _ := DType(name)
		g.Inputs = append(g.Inputs, &graph.ValueInfo{Name: "in_" + name, Type: graph.TensorType(dt, shape)})
		g.Outputs = append(g.Outputs, &graph.ValueInfo{Name: "out_" + name, Type: graph.TensorType(dt, shape)})
		g.Nodes = append(g.Nodes, &graph.Node{Name: "id_" + name, OpType: "Identity", Inputs: []string{"in_" + name}, Outputs: []string{"out_" + name}, Index: i})
	}
	return &graph.Model{Name: "echo", IRVersion: 8, Opsets: map[string]int64{"": 17}, Graph: g}
}

// slowModel is 24 products of x float[batch, 512] with a [512, 2048]
// and a [2048, 512] matrix in turn, each followed by a Tanh: 24 M
// multiply-adds a row over 8 MiB of weights, more than a millisecond a row
// on the CPU (1.4 ms on a 2-core Zen 5; the 16 products of one [512, 512]
// matrix it had took 0.16 ms there, and a SIGTERM then met no request in
// flight), so that requests are in flight and queued when a test wants
// them to be.
func slowModel() *graph.Model {
	g := graph.NewGraph("slow")
	shape := graph.Shape{graph.SymDim("batch"), graph.DimOf(512)}
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, shape)}}
	g.Outputs = []*graph.ValueInfo{{Name: "y", Type: graph.TensorType(graph.Float, shape)}}
	for _, w := range []struct {
		name       string
		rows, cols int64
	}{{"up", 512, 2048}, {"down", 2048, 512}} {
		t := graph.NewTensor(graph.Float, []int64{w.rows, w.cols})
		for i, v := 0, graph.View[float32](t); i < len(v); i++ {
			v[i] = float32((i*7919)%201-100) / 4000
		}
		g.Initializers[w.name] = t
	}
	prev := "x"
	for i := range 24 {
		mm, out := fmt.Sprintf("mm%d", i), fmt.Sprintf("h%d", i)
		if i == 23 {
			out = "y"
		}
		w := "up"
		if i%2 == 1 {
			w = "down"
		}
		g.Nodes = append(g.Nodes,
			&graph.Node{Name: mm, OpType: "MatMul", Inputs: []string{prev, w}, Outputs: []string{mm}, Index: 2 * i},
			&graph.Node{Name: "tanh" + fmt.Sprint(i), OpType: "Tanh", Inputs: []string{mm}, Outputs: []string{out}, Index: 2*i + 1})
		prev = out
	}
	return &graph.Model{Name: "slow", IRVersion: 8, Opsets: map[string]int64{"": 17}, Graph: g}
}

// sumRowsModel is y = ReduceSum(x, axes 0, keepdims) on x float[batch, 4]:
// its output's first dimension (declared unknown) is not the batch, so a
// merged Run cannot be split back.
func sumRowsModel() *graph.Model {
	g := graph.NewGraph("sumrows")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.Shape{graph.SymDim("batch"), graph.DimOf(4)})}}
	g.Outputs = []*graph.ValueInfo{{Name: "y", Type: graph.TensorType(graph.Float, graph.Shape{graph.UnknownDim(), graph.DimOf(4)})}}
	axes, _ := graph.FromSlice(graph.Int64, []int64{1}, []int64{0})
	g.Initializers["axes"] = axes
	g.Nodes = []*graph.Node{{Name: "sum", OpType: "ReduceSum", Inputs: []string{"x", "axes"}, Outputs: []string{"y"}, Index: 0}}
	return &graph.Model{Name: "sumrows", IRVersion: 8, Opsets: map[string]int64{"": 17}, Graph: g}
}

// wideModel is y = x @ w on x float[batch, 1024] with w a [1024, 2048]
// weight (8 MiB): a batching model whose file is mostly its weights.
func wideModel() *graph.Model {
	g := graph.NewGraph("wide")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.Shape{graph.SymDim("batch"), graph.DimOf(1024)})}}
	g.Outputs = []*graph.ValueInfo{{Name: "y", Type: graph.TensorType(graph.Float, graph.Shape{graph.SymDim("batch"), graph.DimOf(2048)})}}
	w := graph.NewTensor(graph.Float, []int64{1024, 2048})
	for i, v := 0, graph.View[float32](w); i < len(v); i++ {
		v[i] = float32(i%13-6) / 64
	}
	g.Initializers["w"] = w
	g.Nodes = []*graph.Node{{Name: "mm", OpType: "MatMul", Inputs: []string{"x", "w"}, Outputs: []string{"y"}}}
	return &graph.Model{Name: "wide", IRVersion: 8, Opsets: map[string]int64{"": 17}, Graph: g}
}
