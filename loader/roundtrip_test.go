package loader

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/loader/onnxpb"
)

// rtDomain is a private operator domain whose one op takes attributes of
// every type, so that the round trip can carry all of them.
const rtDomain = "test.onnxvk.loader"

var rtAttrTypes = map[string]graph.AttrType{
	"f": graph.AttrFloat, "i": graph.AttrInt, "s": graph.AttrString, "t": graph.AttrTensor,
	"g": graph.AttrGraph, "sp": graph.AttrSparseTensor, "tp": graph.AttrTypeProto,
	"floats": graph.AttrFloats, "ints": graph.AttrInts, "strings": graph.AttrStrings,
	"tensors": graph.AttrTensors, "graphs": graph.AttrGraphs, "sps": graph.AttrSparseTensors,
	"tps": graph.AttrTypeProtos, "empty_s": graph.AttrString,
}

func init() {
	s := &ops.Schema{Domain: rtDomain, Name: "AllAttrs", Since: 1, MinInputs: 0, MaxInputs: -1, MinOutputs: 1, MaxOutputs: -1}
	for name, typ := range rtAttrTypes {
		s.Attrs = append(s.Attrs, ops.AttrSpec{Name: name, Type: typ})
	}
	ops.Register(s)
}

func mustTensor[T graph.Elem](t testing.TB, dt graph.DType, shape []int64, v ...T) *graph.Tensor {
	t.Helper()
	tensor, err := graph.FromSlice(dt, shape, v)
	if err != nil {
		t.Fatal(err)
	}
	return tensor
}

func rawTensor(dt graph.DType, shape []int64, data ...byte) *graph.Tensor {
	b := graph.AllocBytes(int64(len(data)))
	copy(b, data)
	return &graph.Tensor{DType: dt, Shape: shape, Data: b}
}

// richModel builds a model that uses every part of the IR the loader
// writes: all attribute types, nested subgraphs, sparse tensors, every kind
// of type, symbolic dimensions, metadata and multi-device annotations.
func richModel(t testing.TB) *graph.Model {
	t.Helper()
	sparse := func() *graph.SparseTensor {
		return &graph.SparseTensor{
			Values:  mustTensor[float32](t, graph.Float, []int64{2}, 1.5, -2),
			Indices: mustTensor[int64](t, graph.Int64, []int64{2, 2}, 0, 1, 2, 0),
			Dims:    []int64{3, 2},
		}
	}
	n := graph.SymDim("N")
	seqT := &graph.Type{Kind: graph.SequenceKind, Inner: graph.TensorType(graph.Float, nil)}
	mapT := &graph.Type{Kind: graph.MapKind, Elem: graph.Int64, Inner: &graph.Type{Kind: graph.OptionalKind,
		Inner: graph.TensorType(graph.Float16, graph.Shape{graph.DimOf(2), graph.UnknownDim()})}}
	vinfo := func(name string, typ *graph.Type, doc string) *graph.ValueInfo {
		return &graph.ValueInfo{Name: name, Type: typ, Doc: doc}
	}

	main := graph.NewGraph("main")
	main.Doc = "the main graph"
	x := vinfo("x", graph.TensorType(graph.Float, graph.Shape{n, graph.DimOf(3)}), "input x")
	y := vinfo("y", graph.TensorType(graph.Float, nil), "")
	z := vinfo("z", graph.TensorType(graph.Undefined, graph.Shape{}), "")
	main.Inputs = []*graph.ValueInfo{x}
	main.Outputs = []*graph.ValueInfo{y, z}
	main.ValueInfo = map[string]*graph.ValueInfo{
		"x": x, "y": y, "z": z,
		"a":  vinfo("a", mapT, "a map"),
		"b":  vinfo("b", seqT, ""),
		"o":  vinfo("o", &graph.Type{Kind: graph.OpaqueKind}, ""),
		"st": vinfo("st", &graph.Type{Kind: graph.SparseTensorKind, Elem: graph.Double, Shape: graph.ShapeOf(4)}, ""),
		"u":  vinfo("u", &graph.Type{Kind: graph.UnknownKind, Denotation: "IMAGE"}, ""),
	}
	main.Initializers = map[string]*graph.Tensor{
		"w":     mustTensor[float32](t, graph.Float, []int64{3}, 1, -2, 3.5),
		"big":   mustTensor[float32](t, graph.Float, []int64{4, 4}, make([]float32, 16)...),
		"i4":    rawTensor(graph.Int4, []int64{3}, 0x8f, 0x07),
		"u2":    rawTensor(graph.Uint2, []int64{5}, 0xe4, 0x03),
		"bf":    rawTensor(graph.BFloat16, []int64{2}, 0x80, 0x3f, 0x40, 0xc0),
		"f8":    rawTensor(graph.Float8E4M3FN, []int64{2, 1}, 0x38, 0xfe),
		"c128":  mustTensor[complex128](t, graph.Complex128, []int64{1}, complex(1, -1)),
		"b":     mustTensor[bool](t, graph.Bool, []int64{2}, true, false),
		"str":   {DType: graph.String, Shape: []int64{2}, Strings: []string{"a", ""}},
		"empty": rawTensor(graph.Float, []int64{0, 3}),
		"scal":  graph.Scalar[int64](graph.Int64, 7),
	}
	main.SparseInitializers = map[string]*graph.SparseTensor{"spw": sparse()}

	sub := func(name, in string) *graph.Graph {
		g := graph.NewGraph(name)
		g.Parent = main
		g.Initializers["k"] = mustTensor[float32](t, graph.Float, []int64{3}, 0, 0, 1)
		out := vinfo(name+"_out", graph.TensorType(graph.Float, graph.Shape{n, graph.DimOf(3)}), "")
		g.Outputs = []*graph.ValueInfo{out}
		g.ValueInfo[out.Name] = out
		g.Nodes = []*graph.Node{{Name: name + "_add", OpType: "Add", Inputs: []string{in, "k"}, Outputs: []string{out.Name}}}
		return g
	}

	nodes := []*graph.Node{
		{
			Name: "add", OpType: "Add", Inputs: []string{"x", "w"}, Outputs: []string{"sum"}, Doc: "adds",
			Metadata: map[string]string{"origin": "test"},
			DeviceConfigs: []graph.NodeDeviceConfiguration{{
				ConfigurationID: "cfg", PipelineStage: 1, HasStage: true,
				Sharding: []graph.ShardingSpec{{
					TensorName: "x", Devices: []int64{0, 100},
					DeviceGroups: map[int64][]int64{100: {1, 2}},
					ShardedDims: []graph.ShardedDim{{Axis: -1, SimpleSharding: []graph.SimpleSharding{
						{Dim: graph.SymDim("N"), NumShards: 2}, {Dim: graph.DimOf(3), NumShards: 1}, {Dim: graph.UnknownDim(), NumShards: 4},
					}}},
				}},
			}, {ConfigurationID: "cfg2"}},
		},
		{
			Name: "all", OpType: "AllAttrs", Domain: rtDomain, Inputs: []string{"sum", ""}, Outputs: []string{"y", "z"},
			Attrs: map[string]*graph.Attribute{
				"f":       {Name: "f", Type: graph.AttrFloat, F: -0.25, Doc: "a float"},
				"i":       {Name: "i", Type: graph.AttrInt, I: -1 << 40},
				"s":       {Name: "s", Type: graph.AttrString, S: []byte("bytes\x00\xff")},
				"empty_s": {Name: "empty_s", Type: graph.AttrString},
				"t":       {Name: "t", Type: graph.AttrTensor, T: rawTensor(graph.Float16, []int64{1}, 0x00, 0x3c)},
				"g":       {Name: "g", Type: graph.AttrGraph, G: sub("then", "sum")},
				"sp":      {Name: "sp", Type: graph.AttrSparseTensor, Sparse: sparse()},
				"tp":      {Name: "tp", Type: graph.AttrTypeProto, TP: mapT},
				"floats":  {Name: "floats", Type: graph.AttrFloats, Floats: []float32{1, 2.5}},
				"ints":    {Name: "ints", Type: graph.AttrInts, Ints: []int64{-1, 0, 1}},
				"strings": {Name: "strings", Type: graph.AttrStrings, Strings: [][]byte{[]byte("p"), []byte("q")}},
				"tensors": {Name: "tensors", Type: graph.AttrTensors, Tensors: []*graph.Tensor{graph.Scalar[int32](graph.Int32, 3), {DType: graph.String, Shape: []int64{1}, Strings: []string{"s"}}}},
				"graphs":  {Name: "graphs", Type: graph.AttrGraphs, Graphs: []*graph.Graph{sub("g0", "x"), sub("g1", "w")}},
				"sps":     {Name: "sps", Type: graph.AttrSparseTensors, SparseTensors: []*graph.SparseTensor{sparse()}},
				"tps":     {Name: "tps", Type: graph.AttrTypeProtos, TPs: []*graph.Type{seqT, graph.TensorType(graph.Int4, graph.ShapeOf())}},
			},
		},
	}
	for i, nd := range nodes {
		nd.Index = i
	}
	main.Nodes = nodes
	return &graph.Model{
		Name: "rich.onnx", IRVersion: 11, ProducerName: "onnxvk-test", ProducerVersion: "1",
		Domain: "org.onnxvk", ModelVersion: 3, DocString: "doc",
		Opsets:         map[string]int64{"": 21, rtDomain: 1},
		Metadata:       map[string]string{"k": "v", "author": "me"},
		Graph:          main,
		Configurations: []graph.DeviceConfiguration{{Name: "cfg", NumDevices: 2, Devices: []string{"gpu0", "gpu1"}}, {Name: "cfg2", NumDevices: 1}},
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	m := richModel(t)
	b, err := Marshal(m)
	require.NoError(t, err)
	got, err := LoadBytes(b, m.Name)
	require.NoError(t, err)
	require.Equal(t, m, got)

	again, err := Marshal(got)
	require.NoError(t, err)
	require.True(t, bytes.Equal(b, again), "Marshal is not stable over a round trip")
}

func TestSaveExternalRoundTrip(t *testing.T) {
	m := richModel(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "m.onnx")
	require.NoError(t, Save(m, path, WithExternalData("weights/data.bin", 16, 64)))

	mp := &onnxpb.ModelProto{}
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, proto.Unmarshal(raw, mp))
	external := 0
	for _, tp := range mp.Graph.Initializer {
		if tp.GetDataLocation() != onnxpb.TensorProto_EXTERNAL {
			require.Less(t, len(tp.RawData)+len(tp.StringData), 16, "tensor %q stayed inline", tp.GetName())
			continue
		}
		external++
		for _, e := range tp.ExternalData {
			if e.GetKey() == "offset" {
				off, err := strconv.ParseInt(e.GetValue(), 10, 64)
				require.NoError(t, err)
				require.Zero(t, off%64, "tensor %q offset %d", tp.GetName(), off)
			}
		}
	}
	require.Equal(t, 2, external, "w is 12 bytes, big 64 and c128 16: two go external")

	got, err := Load(path)
	require.NoError(t, err)
	require.Equal(t, []string{"weights/data.bin"}, got.ExternalFiles)
	require.Equal(t, m.Graph, got.Graph)

	// Saving over the files the loaded model maps must not disturb it.
	require.NoError(t, Save(got, path, WithExternalData("weights/data.bin", 1, 0)))
	again, err := Load(path)
	require.NoError(t, err)
	require.Equal(t, m.Graph, again.Graph)
	require.Equal(t, m.Graph, got.Graph)
	require.NoError(t, got.Close())
	require.NoError(t, again.Close())

	require.Error(t, Save(m, path, WithExternalData("../out.bin", 1, 0)))
	require.Error(t, Save(m, path, WithExternalData("/abs.bin", 1, 0)))
	require.Error(t, Save(m, path, WithExternalData("", 1, 0)))
}

func TestToProtoErrors(t *testing.T) {
	bad := []func(m *graph.Model){
		func(m *graph.Model) { m.Graph.Initializers["w"].Data = m.Graph.Initializers["w"].Data[:4] },
		func(m *graph.Model) { m.Graph.Initializers["str"].Strings = nil },
		func(m *graph.Model) { m.Graph.Initializers["w"].DType = graph.DType(77) },
		func(m *graph.Model) { m.Graph.Nodes[1].Attrs["t"].T = nil },
		func(m *graph.Model) { m.Graph.Nodes[1].Attrs["g"].G = nil },
		func(m *graph.Model) { m.Graph.Nodes[1].Attrs["graphs"].Graphs[0] = nil },
		func(m *graph.Model) { m.Graph.Nodes[1].Attrs["i"].Type = graph.AttrUndefined },
		func(m *graph.Model) { m.Graph.Inputs[0] = nil },
		func(m *graph.Model) { m.Graph.Nodes[0] = nil },
		func(m *graph.Model) { m.Graph.SparseInitializers["spw"].Indices = nil },
	}
	for i, mutate := range bad {
		m := richModel(t)
		mutate(m)
		if _, err := Marshal(m); err == nil {
			t.Errorf("case %d: no error", i)
		}
	}
	if _, err := ToProto(nil); err == nil {
		t.Error("ToProto(nil): no error")
	}
}
